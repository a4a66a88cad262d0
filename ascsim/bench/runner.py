"""Run an operator over a bench task: every case × variant, precision, HAP and score.

Calling convention (what ``run_bench`` expects of ``operator_fn``)::

    out, info = operator_fn(*inputs, **attrs, variant=v, soc=soc, return_report=True)

- ``inputs``: torch CPU tensors in the task's input order and dtypes (fresh copies per call);
- ``attrs``: the case's attrs as keywords (conv: ``strides``, ``pads``, ``dilations`` lists;
  matmul_leaky_relu: ``alpha``);
- ``variant``: ``"semi" | "fused" | "unfused" | "auto"``; ``soc``: a SoC name such as
  ``"Ascend950PR_9579"``;
- ``out``: a contiguous ``torch.Tensor`` of the case's output dtype and shape;
- ``info``: see :mod:`ascsim.bench.opinfo` — ``device_time_us`` summed over the call's kernels,
  the per-kernel ``KernelReport``s (per-pipe busy time, bytes moved), ``cross_core_handoffs``
  and ``workspace_bytes``.

An exception from the call, or a return value that breaks this convention (wrong type, dtype,
shape, a non-contiguous tensor, malformed info), is a runtime/interface failure of that case
(it loses the w_c share); a wrong value is a precision failure (it loses w_f and w_p).
The candidate time T_cand is ``info.device_time_us``. The baseline is the task's published
number, or — for a task whose baseline is a variant — that variant's time on the same case in
the same run (the baseline variant is then always run, first).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ascsim.bench.opinfo import InterfaceError, OpTiming, normalize_info
from ascsim.bench.references import References, make_references
from ascsim.bench.results import BenchResult, CaseRun, VariantSummary
from ascsim.bench.score import anchors, floor_finding, hap, speedup, summarize, t_hw
from ascsim.bench.tasks import Case, Task

VARIANTS = ("semi", "fused", "unfused", "auto")
PACKAGE_VARIANT = "package"  # the one variant of a user's package (``--package``)
def check_output(out: object, case: Case) -> torch.Tensor:
    """The structural checks of a built-in task's output (see ``References.check_output``)."""
    return References(None, case, (), None, None).check_output(out)


def task_references(task, case):
    """The references of one case, made the way the task's kind makes them."""
    if task.kind == "cann_bench":
        from ascsim.bench.cann_refs import make_cann_references

        return make_cann_references(task, case)
    return make_references(task, case)


#: A case caller: ``call(refs, variant, soc) -> (output, OpTiming)``; raises on a failure.
CaseCaller = Callable[[References, str, str], tuple[torch.Tensor, OpTiming]]


def operator_caller(operator_fn: Callable) -> CaseCaller:
    """The caller of an operator following the calling convention of the module docstring."""
    def call(refs: References, variant: str, soc: str):
        inputs = tuple(t.clone() for t in refs.inputs)
        result = operator_fn(*inputs, **refs.case.kwargs(), variant=variant, soc=soc,
                             return_report=True)
        if not isinstance(result, tuple) or len(result) != 2:
            raise InterfaceError("with return_report=True the operator must return "
                                 "(output, info)")
        out, info = result
        return out, normalize_info(info)
    return call


def run_case(call: CaseCaller, refs: References, variant: str, soc: str,
             t_base_us: float | None) -> CaseRun:
    """One case under one variant (t_base_us None: no baseline, so no HAP unless the case has
    a published t_hw_us, which gives cann-bench's fallback baseline)."""
    case = refs.case
    published_thw = getattr(case, "t_hw_us", None)
    base, thw = anchors(t_base_us, published_thw)
    t0 = time.perf_counter()
    try:
        out, timing = call(refs, variant, soc)
        out = refs.check_output(out)
    except Exception as exc:  # noqa: BLE001 - any failure of the operator is the case's result
        return CaseRun(case.case_id, variant, "runtime_fail", f"{type(exc).__name__}: {exc}",
                       None, None, base, thw, None, None, time.perf_counter() - t0,
                       tuple(getattr(exc, "violations", ())))
    wall = time.perf_counter() - t0
    prec = refs.verdict(out)
    h = None if base is None else hap(base, timing.device_time_us, thw)
    s = None if base is None else speedup(base, timing.device_time_us)
    return CaseRun(case.case_id, variant, "pass" if prec.passed else "precision_fail", None,
                   prec, timing, base, thw, h, s, wall,
                   below_floor=floor_finding(timing.device_time_us, published_thw))


def _variant_order(task: Task, variants: Sequence[str],
                   known: Sequence[str] = VARIANTS) -> tuple[str, ...]:
    unknown = [v for v in variants if v not in known]
    if unknown or not variants:
        raise ValueError(f"unknown variants {unknown}; choose from {tuple(known)}")
    order = tuple(dict.fromkeys(variants))
    if task.baseline_variant is not None and task.baseline_variant not in order:
        order = (task.baseline_variant, *order)
    elif task.baseline_variant is not None:  # timed first: the others need its time
        order = (task.baseline_variant, *(v for v in order if v != task.baseline_variant))
    return order


def _baseline_note(task: Task, soc: str) -> str:
    if task.kind == "cann_bench":
        return (f"baseline and T_HW: cann-bench metadata, {task.metadata_note}; candidate: "
                f"simulated device time on {soc}")
    if task.baseline_source == "variant":
        return (f"baseline: this operator's '{task.baseline_variant}' variant, simulated on "
                f"{soc} in the same run")
    return (f"baseline: published {task.baseline_hardware} times (torch golden path, "
            f"device-event timed); candidate: simulated device time on {soc}")


def run_bench(task: Task, operator_fn: Callable | None, variants: Sequence[str], soc: str,
              progress: bool = True, console: Console | None = None,
              package_call: CaseCaller | None = None,
              baseline_note: str | None = None) -> BenchResult:
    """Run every case of ``task`` under every variant; see the module docstring.

    ``package_call`` runs the variant ``"package"`` (a user's package, called by
    :class:`ascsim.bench.isolate.PackageRunner`); ``operator_fn`` runs the others, and may be
    None when no other is needed (a task whose baseline is a variant still needs it: the
    baseline variant is ascsim.ops's). ``baseline_note`` is added to the report's baseline line.
    """
    known = VARIANTS + ((PACKAGE_VARIANT,) if package_call is not None else ())
    order = _variant_order(task, variants, known)
    op_call = None if operator_fn is None else operator_caller(operator_fn)
    callers = {v: package_call if v == PACKAGE_VARIANT else op_call for v in order}
    missing = [v for v, c in callers.items() if c is None]
    if missing:
        raise ValueError(f"variant(s) {missing} need the operator (operator_fn is None)"
                         + (f"; the task's baseline is its {task.baseline_variant!r} variant"
                            if task.baseline_variant in missing else ""))
    console = console or Console()
    runs: list[CaseRun] = []
    t_start = time.perf_counter()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=console, disable=not progress, transient=False) as bar:
        job = bar.add_task(task.name, total=len(task.cases) * len(order))
        for case in task.cases:
            bar.update(job, description=f"{task.name} case {case.case_id}: references")
            refs = task_references(task, case)
            t_base = case.baseline_us
            for v in order:
                bar.update(job, description=f"{task.name} case {case.case_id}: {v}")
                run = run_case(callers[v], refs, v, soc, t_base)
                if v == task.baseline_variant:
                    t_base = run.timing.device_time_us if run.status == "pass" else None
                    run = _rebase(run, t_base)
                runs.append(run)
                bar.advance(job)
            refs = None   # the case's inputs and references go before the next case's come
    summaries = tuple(_summarize(v, [r for r in runs if r.variant == v]) for v in order)
    note = _baseline_note(task, soc) + (f"; {baseline_note}" if baseline_note else "")
    result = BenchResult(task, soc, order, tuple(runs), summaries, note,
                         time.perf_counter() - t_start)
    if progress:
        from ascsim.bench.report import results_table  # matplotlib loads only for reports

        console.print(results_table(result))
    return result


def _rebase(run: CaseRun, t_base: float | None) -> CaseRun:
    """The baseline variant's own run, scored against itself (HAP 0.5 by construction)."""
    if t_base is None:
        return run
    thw = t_hw(t_base)
    return CaseRun(run.case_id, run.variant, run.status, run.error, run.precision, run.timing,
                   t_base, thw, hap(t_base, t_base, thw), 1.0, run.wall_s, run.violations)


def _summarize(variant: str, runs: list[CaseRun]) -> VariantSummary:
    return VariantSummary(variant, summarize([r.outcome for r in runs]),
                          sum(r.timing.device_time_us for r in runs if r.timing is not None),
                          sum(r.wall_s for r in runs))
