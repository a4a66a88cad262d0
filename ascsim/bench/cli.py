"""``ascsim bench OP --soc SOC --variant all|semi|fused|unfused|auto --report DIR``
``[--tune [--tune-budget N] [--workers N] [--ray [ADDRESS]]] [--no-tuned]``, or
``ascsim bench OP --package DIR|MODULE [--timeout S]`` for a user's operator package.

OP is a built-in task (``ascsim/bench/tasks/OP.yaml``), a task file, a cann-bench task folder
(holding proto.yaml), or — with ``--cann-bench ROOT`` — a cann-bench task's name under
ROOT/tasks or ROOT/bench_lab. ``ascsim bench --cann-bench ROOT --list [--package PKG]`` lists
every task there; ``ascsim bench --cann-bench ROOT --all --package PKG`` runs every task the
package implements."""

from __future__ import annotations

import argparse
import contextlib
import importlib
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape

from ascsim.argtypes import case_ids, positive_int

VARIANT_CHOICES = {"all": ("semi", "fused", "unfused"), "semi": ("semi",),
                   "fused": ("fused",), "unfused": ("unfused",), "auto": ("auto",)}


def add_parser(sub) -> argparse.ArgumentParser:
    from ascsim.bench.tasks import available_tasks

    p = sub.add_parser("bench", help="run an operator's cann-bench cases and score them")
    p.add_argument("op", nargs="?", help=f"the operator / task ({', '.join(available_tasks())}"
                   "), a task file, a cann-bench task folder, or with --cann-bench a "
                   "cann-bench task's name")
    p.add_argument("--soc", default="Ascend950PR_9579", help="SoC to simulate")
    p.add_argument("--variant", default="all", choices=sorted(VARIANT_CHOICES),
                   help="all = semi, fused and unfused")
    p.add_argument("--report", metavar="DIR", help="write JSON, Markdown and HTML reports here")
    p.add_argument("--cases", metavar="IDS", type=case_ids,
                   help="comma-separated case ids, e.g. 1,2,5")
    p.add_argument("--quick", action="store_true", help="only the size-class S cases")
    p.add_argument("--tune", action="store_true",
                   help="first tune each case's knobs per variant on this SoC (stored in "
                   "ascsim/tune/data; the bench then runs on them)")
    p.add_argument("--tune-budget", type=int, default=16, metavar="N",
                   help="configurations tried per case and variant (default 16)")
    p.add_argument("--workers", type=positive_int, default=None, help="parallel tuning trials")
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="tune on Ray ('auto': a local cluster)")
    p.add_argument("--no-tuned", action="store_true",
                   help="ignore stored tuned settings (the operators' defaults)")
    p.add_argument("--package", metavar="DIR|MODULE",
                   help="evaluate a cann-bench operator package instead of ascsim.ops: a "
                   "directory (holding cann_bench/, or OP/, or itself a package; nothing is "
                   "installed) or an installed module name; the submission rules are checked "
                   "per case")
    p.add_argument("--cann-bench", metavar="ROOT", dest="cann_bench",
                   help="a cann-bench checkout: OP names a task under ROOT/tasks or "
                   "ROOT/bench_lab")
    p.add_argument("--list", action="store_true", help="with --cann-bench: list every task "
                   "(level, category, cases, what implements it) and stop")
    p.add_argument("--all", action="store_true", help="with --cann-bench and --package: run "
                   "every task the package implements")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="with --package: seconds one case may take (default "
                   "300); a case that takes longer fails, the others still run")
    return p


class OperatorUnavailable(RuntimeError):
    """The task names an operator that ascsim.ops does not provide."""


def load_operator(name: str) -> Callable:
    """``ascsim.ops.<name>``, imported only now (the bench works without the operators)."""
    try:
        ops = importlib.import_module("ascsim.ops")
    except ModuleNotFoundError as exc:
        if exc.name not in ("ascsim.ops",):
            raise
        raise OperatorUnavailable(f"operator {name} is not available: the module ascsim.ops "
                                  "does not exist yet") from None
    fn = getattr(ops, name, None)
    if not callable(fn):
        raise OperatorUnavailable(f"operator {name} is not available: ascsim.ops has no "
                                  f"{name}")
    return fn


def run(ns: argparse.Namespace, console: Console) -> int:
    from ascsim.bench.cann_refs import GoldenError
    from ascsim.bench.runner import run_bench
    from ascsim.hw import get_soc

    try:
        soc = get_soc(ns.soc).name
        if getattr(ns, "list", False) or getattr(ns, "all", False):
            from ascsim.bench.suite import run_suite_cli

            return run_suite_cli(ns, soc, console)
        if not ns.op:
            raise ValueError("name a task (or use --cann-bench ROOT --list)")
        task = resolve_task(ns.op, getattr(ns, "cann_bench", None), soc)
        task = task.select(ns.cases, quick=ns.quick)
        if getattr(ns, "package", None):
            return _run_package(ns, task, soc, console)
        if getattr(ns, "timeout", None) is not None:
            raise ValueError("--timeout applies to --package runs only")
        try:
            op = load_operator(task.name)
        except OperatorUnavailable as exc:
            if task.kind != "cann_bench":
                raise
            raise OperatorUnavailable(f"{exc}: no built-in operator implements the cann-bench "
                                      f"task {task.rel_path}; score a package with --package "
                                      "DIR") from None
    except (ValueError, KeyError, OperatorUnavailable, GoldenError) as exc:
        console.print(f"[red]ascsim bench:[/] {escape(str(exc))}", highlight=False)
        return 2
    if getattr(ns, "tune", False):
        from ascsim.tune.operators import tune_task

        if ns.no_tuned:
            console.print("[red]ascsim bench:[/] --tune and --no-tuned contradict each other")
            return 2
        tune_task(task, soc, budget=ns.tune_budget, workers=ns.workers,
                  backend="ray" if ns.ray else "pool", ray_address=ns.ray or "auto",
                  console=console)
    from ascsim.tune import tuned

    with tuned.ignored() if getattr(ns, "no_tuned", False) else contextlib.nullcontext():
        try:
            result = run_bench(task, op, VARIANT_CHOICES[ns.variant], soc, progress=True,
                               console=console)
        except GoldenError as exc:
            console.print(f"[red]ascsim bench:[/] {escape(str(exc))}", highlight=False)
            return 2
    return _finish(result, ns, console)


def resolve_task(op: str, cann_root: str | None, soc: str):
    """The task OP names: a cann-bench folder, a cann-bench task under ``cann_root``, or a
    built-in task / task file."""
    from pathlib import Path

    from ascsim.bench.cann_task import find_task, is_task_folder, load_cann_task
    from ascsim.bench.tasks import load_task

    if is_task_folder(Path(op)):
        return load_cann_task(op, soc)
    if cann_root:
        return load_cann_task(find_task(cann_root, op), soc)
    if Path(op).is_dir():
        raise ValueError(f"{op}: a directory but no cann-bench task folder (no proto.yaml)")
    return load_task(op)


def _finish(result, ns: argparse.Namespace, console: Console) -> int:
    from ascsim.bench.report import write_reports

    for r in result.runs:
        if r.below_floor:
            console.print(f"[yellow]case {r.case_id} {r.variant}: finding:[/] {r.below_floor}",
                          highlight=False)
        if r.status == "runtime_fail":
            console.print(f"[red]case {r.case_id} {r.variant}:[/] {escape(r.error)}",
                          highlight=False)
    if ns.report:
        paths = write_reports(result, ns.report)
        console.print("reports: " + ", ".join(str(p) for p in paths.values()))
    failed = sum(s.summary.n_runtime_fail + s.summary.n_precision_fail for s in result.summaries)
    return 1 if failed else 0


# Options of the ascsim.ops path that mean nothing for a package (name, default).
_OPS_ONLY = (("variant", "all"), ("tune", False), ("no_tuned", False))


def _run_package(ns: argparse.Namespace, task, soc: str, console: Console) -> int:
    """``--package``: the package's operator on the task's cases, in a worker process."""
    from ascsim.bench.isolate import DEFAULT_TIMEOUT_S, PackageRunner
    from ascsim.bench.package import resolve_package
    from ascsim.bench.runner import PACKAGE_VARIANT, run_bench

    clashing = [f"--{name.replace('_', '-')}" for name, default in _OPS_ONLY
                if getattr(ns, name, default) != default]
    if clashing:
        raise ValueError(f"{', '.join(clashing)} cannot go with --package (a package has "
                         "one implementation, run as it is)")
    source = resolve_package(ns.package, task.name)
    # A task whose baseline is a variant of ascsim.ops (matmul_leaky_relu) runs that too.
    baseline_op = None if task.baseline_variant is None else load_operator(task.name)
    timeout = DEFAULT_TIMEOUT_S if ns.timeout is None else ns.timeout
    from ascsim.bench.cann_refs import GoldenError

    with PackageRunner(task, source, soc, timeout) as runner:
        try:
            result = run_bench(task, baseline_op, (PACKAGE_VARIANT,), soc, progress=True,
                               console=console, package_call=runner.call_case,
                               baseline_note=f"candidate: the package {source.label}")
        except GoldenError as exc:
            console.print(f"[red]ascsim bench:[/] {escape(str(exc))}", highlight=False)
            return 2
    return _finish(result, ns, console)
