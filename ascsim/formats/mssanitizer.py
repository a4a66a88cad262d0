"""Findings in msSanitizer's report shape (``ascsim run/check --report-format mssanitizer``).

msSanitizer prints each problem as a block of lines that start with ``======``: the severity
and what happened (``ERROR: illegal read of size 100``), where in memory (``at 0x... on GM``)
and the code line (``code in add_custom.cpp:52``); see docs/profile.md for the source. ascsim
prints its findings in that shape, one block per finding, with two differences it cannot avoid:
a simulated buffer has no device address, so the memory line names the buffer and the byte
offset in it (``at byte 256 of 'x' on GM``); and every line a finding involves gets a ``code in``
line (a race has two). The finding's core, repeat count and ascsim's hint follow as further
``======`` lines, so nothing of the finding is lost.

Which msSanitizer tool reports each finding category, and its headline, are the table
:data:`HEADLINES`; a category not in it is printed under its own name.
"""

from __future__ import annotations

from collections.abc import Callable

from ascsim.sim.findings import Finding
from ascsim.sim.source import format_location

PREFIX = "======"


def _size(f: Finding) -> str:
    d = f.details
    if "start" in d and "stop" in d:
        return f" of size {int(d['stop']) - int(d['start'])}"
    return ""


#: category -> (tool, severity, headline of the finding). Memory errors are memcheck's
#: ("illegal read/write", "misaligned access"; several cores writing one GM range is its
#: multi-core "out of bounds" warning), races racecheck's, uninitialised reads initcheck's.
HEADLINES: dict[str, tuple[str, str, Callable[[Finding], str]]] = {
    "gm-out-of-bounds": ("memcheck", "ERROR", lambda f: "illegal read or write" + _size(f)),
    "local-overflow": ("memcheck", "ERROR", lambda f: "illegal read or write" + _size(f)),
    "alignment": ("memcheck", "ERROR", lambda f: "misaligned access" + _size(f)),
    "cross-core-race": ("memcheck", "WARNING", lambda f: "out of bounds" + _size(f)
                        + " (cores overlap on it)"),
    "race": ("racecheck", "WARNING", lambda f: "possible data race" + _size(f)),
    "uninitialized-read": ("initcheck", "WARNING",
                           lambda f: "uninitialized read" + _size(f)),
    "use-after-free": ("memcheck", "ERROR", lambda f: "use after free" + _size(f)),
}


def _space(f: Finding) -> str:
    buffer = str(f.details.get("buffer", ""))
    if f.category in ("gm-out-of-bounds", "cross-core-race"):
        return "GM"
    return buffer.split()[0] if buffer else "?"


def format_finding(f: Finding, kernel: str) -> list[str]:
    """The report lines of one finding of the launch of ``kernel``."""
    tool, severity, headline = HEADLINES.get(
        f.category, ("ascsim", "WARNING", lambda f: f.category.replace("-", " ")))
    lines = [f"{PREFIX} {severity}: {headline(f)}"]
    d = f.details
    if "start" in d:
        buffer = d.get("buffer", "")
        named = f" of '{buffer}'" if buffer and buffer != _space(f) else ""
        lines.append(f"{PREFIX}    at byte {d['start']}{named} on {_space(f)}")
    for loc in f.locations:
        lines.append(f"{PREFIX}    code in {format_location(loc)}")
    where = f" on core {f.core}" if f.core is not None else ""
    times = f", {f.count} times" if f.count > 1 else ""
    lines.append(f"{PREFIX}    in kernel {kernel}{where}{times} [{tool}: {f.category}]")
    lines.append(f"{PREFIX}    {f.message}")
    if f.hint:
        lines.append(f"{PREFIX}    hint: {f.hint}")
    return lines


def format_report(reports) -> str:
    """Every finding of ``reports`` as msSanitizer report blocks, then the summary line."""
    out: list[str] = []
    total = 0
    for report in reports:
        for f in report.findings:
            out.extend(format_finding(f, report.kernel))
            total += 1
    out.append(f"{PREFIX} SUMMARY: {total} problem(s) found in {len(reports)} launch(es)")
    return "\n".join(out)
