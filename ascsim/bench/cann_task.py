"""A cann-bench task read from its own folder: ``proto.yaml``, ``cases.yaml``, ``golden.py``.

cann-bench (hicann/cann-bench) defines a task as a folder — ``tasks/level1..4/<task>/`` or
``bench_lab/<suite>/<task>/`` — holding

- ``proto.yaml``: ``operator:`` with ``name`` (CamelCase), ``category``, ``difficulty``,
  ``formula``, ``schema`` (``rms_norm(Tensor x, ...) -> Tensor y``: its first word names the
  golden function and the package's operator), ``inputs``/``outputs`` (names and allowed
  dtypes; an output with ``compare: false`` is not compared), ``attrs`` and optionally
  ``precision_thresholds`` (dtype → T, replacing the default T of that dtype);
- ``cases.yaml``: ``cases:``, each with ``case_id``, ``input_shape`` (one shape per input in
  the proto's order; ``null`` for an omitted optional input; a list of shapes for a tensor
  list), ``dtype`` (one name, or one per input), ``attrs``, ``value_range`` (one ``[lo, hi]``
  for every input, or one per input) and ``note`` (its first word, before ``-``, is the size
  class S/M/L);
- ``golden.py``: the PyTorch reference (run from its folder here, never copied).

Per-case device numbers live outside the folder, in ``metadata/<hw>.json`` of the suite root
(the first ``metadata/`` directory found walking up from the task folder), keyed by the task's
path below that root and the case id: ``baseline_perf_us`` (the CANN operator, measured) and
``t_hw_us`` (a hardware-anchored lower bound). Which file applies is decided by the simulated
SoC (:func:`metadata_hardware`). A folder that breaks this layout is refused by
:class:`TaskFolderError`, naming the file and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

PROTO, CASES, GOLDEN = "proto.yaml", "cases.yaml", "golden.py"
METADATA_DIR = "metadata"
#: cann-bench's suites under a checkout root, searched in this order for a task name.
SUITE_DIRS = ("tasks", "bench_lab")
SIZE_CLASSES = ("S", "M", "L")
#: The dtype names cases.yaml may use (cann-bench's dtype mapper; "None" marks an absent input).
DTYPE_NAMES = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
               "int8", "int16", "int32", "int64", "uint8", "bool", "None")
_SCHEMA_NAME = re.compile(r"^\s*(\w+)\s*\(")

# Which metadata file holds the baselines of a simulated SoC. 950pr: the Ascend950PR parts
# (cann-bench's own alias table maps the "Ascend950PR" prefix to it). 910b2: the 910B2 and
# its kin — the SoCs whose ascsim spec has the 910B2's AIC count, clock and L2 (24 AIC,
# 1800 MHz, 192 MiB: Ascend910B2C, and the A3 dies Ascend910_9381/9382 that run the 910B2's
# kernels). cann-bench also maps Ascend910_9362 to 910b2, but that die has 20 AIC at 1500 MHz
# here, so its times would not be the 910B2's: it gets no baseline, like every other SoC.
METADATA_SOCS: dict[str, tuple[str, ...]] = {
    "950pr": ("Ascend950PR_9579", "Ascend950PR_9589"),
    "910b2": ("Ascend910B2", "Ascend910B2C", "Ascend910_9381", "Ascend910_9382"),
}


def metadata_hardware(soc: str) -> str | None:
    """The metadata file (``950pr``, ``910b2``) whose baselines apply to ``soc``, or None."""
    for hw, socs in METADATA_SOCS.items():
        if soc in socs:
            return hw
    return None


class TaskFolderError(ValueError):
    """A cann-bench task folder that cannot be read: the file, the field and what is wrong."""

    def __init__(self, path: Path | str, where: str, problem: str):
        self.path, self.where, self.problem = str(path), where, problem
        super().__init__(f"{path}: {where}: {problem}" if where else f"{path}: {problem}")


def freeze(value: Any) -> Any:
    """Lists become tuples (recursively), so cases stay hashable and immutable."""
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    return value


def thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class TensorSpec:
    """One input or output of the proto: its name, allowed dtypes and whether it is compared."""

    name: str
    dtypes: tuple[str, ...]
    compare: bool = True
    index_gather: bool = False   # the proto asks for cann-bench's index-points-to-value check
    optional: bool = False


@dataclass(frozen=True)
class CannCase:
    """One case of cases.yaml, with the SoC's baseline numbers from the metadata."""

    case_id: int
    note: str
    input_shapes: tuple           # per input: a shape, None (omitted) or a tuple of shapes
    dtypes: tuple                 # per input: a dtype name (or a tuple of them for a list)
    attrs: tuple[tuple[str, Any], ...]
    value_ranges: tuple           # as written: one (lo, hi) pair, or one per input
    baseline_us: float | None     # metadata baseline_perf_us (None: no metadata for the SoC)
    t_hw_us: float | None         # metadata t_hw_us

    @property
    def dtype(self) -> str:
        """The case's dtype: its first named input dtype (what the notes and tables show)."""
        for d in self.dtypes:
            d = d[0] if isinstance(d, tuple) and d else d
            if isinstance(d, str) and d != "None":
                return d
        return "None"

    @property
    def size_class(self) -> str:
        head = self.note.split("-", 1)[0].strip()
        return head if head in SIZE_CLASSES else "?"

    def kwargs(self) -> dict[str, Any]:
        return {k: thaw(v) for k, v in self.attrs}

    def to_json(self) -> dict:
        return {"case_id": self.case_id, "note": self.note,
                "input_shape": thaw(self.input_shapes), "dtype": thaw(self.dtypes),
                "attrs": self.kwargs(), "value_range": thaw(self.value_ranges),
                "baseline_us": self.baseline_us, "t_hw_us": self.t_hw_us}


@dataclass(frozen=True)
class CannTask:
    """A cann-bench task: its proto, its cases and where its files are.

    ``name`` is the schema's function name (``rms_norm``): the golden function and the name a
    submission package exports. It shares the interface of :class:`ascsim.bench.tasks.Task`
    that the runner and the reports use (``cases``, ``select``, the baseline fields).
    """

    name: str
    proto: str                    # the proto's operator name, e.g. "RmsNorm"
    folder: str                   # the task folder (absolute)
    rel_path: str                 # below its suite root, e.g. "level2/rms_norm" (seed, metadata)
    level: str                    # proto difficulty, e.g. "L2"
    category: str
    formula: str
    schema: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    precision_thresholds: tuple[tuple[str, float], ...]
    hardware: str | None          # the metadata file the baselines come from, or None
    metadata_note: str            # where the baselines came from, or why there are none
    cases: tuple[CannCase, ...]

    kind = "cann_bench"
    baseline_source = "published"
    baseline_variant = None
    references: tuple = ()

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.inputs)

    @property
    def baseline_hardware(self) -> str | None:
        return self.hardware

    def threshold(self, dtype: str) -> float | None:
        """The task's own T for ``dtype`` (proto precision_thresholds), or None."""
        return dict(self.precision_thresholds).get(dtype)

    def case(self, case_id: int) -> CannCase:
        for c in self.cases:
            if c.case_id == case_id:
                return c
        raise KeyError(f"task {self.name} has no case {case_id} "
                       f"(cases: {[c.case_id for c in self.cases]})")

    def select(self, case_ids: Iterable[int] | None = None, quick: bool = False) -> CannTask:
        cases = self.cases if case_ids is None else tuple(self.case(i) for i in case_ids)
        if quick:
            cases = tuple(c for c in cases if c.size_class == "S")
        if not cases:
            raise ValueError(f"task {self.name}: the selection leaves no case")
        return _replace_cases(self, cases)

    def to_json(self) -> dict:
        return {"name": self.name, "proto": self.proto, "kind": self.kind,
                "folder": self.folder, "rel_path": self.rel_path, "level": self.level,
                "category": self.category, "formula": self.formula, "schema": self.schema,
                "inputs": list(self.input_names),
                "outputs": [t.name for t in self.outputs],
                "precision_thresholds": dict(self.precision_thresholds),
                "baseline_source": self.baseline_source, "baseline_variant": None,
                "baseline_hardware": self.hardware, "metadata_note": self.metadata_note,
                "references": []}


def _replace_cases(task: CannTask, cases: tuple[CannCase, ...]) -> CannTask:
    fields = {k: getattr(task, k) for k in task.__dataclass_fields__}
    fields["cases"] = cases
    return CannTask(**fields)


# --- reading the files ---------------------------------------------------------------------

def _read_yaml(path: Path) -> Any:
    if not path.is_file():
        raise TaskFolderError(path.parent, "", f"{path.name} is missing (a cann-bench task "
                              f"folder holds {PROTO}, {CASES} and {GOLDEN})")
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        raise TaskFolderError(path, "", f"not valid YAML: {exc}") from None


def _need(doc: dict, key: str, types: type | tuple[type, ...], path: Path, where: str) -> Any:
    if not isinstance(doc, dict) or key not in doc:
        raise TaskFolderError(path, where, f"the field {key!r} is missing")
    value = doc[key]
    if not isinstance(value, types):
        names = types.__name__ if isinstance(types, type) else "/".join(t.__name__ for t in types)
        raise TaskFolderError(path, f"{where}.{key}" if where else key,
                              f"must be a {names}, got {type(value).__name__} {value!r}")
    return value


def _tensor_specs(items: list, path: Path, field: str) -> tuple[TensorSpec, ...]:
    specs = []
    for i, item in enumerate(items):
        where = f"operator.{field}[{i}]"
        name = _need(item, "name", str, path, where)
        dtypes = item.get("dtype", [])
        dtypes = [dtypes] if isinstance(dtypes, str) else dtypes
        if not isinstance(dtypes, list) or not all(isinstance(d, str) for d in dtypes):
            raise TaskFolderError(path, f"{where}.dtype", f"must be a dtype name or a list "
                                  f"of them, got {dtypes!r}")
        specs.append(TensorSpec(name, tuple(dtypes), bool(item.get("compare", True)),
                                item.get("index_gather") is not None,
                                bool(item.get("optional", False))))
    return tuple(specs)


def read_proto(folder: Path) -> dict:
    """proto.yaml's ``operator`` mapping, checked; the keys used below are present."""
    path = folder / PROTO
    doc = _read_yaml(path)
    op = _need(doc, "operator", dict, path, "")
    for key in ("name", "schema"):
        _need(op, key, str, path, "operator")
    if not _SCHEMA_NAME.match(op["schema"]):
        raise TaskFolderError(path, "operator.schema", f"does not start with a function name "
                              f"and '(': {op['schema']!r}")
    for key in ("inputs", "outputs"):
        _need(op, key, list, path, "operator")
        if not op[key]:
            raise TaskFolderError(path, f"operator.{key}", "is empty")
    if op.get("attrs") is not None and not isinstance(op["attrs"], list):
        raise TaskFolderError(path, "operator.attrs", f"must be a list, got {op['attrs']!r}")
    thresholds = op.get("precision_thresholds") or {}
    if not isinstance(thresholds, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            for v in thresholds.values()):
        raise TaskFolderError(path, "operator.precision_thresholds",
                              f"must map dtype names to numbers >= 0, got {thresholds!r}")
    return op


def schema_function(op: dict) -> str:
    return _SCHEMA_NAME.match(op["schema"]).group(1)


def _check_shape(shape: Any, path: Path, where: str) -> None:
    if shape is None:
        return
    if isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool)
                                       and d >= 0 for d in shape):
        return
    if isinstance(shape, list) and shape and all(isinstance(s, list) for s in shape):
        for j, s in enumerate(shape):
            _check_shape(s, path, f"{where}[{j}]")
        return
    raise TaskFolderError(path, where, f"must be a shape (a list of ints >= 0), null, or a "
                          f"list of shapes; got {shape!r}")


def _check_dtypes(dtypes: Any, path: Path, where: str) -> None:
    if isinstance(dtypes, str) or dtypes is None:
        name = "None" if dtypes is None else dtypes
        if name not in DTYPE_NAMES:
            raise TaskFolderError(path, where, f"unknown dtype {dtypes!r} (known: "
                                  f"{', '.join(DTYPE_NAMES)})")
        return
    if isinstance(dtypes, list) and dtypes:
        for j, d in enumerate(dtypes):
            _check_dtypes(d, path, f"{where}[{j}]")
        return
    raise TaskFolderError(path, where, f"must be a dtype name or a list of them, got "
                          f"{dtypes!r}")


def _check_range(rng: Any, path: Path, where: str) -> None:
    """A value range: [lo, hi] (numbers, or 'inf'/'-inf'/'nan' strings), or a list of them."""
    if isinstance(rng, list) and rng and not isinstance(rng[0], list):
        ok = all(isinstance(v, int | float | str) and not isinstance(v, bool) for v in rng)
        if ok and 1 <= len(rng) <= 2:
            return
    elif isinstance(rng, list) and rng:
        for j, r in enumerate(rng):
            _check_range(r, path, f"{where}[{j}]")
        return
    elif rng is None or rng == []:
        return
    raise TaskFolderError(path, where, f"must be [lo, hi] or one [lo, hi] per input, got "
                          f"{rng!r}")


def _case(raw: Any, index: int, path: Path, inputs: tuple[TensorSpec, ...], proto_name: str,
          baselines: dict | None) -> CannCase:
    where = f"cases[{index}]"
    if not isinstance(raw, dict):
        raise TaskFolderError(path, where, f"must be a mapping, got {raw!r}")
    case_id = _need(raw, "case_id", int, path, where)
    where = f"case {case_id}"
    op = raw.get("operator")
    if op is not None and str(op).lower() != proto_name.lower():
        raise TaskFolderError(path, f"{where}.operator", f"{op!r} is not the proto's "
                              f"operator {proto_name!r}")
    shapes = _need(raw, "input_shape", list, path, where)
    if shapes and isinstance(shapes[0], int):
        shapes = [shapes]   # one input written flat (cann-bench accepts it too)
    if len(shapes) > len(inputs):
        raise TaskFolderError(path, f"{where}.input_shape", f"{len(shapes)} shapes for the "
                              f"{len(inputs)} inputs of {PROTO}")
    left_out = [t.name for t in inputs[len(shapes):] if not t.optional]
    if left_out:
        raise TaskFolderError(path, f"{where}.input_shape", f"{len(shapes)} shapes: no shape "
                              f"for the required input(s) {left_out} of {PROTO} (only "
                              "trailing optional inputs may be left out; null marks an "
                              "omitted one)")
    n_inputs = len(shapes)
    for j, s in enumerate(shapes):
        _check_shape(s, path, f"{where}.input_shape[{j}]")
    dtypes = raw.get("dtype")
    if dtypes is None:
        raise TaskFolderError(path, where, "the field 'dtype' is missing")
    dtypes = [dtypes] if isinstance(dtypes, str) else dtypes
    _check_dtypes(dtypes, path, f"{where}.dtype")
    if len(dtypes) == 1 and n_inputs > 1:
        dtypes = dtypes * n_inputs
    if len(dtypes) != n_inputs:
        raise TaskFolderError(path, f"{where}.dtype", f"{len(dtypes)} dtypes for "
                              f"{n_inputs} inputs (give one, or one per input)")
    attrs = raw.get("attrs") or {}
    if not isinstance(attrs, dict):
        raise TaskFolderError(path, f"{where}.attrs", f"must be a mapping, got {attrs!r}")
    ranges = raw.get("value_range") or []
    _check_range(ranges, path, f"{where}.value_range")
    note = raw.get("note", "") or ""
    if not isinstance(note, str):
        raise TaskFolderError(path, f"{where}.note", f"must be a string, got {note!r}")
    entry = (baselines or {}).get(str(case_id)) or {}
    return CannCase(case_id=case_id, note=note, input_shapes=freeze(shapes),
                    dtypes=freeze(dtypes), attrs=tuple(sorted((k, freeze(v))
                                                              for k, v in attrs.items())),
                    value_ranges=freeze(ranges), baseline_us=_positive(entry, "baseline_perf_us"),
                    t_hw_us=_positive(entry, "t_hw_us"))


def _positive(entry: dict, key: str) -> float | None:
    value = entry.get(key)
    return float(value) if isinstance(value, int | float) and value > 0 else None


# --- metadata --------------------------------------------------------------------------------

def find_metadata(folder: Path) -> Path | None:
    """The first ``metadata/`` directory at or above the task folder's parent."""
    for parent in folder.resolve().parents:
        if (parent / METADATA_DIR).is_dir():
            return parent / METADATA_DIR
    return None


def _baselines(folder: Path, soc: str) -> tuple[str | None, str, str, dict | None]:
    """(hardware, note, rel_path, {case id: entry}) for the task folder on ``soc``."""
    meta = find_metadata(folder)
    rel = folder.name if meta is None else folder.resolve().relative_to(meta.parent).as_posix()
    hw = metadata_hardware(soc)
    if hw is None:
        return None, (f"no cann-bench baseline for {soc}: baselines exist for "
                      + "; ".join(f"{k} ({', '.join(v)})" for k, v in METADATA_SOCS.items())), \
            rel, None
    if meta is None:
        return None, f"no {METADATA_DIR}/ directory above {folder}: no baselines", rel, None
    path = meta / f"{hw}.json"
    if not path.is_file():
        return None, f"{path} does not exist: no baselines for {soc}", rel, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TaskFolderError(path, "", f"not valid JSON: {exc}") from None
    node: Any = data
    for part in rel.split("/"):
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None, f"{path} has no entry {rel!r}: no baselines", rel, None
    return hw, f"{path} ({rel})", rel, node


# --- the task ----------------------------------------------------------------------------------

def is_task_folder(path: Path) -> bool:
    return path.is_dir() and (path / PROTO).is_file()


def load_cann_task(folder: str | Path, soc: str) -> CannTask:
    """Read and check the task folder; baselines from the metadata file of ``soc``."""
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise TaskFolderError(folder, "", "is not a directory")
    op = read_proto(folder)
    cases_path = folder / CASES
    doc = _read_yaml(cases_path)
    raw_cases = _need(doc, "cases", list, cases_path, "")
    if not raw_cases:
        raise TaskFolderError(cases_path, "cases", "is empty")
    if not (folder / GOLDEN).is_file():
        raise TaskFolderError(folder, "", f"{GOLDEN} is missing (the task's reference)")
    hardware, note, rel, baselines = _baselines(folder, soc)
    inputs = _tensor_specs(op["inputs"], folder / PROTO, "inputs")
    cases = tuple(_case(raw, i, cases_path, inputs, op["name"], baselines)
                  for i, raw in enumerate(raw_cases))
    ids = [c.case_id for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise TaskFolderError(cases_path, "case_id", f"repeated ids {dup}")
    return CannTask(name=schema_function(op), proto=op["name"], folder=str(folder),
                    rel_path=rel, level=str(op.get("difficulty", "")),
                    category=str(op.get("category", "")),
                    formula=str(op.get("formula", "")).strip(), schema=op["schema"].strip(),
                    inputs=inputs, outputs=_tensor_specs(op["outputs"], folder / PROTO,
                                                         "outputs"),
                    precision_thresholds=tuple(sorted(
                        (str(k).lower(), float(v))
                        for k, v in (op.get("precision_thresholds") or {}).items())),
                    hardware=hardware, metadata_note=note, cases=cases)


# --- finding tasks under a checkout ----------------------------------------------------------

def task_folders(root: str | Path, suites: Iterable[str] = SUITE_DIRS) -> list[Path]:
    """Every task folder (one holding proto.yaml) under ``root``'s suites, sorted by path."""
    root = Path(root)
    found = []
    for suite in suites:
        base = root / suite
        if base.is_dir():
            found += sorted(p.parent for p in base.rglob(PROTO))
    return found


def find_task(root: str | Path, name: str) -> Path:
    """The folder of task ``name`` (its folder name, its schema function or its proto name)
    under ``root``'s ``tasks/`` first, then ``bench_lab/``."""
    root = Path(root)
    if not any((root / s).is_dir() for s in SUITE_DIRS):
        raise ValueError(f"--cann-bench {root}: no {' or '.join(SUITE_DIRS)} directory there "
                         "(give the root of a cann-bench checkout)")
    wanted = name.lower()
    matches = [p for p in task_folders(root) if p.name.lower() == wanted]
    if not matches:
        for p in task_folders(root):
            try:
                op = read_proto(p)
            except TaskFolderError:
                continue
            if wanted in (op["name"].lower(), schema_function(op).lower()):
                matches.append(p)
    if not matches:
        raise ValueError(f"no cann-bench task {name!r} under {root}/"
                         f"{{{','.join(SUITE_DIRS)}}} (see --list)")
    return matches[0]
