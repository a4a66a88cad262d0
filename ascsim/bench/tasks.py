"""Bench tasks: the case lists shipped as YAML in ``ascsim/bench/tasks/``, validated on load.

A task file names the operator, its kind (which contract the shapes follow), the activation, the
baseline source and the cases. Each case carries the input shapes in the operator's input order,
the per-input dtypes, the attrs, a value range per input, the output shape (re-derived here from
the contract and compared, so a typo in a shape cannot slip through) and, for published
baselines, the baseline time in µs and optionally the published hardware floor ``t_hw_us``
(cann-bench's metadata field; without it T_HW is the estimate max(0.1·T_base, 1 µs)).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

TASK_DIR = Path(__file__).parent / "tasks"
DTYPE_NAMES = ("float16", "float32", "bfloat16")
BASELINE_SOURCES = ("published", "variant")
SIZE_CLASSES = ("S", "M", "L")


def _freeze(value: Any) -> Any:
    """Lists become tuples so cases stay hashable and immutable."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Case:
    """One bench case: shapes, dtypes, attrs and value ranges of the operator's inputs."""

    case_id: int
    note: str
    input_shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]          # one per input, in the operator's input order
    output_dtype: str
    attrs: tuple[tuple[str, Any], ...]   # (name, value) pairs; list values frozen as tuples
    value_ranges: tuple[tuple[float, float], ...]  # one [lo, hi] per input
    output_shape: tuple[int, ...]
    baseline_us: float | None        # published baseline; None when measured from a variant
    t_hw_us: float | None = None     # published hardware floor (cann-bench metadata t_hw_us);
    # None: T_HW is the bench's estimate max(0.1·T_base, 1 µs)

    def __post_init__(self) -> None:
        where = f"case {self.case_id}"
        n = len(self.input_shapes)
        if len(self.dtypes) != n or len(self.value_ranges) != n:
            raise ValueError(f"{where}: {n} input shapes but {len(self.dtypes)} dtypes and "
                             f"{len(self.value_ranges)} value ranges (need one each per input)")
        for dt in (*self.dtypes, self.output_dtype):
            if dt not in DTYPE_NAMES:
                raise ValueError(f"{where}: dtype {dt!r} is not one of {DTYPE_NAMES}")
        for i, rng in enumerate(self.value_ranges):
            if len(rng) != 2 or not all(isinstance(v, int | float) for v in rng):
                raise ValueError(f"{where}: value range of input {i} must be two numbers, "
                                 f"got {rng!r}")
            if not rng[0] < rng[1]:
                raise ValueError(f"{where}: value range of input {i} needs lo < hi, got {rng!r}")
        for shape in (*self.input_shapes, self.output_shape):
            if not shape or any(not isinstance(d, int) or d < 1 for d in shape):
                raise ValueError(f"{where}: shape {shape!r} must be positive ints")
        if self.baseline_us is not None and not self.baseline_us > 0:
            raise ValueError(f"{where}: baseline_us must be > 0, got {self.baseline_us}")
        if self.t_hw_us is not None and not self.t_hw_us > 0:
            raise ValueError(f"{where}: t_hw_us must be > 0, got {self.t_hw_us}")
        if self.size_class not in SIZE_CLASSES:
            raise ValueError(f"{where}: note {self.note!r} must start with a size class "
                             f"{SIZE_CLASSES} and '-'")

    @property
    def dtype(self) -> str:
        """The case dtype: the first input's (it selects the dispatch class)."""
        return self.dtypes[0]

    @property
    def size_class(self) -> str:
        return self.note.split("-", 1)[0]

    def kwargs(self) -> dict[str, Any]:
        """The attrs as keyword arguments for the operator (tuples back to lists)."""
        return {k: _thaw(v) for k, v in self.attrs}

    def attr(self, name: str) -> Any:
        return dict(self.attrs)[name]

    def to_json(self) -> dict:
        return {"case_id": self.case_id, "note": self.note,
                "input_shape": _thaw(self.input_shapes), "dtype": list(self.dtypes),
                "output_dtype": self.output_dtype, "attrs": self.kwargs(),
                "value_range": _thaw(self.value_ranges), "output_shape": list(self.output_shape),
                "baseline_us": self.baseline_us, "t_hw_us": self.t_hw_us}


# --- contracts: per task kind, check a case's shapes/attrs and derive its output shape --------

def conv_out_hw(h: int, w: int, kh: int, kw: int, strides, pads, dilations) -> tuple[int, int]:
    """Ho/Wo of the contract: floor((H + pt + pb − d·(K−1) − 1)/s) + 1."""
    ho = (h + pads[0] + pads[1] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    wo = (w + pads[2] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    return ho, wo


# §1.1 supported ranges (desc.md): name → (lo, hi) inclusive.
CONV_RANGES = {"N": (1, 16), "Cin": (3, 1024), "Cout": (3, 1024), "H": (8, 256), "W": (8, 256),
               "Kh": (1, 7), "Kw": (1, 7), "stride": (1, 2), "pad": (0, 3), "dilation": (1, 2)}


def _in_range(where: str, name: str, value: int) -> None:
    lo, hi = CONV_RANGES[name]
    if not lo <= value <= hi:
        raise ValueError(f"{where}: {name}={value} is outside the contract range [{lo}, {hi}]")


def _conv_output_shape(case: Case) -> tuple[int, ...]:
    where = f"case {case.case_id}"
    x, f, b = case.input_shapes
    if len(x) != 4 or len(f) != 4 or len(b) != 1:
        raise ValueError(f"{where}: conv needs x [N,Cin,H,W], filter [Cout,Cin,Kh,Kw], bias "
                         f"[Cout]; got {x}, {f}, {b}")
    if f[1] != x[1] or b[0] != f[0]:
        raise ValueError(f"{where}: channels disagree: x Cin={x[1]}, filter {f}, bias {b}")
    if len(set(case.dtypes)) != 1 or case.output_dtype != case.dtype:
        raise ValueError(f"{where}: conv inputs and output share one dtype, got "
                         f"{case.dtypes} -> {case.output_dtype}")
    attrs = dict(case.attrs)
    strides, pads = attrs.get("strides"), attrs.get("pads")
    dil = attrs.get("dilations", (1, 1))
    if strides is None or len(strides) != 2 or pads is None or len(pads) != 4 or len(dil) != 2:
        raise ValueError(f"{where}: attrs need strides [sh,sw], pads [t,b,l,r], dilations "
                         f"[dh,dw]; got {attrs}")
    for name, value in zip(("N", "Cin", "H", "W"), x):
        _in_range(where, name, value)
    for name, value in zip(("Cout", "Kh", "Kw"), (f[0], f[2], f[3])):
        _in_range(where, name, value)
    for name, values in (("stride", strides), ("pad", pads), ("dilation", dil)):
        for v in values:
            _in_range(where, name, v)
    ho, wo = conv_out_hw(x[2], x[3], f[2], f[3], strides, pads, dil)
    if ho < 1 or wo < 1:
        raise ValueError(f"{where}: empty output {ho}x{wo}")
    return (x[0], f[0], ho, wo)


def _matmul_output_shape(case: Case) -> tuple[int, ...]:
    where = f"case {case.case_id}"
    a, b, bias = case.input_shapes
    if len(a) != 2 or len(b) != 2 or a[1] != b[0] or tuple(bias) != (1, b[1]):
        raise ValueError(f"{where}: matmul needs A [M,K], B [K,N], bias [1,N]; got {a}, {b}, "
                         f"{bias}")
    if case.dtypes[0] != case.dtypes[1] or case.dtype == "float32":
        raise ValueError(f"{where}: A and B share one dtype, float16 or bfloat16; got "
                         f"{case.dtypes[:2]}")
    if case.dtypes[2] != "float32" or case.output_dtype != "float32":
        raise ValueError(f"{where}: bias and C are float32; got bias {case.dtypes[2]}, "
                         f"C {case.output_dtype}")
    alpha = dict(case.attrs).get("alpha")
    if not isinstance(alpha, int | float) or not 0 <= alpha < 1:
        raise ValueError(f"{where}: alpha must be a number in [0, 1), got {alpha!r}")
    return (a[0], b[1])


# kind → output-shape rule (raises ValueError when the case breaks the contract).
KIND_OUTPUT_SHAPE: dict[str, Callable[[Case], tuple[int, ...]]] = {
    "conv2d_act": _conv_output_shape,
    "matmul_act": _matmul_output_shape,
}
KIND_ACTIVATIONS = {"conv2d_act": ("tanh", "sigmoid"), "matmul_act": ("leaky_relu",)}


@dataclass(frozen=True)
class ReferenceTimes:
    """Per-case device times someone published for their own implementation of the operator
    (not the baseline): shown next to ours in the reports, never scored."""

    name: str          # the column's label, e.g. "seed"
    source: str        # where the numbers come from
    hardware: str
    times: tuple[tuple[int, float], ...]  # (case id, µs)

    def time_us(self, case_id: int) -> float | None:
        for cid, us in self.times:
            if cid == case_id:
                return us
        return None

    def to_json(self) -> dict:
        return {"name": self.name, "source": self.source, "hardware": self.hardware,
                "times_us": {str(cid): us for cid, us in self.times}}


@dataclass(frozen=True)
class Task:
    """An operator's bench: its contract (kind + activation), baseline source and cases."""

    name: str                 # the operator's name, e.g. "fused_conv_tanh"
    proto: str
    kind: str
    activation: str
    formula: str
    input_names: tuple[str, ...]
    baseline_source: str      # "published" (baseline_us per case) or "variant"
    baseline_variant: str | None   # for "variant": the operator variant timed as the baseline
    baseline_hardware: str | None  # for "published": the hardware the numbers come from
    cases: tuple[Case, ...]
    references: tuple[ReferenceTimes, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KIND_OUTPUT_SHAPE:
            raise ValueError(f"task {self.name}: unknown kind {self.kind!r} "
                             f"(known: {sorted(KIND_OUTPUT_SHAPE)})")
        if self.activation not in KIND_ACTIVATIONS[self.kind]:
            raise ValueError(f"task {self.name}: activation {self.activation!r} is not one of "
                             f"{KIND_ACTIVATIONS[self.kind]}")
        if self.baseline_source not in BASELINE_SOURCES:
            raise ValueError(f"task {self.name}: baseline source {self.baseline_source!r} "
                             f"is not one of {BASELINE_SOURCES}")
        if (self.baseline_source == "variant") != (self.baseline_variant is not None):
            raise ValueError(f"task {self.name}: a 'variant' baseline names exactly one variant")
        ids = [c.case_id for c in self.cases]
        if not ids or len(set(ids)) != len(ids):
            raise ValueError(f"task {self.name}: case ids must be present and unique: {ids}")
        for case in self.cases:
            if len(case.input_shapes) != len(self.input_names):
                raise ValueError(f"task {self.name} case {case.case_id}: "
                                 f"{len(case.input_shapes)} inputs, expected {self.input_names}")
            derived = KIND_OUTPUT_SHAPE[self.kind](case)
            if derived != case.output_shape:
                raise ValueError(f"task {self.name} case {case.case_id}: output_shape "
                                 f"{list(case.output_shape)} disagrees with the contract "
                                 f"formula, which gives {list(derived)}")
            has_baseline = case.baseline_us is not None
            if has_baseline != (self.baseline_source == "published"):
                raise ValueError(f"task {self.name} case {case.case_id}: baseline_us must be "
                                 f"given exactly when the baseline is published")

    def case(self, case_id: int) -> Case:
        for c in self.cases:
            if c.case_id == case_id:
                return c
        raise KeyError(f"task {self.name} has no case {case_id} "
                       f"(cases: {[c.case_id for c in self.cases]})")

    def select(self, case_ids: Iterable[int] | None = None, quick: bool = False) -> Task:
        """A task with only the given cases (in the given order) and/or only size class S."""
        cases = self.cases if case_ids is None else tuple(self.case(i) for i in case_ids)
        if quick:
            cases = tuple(c for c in cases if c.size_class == "S")
        if not cases:
            raise ValueError(f"task {self.name}: the selection leaves no case")
        kept = {c.case_id for c in cases}
        references = tuple(ReferenceTimes(r.name, r.source, r.hardware,
                                          tuple(t for t in r.times if t[0] in kept))
                           for r in self.references)
        return Task(self.name, self.proto, self.kind, self.activation, self.formula,
                    self.input_names, self.baseline_source, self.baseline_variant,
                    self.baseline_hardware, cases, references)

    def to_json(self) -> dict:
        return {"name": self.name, "proto": self.proto, "kind": self.kind,
                "activation": self.activation, "formula": self.formula,
                "inputs": list(self.input_names), "baseline_source": self.baseline_source,
                "baseline_variant": self.baseline_variant,
                "baseline_hardware": self.baseline_hardware,
                "references": [r.to_json() for r in self.references]}


def _case_from_doc(doc: dict, output_dtype: str | None) -> Case:
    n_inputs = len(doc["input_shape"])
    dtype = doc["dtype"]
    dtypes = tuple(dtype) if isinstance(dtype, list) else (dtype,) * n_inputs
    ranges = doc["value_range"]
    # cann-bench convention: one [lo, hi] pair broadcasts to every input.
    if ranges and not isinstance(ranges[0], list):
        ranges = [ranges] * n_inputs
    return Case(case_id=int(doc["case_id"]), note=str(doc["note"]),
                input_shapes=_freeze(doc["input_shape"]), dtypes=dtypes,
                output_dtype=output_dtype or dtypes[0],
                attrs=tuple(sorted((k, _freeze(v)) for k, v in (doc.get("attrs") or {}).items())),
                value_ranges=_freeze(ranges), output_shape=_freeze(doc["output_shape"]),
                baseline_us=(None if doc.get("baseline_us") is None
                             else float(doc["baseline_us"])),
                t_hw_us=None if doc.get("t_hw_us") is None else float(doc["t_hw_us"]))


def _reference_from_doc(doc: dict, case_ids: set[int]) -> ReferenceTimes:
    """Published times of the document's cases (a task file may keep only some cases)."""
    times = tuple(sorted((int(cid), float(us)) for cid, us in doc["times_us"].items()
                         if int(cid) in case_ids))
    return ReferenceTimes(str(doc["name"]), str(doc.get("source", "")),
                          str(doc.get("hardware", "")), times)


def task_from_doc(doc: dict) -> Task:
    """Build and validate a Task from a parsed task document."""
    baseline = doc.get("baseline") or {}
    try:
        cases = tuple(_case_from_doc(c, doc.get("output_dtype")) for c in doc["cases"])
        return Task(name=doc["operator"], proto=doc["proto"], kind=doc["kind"],
                    activation=doc["activation"], formula=doc["formula"],
                    input_names=tuple(doc["inputs"]), baseline_source=baseline.get("source", ""),
                    baseline_variant=baseline.get("variant"),
                    baseline_hardware=baseline.get("hardware"), cases=cases,
                    references=tuple(_reference_from_doc(r, {c.case_id for c in cases})
                                     for r in doc.get("references") or ()))
    except KeyError as exc:
        raise ValueError(f"task document is missing the field {exc}") from None


def available_tasks() -> list[str]:
    return sorted(p.stem for p in TASK_DIR.glob("*.yaml"))


def load_task(name_or_path: str | Path) -> Task:
    """Load a shipped task by operator name, or any task file by path."""
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = TASK_DIR / f"{name_or_path}.yaml"
        if not path.exists():
            raise ValueError(f"no bench task {str(name_or_path)!r}; available: "
                             f"{', '.join(available_tasks())}")
    with open(path) as fh:
        doc = yaml.safe_load(fh)
    return task_from_doc(doc)
