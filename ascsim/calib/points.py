"""Calibration points as data: the schema of a points file, loading and validation.

A points file (YAML) has three lists; ``points`` is required, the others optional:

``points``: published measurements to re-run. Fields:

- ``id`` (str, unique): the name used in reports, series and rankings.
- ``kernel`` (str): a name in :data:`ascsim.calib.kernels.KERNELS`.
- ``soc`` (str): an ascsim SoC name (``Ascend910B1``, ``Ascend950PR_9589``, ...).
- ``knobs`` (mapping): the kernel's parameters (its runner's keyword arguments).
- ``published_us`` (number > 0, or null): the published device time (Task Duration). null
  marks a configuration whose number is kept aside: it is simulated for the trend checks only.
- ``pipes_us`` (mapping, optional): published per-pipe busy times, keys from :data:`PIPES`.
- ``source`` (str): where the number comes from (section and case in device-times.md).
- ``holdout`` (bool): true = held-out point, reported apart from the fit points.
- ``quick`` (bool, optional): part of the ``--quick`` selection.
- ``reference`` (bool, optional): the published time is of an operator whose own kernels are
  not the ones run here, only our re-expression of its published design (the seed article's
  Fused ConvTanh, run through our PyPTO-Pro package). Its error measures our kernels against
  theirs as much as the model, so it is reported in a summary of its own and left out of the
  fit and of the fit / hold-out / all summaries, whatever its ``holdout``.
- ``note`` (str, optional): anything the reader should know (e.g. a scaled shape).

``series``: ordered optimisation steps, checked for order and per-step speed-up. Fields:
``id``, ``title``, ``steps`` (list of point ids, in published order).

``rankings``: fusion variants of one computation, checked for the order of their times. Fields:
``id``, ``title``, ``variants`` (mapping variant name -> list of point ids whose times add up,
e.g. the separate matmul and activation launches).

``excluded``: published points not run, each with ``id``, ``source`` and ``reason``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ascsim.calib.kernels import KERNELS, knob_problem
from ascsim.hw import get_soc

#: Published per-pipe keys -> what they measure (see :func:`ascsim.calib.measure.sim_pipes`).
PIPES = {
    "vec": "Vector pipe of the AIV cores",
    "scalar": "Scalar pipe (busiest core)",
    "mte1": "MTE1 (L1 -> L0A/L0B)",
    "mte2": "MTE2 (GM reads) of the AIC cores, or of the AIV cores in a vector kernel",
    "aiv_mte2": "MTE2 of the AIV cores (MIX kernels)",
    "mte3": "MTE3 (UB -> GM) of the AIV cores",
    "mac": "Cube (M pipe)",
    "cube": "Cube (M pipe)",
    "fixpipe": "FixPipe (L0C ->)",
    "aiv": "AIV core active time",
    "aic": "AIC core active time",
    "aicore": "AIC core active time",
}

_POINT_FIELDS = {"id", "kernel", "soc", "knobs", "published_us", "pipes_us", "source",
                 "holdout", "quick", "note", "reference"}
_REQUIRED = ("id", "kernel", "soc", "knobs", "published_us", "source", "holdout")


class PointsError(ValueError):
    """A points file that does not follow the schema (the message names point and field)."""


@dataclass(frozen=True)
class Point:
    """One published point to re-run (fields as in the module docstring)."""

    id: str
    kernel: str
    soc: str
    knobs: dict
    published_us: float | None
    source: str
    holdout: bool
    pipes_us: dict = field(default_factory=dict)
    quick: bool = False
    note: str = ""
    reference: bool = False


@dataclass(frozen=True)
class Series:
    id: str
    title: str
    steps: tuple[str, ...]


@dataclass(frozen=True)
class Ranking:
    id: str
    title: str
    variants: dict  # variant name -> tuple of point ids


@dataclass(frozen=True)
class Excluded:
    id: str
    source: str
    reason: str


@dataclass(frozen=True)
class PointSet:
    """A loaded, validated points file."""

    path: str
    points: tuple[Point, ...]
    series: tuple[Series, ...] = ()
    rankings: tuple[Ranking, ...] = ()
    excluded: tuple[Excluded, ...] = ()

    def by_id(self) -> dict[str, Point]:
        return {p.id: p for p in self.points}


def _fail(where: str, message: str):
    raise PointsError(f"{where}: {message}")


def _point(raw, index: int, where: str) -> Point:
    name = raw.get("id") if isinstance(raw, dict) else None
    at = f"{where}: point {name!r}" if name else f"{where}: point #{index + 1}"
    if not isinstance(raw, dict):
        _fail(at, f"expected a mapping, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _POINT_FIELDS)
    if unknown:
        _fail(at, f"unknown field(s) {unknown}; allowed: {sorted(_POINT_FIELDS)}")
    for key in _REQUIRED:
        if key not in raw:
            _fail(at, f"field '{key}' is missing")
    if not isinstance(raw["id"], str) or not raw["id"]:
        _fail(at, "field 'id' must be a non-empty string")
    if raw["kernel"] not in KERNELS:
        _fail(at, f"field 'kernel': {raw['kernel']!r} is not one of {sorted(KERNELS)}")
    try:
        get_soc(str(raw["soc"]))
    except (KeyError, ValueError) as exc:
        _fail(at, f"field 'soc': {exc}")
    if not isinstance(raw["knobs"], dict):
        _fail(at, "field 'knobs' must be a mapping")
    problem = knob_problem(raw["kernel"], raw["knobs"])
    if problem:
        _fail(at, f"field 'knobs': {problem}")
    us = raw["published_us"]
    if us is not None and (isinstance(us, bool) or not isinstance(us, (int, float)) or us <= 0):
        _fail(at, f"field 'published_us' must be a positive number or null, got {us!r}")
    pipes = raw.get("pipes_us") or {}
    if not isinstance(pipes, dict):
        _fail(at, "field 'pipes_us' must be a mapping")
    for key, value in pipes.items():
        if key not in PIPES:
            _fail(at, f"field 'pipes_us.{key}': unknown pipe; allowed: {sorted(PIPES)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            _fail(at, f"field 'pipes_us.{key}' must be a positive number, got {value!r}")
    if pipes and us is None:
        _fail(at, "field 'pipes_us' given for a point without 'published_us'")
    if not isinstance(raw["source"], str) or not raw["source"].strip():
        _fail(at, "field 'source' must be a non-empty string")
    for key in ("holdout", "quick", "reference"):
        if key in raw and not isinstance(raw[key], bool):
            _fail(at, f"field '{key}' must be true or false, got {raw[key]!r}")
    return Point(raw["id"], raw["kernel"], str(raw["soc"]), dict(raw["knobs"]),
                 None if us is None else float(us), raw["source"], raw["holdout"],
                 {k: float(v) for k, v in pipes.items()}, raw.get("quick", False),
                 str(raw.get("note", "")), raw.get("reference", False))


def _ids(value, at: str, known: dict[str, Point], field_name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        _fail(at, f"field '{field_name}' must be a non-empty list of point ids")
    for pid in value:
        if pid not in known:
            _fail(at, f"field '{field_name}': {pid!r} is not a point id of this file")
    return tuple(value)


def _series(raw, where: str, known) -> Series:
    at = f"{where}: series {raw.get('id')!r}" if isinstance(raw, dict) else where
    if not isinstance(raw, dict) or {"id", "title", "steps"} - set(raw):
        _fail(at, "a series needs 'id', 'title' and 'steps'")
    steps = _ids(raw["steps"], at, known, "steps")
    if len(steps) < 2:
        _fail(at, "field 'steps' needs at least two points")
    return Series(raw["id"], raw["title"], steps)


def _ranking(raw, where: str, known) -> Ranking:
    at = f"{where}: ranking {raw.get('id')!r}" if isinstance(raw, dict) else where
    if not isinstance(raw, dict) or {"id", "title", "variants"} - set(raw):
        _fail(at, "a ranking needs 'id', 'title' and 'variants'")
    if not isinstance(raw["variants"], dict) or len(raw["variants"]) < 2:
        _fail(at, "field 'variants' must map at least two variant names to point ids")
    variants = {name: _ids(ids, at, known, f"variants.{name}")
                for name, ids in raw["variants"].items()}
    return Ranking(raw["id"], raw["title"], variants)


def _excluded(raw, where: str) -> Excluded:
    if not isinstance(raw, dict) or {"id", "source", "reason"} - set(raw):
        _fail(f"{where}: excluded {raw!r}", "needs 'id', 'source' and 'reason'")
    return Excluded(raw["id"], raw["source"], raw["reason"])


def parse_points(data, where: str = "<points>") -> PointSet:
    """Validate the parsed YAML ``data`` of a points file; ``where`` names it in errors."""
    if not isinstance(data, dict) or "points" not in data:
        _fail(where, "a points file is a mapping with a 'points' list")
    unknown = sorted(set(data) - {"points", "series", "rankings", "excluded"})
    if unknown:
        _fail(where, f"unknown top-level key(s) {unknown}")
    if not isinstance(data["points"], list) or not data["points"]:
        _fail(where, "'points' must be a non-empty list")
    points = tuple(_point(raw, i, where) for i, raw in enumerate(data["points"]))
    seen: set[str] = set()
    for p in points:
        if p.id in seen:
            _fail(f"{where}: point {p.id!r}", "field 'id' is used twice")
        seen.add(p.id)
    known = {p.id: p for p in points}
    series = tuple(_series(s, where, known) for s in data.get("series") or [])
    rankings = tuple(_ranking(r, where, known) for r in data.get("rankings") or [])
    excluded = tuple(_excluded(e, where) for e in data.get("excluded") or [])
    return PointSet(where, points, series, rankings, excluded)


def load_points(path: str | Path) -> PointSet:
    """Read and validate a points file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise PointsError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise PointsError(f"{path}: not valid YAML ({exc})") from None
    return parse_points(data, str(path))


#: The points file shipped with the package (every re-run published point).
DEFAULT_POINTS = Path(__file__).resolve().parent / "points.yaml"
