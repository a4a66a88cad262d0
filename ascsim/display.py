"""Terminal output of launch reports (rich tables)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ascsim.sim.report import PIPE_LABELS, KernelReport

PIPE_ORDER = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")
MAX_CORE_ROWS = 8


def report_table(report: KernelReport) -> Table:
    busy = report.pipe_busy_us()
    share = report.pipe_share()
    failed = " [stopped with an error: times cover what ran]" if report.failed else ""
    if not report.values_computed:
        failed += " [TIMING ONLY: the outputs were not computed]"
    title = (f"{report.kernel}{failed} on {report.soc}: {report.block_num} block(s) "
             f"{report.kernel_type}, "
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


def print_reports(reports, console: Console | None = None, cores: bool = True,
                  findings: bool = True) -> None:
    """Each report's table (and per-core table), and its findings unless ``findings`` is
    False (``--report-format mssanitizer`` prints them in its own shape)."""
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
        if findings:
            print_findings(report, console)


def _si(value: float, unit: str) -> str:
    """``value`` with a k/M/G/T prefix, e.g. 1.2e12 FLOP/s -> "1.20 TFLOP/s"."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value:.2f} {unit}"


def profile_tables(report: KernelReport) -> list:
    """msprof-pipeline-detail-style tables of ``report.profile`` (empty if it has none)."""
    prof = report.profile
    if prof is None:
        return []
    header = Text.assemble(
        (f"profile of {report.kernel} on {report.soc}", "bold"),
        f": total {prof.total_us:.2f} µs = {prof.launch_overhead_us:.2f} launch + "
        f"{prof.span_us:.2f} on the cores ({prof.aic_used} AIC, {prof.aiv_used} AIV"
        + (f", {prof.startup_us:.2f} µs start-up scalar work" if prof.startup_us else "")
        + "); bound: ", (prof.bound, "bold"))
    pipes = Table(title="pipe utilisation (share of the time on the cores)",
                  title_justify="left", show_edge=False)
    for col in ("pipe", "busiest core µs", "share", "mean µs", "share", "cores"):
        pipes.add_column(col, justify="left" if col == "pipe" else "right")
    for p in prof.pipes:
        pipes.add_row(p.label, f"{p.max_us:.3f}", f"{p.max_share:.0%}", f"{p.mean_us:.3f}",
                      f"{p.mean_share:.0%}", str(p.cores))

    paths = Table(title="bytes moved per path", title_justify="left", show_edge=False)
    for col in ("path", "bytes", "MiB"):
        paths.add_column(col, justify="left" if col == "path" else "right")
    for path, n in prof.bytes_by_path.items():
        paths.add_row(path, f"{n:,}", f"{n / 2**20:.3f}")

    rates = Table(title="throughput vs the SoC's peak (over the time on the cores)",
                  title_justify="left", show_edge=False)
    for col in ("unit", "achieved", "chip peak", "% of peak", "% of cores used"):
        rates.add_column(col, justify="left" if col == "unit" else "right")
    rates.add_row("GM bandwidth", _si(prof.gm_bandwidth_bytes_per_s, "B/s"),
                  _si(prof.gm_peak_bytes_per_s, "B/s"), f"{prof.gm_util:.1%}", "-")
    if prof.cube_flops or prof.aic_used:
        rates.add_row(f"Cube ({prof.cube_dtype})", _si(prof.cube_flops_per_s, "FLOP/s"),
                      _si(prof.cube_peak_flops_per_s, "FLOP/s"), f"{prof.cube_util:.1%}",
                      f"{prof.cube_util_used:.1%} of {prof.aic_used} AIC")
    if prof.vector_bytes or prof.aiv_used:
        rates.add_row("Vector (bytes processed)", _si(prof.vector_bytes_per_s, "B/s"),
                      _si(prof.vector_peak_bytes_per_s, "B/s"), f"{prof.vector_util:.1%}",
                      f"{prof.vector_util_used:.1%} of {prof.aiv_used} AIV")
    out = [header, pipes, paths, rates]
    roof = prof.roofline
    if roof is not None:
        work = "FLOP" if roof.unit == "FLOP" else "vector B"
        point = Table(title="roofline point", title_justify="left", show_edge=False)
        point.add_column("quantity")
        point.add_column("value", justify="right")
        point.add_row(f"intensity ({work} per GM byte)", f"{roof.intensity:.3g}")
        point.add_row("ridge (compute roof / GM roof)", f"{roof.ridge:.3g}")
        point.add_row("side of the ridge", roof.regime)
        point.add_row(f"achieved ({work}/s)", _si(roof.achieved_per_s, f"{roof.unit}/s"))
        point.add_row("attainable at this intensity",
                      _si(roof.attainable_per_s, f"{roof.unit}/s"))
        point.add_row("achieved / attainable", f"{roof.achieved_per_s / roof.attainable_per_s:.1%}")
        out.append(point)
    return out


def print_profiles(reports, console: Console | None = None) -> None:
    """Print the profile tables of every report (``ascsim run --profile``)."""
    console = console or Console(stderr=False)
    for report in reports:
        for table in profile_tables(report):
            console.print()
            console.print(table)


def print_findings(report: KernelReport, console: Console) -> None:
    if not report.findings:
        return
    console.print(f"[bold red]{len(report.findings)} finding(s) in {report.kernel}:[/]")
    for finding in report.findings:
        console.print("  " + finding.format(), markup=False, highlight=False)
