"""Tuned operator settings shipped as data: ``ascsim/tune/data/<op>.yaml``.

``ascsim bench <op> --tune`` writes them; the operators read them. An entry is one problem
(shape and dtype, as the operator's ``shape_key`` spells it) on one SoC: per variant the
knobs that gave the least simulated time and that time, and the fastest variant, which
``variant="auto"`` runs. This module only reads and writes the files (no optuna, no
simulator), so operators can consult it cheaply.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DATA_DIR = Path(__file__).parent / "data"

_CACHE: dict[str, dict[tuple[str, str], TunedEntry]] = {}
#: True while tuned settings are ignored (``ignored()``: untuned baselines, the tuner itself).
#: A context variable, so the setting belongs to the thread or task that entered the block
#: and is undone exactly, however blocks nest.
_IGNORED: ContextVar[bool] = ContextVar("ascsim_tuned_ignored", default=False)


@contextlib.contextmanager
def ignored() -> Iterator[None]:
    """Operators run on their default settings inside the block."""
    token = _IGNORED.set(True)
    try:
        yield
    finally:
        _IGNORED.reset(token)


@dataclass(frozen=True)
class TunedVariant:
    """The best knobs of one variant, its time with them and with the operator's defaults."""

    knobs: Mapping[str, Any]
    time_us: float
    default_us: float | None = None


@dataclass(frozen=True)
class TunedEntry:
    soc: str
    key: str
    variants: Mapping[str, TunedVariant]
    case: str = ""  # where the problem came from (e.g. "bench case 3"), for people

    @property
    def best(self) -> str:
        """The variant of least tuned time."""
        return min(self.variants, key=lambda v: self.variants[v].time_us)

    def to_doc(self) -> dict:
        return {"soc": self.soc, "key": self.key, "case": self.case, "best": self.best,
                "variants": {v: {"knobs": dict(t.knobs), "time_us": round(t.time_us, 4),
                                 "default_us": None if t.default_us is None
                                 else round(t.default_us, 4)}
                             for v, t in sorted(self.variants.items())}}


def data_path(op: str) -> Path:
    return DATA_DIR / f"{op}.yaml"


def _entry(doc: Mapping, path: Path) -> TunedEntry:
    try:
        variants = {v: TunedVariant(dict(t["knobs"]), float(t["time_us"]),
                                    None if t.get("default_us") is None
                                    else float(t["default_us"]))
                    for v, t in doc["variants"].items()}
        return TunedEntry(str(doc["soc"]), str(doc["key"]), variants, str(doc.get("case", "")))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: malformed tuned entry {doc!r}: {exc}") from None


def load(op: str) -> dict[tuple[str, str], TunedEntry]:
    """All tuned entries of ``op`` by (soc, key); empty when none were tuned."""
    if op not in _CACHE:
        path = data_path(op)
        entries: dict[tuple[str, str], TunedEntry] = {}
        if path.exists():
            doc = yaml.safe_load(path.read_text()) or {}
            for item in doc.get("entries", ()):
                entry = _entry(item, path)
                entries[(entry.soc, entry.key)] = entry
        _CACHE[op] = entries
    return _CACHE[op]


def lookup(op: str, soc: str, key: str) -> TunedEntry | None:
    """The tuned settings of ``op`` for problem ``key`` on ``soc``, if any."""
    return None if _IGNORED.get() else load(op).get((soc, key))


def store(op: str, new: list[TunedEntry], path: Path | None = None) -> Path:
    """Add or replace ``new`` entries in the op's data file (others are kept)."""
    path = path or data_path(op)
    entries = dict(load(op)) if path == data_path(op) else {}
    for entry in new:
        entries[(entry.soc, entry.key)] = entry
    header = (f"# Tuned settings of {op}, written by `ascsim bench {op} --tune`: per SoC and\n"
              "# problem, the knobs of least simulated time per variant; variant=\"auto\" "
              "runs `best`.\n")
    body = {"op": op, "entries": [e.to_doc() for _, e in sorted(entries.items())]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + yaml.safe_dump(body, sort_keys=False))
    _CACHE.pop(op, None)
    return path


def note(entry: TunedEntry, variant: str) -> str:
    """The OpInfo note saying a call ran on tuned settings."""
    knobs = entry.variants[variant].knobs
    text = ", ".join(f"{k}={v}" for k, v in knobs.items()) or "defaults"
    return f"tuned: {variant} ({text})"
