"""``pl.pipeline``: PyPTO Pro's automatic cross-core pipeline (``@pl.jit(pipeline=...)``).

On the device, ``@pl.jit(pipeline=PipelineConfig(preload=N))`` rewrites a loop whose body calls
``@pl.pipeline.stage`` functions in alternating cube and vector sections (hicann/pypto
``python/pypto_pro/runtime/pipeline``): it inserts cross-core flags around the stages and
reorders the iterations into a preload schedule. ascsim does the same, at run time:

* **Stages and delays.** The stage calls of the loop, in program order, get delays as PyPTO Pro
  computes them: the first stage 0; the first stage of the other side the previous stage's
  delay + 1; a later stage of a side its side's previous delay + ``preload``. Iteration ``b``
  of the loop is beat ``b``: each core runs, after the iteration's own statements, its stages
  in order, stage ``i`` on the task (iteration) ``b - delay_i`` (with the arguments that
  iteration passed). The beats go on across an enclosing loop; after it, drain beats run the
  delayed stages' last tasks. preload=2 gives the cube ``C1 C1 C1 C2 C1 C2 ...``.
  ``sync_only=True`` keeps the serial order (every stage runs where it is called).
* **Cross-core flags.** A tile group declared with ``fwd_ids`` that a cube stage and a vector
  stage both take is a hand-over: the first of them in the loop produces it, the next one on
  the other side consumes it. For task ``t`` (slot ``t % len(fwd_ids)``): the producer waits
  ``bwd_ids[slot]`` before and sets ``fwd_ids[slot]`` after the stage; the consumer waits
  ``fwd_ids[slot]`` before and sets ``bwd_ids[slot]`` after. Before the loop the consumer
  pre-fires every ``bwd`` id once (the ring starts empty); after the drain the producer takes
  those sets back. Without ``bwd_ids`` only the forward flags are inserted. The flags are
  INTRA_BLOCK ``set_cross_core`` / ``wait_cross_core`` records, as PyPTO Pro inserts them.
* **Pipes.** A set goes on the pipe of the stage's access to the buffer that completes last (so
  it fires after the stage's last read or write); a wait on the pipe of the stage's first
  access to it as the stage's earlier tasks did it (the scalar unit, which holds every pipe,
  for its first task or when the tasks disagree).

A pipeline of one stage has no hand-over and no delay: it runs in the serial order.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ascsim.pto.enums import PipeType
from ascsim.pto.errors import UnsupportedFeatureError
from ascsim.pto.tile import TileGroup

#: Attribute marking a function as a pipeline stage.
STAGE = "__pto_pipeline_stage__"
#: The name the rewritten kernel calls the pipeline's runtime by.
RUNTIME = "__pto_pipeline__"
SIDES = {"cube": "AIC", "vector": "AIV"}


def stage(fn):
    """``@pl.pipeline.stage``: tags ``fn`` as a stage (it is inlined like any helper)."""
    setattr(fn, STAGE, True)
    return fn


@dataclass(frozen=True)
class PipelineConfig:
    """``pl.pipeline.PipelineConfig(preload=2, sync_only=False)``: how many times the first
    stage runs ahead before the steady state, and whether only the flags are inserted (the
    serial order kept)."""

    preload: int = 2
    sync_only: bool = False

    def __post_init__(self):
        if isinstance(self.preload, bool) or not isinstance(self.preload, int) \
                or self.preload < 1:
            raise ValueError(f"PipelineConfig preload must be an int >= 1, got {self.preload!r}")


def check_supported(config, kernel_kind: str, name: str) -> None:
    """The configuration's type (every pipeline ascsim can parse runs)."""
    if config is not None and not isinstance(config, PipelineConfig):
        raise TypeError(f"jit(pipeline=...) takes a pl.pipeline.PipelineConfig, got "
                        f"{type(config).__name__}")


# ------------------------------------------------------------------ the plan (static)
@dataclass(frozen=True)
class Stage:
    """One stage call of the pipeline loop: its side, delay and argument names (None for an
    argument that is not a plain name)."""

    index: int
    name: str
    side: str
    delay: int
    args: tuple
    keywords: tuple


@dataclass(frozen=True)
class Handover:
    """A buffer (argument ``name``) one stage produces and a stage of the other side consumes."""

    name: str
    producer: int
    consumer: int


@dataclass(frozen=True)
class Plan:
    stages: tuple
    handovers: tuple
    sync_only: bool

    @property
    def depth(self) -> int:
        return max(s.delay for s in self.stages) + 1


def _section_of(stmt) -> str | None:
    from ascsim.pto.parse import SECTION

    test = getattr(stmt, "test", None)
    if isinstance(stmt, ast.If) and isinstance(test, ast.Call) \
            and isinstance(test.func, ast.Name) and test.func.id == SECTION \
            and test.args and isinstance(test.args[0], ast.Constant):
        return test.args[0].value
    return None


def _stage_call(stmt, scope: dict):
    """The stage function's name when ``stmt`` is a call of a ``@pl.pipeline.stage``
    function (``__pto_call__(f)(...)`` after the kernel rewrite)."""
    from ascsim.pto.parse import CALL

    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    func = stmt.value.func
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == CALL \
            and func.args and isinstance(func.args[0], ast.Name):
        name = func.args[0].id
        return name if getattr(scope.get(name), STAGE, False) else None
    return None


def _delays(sides: list[str], preload: int) -> list[int]:
    """PyPTO Pro's delays (runtime/pipeline/_transformer.py ``_compute_delays``)."""
    last = {"cube": None, "vector": None}
    out: list[int] = []
    for i, side in enumerate(sides):
        if last[side] is None:
            delay = 0 if i == 0 else out[i - 1] + 1
        else:
            delay = last[side] + preload
        last[side] = delay
        out.append(delay)
    return out


def _name_or_none(node):
    return node.id if isinstance(node, ast.Name) else None


def transformer(fn, config: PipelineConfig):
    """The ``post`` rewrite (:func:`ascsim.pto.parse.rewrite`) that runs ``fn``'s pipeline loop
    as a pipeline."""
    scope = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:
            pass

    def post(node: ast.FunctionDef, filename: str) -> ast.FunctionDef:
        return _transform(node, filename, scope, config)

    return post


def _loops(stmts, chain=()):
    """Every ``for`` loop under ``stmts`` with its enclosing loops, outermost first."""
    for stmt in stmts:
        if isinstance(stmt, ast.For):
            yield stmt, chain
            yield from _loops(stmt.body, (*chain, stmt))
        else:
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    yield from _loops(inner, chain)


def _transform(node, filename, scope, config):
    sites = []
    for loop, chain in _loops(node.body):
        calls = [(i, side, inner) for i, stmt in enumerate(loop.body)
                 if (side := _section_of(stmt)) for inner in stmt.body
                 if _stage_call(inner, scope)]
        if calls:
            sites.append((loop, chain, calls))
    if not sites:
        return node  # no stage calls in a loop: nothing to pipeline
    if len(sites) > 1:
        raise UnsupportedFeatureError("the automatic pipeline takes one loop of stage calls; "
                                      f"found {len(sites)}", (filename, sites[1][0].lineno))
    loop, chain, calls = sites[0]
    for stmt in ast.walk(loop):
        if isinstance(stmt, (ast.Break, ast.Continue)) and stmt in loop.body:
            raise UnsupportedFeatureError("break / continue in a pipeline loop",
                                          (filename, stmt.lineno))
    sides = [side for _, side, _ in calls]
    for a, b, (_, _, stmt) in zip(sides, sides[1:], calls[1:]):
        if a == b:
            # As PyPTO Pro's validation: the delay model has no form for two stages in a row
            # on one core.
            raise ValueError(f"pipeline: two consecutive stages on the {a} core "
                             f"({filename}:{stmt.lineno}); the stage chain must alternate "
                             "cube and vector sections")
    delays = [0] * len(sides) if config.sync_only else _delays(sides, config.preload)
    stages = []
    for i, ((_, side, stmt), delay) in enumerate(zip(calls, delays)):
        call = stmt.value
        stages.append(Stage(i, call.func.args[0].id, side, delay,
                            tuple(_name_or_none(a) for a in call.args),
                            tuple((k.arg, _name_or_none(k.value)) for k in call.keywords)))
    plan = Plan(tuple(stages), _handovers(stages), config.sync_only)
    # The stage calls become runtime.stage(i, fn, *args, **kwargs).
    for i, (_, _, stmt) in enumerate(calls):
        call = stmt.value
        stmt.value = ast.copy_location(ast.Call(
            ast.Attribute(ast.Name(RUNTIME, ast.Load()), "stage", ast.Load()),
            [ast.Constant(i), call.func, *call.args], call.keywords), call)
    loop.body.append(ast.copy_location(_runtime_call("beat"), loop))
    outer = chain[0] if chain else loop
    body = _holder(node.body, outer)
    at = body.index(outer)
    # The hand-over names as thunks: a name that is not bound before the loop (a loop
    # variable both sides take) is no buffer.
    no_args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                            kw_defaults=[], kwarg=None, defaults=[])
    groups = [ast.Lambda(no_args, ast.Name(h.name, ast.Load())) for h in plan.handovers]
    start = ast.copy_location(_runtime_call("start", *groups), outer)
    drain = ast.copy_location(_runtime_call("drain"), outer)
    body[at:at + 1] = [start, outer, drain]
    node.body.insert(0, ast.copy_location(ast.Assign(
        [ast.Name(RUNTIME, ast.Store())],
        ast.Call(ast.Name(NEW_RUNTIME, ast.Load()), [ast.Constant(_PLANS.add(plan))], [])),
        node))
    return node


def _holder(stmts: list, target) -> list:
    """The statement list that holds ``target``."""
    if target in stmts:
        return stmts
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                found = _holder(inner, target)
                if found is not None:
                    return found
    return None


def _runtime_call(method: str, *args) -> ast.Expr:
    return ast.Expr(ast.Call(ast.Attribute(ast.Name(RUNTIME, ast.Load()), method, ast.Load()),
                             list(args), []))


def _handovers(stages) -> tuple:
    """Names a cube stage and a vector stage both take: the first taker produces, the next
    taker of the other side consumes."""
    out = []
    seen: set = set()
    for stage in stages:
        names = [n for n in stage.args if n] + [n for _, n in stage.keywords if n]
        for name in names:
            if name in seen:
                continue
            consumer = next((s for s in stages[stage.index + 1:] if s.side != stage.side
                             and (name in s.args or name in (n for _, n in s.keywords))), None)
            if consumer is not None:
                seen.add(name)
                out.append(Handover(name, stage.index, consumer.index))
    return tuple(out)


class _PlanTable:
    """Plans by number: the rewritten kernel names its plan by a constant."""

    def __init__(self):
        self.plans: list[Plan] = []

    def add(self, plan: Plan) -> int:
        self.plans.append(plan)
        return len(self.plans) - 1

    def __getitem__(self, index: int) -> Plan:
        return self.plans[index]


_PLANS = _PlanTable()
#: The name the rewritten kernel makes its runtime with (bound by the launcher).
NEW_RUNTIME = "__pto_pipeline_runtime__"


def new_runtime(index: int):
    """A core's runtime of plan ``index`` (:mod:`ascsim.pto.pipeline_run`)."""
    from ascsim.pto.pipeline_run import PipelineRun

    return PipelineRun(_PLANS[index])


PIPE_TYPES = {name: PipeType[name] for name in ("MTE1", "MTE2", "MTE3", "V", "S", "FIX", "M")}
__all__ = ["Handover", "Plan", "PipelineConfig", "Stage", "TileGroup", "new_runtime", "stage"]
