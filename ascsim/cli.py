"""The ``ascsim`` command: run | check | info | diff | demo | bench | tune."""

from __future__ import annotations

import argparse
import json
import sys

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
    p.add_argument("--timing-only", action="store_true",
                   help="time and check the kernels without computing values: outputs are "
                   "left as they were (also ASCSIM_TIMING_ONLY=1)")
    p.add_argument("--msprof", metavar="DIR",
                   help="also write msprof's files for every launch into DIR: op_summary.csv, "
                   "and per launch OpBasicInfo.csv, PipeUtilization.csv, per-core code_exe.csv "
                   "/ instr_exe.csv hotspots and a MindStudio Insight trace.json")
    p.add_argument("--report-format", choices=("ascsim", "mssanitizer"), default="ascsim",
                   help="print findings in ascsim's form (default) or msSanitizer's report "
                   "shape")
    p.add_argument("--budget", metavar="FILE",
                   help="a YAML budget of device times (kernel, SoC, shapes -> µs, tolerance): "
                   "exit 1 with a table when a launch is slower than its budget")
    p.add_argument("--budget-write", metavar="FILE",
                   help="write (or update) a budget file with this run's device times")
    p.add_argument("--tolerance", type=float, default=None, metavar="FRACTION",
                   help="with --budget-write: the tolerance written for new entries "
                   "(default 0.02, i.e. 2 %%)")
    p.add_argument("--soc", metavar="NAME",
                   help="the simulated SoC for scripts that name none (a script's -v wins); "
                   "default Ascend910B1")
    p.add_argument("--no-provenance", action="store_true",
                   help="keep no record of who wrote each GM element (a failed comparison of "
                   "an output is then not explained)")
    p.add_argument("--race-impact", action=argparse.BooleanOptionalAction, default=None,
                   help="re-simulate each race in the other order and say whether it changes "
                   "the outputs or the script's own check (default: on for check, off for run)")
    p.add_argument("--critical-path", action="store_true",
                   help="print the chain of instructions and waits that sets each launch's "
                   "time, each wait's blocked time, and the waits proven redundant by running "
                   "the script again without them (with --trace: the path as arrows)")
    p.add_argument("--what-if", metavar="CHANGE",
                   help="run the script again with one change and compare times, outputs and "
                   "findings: drop=FILE:LINE (a wait), buffers=FILE:LINE[xN] (a queue's "
                   "buffers), soc=NAME, cores=N")
    # Internal: the re-simulation process of --what-if / --critical-path (ascsim/resim.py).
    p.add_argument("--apply", metavar="CHANGE", help=argparse.SUPPRESS)


def _add_script(p: argparse.ArgumentParser) -> None:
    p.add_argument("-m", dest="module", metavar="MODULE",
                   help="run MODULE as 'python -m' does (e.g. -m pytest FILE); everything after "
                   "MODULE goes to it, so put ascsim's own options before -m")
    p.add_argument("script", nargs="?", help="the pyasc script to run")
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


def _split_module_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """``run [options] -m MODULE args...``: (argv up to MODULE, the module's own args).

    argparse would read the module's options (pytest's ``-q``, ``-v``) as ascsim's; they are cut
    off first. Without a ``-m`` before the script name, argv is returned whole.
    """
    if len(argv) < 2 or argv[0] not in ("run", "check"):
        return argv, []
    head = build_parser()
    for i, arg in enumerate(argv[1:], start=1):
        if arg == "-m" and i + 1 < len(argv):
            ns = head.parse_known_args(argv[:i])[0]
            if ns.script is None:
                return argv[: i + 2], argv[i + 2:]
            return argv, []
    return argv, []


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
    info = sub.add_parser("info", help="list the simulated SoCs, or show one; --api: pyasc "
                          "API coverage")
    info.add_argument("soc", nargs="?")
    info.add_argument("--api", action="store_true",
                      help="how many of pyasc's exported names ascsim implements, per module")
    info.add_argument("--list", action="store_true",
                      help="with --api: also list the names that refuse or are missing")
    diff = sub.add_parser("diff", help="run a script on two SoCs and compare its kernels side "
                          "by side (times, pipes, findings); exit 1 when they differ")
    diff.add_argument("--soc", action="append", default=[], metavar="NAME", required=True,
                      help="a SoC to run on; give it twice: --soc A --soc B")
    diff.add_argument("--timing-only", action="store_true",
                      help="time and check without computing values (faster)")
    diff.add_argument("script", help="the script to run")
    diff.add_argument("args", nargs=argparse.REMAINDER,
                      help="arguments for the script (its -v PLATFORM is dropped)")
    sub.add_parser("demo", help="run the bundled examples and show what ascsim reports")
    from ascsim.bench.cli import add_parser as add_bench_parser

    add_bench_parser(sub)
    from ascsim.tune.cli import add_parser as add_tune_parser

    add_tune_parser(sub)
    return parser


def _run(ns, console: Console) -> int:
    from ascsim.resim import changes_undone

    with changes_undone():
        return _run_script(ns, console)


def _run_script(ns, console: Console) -> int:
    import os

    from ascsim import assert_hooks
    from ascsim.display import print_reports
    from ascsim.runner import print_script_error, run_module, run_script
    from ascsim.session import SESSION
    from ascsim.sim.trace import write_trace

    if ns.module is None:
        if ns.script is None:
            console.print("[red]ascsim:[/] give a script to run, or -m MODULE")
            return 2
        _pull_own_options(ns)
    if ns.soc:
        try:
            SESSION.request_soc(ns.soc)
        except ValueError as exc:
            console.print(f"[red]ascsim:[/] --soc: {exc}")
            return 2
    SESSION.strict = ns.strict or os.environ.get("ASCSIM_STRICT") == "1"
    if ns.timing_only:
        SESSION.timing_only = True
    SESSION.provenance = not ns.no_provenance
    assert_hooks.install()
    resim = _resim_setup(ns, console)
    if resim is None:
        return 2
    status = 0
    # Every launch of the script is printed at the end (and drawn, with --trace).
    keep = bool(ns.trace or ns.msprof or ns.critical_path or ns.what_if)
    with SESSION.collect(launches=keep) as run:
        try:
            if ns.module is not None:
                run_module(ns.module, ns.module_args)
            else:
                run_script(ns.script, ns.args)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # noqa: BLE001 - show the script's error, then what ran
            print_script_error(exc)
            explained = assert_hooks.pending_report(exc)
            if explained:
                print(explained, file=sys.stderr, flush=True)
            status = 1
    reports = run.reports
    if any(not r.values_computed for r in reports):
        console.print("[bold yellow]ascsim: timing-only run: the kernels' outputs were not "
                      "computed; the script's own result checks cannot pass[/]")
    sanitizer = ns.report_format == "mssanitizer"
    if not ns.quiet:
        print_reports(reports, console, cores=not ns.no_cores, findings=not sanitizer)
        if ns.profile:
            from ascsim.display import print_profiles

            print_profiles(reports, console)
    if sanitizer:
        from ascsim.formats.mssanitizer import format_report

        print(format_report(reports), flush=True)
    if ns.msprof:
        from ascsim.formats.msprof import write_msprof

        try:
            written = write_msprof(ns.msprof, run.launches, reports)
        except OSError as exc:
            console.print(f"[red]ascsim:[/] --msprof: cannot write {ns.msprof}: {exc}")
            status = status or 2
        else:
            console.print(f"msprof: {len(written)} files in {ns.msprof} (op_summary.csv, and "
                          "per launch OPPROF_<nn>_<kernel>/)", highlight=False)
    gate = _budget(ns, reports, console)  # the script's own failure comes first
    status = status or gate
    digests, change = resim
    if ns.critical_path or change is not None:
        _critical_and_what_if(ns, run, status, digests, change, console)
    if ns.trace:
        n = write_trace(ns.trace, run.launches, reports)
        console.print(f"trace: {ns.trace} ({n} events) — open it in https://ui.perfetto.dev "
                      "or chrome://tracing")
    impacts = _race_impact(ns, reports, console)
    if ns.json:
        data = {"reports": [r.to_json() for r in reports]}
        if digests is not None:
            data["outputs"] = digests.digests
        paths = [getattr(launch, "critical_path", None) for launch in run.launches]
        if any(paths):
            data["critical_paths"] = [p.to_json() if p else None for p in paths]
        if impacts:
            data["race_impact"] = [{"kernel": i.site.kernel, "launch": i.site.launch,
                                    "hazard": i.site.hazard, "harmful": i.harmful,
                                    "changed": i.changed, "check_before": i.check_before,
                                    "check_after": i.check_after, "note": i.note,
                                    "lines": [list(i.site.first), list(i.site.second)]}
                                   for i in impacts]
        with open(ns.json, "w") as fh:
            json.dump(data, fh, indent=1)
    if ns.command == "check":
        findings = sum(len(r.findings) for r in reports)
        if findings == 0 and status == 0:
            console.print("[green]no findings[/]")
        return status or (1 if findings else 0)
    return status


def _race_impact(ns, reports, console: Console) -> list:
    """``--race-impact`` (on by default under check): each race finding of the run judged by
    re-running the script with the race's other order (ascsim/race_impact.py)."""
    wanted = ns.race_impact if ns.race_impact is not None else ns.command == "check"
    found = [(i, r.kernel, f) for i, r in enumerate(reports) for f in r.findings
             if f.category in ("race", "cross-core-race")]
    if not wanted or not found or any(not r.values_computed for r in reports):
        return []
    from ascsim.race_impact import assess, format_impacts
    from ascsim.runner import run_module, run_script

    def work() -> None:
        if ns.module is not None:
            run_module(ns.module, ns.module_args)
        else:
            run_script(ns.script, ns.args)

    impacts = assess(work, found)
    if impacts:
        console.print(format_impacts(impacts), highlight=False, markup=False)
    return impacts


def _resim_setup(ns, console: Console):
    """For --critical-path, --what-if and the internal --apply: record causes, keep a digest of
    each launch's GM, make the change. (digests or None, the what-if's change or None), or
    None on a usage error."""
    from ascsim import resim
    from ascsim.session import SESSION

    digests = None
    change = None
    try:
        if ns.what_if:
            change = resim.Change.parse(ns.what_if)
        if ns.apply:
            resim.apply_change(resim.Change.parse(ns.apply))
    except resim.ChangeError as exc:
        console.print(f"[red]ascsim:[/] --{'what-if' if ns.what_if else 'apply'}: {exc}")
        return None
    if (ns.what_if or ns.critical_path) and ns.module is not None:
        console.print("[red]ascsim:[/] --what-if and --critical-path run a script, not -m")
        return None
    if ns.critical_path or ns.what_if or ns.apply:
        resim.seed_generators()
        digests = resim.OutputDigests()
        SESSION.observer_factories.append(digests)
    if ns.critical_path or ns.what_if:
        SESSION.record_causes = True
    return digests, change


def _critical_and_what_if(ns, run, status: int, digests, change, console: Console) -> None:
    from ascsim.resim import ChangeError, Outcome

    baseline = Outcome(status, tuple(r.to_json() for r in run.reports),
                       tuple(digests.digests))
    if ns.critical_path:
        from ascsim.critical import report_critical_paths

        report_critical_paths(run.launches, run.reports, console, ns.script, ns.args, baseline,
                              timing_only=ns.timing_only)
    if change is not None:
        from ascsim.sim.critical_path import wait_sites
        from ascsim.what_if import resolve, what_if

        try:
            change = resolve(change, wait_sites(run.launches))
        except ChangeError as exc:
            console.print(f"[red]ascsim:[/] --what-if: {exc}", soft_wrap=True)
            return
        what_if(change, ns.script, ns.args, baseline, console, timing_only=ns.timing_only)


def _budget(ns, reports, console: Console) -> int:
    """``--budget-write``, then ``--budget``: 1 when a launch is over its budget."""
    from ascsim import budget

    if ns.budget_write:
        try:
            n = budget.write_budget(ns.budget_write, reports, tolerance=ns.tolerance)
        except budget.BudgetError as exc:
            console.print(f"[red]ascsim:[/] --budget-write: {exc}")
            return 2
        console.print(f"budget: {n} entries in {ns.budget_write}", highlight=False)
    if not ns.budget:
        return 0
    try:
        book = budget.load_budget(ns.budget)
    except (OSError, budget.BudgetError) as exc:
        console.print(f"[red]ascsim:[/] --budget: {exc}")
        return 2
    verdict = budget.check(book, reports)
    console.print(budget.verdict_table(verdict))
    console.print(verdict.summary(), highlight=False, soft_wrap=True)
    return 1 if verdict.failed else 0


def _api_coverage(ns, console: Console) -> int:
    from rich.table import Table

    from ascsim.asc.api_coverage import STATES, coverage

    modules = coverage()
    table = Table(title="pyasc's exported names in ascsim", show_edge=False)
    for col in ("module", "names", *STATES, "implemented %"):
        table.add_column(col, justify="left" if col == "module" else "right")
    totals = dict.fromkeys(STATES, 0)
    for cov in modules:
        counts = [cov.count(state) for state in STATES]
        for state, n in zip(STATES, counts):
            totals[state] += n
        table.add_row(cov.module, str(cov.total), *map(str, counts),
                      f"{100.0 * counts[0] / cov.total:.1f}" if cov.total else "-")
    total = sum(totals.values())
    table.add_row("total", str(total), *(str(totals[s]) for s in STATES),
                  f"{100.0 * totals['implemented'] / total:.1f}" if total else "-")
    console.print(table)
    if ns.list:
        for cov in modules:
            for state in STATES[1:]:
                if cov.names[state]:
                    console.print(f"[bold]{cov.module}[/] {state} ({cov.count(state)}): "
                                  + ", ".join(cov.names[state]), soft_wrap=False)
    return 0


def _info(ns, console: Console) -> int:
    from rich.table import Table

    from ascsim.hw import get_soc, soc_names

    if ns.api:
        return _api_coverage(ns, console)
    if ns.soc:
        soc = get_soc(ns.soc)
        table = Table(title=soc.name, show_edge=False)
        table.add_column("field")
        table.add_column("value")
        for name in ("family", "npu_arch", "aic_count", "aiv_count", "clock_mhz", "ub_bytes",
                     "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "bt_bytes",
                     "l0a_mx_bytes", "l0b_mx_bytes", "gm_bandwidth_bytes_per_cycle"):
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


def _diff(ns, console: Console) -> int:
    from ascsim.diff import diff_script

    return diff_script(ns.script, ns.args, ns.soc, console, timing_only=ns.timing_only)


def _demo(ns, console: Console) -> int:
    from ascsim.demo import run_demo

    return run_demo(console)


def _bench(ns, console: Console) -> int:
    from ascsim.session import SESSION

    SESSION.provenance = True  # a failed precision rule explains its output
    from ascsim.bench.cli import run as run_bench_cli

    return run_bench_cli(ns, console)


def _tune(ns, console: Console) -> int:
    from ascsim.tune.cli import run as run_tune_cli

    return run_tune_cli(ns, console)


def main(argv: list[str] | None = None) -> int:
    argv, module_args = _split_module_args(sys.argv[1:] if argv is None else list(argv))
    ns = build_parser().parse_args(argv)
    ns.module_args = module_args
    # Tables are wider than a pipe's default 80 columns; keep them readable in logs too.
    console = Console(width=None if sys.stdout.isatty() else 110)
    handlers = {"run": _run, "check": _run, "info": _info, "diff": _diff, "demo": _demo,
                "bench": _bench, "tune": _tune}
    return handlers[ns.command](ns, console)


if __name__ == "__main__":
    sys.exit(main())
