"""The search space of a tuning run: named knobs, each with the values it may take.

A space is a mapping ``knob -> list of values`` (ints, floats, strings or booleans), given in
Python or as a YAML file::

    base_m: [64, 128, 256]
    base_n: [64, 128, 256]
    traverse: [FIRSTM, FIRSTN]

A knob may also be written as a range, ``{start: 16, stop: 256, step: 16}`` (stop included),
which stands for the list of its values. Every configuration is one value per knob; the grid
is all of them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: Value types a knob may take (what the study stores and the run function receives).
KNOB_TYPES = (bool, int, float, str)


class SpaceError(ValueError):
    """The space is malformed; the message names the knob and what is wrong."""


def _expand_range(name: str, spec: Mapping) -> list:
    unknown = set(spec) - {"start", "stop", "step"}
    if unknown or not {"start", "stop"} <= set(spec):
        raise SpaceError(f"knob {name!r}: a range needs start, stop and optionally step "
                         f"(got keys {sorted(spec)})")
    start, stop, step = spec["start"], spec["stop"], spec.get("step", 1)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, stop, step)):
        raise SpaceError(f"knob {name!r}: range start, stop and step must be integers")
    if step <= 0 or stop < start:
        raise SpaceError(f"knob {name!r}: range {start}..{stop} step {step} is empty")
    return list(range(start, stop + 1, step))


def _values(name: str, spec: Any) -> tuple:
    if isinstance(spec, Mapping):
        spec = _expand_range(name, spec)
    if isinstance(spec, (str, bytes)) or not isinstance(spec, (list, tuple)):
        raise SpaceError(f"knob {name!r}: expected a list of values or a range, got {spec!r}")
    if not spec:
        raise SpaceError(f"knob {name!r} has no values")
    for v in spec:
        if not isinstance(v, KNOB_TYPES) or (isinstance(v, float) and not math.isfinite(v)):
            raise SpaceError(f"knob {name!r}: value {v!r} is not an int, float, string or "
                             "boolean")
    if len(set(map(repr, spec))) != len(spec):
        raise SpaceError(f"knob {name!r} lists a value twice: {list(spec)}")
    return tuple(spec)


@dataclass(frozen=True)
class Space:
    """Knobs and their values, in the order given (the grid's and the report's order)."""

    knobs: tuple[tuple[str, tuple], ...]

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> Space:
        if not isinstance(mapping, Mapping) or not mapping:
            raise SpaceError(f"a space is a non-empty mapping of knob -> values, got {mapping!r}")
        knobs = []
        for name, spec in mapping.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise SpaceError(f"knob name {name!r} is not a Python identifier (the run "
                                 "function receives knobs as keyword arguments)")
            knobs.append((name, _values(name, spec)))
        return cls(tuple(knobs))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.knobs)

    def values(self, name: str) -> tuple:
        return dict(self.knobs)[name]

    @property
    def grid_size(self) -> int:
        return math.prod(len(v) for _, v in self.knobs)

    def grid(self) -> Iterator[dict]:
        """Every configuration, the last knob varying fastest."""
        for combo in itertools.product(*(v for _, v in self.knobs)):
            yield dict(zip(self.names, combo))

    def check(self, config: Mapping) -> None:
        """Raise SpaceError unless ``config`` gives every knob one of its values."""
        if set(config) != set(self.names):
            raise SpaceError(f"configuration {dict(config)} does not set exactly the knobs "
                             f"{list(self.names)}")
        for name, values in self.knobs:
            if config[name] not in values:
                raise SpaceError(f"knob {name!r}: {config[name]!r} is not one of {values}")

    def to_json(self) -> dict:
        return {name: list(values) for name, values in self.knobs}

    def fingerprint(self) -> str:
        """A short hash of the knobs and values: a stored study must match it to resume."""
        text = json.dumps(self.to_json(), sort_keys=False)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def as_space(space: Space | Mapping[str, Any] | str | Path) -> Space:
    """A Space from a Space, a mapping, or the path of a YAML file."""
    if isinstance(space, Space):
        return space
    if isinstance(space, (str, Path)):
        return load_space(space)
    return Space.from_mapping(space)


def load_space(path: str | Path) -> Space:
    """Read a space from a YAML file (see the module docstring)."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise SpaceError(f"cannot read the space file {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise SpaceError(f"{path}: not valid YAML: {exc}") from None
    try:
        return Space.from_mapping(doc)
    except SpaceError as exc:
        raise SpaceError(f"{path}: {exc}") from None
