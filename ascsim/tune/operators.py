"""Tuning the operators of :mod:`ascsim.ops` on the bench cases (``ascsim bench OP --tune``).

For every case of a bench task and every variant of the operator, a search over the
operator's tiling knobs (``OP_TUNING``) finds the knobs of least simulated time; the
operator's defaults are evaluated first, so the tuned time is never worse than the default.
A trial runs the operator on the case's bench inputs and checks its output with the bench's
precision rule: knobs that compute a wrong result are infeasible. The results go to
``ascsim/tune/data/<op>.yaml`` (see :mod:`ascsim.tune.tuned`), which the operators read.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ascsim.ops.conv_plan import M_TARGET
from ascsim.tune import tuned
from ascsim.tune.sweep import search

#: A knob value meaning "the operator chooses" (dropped before the call).
AUTO = "auto"


def _round16(v: int) -> int:
    return -(-v // 16) * 16


def conv_space(case, soc) -> dict[str, list]:
    """Output channels per tile and the most pixels per tile of the implicit-GEMM conv (first
    values: the planner's defaults)."""
    cout = case.input_shapes[1][0]
    widest = min(_round16(cout), 256)
    nts = sorted({v for v in (16, 32, 64, 128, 256) if v <= widest} | {widest})
    return {"nt": [AUTO, *nts], "pixels": [M_TARGET, 128, 256, 64]}


def matmul_space(case, soc) -> dict[str, list]:
    """Base block and core count of the host Matmul tiling (-1, first: the tiler chooses)."""
    return {"base_m": [-1, 64, 128, 256], "base_n": [-1, 64, 128, 256], "base_k": [-1, 64],
            "cores": [-1, soc.aiv_count // 2]}


@dataclass(frozen=True)
class OpTuning:
    """How one operator is tuned: the variants to tune (each gets its own knobs), the knob
    space of a case (the first value of every knob is the operator's default, so the first
    configuration is the default one, evaluated first), and the problem's tuned-data key."""

    variants: tuple[str, ...]
    space: Callable[[Any, Any], dict[str, list]]
    key: Callable[[Any, Any], str]


def _conv_key(task, case) -> str:
    from ascsim.ops.conv_spec import conv_spec_from
    from ascsim.ops.fused_conv import shape_key

    attrs = case.kwargs()
    x, w, b = case.input_shapes
    spec = conv_spec_from(x, w, b, case.dtypes[0], attrs["strides"], attrs["pads"],
                          attrs.get("dilations", (1, 1)))
    return shape_key(spec)


def _matmul_key(task, case) -> str:
    from ascsim.ops.matmul_leaky_relu import shape_key

    (m, k), (_, n) = case.input_shapes[0], case.input_shapes[1]
    return shape_key(m, n, k, case.dtypes[0])


_CONV = OpTuning(("semi", "fused", "unfused"), conv_space, _conv_key)
OP_TUNING: dict[str, OpTuning] = {
    "fused_conv_tanh": _CONV,
    "fused_conv_sigmoid": _CONV,
    "matmul_leaky_relu": OpTuning(("unfused", "fused"), matmul_space, _matmul_key),
}


@functools.cache
def _case_refs(task_name: str, case_id: int):
    from ascsim.bench.references import make_references
    from ascsim.bench.tasks import load_task

    task = load_task(task_name)
    case = next(c for c in task.cases if c.case_id == case_id)
    return make_references(task, case)


def op_trial(op: str, case_id: int, soc: str, variant: str, **knobs: Any):
    """One trial: the operator on the case's inputs with ``knobs``; its info if the output
    passes the bench's precision rule."""
    from ascsim.bench.cli import load_operator
    from ascsim.bench.precision import check_precision
    from ascsim.bench.runner import check_output

    refs = _case_refs(op, case_id)
    fixed = {k: v for k, v in knobs.items() if v != AUTO}
    inputs = tuple(t.clone() for t in refs.inputs)
    out, info = load_operator(op)(*inputs, **refs.case.kwargs(), variant=variant, soc=soc,
                                  return_report=True, tiling=fixed)
    check_output(out, refs.case)
    prec = check_precision(out, refs.golden, refs.case.output_dtype, truth=refs.truth,
                           reference=refs.same_precision)
    if not prec.passed:
        raise AssertionError(f"precision: {prec.why}")
    return info


@contextlib.contextmanager
def engine_closed(engine):
    """Close a backend shared by several searches at the end."""
    try:
        yield engine
    finally:
        engine.close()


@dataclass(frozen=True)
class CaseTuning:
    """What tuning one case found, per variant: (best knobs, time, default time)."""

    case_id: int
    entry: tuned.TunedEntry


def tune_case(task, case, soc, *, budget: int, seed: int, backend,
              variants: tuple[str, ...] | None = None, on_trial=None) -> CaseTuning:
    """Tune every variant of one case; infeasible variants are left out of the entry."""
    from ascsim.hw import get_soc

    how = OP_TUNING[task.name]
    spec = get_soc(soc)
    space = how.space(case, spec)
    default = {knob: values[0] for knob, values in space.items()}
    found: dict[str, tuned.TunedVariant] = {}
    for variant in variants or how.variants:
        result = search(functools.partial(op_trial, task.name, case.case_id, spec.name, variant),
                        space, budget=budget, seed=seed, backend=backend, first=[default],
                        on_trial=on_trial)
        if result.best is None:
            continue
        default_us = next((t.value for t in result.trials
                           if t.config == default and t.status == "ok"), None)
        knobs = {k: v for k, v in result.config.items() if v != AUTO}
        found[variant] = tuned.TunedVariant(knobs, result.value, default_us)
    return CaseTuning(case.case_id, tuned.TunedEntry(spec.name, how.key(task, case), found,
                                                     f"bench case {case.case_id}"))


def case_line(result: CaseTuning) -> str:
    """One line per tuned case: each variant's default and tuned time and its knobs."""
    parts = []
    for variant, t in sorted(result.entry.variants.items()):
        knobs = ", ".join(f"{k}={v}" for k, v in t.knobs.items()) or "defaults"
        default = "—" if t.default_us is None else f"{t.default_us:.2f}"
        parts.append(f"{variant} {default} -> {t.time_us:.2f} us ({knobs})")
    return f"case {result.case_id}: " + ("; ".join(parts) or "no feasible configuration")


def tune_task(task, soc: str, *, budget: int = 16, workers: int | None = None, seed: int = 0,
              backend: str = "pool", ray_address: str = "auto", console=None,
              store: bool = True) -> list[CaseTuning]:
    """Tune every case of ``task`` on ``soc`` (``backend``: "pool", "ray" or "inline", one
    for all the searches); store the entries in the op's data file."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ascsim.tune.backends import make_backend

    if task.name not in OP_TUNING:
        raise ValueError(f"no tuning knobs for {task.name}; tunable: {sorted(OP_TUNING)}")
    how = OP_TUNING[task.name]
    out = []
    engine = make_backend(backend, workers, ray_address)
    prepare = getattr(engine, "prepare", None)
    if prepare is not None:
        prepare()  # before the progress display's thread starts, so the workers can be forks
    with engine_closed(engine), \
            Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                     console=console, disable=console is None) as bar:
        job = bar.add_task(f"tuning {task.name}", total=len(task.cases) * len(how.variants))
        for case in task.cases:
            bar.update(job, description=f"tuning {task.name} case {case.case_id}")
            result = tune_case(task, case, soc, budget=budget, seed=seed, backend=engine)
            out.append(result)
            bar.advance(job, len(how.variants))
            if console is not None:
                bar.console.print(case_line(result))
    entries = [c.entry for c in out if c.entry.variants]
    if store and entries:
        tuned.store(task.name, entries)
    return out
