"""``ascsim bench OP --soc SOC --variant all|semi|fused|unfused|auto --report DIR``
``[--tune [--tune-budget N] [--workers N] [--ray [ADDRESS]]] [--no-tuned]``."""

from __future__ import annotations

import argparse
import contextlib
import importlib
from collections.abc import Callable

from rich.console import Console

VARIANT_CHOICES = {"all": ("semi", "fused", "unfused"), "semi": ("semi",),
                   "fused": ("fused",), "unfused": ("unfused",), "auto": ("auto",)}


def add_parser(sub) -> argparse.ArgumentParser:
    from ascsim.bench.tasks import available_tasks

    p = sub.add_parser("bench", help="run an operator's cann-bench cases and score them")
    p.add_argument("op", help=f"the operator / task ({', '.join(available_tasks())})")
    p.add_argument("--soc", default="Ascend950PR_9579", help="SoC to simulate")
    p.add_argument("--variant", default="all", choices=sorted(VARIANT_CHOICES),
                   help="all = semi, fused and unfused")
    p.add_argument("--report", metavar="DIR", help="write JSON, Markdown and HTML reports here")
    p.add_argument("--cases", metavar="IDS", help="comma-separated case ids, e.g. 1,2,5")
    p.add_argument("--quick", action="store_true", help="only the size-class S cases")
    p.add_argument("--tune", action="store_true",
                   help="first tune each case's knobs per variant on this SoC (stored in "
                   "ascsim/tune/data; the bench then runs on them)")
    p.add_argument("--tune-budget", type=int, default=16, metavar="N",
                   help="configurations tried per case and variant (default 16)")
    p.add_argument("--workers", type=int, default=None, help="parallel tuning trials")
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="tune on Ray ('auto': a local cluster)")
    p.add_argument("--no-tuned", action="store_true",
                   help="ignore stored tuned settings (the operators' defaults)")
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


def _parse_ids(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--cases wants comma-separated integers, got {text!r}") from None


def run(ns: argparse.Namespace, console: Console) -> int:
    from ascsim.bench.report import write_reports
    from ascsim.bench.runner import run_bench
    from ascsim.bench.tasks import load_task
    from ascsim.hw import get_soc

    try:
        soc = get_soc(ns.soc).name
        task = load_task(ns.op).select(_parse_ids(ns.cases), quick=ns.quick)
        op = load_operator(task.name)
    except (ValueError, KeyError, OperatorUnavailable) as exc:
        console.print(f"[red]ascsim bench:[/] {exc}")
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
        result = run_bench(task, op, VARIANT_CHOICES[ns.variant], soc, progress=True,
                           console=console)
    if ns.report:
        paths = write_reports(result, ns.report)
        console.print("reports: " + ", ".join(str(p) for p in paths.values()))
    failed = sum(s.summary.n_runtime_fail + s.summary.n_precision_fail for s in result.summaries)
    return 1 if failed else 0
