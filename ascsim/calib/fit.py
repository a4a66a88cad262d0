"""Fit a SoC family's per-launch constants jointly over the fit points of a points file.

Two constants of :class:`ascsim.hw.spec.TimingParams` are costs of launching rather than of
any instruction, and only small kernels show them: ``kernel_start_cycles`` (the scalar set-up
every core runs before the kernel body, part of the published Scalar column) and
``launch_overhead_us`` (the rest of the Task Duration head: block dispatch and the completion
report, on no pipe). Both enter a point's simulated number linearly (per wave of cores, per
launch), so two runs per point give the slope and the best value follows in closed form:

1. ``kernel_start_cycles`` from the Scalar column of the fit points that publish one;
2. ``launch_overhead_us`` from the totals of all fit points, with (1) applied.

The fit points are the ``holdout: false`` points of the family with a published time of at
most :data:`SMALL_US` (a 1 µs change of a per-launch constant is below 1 % of anything
larger, so the larger points carry no information about it and are not re-run). Held-out
points and reference points never enter a fit.

Two losses: ``l2`` minimises the sum of squared relative errors; ``l1`` the sum of absolute
relative errors (a weighted median), which a few points that differ for reasons other than
the launch (a slower kernel than the published one) cannot drag.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from ascsim.calib.points import Point
from ascsim.hw import socs

#: Published µs above which a point is left out of the fit (see the module docstring).
SMALL_US = 100.0
LOSSES = ("l1", "l2")


@contextlib.contextmanager
def trial_timing(family: str, **changes) -> Iterator[None]:
    """Every SoC whose name starts with ``family`` runs with its TimingParams changed."""
    keys = [k for k, spec in socs._LOOKUP.items() if spec.name.lower().startswith(family.lower())]
    if not keys:
        raise ValueError(f"no SoC name starts with {family!r}")
    originals = {k: socs._LOOKUP[k] for k in keys}
    for k, spec in originals.items():
        socs._LOOKUP[k] = replace(spec, timing=replace(spec.timing, **changes))
    try:
        yield
    finally:
        socs._LOOKUP.update(originals)


def solve(base: list[float], slope: list[float], published: list[float], loss: str) -> float:
    """x minimising the chosen loss of the relative errors of ``base + slope * x``."""
    if loss not in LOSSES:
        raise ValueError(f"loss {loss!r}: expected one of {LOSSES}")
    rows = [(b, k, p) for b, k, p in zip(base, slope, published) if k != 0]
    if not rows:
        raise ValueError("no point depends on the constant (all slopes are 0)")
    if loss == "l2":
        num = sum(k * (p - b) / p**2 for b, k, p in rows)
        den = sum(k * k / p**2 for _, k, p in rows)
        return num / den
    # sum |k/p| * |x - (p - b)/k|: the weighted median of the per-point solutions.
    cands = sorted(((p - b) / k, abs(k) / p) for b, k, p in rows)
    half = sum(w for _, w in cands) / 2
    acc = 0.0
    for x, w in cands:
        acc += w
        if acc >= half:
            return x
    return cands[-1][0]


@dataclass(frozen=True)
class LaunchFit:
    """The fitted constants and the points they were fitted over."""

    family: str
    loss: str
    kernel_start_cycles: int
    launch_overhead_us: float
    scalar_points: tuple[str, ...]
    total_points: tuple[str, ...]
    #: point id -> the launch overhead that alone would make its simulated total exact.
    per_point_us: dict


def fit_points(points: list[Point], family: str) -> list[Point]:
    """The points a fit for ``family`` uses (see the module docstring)."""
    return [p for p in points if p.soc.lower().startswith(family.lower()) and not p.holdout
            and not p.reference and p.published_us is not None
            and p.published_us <= SMALL_US]


def fit_launch(points: list[Point], family: str, clock_mhz: float,
               measure: Callable[[list[Point]], list], loss: str = "l2") -> LaunchFit:
    """Fit ``kernel_start_cycles`` then ``launch_overhead_us`` for ``family`` over ``points``
    (already the fit selection); ``measure`` simulates a list of points (Measured results)."""
    scalar = [p for p in points if "scalar" in p.pipes_us]
    start = 0
    if scalar:
        with trial_timing(family, kernel_start_cycles=0):
            s0 = [r.pipes_us["scalar"] for r in measure(scalar)]
        with trial_timing(family, kernel_start_cycles=round(clock_mhz)):  # 1 µs
            s1 = [r.pipes_us["scalar"] for r in measure(scalar)]
        per_us = solve(s0, [b - a for a, b in zip(s0, s1)],
                       [p.pipes_us["scalar"] for p in scalar], loss)
        start = max(0, int(round(per_us * clock_mhz, -1)))
    with trial_timing(family, kernel_start_cycles=start, launch_overhead_us=0.0):
        results = measure(points)
    overhead = solve([r.total_us for r in results], [float(r.launches) for r in results],
                     [p.published_us for p in points], loss)
    alone = {p.id: (p.published_us - r.total_us) / r.launches for p, r in zip(points, results)}
    return LaunchFit(family, loss, start, max(0.0, overhead), tuple(p.id for p in scalar),
                     tuple(p.id for p in points), alone)
