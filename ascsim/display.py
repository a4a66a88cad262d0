"""Terminal output of launch reports (rich tables)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ascsim.sim.report import PIPE_LABELS, KernelReport

PIPE_ORDER = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")
MAX_CORE_ROWS = 8


def report_table(report: KernelReport) -> Table:
    busy = report.pipe_busy_us()
    share = report.pipe_share()
    title = (f"{report.kernel} on {report.soc}: {report.block_num} block(s) {report.kernel_type}, "
             f"device time {report.device_time_us:.2f} µs "
             f"(incl. {report.launch_overhead_us:.2f} µs launch)")
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("pipe")
    table.add_column("busy µs (busiest core)", justify="right")
    table.add_column("share", justify="right")
    for pipe in PIPE_ORDER:
        if pipe in busy:
            table.add_row(PIPE_LABELS[pipe], f"{busy[pipe]:.3f}", f"{share[pipe]:.0%}")
    return table


def core_table(report: KernelReport) -> Table:
    table = Table(show_edge=False, title="per-core time (µs)", title_justify="left")
    table.add_column("core")
    table.add_column("kind")
    table.add_column("block", justify="right")
    table.add_column("start", justify="right")
    table.add_column("end", justify="right")
    table.add_column("busiest pipe")
    cores = report.cores
    shown = cores if len(cores) <= MAX_CORE_ROWS else sorted(
        cores, key=lambda c: c.time_us, reverse=True)[:MAX_CORE_ROWS]
    for c in shown:
        top = max(c.pipe_busy_us.items(), key=lambda kv: kv[1], default=("-", 0.0))
        table.add_row(str(c.core_id), c.kind, str(c.block_idx), f"{c.start_us:.3f}",
                      f"{c.end_us:.3f}", f"{PIPE_LABELS.get(top[0], top[0])} {top[1]:.3f}")
    if len(cores) > MAX_CORE_ROWS:
        times = [c.time_us for c in cores]
        table.caption = (f"{len(cores)} cores, slowest {MAX_CORE_ROWS} shown; time min "
                         f"{min(times):.3f} / mean {sum(times) / len(times):.3f} / max "
                         f"{max(times):.3f} µs")
    return table


def print_reports(reports, console: Console | None = None, cores: bool = True) -> None:
    console = console or Console(stderr=False)
    for report in reports:
        console.print()
        table = report_table(report)
        # The title is a whole sentence: print it on its own line rather than wrapped.
        console.print(table.title, highlight=False)
        table.title = None
        console.print(table)
        if cores:
            console.print(core_table(report))
        print_findings(report, console)


def print_findings(report: KernelReport, console: Console) -> None:
    if not report.findings:
        return
    console.print(f"[bold red]{len(report.findings)} finding(s) in {report.kernel}:[/]")
    for finding in report.findings:
        console.print("  " + finding.format(), markup=False, highlight=False)
