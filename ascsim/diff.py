"""``ascsim diff SCRIPT --soc A --soc B``: one script on two SoCs, kernel by kernel, side by side.

The script runs once per SoC (the two runs side by side), each in a fresh
``ascsim run --soc X --json`` process, so that nothing of one run (compiled kernels, the L2
carried between launches, the session's SoC) leaks into the other. Launches are paired by
kernel name and occurrence (the second launch of ``k`` on A with the second launch of ``k`` on
B). Per pair the table shows the device time and its ratio, the bound, and each pipe's busy
time (busiest core) and share (ratios B / A, left out when a launch stopped with an error);
then the findings present on one SoC and not the other, matched by category and kernel lines
(their messages may name SoC-specific sizes). A run that stops with an error on one SoC (an
API the chip does not have, a buffer past its capacity) shows the error; a kernel launched on
only one SoC says so.

Exit status 0 when both runs succeed with the same kernels and the same findings, 1 when they
differ in any of those (a port to check), 2 on a usage error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from ascsim.display import PIPE_ORDER
from ascsim.sim.report import PIPE_LABELS


@dataclass(frozen=True)
class SocRun:
    """The script's run on one SoC.

    Fields:
        soc: the SoC name.
        status: the run's exit status.
        reports: its launch reports as ``KernelReport.to_json`` dicts, in launch order.
        error: the last line of the script's error when it raised, else None.
    """

    soc: str
    status: int
    reports: tuple[dict, ...]
    error: str | None


def drop_platform(args: Sequence[str]) -> tuple[list[str], str | None]:
    """The script's arguments without its ``-v PLATFORM`` (diff chooses the SoC), and the
    platform that was dropped (None if there was none)."""
    out: list[str] = []
    dropped = None
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "-v" and i + 1 < len(args):
            dropped, skip = args[i + 1], True
        elif arg.startswith("-v") and not arg.startswith("--") and len(arg) > 2:
            dropped = arg[2:].lstrip("=")
        else:
            out.append(arg)
    return out, dropped


def _error_line(stderr: str) -> str | None:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if not line.startswith(("WARNING", "warnings.warn")):
            return line
    return None


def run_on(soc: str, script: str, args: Sequence[str], timing_only: bool = False) -> SocRun:
    """Run ``script`` with ``args`` on ``soc`` in a fresh process; its reports and error."""
    fd, path = tempfile.mkstemp(prefix="ascsim-diff-", suffix=".json")
    os.close(fd)
    try:
        cmd = [sys.executable, "-m", "ascsim", "run", "--quiet", "--soc", soc, "--json", path]
        if timing_only:
            cmd.append("--timing-only")
        proc = subprocess.run([*cmd, script, *args], capture_output=True, text=True)
        try:
            with open(path) as fh:
                reports = tuple(json.load(fh)["reports"])
        except (OSError, ValueError, KeyError):
            reports = ()
    finally:
        os.unlink(path)
    error = _error_line(proc.stderr) if proc.returncode else None
    return SocRun(soc, proc.returncode, reports, error)


@dataclass(frozen=True)
class KernelPair:
    """The ``occurrence``-th launch of ``kernel`` on each SoC (None where there was none)."""

    kernel: str
    occurrence: int
    a: dict | None
    b: dict | None


def pair_launches(a: Sequence[dict], b: Sequence[dict]) -> list[KernelPair]:
    """Launches paired by kernel name and occurrence, in A's launch order then B's extras."""
    def keyed(reports):
        seen: dict[str, int] = {}
        out = {}
        for r in reports:
            n = seen[r["kernel"]] = seen.get(r["kernel"], 0) + 1
            out[(r["kernel"], n)] = r
        return out

    ka, kb = keyed(a), keyed(b)
    order = list(ka) + [k for k in kb if k not in ka]
    return [KernelPair(k, n, ka.get((k, n)), kb.get((k, n))) for k, n in order]


def finding_key(f: dict) -> tuple:
    return (f["category"], tuple((loc["file"], loc["line"]) for loc in f["locations"]))


@dataclass(frozen=True)
class FindingDiff:
    """Findings matched by :func:`finding_key`: on A only, on B only, and how many on both."""

    only_a: tuple[dict, ...]
    only_b: tuple[dict, ...]
    both: int


def diff_findings(a: dict | None, b: dict | None) -> FindingDiff:
    fa = {finding_key(f): f for f in (a or {}).get("findings", ())}
    fb = {finding_key(f): f for f in (b or {}).get("findings", ())}
    return FindingDiff(tuple(f for k, f in fa.items() if k not in fb),
                       tuple(f for k, f in fb.items() if k not in fa),
                       sum(1 for k in fa if k in fb))


def _lines(f: dict) -> str:
    return ", ".join(f"{os.path.basename(loc['file'])}:{loc['line']}" for loc in f["locations"])


def _time(r: dict | None) -> str:
    if r is None:
        return "not launched"
    failed = " (stopped with an error)" if r.get("failed") else ""
    return f"{r['device_time_us']:.2f}{failed}"


def _pipe(r: dict | None, pipe: str) -> str:
    if r is None:
        return "-"
    busy = r["pipe_busy_us"].get(pipe)
    if busy is None:
        return "-"
    span = r["device_time_us"] - r["launch_overhead_us"]
    share = busy / span if span > 0 else 0.0
    return f"{busy:.3f} ({share:.0%})"


def _bound(r: dict | None) -> str:
    profile = (r or {}).get("profile")
    return profile["bound"] if profile else "-"


def pair_table(pair: KernelPair, soc_a: str, soc_b: str) -> Table:
    a, b = pair.a, pair.b
    nth = f" (launch {pair.occurrence} of it)" if pair.occurrence > 1 else ""
    table = Table(title=f"{pair.kernel}{nth}", title_justify="left", show_edge=False)
    table.add_column("")
    table.add_column(soc_a, justify="right")
    table.add_column(soc_b, justify="right")
    table.add_column("ratio", justify="right")
    ratio = "-"
    whole = a is not None and b is not None and not a.get("failed") and not b.get("failed")
    if whole and a["device_time_us"] > 0:
        ratio = f"{b['device_time_us'] / a['device_time_us']:.2f}x"
    table.add_row("device time µs", _time(a), _time(b), ratio)
    table.add_row("blocks", *(str(r["block_num"]) if r else "-" for r in (a, b)), "")
    table.add_row("bound", _bound(a), _bound(b), "")
    for pipe in PIPE_ORDER:
        if any(r is not None and pipe in r["pipe_busy_us"] for r in (a, b)):
            ra = (a or {}).get("pipe_busy_us", {}).get(pipe)
            rb = (b or {}).get("pipe_busy_us", {}).get(pipe)
            change = f"{rb / ra:.2f}x" if whole and ra and rb else ""
            table.add_row(f"{PIPE_LABELS[pipe]} µs (share)", _pipe(a, pipe), _pipe(b, pipe),
                          change)
    return table


def findings_table(found: FindingDiff, soc_a: str, soc_b: str) -> Table | None:
    if not found.only_a and not found.only_b:
        return None
    table = Table(title="findings on one SoC and not the other", title_justify="left",
                  show_edge=False)
    for col in ("finding", "line(s)", soc_a, soc_b, "message"):
        table.add_column(col, overflow="fold")
    for f, on_a in [(f, True) for f in found.only_a] + [(f, False) for f in found.only_b]:
        table.add_row(f["category"], _lines(f), "yes" if on_a else "-",
                      "-" if on_a else "yes", f["message"])
    return table


def render(run_a: SocRun, run_b: SocRun, console: Console) -> bool:
    """Print the comparison; True when the two runs differ (kernels, findings or errors)."""
    differ = False
    console.print(f"[bold]ascsim diff[/]: {run_a.soc} vs {run_b.soc}", highlight=False)
    for run in (run_a, run_b):
        if run.status:
            differ = True
            console.print(f"[bold red]the script failed on {run.soc}[/] (exit {run.status}): "
                          f"{run.error or 'no error message'}", highlight=False)
    for pair in pair_launches(run_a.reports, run_b.reports):
        console.print()
        console.print(pair_table(pair, run_a.soc, run_b.soc))
        if pair.a is None or pair.b is None:
            differ = True
            missing = run_a.soc if pair.a is None else run_b.soc
            console.print(f"[yellow]{pair.kernel} was not launched on {missing}[/]",
                          highlight=False)
        found = diff_findings(pair.a, pair.b)
        table = findings_table(found, run_a.soc, run_b.soc)
        if table is not None:
            differ = True
            console.print(table)
        if found.both:
            console.print(f"{found.both} finding(s) on both SoCs", highlight=False)
    console.print()
    console.print("the SoCs differ: see above" if differ else
                  "same kernels and findings on both SoCs", highlight=False)
    return differ


def diff_script(script: str, args: Sequence[str], socs: Sequence[str], console: Console,
                timing_only: bool = False) -> int:
    """``ascsim diff``: the exit status of the module docstring."""
    from ascsim.hw import get_soc

    if len(socs) != 2:
        console.print("[red]ascsim diff:[/] give exactly two SoCs: --soc A --soc B")
        return 2
    try:
        names = [get_soc(s).name for s in socs]
    except ValueError as exc:
        console.print(f"[red]ascsim diff:[/] --soc: {exc}")
        return 2
    if not os.path.isfile(script):
        console.print(f"[red]ascsim diff:[/] no such script: {script}")
        return 2
    args, dropped = drop_platform(args)
    if dropped is not None:
        console.print(f"ascsim diff: the script's -v {dropped} is dropped: each run gets its "
                      "SoC from --soc", highlight=False)
    # The two runs are independent processes: run them side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(lambda name: run_on(name, script, args, timing_only), names))
    return 1 if render(runs[0], runs[1], console) else 0
