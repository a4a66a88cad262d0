"""Inputs and references of a cann-bench case, made the way cann-bench's evaluator makes them.

- Seed: ``sha256("<rel_path>_<case_id>")``, its first 8 bytes big-endian, mod 2^31 (the
  evaluator's default ``eval_seed`` 0 adds nothing); one ``torch.Generator`` per case, the
  inputs drawn in input order from it. A further draw (the second call of a package, on fresh
  inputs) uses seed + draw and, as cann-bench's second verification, adds 0.01 to every float
  input (so a constant range such as [0, 0] still gives different inputs).
- Per input: float dtypes uniform in ``[lo, hi]`` (float64 ``torch.rand`` scaled, clamped to the
  dtype's range, cast); ``lo == hi`` a constant; ``'inf'``/``'nan'`` bounds give cann-bench's
  special-value tensors; integer dtypes ``torch.randint(lo, hi + 1)``; bool ``randint`` in the
  range clamped to {0, 1}; a null shape (or dtype ``None``) is an omitted input (None); a list
  of shapes a tensor list. No range: [0, 1] for floats, [0, 100] for integers. One ``[lo, hi]``
  applies to every input; a per-input list shorter than the inputs repeats its last range.
- The golden function (the schema's name in golden.py) is called with the tensors in the order
  of its Tensor-annotated parameters and the attrs by name (``'inf'``, ``'-inf'``, ``'nan'``
  and numeric strings converted, as cann-bench does); a ``get_input`` in golden.py rewrites the
  inputs first, a ``get_output`` the outputs before comparison.
- Truth ("oracle"): ``<fn>_oracle`` if golden.py has it, else the golden, on the inputs moved
  to float64 (integer/bool inputs unchanged) — cann-bench's ``fp64_cpu`` golden precision.
- Same-precision reference: ``<fn>_bench`` if present, else the golden, on the case's own
  inputs. Its outputs fix what a candidate must return: their number, dtypes and shapes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from ascsim.bench.cann_task import GOLDEN, CannCase, CannTask, TaskFolderError
from ascsim.bench.opinfo import InterfaceError
from ascsim.bench.precision import THRESHOLDS, PrecisionResult, check_precision

TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
                "float64": torch.float64, "float8_e4m3fn": torch.float8_e4m3fn,
                "float8_e5m2": torch.float8_e5m2, "int8": torch.int8, "int16": torch.int16,
                "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
                "bool": torch.bool}
DTYPE_NAMES = {v: k for k, v in TORCH_DTYPES.items()}
_SPECIAL = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def case_seed(rel_path: str, case_id: int, draw: int = 0) -> int:
    digest = hashlib.sha256(f"{rel_path}_{case_id}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") % 2**31 + draw) % 2**31


# --- input generation ------------------------------------------------------------------------

def _bounds(rng: Any, dtype: str) -> tuple[Any, Any]:
    if rng is None or rng == ():
        return (0.0, 1.0) if dtype.startswith(("float", "bfloat")) else (0, 100)
    if len(rng) == 1:
        return rng[0], rng[0]
    return rng[0], rng[1]


def _special(v: Any) -> float:
    return _SPECIAL[v] if isinstance(v, str) and v in _SPECIAL else float(v)


def _float_tensor(shape, dtype: torch.dtype, lo: Any, hi: Any, gen) -> torch.Tensor:
    lo, hi = _special(lo), _special(hi)
    if math.isnan(lo) or math.isnan(hi) or math.isinf(lo) or math.isinf(hi):
        base = (torch.rand(shape, dtype=torch.float32, generator=gen) * 2 - 1).to(dtype)
        if math.isnan(lo) and math.isnan(hi):
            mask = torch.rand(shape, dtype=torch.float32, generator=gen) < 0.5
            base[mask] = math.nan
            return base
        flat = base.flatten()
        n = max(1, flat.numel() // 20)
        if lo == -math.inf or hi == math.inf:
            flat[:n], flat[-n:] = -math.inf, math.inf
        return flat.reshape(shape)
    if lo == hi:
        return torch.full(shape, lo, dtype=dtype)
    info = torch.finfo(dtype)
    lo, hi = max(lo, info.min), min(hi, info.max)
    # cann-bench's arithmetic, rand·(hi − lo) + lo clamped, done in place: the same float64
    # roundings, one float64 buffer instead of three (268M elements: 2 GiB, not 6).
    u = torch.rand(shape, dtype=torch.float64, generator=gen)
    return u.mul_(hi - lo).add_(lo).clamp_(info.min, info.max).to(dtype)


def make_tensor(shape, dtype_name: str, rng: Any, gen: torch.Generator) -> torch.Tensor | None:
    """One input tensor, as cann-bench's data generator draws it."""
    if shape is None or dtype_name == "None":
        return None
    shape = list(shape)
    dtype = TORCH_DTYPES[dtype_name]
    lo, hi = _bounds(rng, dtype_name)
    if dtype.is_floating_point:
        return _float_tensor(shape, dtype, lo, hi, gen)
    if dtype == torch.bool:
        a, b = sorted((min(1, max(0, int(lo))), min(1, max(0, int(hi)))))
        if a == b:
            return torch.full(shape, bool(a), dtype=torch.bool)
        return torch.randint(a, b + 1, shape, generator=gen, dtype=torch.int64).to(torch.bool)
    if lo == hi:
        return torch.full(shape, int(lo), dtype=dtype)
    return torch.randint(int(lo), int(hi) + 1, shape, generator=gen, dtype=dtype)


def _per_input_ranges(ranges: tuple, n: int) -> list:
    if not ranges:
        return [None] * n
    if not isinstance(ranges[0], tuple):
        return [ranges] * n            # one [lo, hi] for every input
    ranges = list(ranges)
    return ranges + [ranges[-1]] * (n - len(ranges))


def _is_shape(s: Any) -> bool:
    return isinstance(s, tuple) and all(isinstance(d, int) for d in s)


def make_inputs(task: CannTask, case: CannCase, draw: int = 0) -> list:
    """The case's inputs in the proto's order (None for an omitted one, a list for a list)."""
    gen = torch.Generator().manual_seed(case_seed(task.rel_path, case.case_id, draw))
    out: list = []
    ranges = _per_input_ranges(case.value_ranges, len(case.input_shapes))
    for shape, dtype, rng in zip(case.input_shapes, case.dtypes, ranges):
        if shape is None or _is_shape(shape):
            d = dtype[0] if isinstance(dtype, tuple) else dtype
            out.append(make_tensor(shape, d, rng if _is_range(rng) else None, gen))
            continue
        items = []   # a tensor list: per-item dtypes and ranges when given as lists
        for j, sub in enumerate(shape):
            d = dtype[j] if isinstance(dtype, tuple) and j < len(dtype) else dtype
            d = d[0] if isinstance(d, tuple) else d
            r = rng[j] if (isinstance(rng, tuple) and rng and isinstance(rng[0], tuple)
                           and j < len(rng)) else (rng if _is_range(rng) else None)
            items.append(make_tensor(sub, d, r, gen))
        out.append(items)
    return out


def _is_range(rng: Any) -> bool:
    return isinstance(rng, tuple) and 1 <= len(rng) <= 2 and not isinstance(rng[0], tuple)


# --- golden.py ---------------------------------------------------------------------------------

_MODULES: dict[str, ModuleType] = {}


def golden_module(task: CannTask) -> ModuleType:
    """golden.py imported from the task folder (once per process); its import errors are the
    task's, named with the file."""
    path = Path(task.folder) / GOLDEN
    key = str(path)
    if key not in _MODULES:
        name = "ascsim_cann_golden." + task.rel_path.replace("/", ".").replace("-", "_")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - any import failure is the task's
            raise TaskFolderError(path, "", f"does not import: {type(exc).__name__}: "
                                  f"{exc}") from None
        sys.modules.setdefault(name, module)
        _MODULES[key] = module
    return _MODULES[key]


@dataclass(frozen=True)
class GoldenFunctions:
    """What golden.py provides for the task."""

    golden: Callable
    oracle: Callable          # the truth (the golden itself when no <fn>_oracle)
    bench: Callable           # the same-precision reference (the golden when no <fn>_bench)
    get_input: Callable | None
    get_output: Callable | None


def golden_functions(task: CannTask) -> GoldenFunctions:
    module = golden_module(task)
    fn = getattr(module, task.name, None) or getattr(module, task.proto.lower(), None)
    if not callable(fn):
        raise TaskFolderError(Path(task.folder) / GOLDEN, task.name,
                              f"no function {task.name!r} (the name in {task.schema!r})")
    hooks = {h: getattr(module, h, None) for h in ("get_input", "get_output")}
    return GoldenFunctions(fn, getattr(module, f"{task.name}_oracle", None) or fn,
                           getattr(module, f"{task.name}_bench", None) or fn,
                           hooks["get_input"] if callable(hooks["get_input"]) else None,
                           hooks["get_output"] if callable(hooks["get_output"]) else None)


def _convert_attr(value: Any) -> Any:
    if isinstance(value, str):
        if value in _SPECIAL:
            return _SPECIAL[value]
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _tensor_params(fn: Callable) -> tuple[list[str], list[inspect.Parameter]]:
    tensors, attrs = [], []
    for name, p in inspect.signature(fn).parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ann = "" if p.annotation is inspect.Parameter.empty else str(p.annotation)
        (tensors if "Tensor" in ann else attrs).append(name if "Tensor" in ann else p)
    return tensors, attrs


def call_params(fn: Callable, inputs: list, attrs: dict) -> dict[str, Any]:
    """``fn``'s keyword arguments: tensors by position of its Tensor parameters, attrs by name,
    defaults otherwise (cann-bench's parameter builder)."""
    tensors, others = _tensor_params(fn)
    params: dict[str, Any] = dict(zip(tensors, inputs))
    for name in tensors[len(inputs):]:
        params[name] = None
    for p in others:
        if p.name in attrs:
            params[p.name] = _convert_attr(attrs[p.name])
        elif p.default is not inspect.Parameter.empty:
            params[p.name] = p.default
    return params


def _to_fp64(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value.clone()
    if isinstance(value, list | tuple):
        return [_to_fp64(v) for v in value]
    return value


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, list | tuple):
        return [_clone(v) for v in value]
    return value


def as_outputs(value: Any) -> tuple:
    """A result as a tuple of outputs (a single tensor is one output)."""
    return tuple(value) if isinstance(value, list | tuple) else (value,)


@dataclass
class CannReferences:
    """One case's inputs, the golden's call arguments, the truth and the same-precision
    reference outputs, and the expected (dtype, shape) of every output."""

    task: CannTask
    case: CannCase
    inputs: list
    params: dict[str, Any]              # the golden's (and the package's) keyword arguments
    truth: tuple                        # per output, float64 where the output is a float
    reference: tuple                    # per output, the same-precision reference
    expected: tuple[tuple[torch.dtype, tuple[int, ...]], ...]
    functions: GoldenFunctions

    # the same names the runner uses for the built-in tasks' references
    @property
    def golden(self) -> tuple:
        return self.truth

    def call_kwargs(self) -> dict[str, Any]:
        """Fresh copies of the call's arguments (a candidate may write into its inputs)."""
        return {k: _clone(v) for k, v in self.params.items()}

    def package_args(self) -> tuple[tuple, dict]:
        """How a package's operator is called: by keyword, as cann-bench's evaluator calls
        it (``op(**params)``: the golden's parameter names)."""
        return (), self.call_kwargs()

    def check_output(self, out: Any) -> Any:
        """The structural checks: as many outputs as the golden, each a contiguous tensor of
        the golden's dtype and shape (raises InterfaceError)."""
        outs = as_outputs(out)
        if len(outs) != len(self.expected):
            raise InterfaceError(f"{len(outs)} outputs, the golden returns "
                                 f"{len(self.expected)}")
        for i, (o, (dtype, shape)) in enumerate(zip(outs, self.expected)):
            name = _output_name(self.task, i)
            if not isinstance(o, torch.Tensor):
                raise InterfaceError(f"output {name} is a {type(o).__name__}, not a "
                                     "torch.Tensor")
            if o.dtype != dtype:
                raise InterfaceError(f"output {name} has dtype {o.dtype}, the golden's is "
                                     f"{dtype}")
            if tuple(o.shape) != shape:
                raise InterfaceError(f"output {name} has shape {list(o.shape)}, the golden's "
                                     f"is {list(shape)}")
            if not o.is_contiguous():
                raise InterfaceError(f"output {name} is not contiguous")
        return out

    def verdict(self, out: Any) -> PrecisionResult:
        """cann-bench's rule on every compared output; the case passes when all do."""
        outs = self._post(as_outputs(out))
        results = [check_output_precision(self.task, i, o, t, r)
                   for i, (o, t, r) in enumerate(zip(outs, self._post(self.truth),
                                                     self._post(self.reference)))]
        return combine(results)

    def _post(self, outs: tuple) -> tuple:
        if self.functions.get_output is None:
            return outs
        kwargs = {t.name: (outs[i] if i < len(outs) else None)
                  for i, t in enumerate(self.task.outputs)}
        for k, v in self.case.kwargs().items():
            kwargs.setdefault(k, v)
        return as_outputs(self.functions.get_output(**kwargs))

    def fresh(self, draw: int) -> CannReferences:
        return make_cann_references(self.task, self.case, draw)


def _output_name(task: CannTask, i: int) -> str:
    return task.outputs[i].name if i < len(task.outputs) else str(i)


class GoldenError(RuntimeError):
    """golden.py raised on a case (the task's fault, not the candidate's)."""


def make_cann_references(task: CannTask, case: CannCase, draw: int = 0) -> CannReferences:
    """Inputs, golden arguments, truth and same-precision reference of one case."""
    fns = golden_functions(task)
    inputs = make_inputs(task, case, draw)
    if draw:
        _perturb(inputs)
    attrs = case.kwargs()
    where = f"{Path(task.folder) / GOLDEN} on case {case.case_id}"
    try:
        if fns.get_input is not None:
            # get_input takes the proto's input names and the attrs, returns the inputs in
            # the golden's order; the golden then runs on them as they are (as cann-bench).
            kw = {t.name: (inputs[i] if i < len(inputs) else None)
                  for i, t in enumerate(task.inputs)}
            for k, v in attrs.items():
                kw.setdefault(k, v)
            kw.setdefault("skip2_exist", attrs.get("skip2_exist", True))
            inputs = list(as_outputs(fns.get_input(**kw)))
            params = call_params(fns.golden, inputs, attrs)
            truth = as_outputs(fns.oracle(**_clone_params(params)))
        else:
            params = call_params(fns.golden, inputs, attrs)
            truth = as_outputs(fns.oracle(**call_params(fns.oracle, _to_fp64(inputs), attrs)))
        reference = as_outputs(fns.bench(**call_params(fns.bench, _clone(inputs), attrs)
                                         if fns.get_input is None else _clone_params(params)))
    except TaskFolderError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of golden.py is the task's
        raise GoldenError(f"{where}: golden raised {type(exc).__name__}: {exc}") from exc
    if len(truth) != len(reference):
        raise GoldenError(f"{where}: the truth has {len(truth)} outputs, the same-precision "
                          f"reference {len(reference)}")
    expected = tuple((r.dtype, tuple(r.shape)) if isinstance(r, torch.Tensor) else (None, ())
                     for r in reference)
    return CannReferences(task, case, inputs, params, truth, reference, expected, fns)


FRESH_SHIFT = 0.01   # cann-bench's second verification adds this to every float input


def _perturb(inputs: list) -> None:
    """Shift every float input of a further draw by FRESH_SHIFT, as cann-bench does, so the
    fresh inputs differ from the first even where a range is a single value ([0, 0])."""
    for item in inputs:
        for t in item if isinstance(item, list) else (item,):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                t.add_(FRESH_SHIFT)


def _clone_params(params: dict) -> dict:
    return {k: _clone(v) for k, v in params.items()}


# --- precision ---------------------------------------------------------------------------------

def check_output_precision(task: CannTask, index: int, out: Any, truth: Any,
                           reference: Any) -> PrecisionResult:
    """One output: skipped when the proto says ``compare: false``; integers and bools must
    match exactly (or within the proto's integer threshold); floats follow the rule of
    :mod:`ascsim.bench.precision` with the proto's T when it gives one."""
    spec = task.outputs[index] if index < len(task.outputs) else None
    name = _output_name(task, index)
    if out is None and truth is None:
        return PrecisionResult(True, "none", 0.0, 0.0, "plain", f"{name}: both absent")
    if not isinstance(out, torch.Tensor) or not isinstance(truth, torch.Tensor):
        return PrecisionResult(False, "none", math.inf, math.inf, "plain",
                               f"{name}: candidate {type(out).__name__}, golden "
                               f"{type(truth).__name__}")
    dtype = DTYPE_NAMES.get(out.dtype, str(out.dtype))
    if spec is not None and not spec.compare:
        if spec.index_gather:
            return PrecisionResult(False, dtype, math.nan, math.nan, "plain",
                                   f"{name}: cann-bench checks this output by its "
                                   "index_gather rule, which ascsim does not implement: the "
                                   "case cannot be judged")
        return PrecisionResult(True, dtype, 0.0, 0.0, "plain",
                               f"{name}: not compared (compare: false in proto.yaml)")
    if not out.is_floating_point():
        return _exact(name, dtype, out, truth, task.threshold(dtype) or 0.0)
    why_prefix = f"{name}: " if len(task.outputs) > 1 else ""
    if dtype not in THRESHOLDS:
        return PrecisionResult(False, dtype, math.nan, math.nan, "plain",
                               f"{name}: no precision rule for a {dtype} output (cann-bench's "
                               f"rule has thresholds for {', '.join(sorted(THRESHOLDS))})")
    result = check_precision(out, truth, dtype, reference=reference,
                             mere_threshold=task.threshold(dtype))
    return PrecisionResult(result.passed, result.dtype, result.mere, result.mare,
                           result.branch, why_prefix + result.why, result.normal_mere,
                           result.normal_mare, result.small, result.cancellation,
                           result.deep_reduction)


def _exact(name: str, dtype: str, out: torch.Tensor, truth: torch.Tensor,
           tol: float) -> PrecisionResult:
    if out.shape != truth.shape:
        return PrecisionResult(False, dtype, math.inf, math.inf, "plain",
                               f"{name}: shape {list(out.shape)} vs {list(truth.shape)}")
    diff = (out.to(torch.int64) - truth.to(torch.int64)).abs()
    bad = int((diff > tol).sum())
    worst = int(diff.max()) if diff.numel() else 0
    ok = bad == 0
    rule = "exact match" if tol == 0 else f"|difference| <= {tol:g}"
    return PrecisionResult(ok, dtype, 0.0, float(worst), "plain",
                           f"{name}: {rule}" + ("" if ok else f" broken at {bad}/"
                                                f"{out.numel()} positions (max {worst})"))


def combine(results: list[PrecisionResult]) -> PrecisionResult:
    """One verdict over several outputs: passed when all pass; MERE/MARE the worst ones."""
    if len(results) == 1:
        return results[0]
    passed = all(r.passed for r in results)
    first_bad = next((r for r in results if not r.passed), results[0])
    finite = [r for r in results if not math.isnan(r.mere)]
    mere = max((r.mere for r in finite), default=math.nan)
    mare = max((r.mare for r in finite), default=math.nan)
    why = "; ".join(r.why for r in results)
    return PrecisionResult(passed, first_bad.dtype, mere, mare, first_bad.branch, why)


