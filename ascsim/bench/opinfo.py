"""The ``info`` an operator returns with ``return_report=True``, normalised for the bench.

An operator call ``op(*inputs, **attrs, variant=v, soc=soc, return_report=True)`` returns
``(output, info)``. ``info`` may be any object with these attributes, or a mapping with these
keys:

- ``device_time_us`` (float): simulated device time of the call, summed over its kernels
  (each kernel's device time includes its launch overhead; no gaps between kernels — the way
  the bench times candidates from kernel_details.csv);
- ``kernels`` (sequence): one ``ascsim.sim.report.KernelReport`` per launch, in launch order —
  or anything with ``kernel`` (name), ``device_time_us``, ``launch_overhead_us``,
  ``pipe_busy_us`` (a dict, or a method returning one: per pipe, busy µs of the busiest core)
  and ``bytes_moved`` (dict path → bytes);
- ``cross_core_handoffs`` (int): Cube→Vector (or Vector→Cube) hand-offs through cross-core
  flags over the whole call (0 for kernels that never hand over);
- ``workspace_bytes`` (int): GM workspace the call allocated between or inside its kernels;
- ``variant`` (str, optional): the variant that actually ran (what ``auto`` chose);
- ``notes`` (sequence of str, optional): remarks such as ``"tuned: fused (nt=64)"`` when the
  call ran on tuned settings.

``device_time_us`` must equal the sum of the kernels' device times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class InterfaceError(ValueError):
    """The operator's return value breaks the calling convention."""


_MISSING = object()


def _get(obj: Any, name: str, default: Any = _MISSING) -> Any:
    if isinstance(obj, Mapping):
        value = obj.get(name, default)
    else:
        value = getattr(obj, name, default)
    if value is _MISSING:
        raise InterfaceError(f"the operator's info has no {name!r}")
    return value


@dataclass(frozen=True)
class KernelSummary:
    """One kernel launch of an operator call."""

    name: str
    device_time_us: float
    launch_overhead_us: float
    pipe_busy_us: tuple[tuple[str, float], ...]
    bytes_moved: tuple[tuple[str, int], ...]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.device_time_us) and self.device_time_us >= 0):
            raise InterfaceError(f"kernel {self.name}: device_time_us {self.device_time_us}")

    def to_json(self) -> dict:
        return {"name": self.name, "device_time_us": self.device_time_us,
                "launch_overhead_us": self.launch_overhead_us,
                "pipe_busy_us": dict(self.pipe_busy_us), "bytes_moved": dict(self.bytes_moved)}


@dataclass(frozen=True)
class OpTiming:
    """The simulated time of one operator call and what explains it."""

    device_time_us: float
    kernels: tuple[KernelSummary, ...]
    cross_core_handoffs: int
    workspace_bytes: int
    chosen_variant: str | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        total = sum(k.device_time_us for k in self.kernels)
        if not math.isclose(total, self.device_time_us, rel_tol=1e-6, abs_tol=1e-6):
            raise InterfaceError(f"device_time_us {self.device_time_us} is not the sum over "
                                 f"its kernels ({total})")
        if self.cross_core_handoffs < 0 or self.workspace_bytes < 0:
            raise InterfaceError("cross_core_handoffs and workspace_bytes must be >= 0")

    def pipe_busy_us(self) -> dict[str, float]:
        """Per pipe, busy µs summed over the kernels (they run one after the other)."""
        out: dict[str, float] = {}
        for k in self.kernels:
            for pipe, t in k.pipe_busy_us:
                out[pipe] = out.get(pipe, 0.0) + t
        return out

    def bytes_moved(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for k in self.kernels:
            for path, n in k.bytes_moved:
                out[path] = out.get(path, 0) + n
        return out

    @property
    def launch_overhead_us(self) -> float:
        return sum(k.launch_overhead_us for k in self.kernels)

    def to_json(self) -> dict:
        return {"device_time_us": self.device_time_us,
                "kernels": [k.to_json() for k in self.kernels],
                "cross_core_handoffs": self.cross_core_handoffs,
                "workspace_bytes": self.workspace_bytes, "chosen_variant": self.chosen_variant,
                "notes": list(self.notes),
                "pipe_busy_us": self.pipe_busy_us(), "bytes_moved": self.bytes_moved()}


def _kernel(k: Any) -> KernelSummary:
    busy = _get(k, "pipe_busy_us")
    busy = busy() if callable(busy) else busy
    moved = _get(k, "bytes_moved", {}) or {}
    try:
        return KernelSummary(name=str(_get(k, "kernel")),
                             device_time_us=float(_get(k, "device_time_us")),
                             launch_overhead_us=float(_get(k, "launch_overhead_us", 0.0)),
                             pipe_busy_us=tuple(sorted((str(p), float(t))
                                                       for p, t in dict(busy).items())),
                             bytes_moved=tuple(sorted((str(p), int(n))
                                                      for p, n in dict(moved).items())))
    except (TypeError, AttributeError) as exc:
        raise InterfaceError(f"a kernel report in the operator's info is malformed: {exc}") \
            from None


def normalize_info(info: Any) -> OpTiming:
    kernels = _get(info, "kernels")
    if isinstance(kernels, str | bytes | Mapping) or not hasattr(kernels, "__iter__"):
        raise InterfaceError("info.kernels must be a sequence of kernel reports")
    kernels = tuple(_kernel(k) for k in kernels)
    if not kernels:
        raise InterfaceError("info.kernels is empty: the operator launched no kernel")
    try:
        device = float(_get(info, "device_time_us"))
        handoffs = int(_get(info, "cross_core_handoffs"))
        workspace = int(_get(info, "workspace_bytes"))
    except TypeError as exc:
        raise InterfaceError(f"malformed info field: {exc}") from None
    chosen = _get(info, "variant", None)
    notes = _get(info, "notes", ()) or ()
    if isinstance(notes, str | bytes) or not hasattr(notes, "__iter__"):
        raise InterfaceError("info.notes must be a sequence of strings")
    return OpTiming(device, kernels, handoffs, workspace, None if chosen is None else str(chosen),
                    tuple(str(n) for n in notes))
