"""The ``ascsim`` command: run | check | info | demo | bench | tune."""

from __future__ import annotations

import argparse
import json
import sys
import traceback

from rich.console import Console


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", metavar="FILE", help="write a Chrome/Perfetto trace of every launch")
    p.add_argument("--json", metavar="FILE", help="write reports and findings as JSON")
    p.add_argument("--strict", action="store_true",
                   help="raise at the first finding (also ASCSIM_STRICT=1)")
    p.add_argument("--quiet", action="store_true", help="print no report")
    p.add_argument("--no-cores", action="store_true", help="omit the per-core table")
    p.add_argument("--profile", action="store_true",
                   help="print per-pipe time, bound, bytes per path and throughput vs peak")


def _add_script(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", help="the pyasc script to run")
    p.add_argument("args", nargs=argparse.REMAINDER,
                   help="arguments for the script (e.g. -r Model -v Ascend910B1); ascsim's own "
                   "options may also follow the script; everything after '--' goes to the "
                   "script untouched")


def _pull_own_options(ns) -> None:
    """Let ascsim's options follow the script name too (``ascsim run s.py -v X --trace t``)."""
    args = list(ns.args)
    tail: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, tail = args[:cut], args[cut + 1:]
    own = argparse.ArgumentParser(add_help=False)
    _add_run_options(own)
    found, rest = own.parse_known_args(args)
    defaults = vars(own.parse_args([]))
    for name, value in vars(found).items():
        if value != defaults[name]:
            setattr(ns, name, value)
    ns.args = rest + tail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ascsim", description=(
        "Run, check and time Ascend (pyasc) kernels on a simulated AI Core."))
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a pyasc script on the simulator")
    _add_run_options(run)
    _add_script(run)
    check = sub.add_parser("check", help="run a script and report kernel problems (exit 1 if any)")
    _add_run_options(check)
    _add_script(check)
    info = sub.add_parser("info", help="list the simulated SoCs, or show one")
    info.add_argument("soc", nargs="?")
    sub.add_parser("demo", help="run the bundled examples and show what ascsim reports")
    from ascsim.bench.cli import add_parser as add_bench_parser

    add_bench_parser(sub)
    from ascsim.tune.cli import add_parser as add_tune_parser

    add_tune_parser(sub)
    return parser


def _run(ns, console: Console) -> int:
    import os

    from ascsim.display import print_reports
    from ascsim.runner import NpuRequested, run_script
    from ascsim.session import SESSION
    from ascsim.sim.trace import write_trace

    _pull_own_options(ns)
    SESSION.strict = ns.strict or os.environ.get("ASCSIM_STRICT") == "1"
    status = 0
    # Every launch of the script is printed at the end (and drawn, with --trace).
    with SESSION.collect(launches=bool(ns.trace)) as run:
        try:
            run_script(ns.script, ns.args)
        except NpuRequested as exc:
            console.print(f"[red]ascsim:[/] {exc}")
            return 2
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - show the script's error, then what ran
            traceback.print_exc()
            status = 1
    reports = run.reports
    if not ns.quiet:
        print_reports(reports, console, cores=not ns.no_cores)
        if ns.profile:
            from ascsim.display import print_profiles

            print_profiles(reports, console)
    if ns.trace:
        n = write_trace(ns.trace, run.launches, reports)
        console.print(f"trace: {ns.trace} ({n} events) — open it in https://ui.perfetto.dev "
                      "or chrome://tracing")
    if ns.json:
        with open(ns.json, "w") as fh:
            json.dump({"reports": [r.to_json() for r in reports]}, fh, indent=1)
    if ns.command == "check":
        findings = sum(len(r.findings) for r in reports)
        if findings == 0 and status == 0:
            console.print("[green]no findings[/]")
        return status or (1 if findings else 0)
    return status


def _info(ns, console: Console) -> int:
    from rich.table import Table

    from ascsim.hw import get_soc, soc_names

    if ns.soc:
        soc = get_soc(ns.soc)
        table = Table(title=soc.name, show_edge=False)
        table.add_column("field")
        table.add_column("value")
        for name in ("family", "npu_arch", "aic_count", "aiv_count", "clock_mhz", "ub_bytes",
                     "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "bt_bytes",
                     "gm_bandwidth_bytes_per_cycle"):
            table.add_row(name, str(getattr(soc, name)))
        table.add_row("paths", ", ".join(sorted(soc.paths)))
        console.print(table)
        return 0
    table = Table(show_edge=False)
    for col in ("SoC", "AIC", "AIV", "MHz", "UB KiB", "L0C KiB", "GM TB/s"):
        table.add_column(col)
    for name in soc_names():
        soc = get_soc(name)
        table.add_row(name, str(soc.aic_count), str(soc.aiv_count), f"{soc.clock_mhz:.0f}",
                      str(soc.ub_bytes // 1024), str(soc.l0c_bytes // 1024),
                      f"{soc.gm_bandwidth_bytes_per_s / 1e12:.2f}")
    console.print(table)
    return 0


def _demo(ns, console: Console) -> int:
    from ascsim.demo import run_demo

    return run_demo(console)


def _bench(ns, console: Console) -> int:
    from ascsim.bench.cli import run as run_bench_cli

    return run_bench_cli(ns, console)


def _tune(ns, console: Console) -> int:
    from ascsim.tune.cli import run as run_tune_cli

    return run_tune_cli(ns, console)


def main(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    # Tables are wider than a pipe's default 80 columns; keep them readable in logs too.
    console = Console(width=None if sys.stdout.isatty() else 110)
    handlers = {"run": _run, "check": _run, "info": _info, "demo": _demo,
                "bench": _bench, "tune": _tune}
    return handlers[ns.command](ns, console)


if __name__ == "__main__":
    sys.exit(main())
