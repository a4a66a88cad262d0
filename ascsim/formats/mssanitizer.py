"""Findings in msSanitizer's report shape (``ascsim run/check --report-format mssanitizer``).

msSanitizer prints each problem as a block of lines that start with ``======`` (sources in
docs/profile.md). Its memory check (memcheck) writes the severity and what happened
(``ERROR: illegal read of size 100``), where in memory (``at 0x... on GM``) and the code line
(``code in add_custom.cpp:52``); its race check (racecheck) writes the hazard and the memory
(``ERROR: Potential RAW hazard detected at UB in kernel:``) and one line per access: the pipe,
read or write, the address, the block and the code line (``PIPE_V Write at ... in block 0
(aiv) add_custom.cpp:520``). ascsim prints its findings in those shapes, one block per finding,
with what it cannot match said here: a simulated buffer has no device address, so addresses
are the byte offset in the buffer (``at byte 256 of 'x' on GM``); the block is the index the
kernel's ``get_block_idx()`` returns; the finding's core, repeat count, ascsim's category and
message and its hint follow as further ``======`` lines, so nothing of the finding is lost.

Which tool reports each finding category, and how, is the table :data:`FORMATTERS`; a category
not in it is printed under its own name in the memcheck shape.
"""

from __future__ import annotations

from collections.abc import Callable

from ascsim.sim.findings import Finding
from ascsim.sim.source import format_location

PREFIX = "======"
INDENT = PREFIX + "    "

#: ascsim pipe -> msSanitizer's pipe name.
PIPE_NAMES = {"S": "PIPE_S", "V": "PIPE_V", "M": "PIPE_M", "MTE1": "PIPE_MTE1",
              "MTE2": "PIPE_MTE2", "MTE3": "PIPE_MTE3", "FIX": "PIPE_FIX"}
#: The hazard -> (earlier access, later access).
ACCESSES = {"RAW": ("Write", "Read"), "WAR": ("Read", "Write"), "WAW": ("Write", "Write")}


def _size(f: Finding) -> str:
    d = f.details
    if "start" in d and "stop" in d:
        return f" of size {int(d['stop']) - int(d['start'])}"
    return ""


def _space(f: Finding) -> str:
    if f.category in ("gm-out-of-bounds", "cross-core-race"):
        return "GM"
    buffer = str(f.details.get("buffer", ""))
    return buffer.split()[0] if buffer else "?"


def _at(f: Finding) -> str:
    """``byte N of 'name' on SPACE``: where the finding's bytes start."""
    d = f.details
    buffer = str(d.get("buffer", ""))
    named = f" of '{buffer}'" if buffer and buffer.split()[0] != _space(f) else ""
    return f"byte {d['start']}{named} on {_space(f)}"


class Blocks:
    """Core id -> ``block N (aiv)`` of one launch."""

    def __init__(self, report):
        self._names = {c.core_id: f"block {c.block_idx} ({c.kind.lower()})"
                       for c in report.cores}

    def __call__(self, core) -> str:
        return self._names.get(core, f"core {core}")


def _tail(f: Finding, kernel: str, tool: str) -> list[str]:
    """The lines every block ends with: ascsim's own account of the finding."""
    times = f", {f.count} times" if f.count > 1 else ""
    core = f" on core {f.core}" if f.core is not None else ""
    lines = [f"{INDENT}in kernel {kernel}{core}{times} [{tool}: {f.category}]",
             f"{INDENT}{f.message}"]
    if f.hint:
        lines.append(f"{INDENT}hint: {f.hint}")
    return lines


def _memcheck(severity: str, what: str) -> Callable:
    def lines(f: Finding, kernel: str, blocks: Blocks) -> list[str]:
        out = [f"{PREFIX} {severity}: {what}{_size(f)}"]
        if "start" in f.details:
            out.append(f"{INDENT}at {_at(f)}")
        out.extend(f"{INDENT}code in {format_location(loc)}" for loc in f.locations)
        return out + _tail(f, kernel, "memcheck")
    return lines


def _racecheck(f: Finding, kernel: str, blocks: Blocks) -> list[str]:
    d = f.details
    hazard = d.get("hazard", "RAW")
    first, second = ACCESSES[hazard]
    pipes = d.get("pipes", ("?", "?"))
    cores = (d.get("other_core", f.core), f.core)
    where = f"byte {d.get('start', '?')}"
    out = [f"{PREFIX} ERROR: Potential {hazard} hazard detected at {_space(f)} in {kernel}:"]
    # The two accesses are the last two locations (a wrong-pipe flag's setter comes first).
    for pipe, access, core, loc in zip(pipes, (first, second), cores, f.locations[-2:]):
        out.append(f"{INDENT}{PIPE_NAMES.get(pipe, pipe)} {access} at {where} in "
                   f"{blocks(core)} {format_location(loc)}")
    for loc in f.locations[:-2]:
        out.append(f"{INDENT}flag set in {format_location(loc)}")
    return out + _tail(f, kernel, "racecheck")


def _initcheck(f: Finding, kernel: str, blocks: Blocks) -> list[str]:
    out = [f"{PREFIX} WARNING: uninitialized read{_size(f)}"]
    if "start" in f.details:
        out.append(f"{INDENT}at {_at(f)}")
    out.extend(f"{INDENT}code in {format_location(loc)}" for loc in f.locations)
    return out + _tail(f, kernel, "initcheck")


#: category -> the lines of its block. Memory errors are memcheck's ("illegal read or write":
#: ascsim does not record which of the two an out-of-bounds access was), races within a core
#: and between cores racecheck's, uninitialised reads initcheck's.
FORMATTERS: dict[str, Callable] = {
    "gm-out-of-bounds": _memcheck("ERROR", "illegal read or write"),
    "local-overflow": _memcheck("ERROR", "illegal read or write"),
    "alignment": _memcheck("ERROR", "misaligned access"),
    "use-after-free": _memcheck("ERROR", "use after free"),
    "race": _racecheck,
    "cross-core-race": _racecheck,
    "uninitialized-read": _initcheck,
}


def format_finding(f: Finding, kernel: str, blocks: Blocks | None = None) -> list[str]:
    """The report lines of one finding of the launch of ``kernel``."""
    formatter = FORMATTERS.get(f.category)
    if formatter is None:
        formatter = _memcheck("WARNING", f.category.replace("-", " "))
    return formatter(f, kernel, blocks or (lambda core: f"core {core}"))


def format_report(reports) -> str:
    """Every finding of ``reports`` as msSanitizer report blocks, then the summary line."""
    out: list[str] = []
    total = 0
    for report in reports:
        blocks = Blocks(report)
        for f in report.findings:
            out.extend(format_finding(f, report.kernel, blocks))
            total += 1
    out.append(f"{PREFIX} SUMMARY: {total} problem(s) found in {len(reports)} launch(es)")
    return "\n".join(out)
