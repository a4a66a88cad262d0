"""Evaluate a point set: simulated against published times, summaries, series and rankings.

Errors are (simulated - published) / published. Summaries give the median and worst |error| of
the total time and of every published pipe column, separately for the fit points, the held-out
points and all of them. Series check that optimisation steps come out in the published order
with each step's speed-up within :data:`FACTOR_TOLERANCE` of the published one; rankings that
fusion variants are ordered as on the device.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ascsim.calib.measure import Measured, measure
from ascsim.calib.points import PIPES, Point, PointSet

#: A step's simulated speed-up may differ from the published one by this fraction.
FACTOR_TOLERANCE = 0.25


def select(points: Iterable[Point], quick: bool = False, socs: Iterable[str] = (),
           match: str = "", published_only: bool = False) -> list[Point]:
    """Points kept by ``--quick`` (``quick: true``), ``--soc`` (name prefixes), ``--match``
    (substring of the id) and ``--published-only`` (not the kept-aside points, whose number
    is not in the file: a run while the model changes must not look at them)."""
    socs = tuple(socs)
    return [p for p in points
            if (not quick or p.quick)
            and (not socs or any(p.soc.lower().startswith(s.lower()) for s in socs))
            and match in p.id
            and (not published_only or p.published_us is not None)]


def run_points(points: list[Point], progress: Callable[[Measured], None] | None = None
               ) -> list[Measured]:
    results = []
    for point in points:
        result = measure(point)
        if progress is not None:
            progress(result)
        results.append(result)
    return results


def _pct(x: float) -> str:
    return f"{x:+.0%}"


def point_line(r: Measured) -> str:
    """One line per point: id, SoC, cores, simulated, published, error, set, wall seconds."""
    p = r.point
    pub = "kept" if p.published_us is None else f"{p.published_us:.2f}"
    err = "" if r.error is None else _pct(r.error)
    kind = "reference" if p.reference else "hold-out" if p.holdout else "fit"
    if p.published_us is None:
        kind = "trend"
    return (f"{p.id:<36} {p.soc:<17}{r.cores:>5}{r.total_us:>13.2f}{pub:>13}{err:>8}  "
            f"{kind:<8}{r.wall_s:>7.1f}s")


def pipe_line(r: Measured) -> str:
    """The published pipe columns of a point: pipe sim/pub (error)."""
    parts = [f"{pipe} {r.pipes_us.get(pipe, 0.0):.2f}/{pub:.2f} ({_pct(r.pipe_error(pipe))})"
             for pipe, pub in r.point.pipes_us.items()]
    return "      pipes: " + ", ".join(parts) if parts else ""


HEADER = (f"{'point':<36} {'soc':<17}{'cores':>5}{'sim µs':>13}{'pub µs':>13}{'error':>8}  "
          f"{'set':<8}{'wall':>8}")


@dataclass(frozen=True)
class Summary:
    """Median and worst |error| of one column over one subset of points."""

    column: str
    subset: str
    errors: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(abs(e) for e in self.errors)

    @property
    def worst(self) -> float:
        return max(abs(e) for e in self.errors)

    @property
    def signed_mean(self) -> float:
        return statistics.fmean(self.errors)

    def line(self) -> str:
        return (f"  {self.column + ', ' + self.subset:<22} n={len(self.errors):<3} |error| median "
                f"{self.median:5.0%}, worst {self.worst:5.0%} (signed mean "
                f"{self.signed_mean:+.0%})")


def summaries(results: list[Measured]) -> list[Summary]:
    """Total and per-pipe summaries over the fit, hold-out and all published points, and apart
    from them over the reference points (see :mod:`ascsim.calib.points`)."""
    published = [r for r in results if r.point.published_us is not None]
    model = [r for r in published if not r.point.reference]
    subsets = (("fit", [r for r in model if not r.point.holdout]),
               ("hold-out", [r for r in model if r.point.holdout]),
               ("all", model),
               ("reference", [r for r in published if r.point.reference]))
    out = []
    for subset, chosen in subsets:
        if chosen:
            out.append(Summary("total", subset, tuple(r.error for r in chosen)))
        for pipe in PIPES:
            errs = tuple(r.pipe_error(pipe) for r in chosen if pipe in r.point.pipes_us)
            if errs:
                out.append(Summary(pipe, subset, errs))
    return out


@dataclass(frozen=True)
class StepCheck:
    """One step of a series against the previous published step."""

    before: str
    after: str
    published_factor: float
    simulated_factor: float

    @property
    def ordered(self) -> bool:
        """Same direction: both faster, both slower (or both within 1 %)."""
        p, s = self.published_factor, self.simulated_factor
        if abs(p - 1) < 0.01:
            return abs(s - 1) < 0.05
        return (p > 1) == (s > 1)

    @property
    def within(self) -> bool:
        return abs(self.simulated_factor / self.published_factor - 1) <= FACTOR_TOLERANCE


def series_checks(series, by_id: dict[str, Measured]) -> list[StepCheck] | None:
    """Step checks of one series; None when a step was not evaluated (filtered out)."""
    if any(s not in by_id for s in series.steps):
        return None
    published = [by_id[s] for s in series.steps if by_id[s].point.published_us is not None]
    checks = []
    for prev, this in zip(published, published[1:]):
        checks.append(StepCheck(prev.point.id, this.point.id,
                                prev.point.published_us / this.point.published_us,
                                prev.total_us / this.total_us))
    return checks


def ranking_orders(ranking, by_id: dict[str, Measured]):
    """(simulated µs per variant, published µs per variant or None) or None if filtered."""
    if any(pid not in by_id for ids in ranking.variants.values() for pid in ids):
        return None
    sim, pub = {}, {}
    for name, ids in ranking.variants.items():
        sim[name] = sum(by_id[i].total_us for i in ids)
        values = [by_id[i].point.published_us for i in ids]
        pub[name] = None if None in values else sum(values)
    return sim, pub


def report(pointset: PointSet, results: list[Measured], out) -> dict:
    """Print the per-point table, the summaries, series and rankings; returns the numbers."""
    print(f"\npoints of {pointset.path} (error = (sim - pub) / pub; pipes: busiest core)",
          file=out)
    print(HEADER, file=out)
    for r in results:
        print(point_line(r), file=out)
        extra = pipe_line(r)
        if extra:
            print(extra, file=out)
    sums = summaries(results)
    print("\nsummary", file=out)
    for s in sums:
        print(s.line(), file=out)
    by_id = {r.point.id: r for r in results}
    series_out = {}
    for series in pointset.series:
        checks = series_checks(series, by_id)
        if checks is None:
            continue
        series_out[series.id] = checks
        print(f"\nseries {series.id}: {series.title}", file=out)
        for step in series.steps:
            r = by_id[step]
            pub = "kept aside" if r.point.published_us is None else f"{r.point.published_us:.2f}"
            print(f"  {step:<36}{r.total_us:>13.2f} µs sim  {pub:>12} pub", file=out)
        for c in checks:
            verdict = ("ok" if c.ordered and c.within else
                       "order ok, factor off" if c.ordered else "ORDER WRONG")
            print(f"  {c.before} -> {c.after}: speed-up pub {c.published_factor:.2f}x, "
                  f"sim {c.simulated_factor:.2f}x ({verdict})", file=out)
    rankings_out = {}
    for ranking in pointset.rankings:
        orders = ranking_orders(ranking, by_id)
        if orders is None:
            continue
        sim, pub = orders
        rankings_out[ranking.id] = orders
        sim_order = sorted(sim, key=sim.get)
        known = [v for v in pub if pub[v] is not None]
        pub_order = sorted(known, key=pub.get)
        sim_known = [v for v in sim_order if v in known]
        print(f"\nranking {ranking.id}: {ranking.title}", file=out)
        for name in ranking.variants:
            p = "kept aside" if pub[name] is None else f"{pub[name]:.1f}"
            print(f"  {name:<10}{sim[name]:>12.1f} µs sim  {p:>12} pub", file=out)
        agree = "agrees" if sim_known == pub_order else "DISAGREES"
        print(f"  model order: {' < '.join(sim_order)}; published order (known variants): "
              f"{' < '.join(pub_order) or '-'}; model {agree} on the published variants",
              file=out)
    return {"summaries": sums, "series": series_out, "rankings": rankings_out}
