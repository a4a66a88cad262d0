"""Simulated vs published device times on an Ascend 910B4: SwiGLU, RMSNorm (with per-pipe
times) and the cube linear layer.

The published numbers (shared/reference/calibration.md, "pyasc" column) are msprof "Task
Duration" medians of the pyasc example kernels on a real 910B4 (20 AIC / 40 AIV, 1.5 GHz). Our
examples ``examples/swiglu.py``, ``examples/rmsnorm.py`` and ``examples/linear_cube.py`` follow
the same algorithms (tile sizes, core counts, double buffering), so the difference is the cost
model's error. For RMSNorm the per-pipe busy times (busiest core) are compared with the
published Vec/Scalar/MTE2/MTE3 columns.

Every table is split in two: the even rows (1st, 3rd, ...) are the *fit* set, the odd rows the
*hold-out* set. The few constants that were fitted at all (see docs/cost-model.md) were fitted
jointly over the fit rows only (``--fit`` shows how); the hold-out rows check that the model
holds on shapes it was not fitted to. The ascendc/torch_npu columns are not used.

    .venv/bin/python benchmarks/calibration.py            # every published point
    .venv/bin/python benchmarks/calibration.py --quick    # the smallest point of each kernel
    .venv/bin/python benchmarks/calibration.py --fit      # re-derive the fitted constants

Any points file in the schema of ``ascsim/calib/points.py`` (the shipped one,
``ascsim/calib/points.yaml``, holds the published asc-devkit and cann-samples points on the
Ascend910B1 and Ascend950PR and the 22 points above) is evaluated with ``--points``; the output
adds per-pipe columns, summaries for the fit and held-out points, the optimisation series and
the fusion rankings:

    .venv/bin/python benchmarks/calibration.py --points ascsim/calib/points.yaml
    .venv/bin/python benchmarks/calibration.py --points FILE --quick        # quick: true points
    .venv/bin/python benchmarks/calibration.py --points FILE --soc Ascend950PR --match mmapi
    .venv/bin/python benchmarks/calibration.py --points FILE --timing-only  # no values

``--from-saved A.json B.json ...`` prints the same report from results saved by ``--save``
(for example one run per family). ``--published-only`` leaves out the kept-aside points
(``published_us: null``): a run made while changing the model must not look at them.
``--timing-only`` simulates without computing values (the 8192³ matmul points spend most of
their wall time in the products); the simulated times are the same, but the calibration kernels
then cannot check their results.

With ``--points`` and one ``--soc`` family, ``--fit`` re-derives that family's per-launch
constants (kernel start-up scalar cycles, launch overhead) jointly over the file's small fit
points (``ascsim/calib/fit.py``; ``--loss l1`` for the robust fit):

    .venv/bin/python benchmarks/calibration.py --points ascsim/calib/points.yaml \
        --soc Ascend950 --fit --loss l1

Error = (simulated - published) / published.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from dataclasses import dataclass, replace

from ascsim.demo import load_example
from ascsim.session import SESSION

SOC = "Ascend910B4"


@dataclass(frozen=True)
class Published:
    """One published measurement: kernel, shape, total µs and per-pipe µs (label -> µs).

    ``shape`` is (B, S, H) for the vector kernels and (M, N, K) for linear; ``fit`` says
    whether the point belongs to the fit set (even rows) or the hold-out set (odd rows).
    """

    kernel: str
    shape: tuple[int, int, int]
    total_us: float
    pipes: tuple[tuple[str, float], ...] = ()
    fit: bool = True

    def __post_init__(self):
        if len(self.shape) != 3 or self.total_us <= 0:
            raise ValueError(f"bad published point {self}")

    @property
    def label(self) -> str:
        if self.kernel == "linear":
            m, n, k = self.shape
            return f"[{m},{k}]x[{n},{k}]"
        return str(self.shape)


def _table(kernel: str, rows) -> tuple[Published, ...]:
    """Published points of one table; even rows fit, odd rows hold out."""
    return tuple(Published(kernel, shape, total, pipes, fit=i % 2 == 0)
                 for i, (shape, total, pipes) in enumerate(rows))


def _pipes(vec, scalar, mte2, mte3) -> tuple[tuple[str, float], ...]:
    return (("V", vec), ("S", scalar), ("MTE2", mte2), ("MTE3", mte3))


# SwiGLU fp32, pyasc column.
SWIGLU = _table("swiglu", [
    ((2, 64, 256), 4.22, ()),
    ((2, 64, 512), 4.74, ()),
    ((2, 128, 512), 5.48, ()),
    ((2, 256, 512), 7.02, ()),
    ((2, 512, 512), 10.44, ()),
    ((2, 1024, 512), 17.20, ()),
    ((2, 1024, 1024), 30.62, ()),
    ((2, 2048, 512), 31.48, ()),
    ((2, 2048, 1024), 57.30, ()),
])

# RMSNorm fp32: total, Vec, Scalar, MTE2, MTE3.
RMSNORM = _table("rmsnorm", [
    ((2, 64, 256), 3.56, _pipes(0.48, 1.91, 0.45, 0.17)),
    ((2, 64, 512), 3.70, _pipes(0.58, 1.94, 0.54, 0.17)),
    ((2, 128, 512), 4.36, _pipes(0.90, 2.20, 0.74, 0.22)),
    ((2, 256, 512), 5.36, _pipes(1.21, 2.98, 1.24, 0.48)),
    ((2, 512, 512), 6.88, _pipes(1.92, 3.29, 2.04, 1.21)),
    ((2, 1024, 512), 10.14, _pipes(3.74, 4.51, 3.47, 2.02)),
    ((2, 1024, 1024), 19.02, _pipes(9.96, 5.87, 6.28, 3.58)),
    ((2, 2048, 512), 16.54, _pipes(7.23, 6.43, 6.05, 3.42)),
    ((2, 2048, 1024), 34.44, _pipes(19.74, 8.94, 11.53, 5.99)),
])

# Linear fp16, (M, N, K): x [M, K], weight [N, K]; pyasc column.
LINEAR = _table("linear", [
    ((128, 512, 512), 4.48, ()),
    ((128, 1536, 512), 7.76, ()),
    ((128, 512, 1024), 5.98, ()),
    ((1024, 512, 512), 10.42, ()),
])

TABLES = (SWIGLU, RMSNORM, LINEAR)
PIPE_LABELS = {"V": "Vec", "S": "Scalar", "MTE2": "MTE2", "MTE3": "MTE3"}
TITLES = {"swiglu": "swiglu fp32", "rmsnorm": "rmsnorm fp32", "linear": "linear fp16"}


def error(simulated: float, published: float) -> float:
    return (simulated - published) / published


def simulate(point: Published):
    """Run the example kernel of ``point`` on the 910B4 (its own torch check included)."""
    before = SESSION.soc.name
    try:
        if point.kernel == "linear":
            m, n, k = point.shape
            report = load_example("linear_cube").run(SOC, m, n, k)
        else:
            report = load_example(point.kernel).run(SOC, shape=point.shape)
    finally:
        SESSION.set_soc(before)
    return report


@dataclass(frozen=True)
class Result:
    """A published point and what the simulator made of it (µs)."""

    point: Published
    cores: int
    total_us: float
    pipes_us: dict

    @property
    def error(self) -> float:
        return error(self.total_us, self.point.total_us)

    def pipe_error(self, pipe: str) -> float:
        published = dict(self.point.pipes)[pipe]
        return error(self.pipes_us.get(pipe, 0.0), published)


def measure(points) -> list[Result]:
    results = []
    for point in points:
        report = simulate(point)
        results.append(Result(point, report.block_num, report.device_time_us,
                              report.pipe_busy_us()))
    return results


def _fmt_err(e: float) -> str:
    return f"{e:+7.0%}"


def print_table(kernel: str, results: list[Result], out) -> None:
    with_pipes = bool(results[0].point.pipes)
    width = 22 if kernel == "linear" else 16
    head = f"{'shape':<{width}}{'cores':>6}{'sim µs':>9}{'pub µs':>9}{'error':>8}"
    if with_pipes:
        head += "".join(f"{PIPE_LABELS[p] + ' sim/pub':>22}" for p, _ in results[0].point.pipes)
    print(f"\n{TITLES[kernel]} on {SOC}", file=out)
    print(head + "  set", file=out)
    for r in results:
        line = (f"{r.point.label:<{width}}{r.cores:>6}{r.total_us:>9.2f}"
                f"{r.point.total_us:>9.2f}{_fmt_err(r.error):>8}")
        for pipe, published in r.point.pipes:
            sim = r.pipes_us.get(pipe, 0.0)
            line += f"{sim:>8.2f}/{published:<5.2f}{_fmt_err(r.pipe_error(pipe)):>8}"
        print(line + ("  fit" if r.point.fit else "  hold-out"), file=out)


def _summary_line(label: str, errs: list[float]) -> str:
    absolute = [abs(x) for x in errs]
    return (f"  {label:<22} n={len(errs):<3} |error| median {statistics.median(absolute):5.0%}, "
            f"worst {max(absolute):5.0%} (signed mean {statistics.fmean(errs):+.0%})")


def print_summary(results: list[Result], out) -> dict[str, list[float]]:
    """Median and worst |error| of totals and pipes, for the fit and hold-out sets and all."""
    groups: dict[str, list[float]] = {}
    for subset, keep in (("fit", True), ("hold-out", False), ("all", None)):
        chosen = [r for r in results if keep is None or r.point.fit == keep]
        if not chosen:
            continue
        groups[f"total, {subset}"] = [r.error for r in chosen]
        for pipe, label in PIPE_LABELS.items():
            errs = [r.pipe_error(pipe) for r in chosen if pipe in dict(r.point.pipes)]
            if errs:
                groups[f"{label}, {subset}"] = errs
    print("\nsummary (totals over every kernel; pipes: RMSNorm)", file=out)
    for label, errs in groups.items():
        print(_summary_line(label, errs), file=out)
    return groups


# ------------------------------------------------------------------------------ --fit
@contextlib.contextmanager
def trial_timing(**changes):
    """Run with the 910B4's TimingParams changed (only inside this benchmark's --fit)."""
    from ascsim.hw import socs

    key = SOC.lower()
    original = socs._LOOKUP[key]
    socs._LOOKUP[key] = replace(original, timing=replace(original.timing, **changes))
    try:
        yield
    finally:
        socs._LOOKUP[key] = original


def _linear_fit(base: list[float], slope: list[float], published: list[float]) -> float:
    """x minimising the sum of squared relative errors of ``base + slope * x`` vs published."""
    num = sum(k * (p - b) / p**2 for b, k, p in zip(base, slope, published))
    den = sum(k * k / p**2 for k, p in zip(slope, published))
    return num / den


def fit(out) -> None:
    """Derive the three fitted constants jointly over the fit rows (see docs/cost-model.md).

    Each is a linear parameter of the quantity it is fitted to, so one run with the constant
    at 0 and one at a trial value give its per-point slope; the least-squares value over all
    fit rows follows in closed form. Order matters: the vector step bubble (RMSNorm Vec
    column), then the kernel-start scalar cost (RMSNorm Scalar column), then the launch
    overhead (totals of every kernel).
    """
    from ascsim.hw import get_soc

    timing = get_soc(SOC).timing
    clock = get_soc(SOC).clock_mhz
    rms = [p for p in RMSNORM if p.fit]
    every = [p for table in TABLES for p in table if p.fit]
    pub_v = [dict(p.pipes)["V"] for p in rms]
    with trial_timing(vector_step_cycles=0):
        v0 = [r.pipes_us["V"] for r in measure(rms)]
    with trial_timing(vector_step_cycles=100):
        v1 = [r.pipes_us["V"] for r in measure(rms)]
    step = _linear_fit(v0, [(b - a) / 100 for a, b in zip(v0, v1)], pub_v)
    step_cycles = round(step)
    print(f"vector_step_cycles  = {step:7.1f} cycles (table: {timing.vector_step_cycles})",
          file=out)
    with trial_timing(vector_step_cycles=step_cycles, kernel_start_cycles=0):
        s0 = [r.pipes_us["S"] for r in measure(rms)]
    start = _linear_fit(s0, [1.0] * len(s0), [dict(p.pipes)["S"] for p in rms]) * clock
    start_cycles = round(start, -1)
    print(f"kernel_start_cycles = {start:7.1f} cycles (table: {timing.kernel_start_cycles})",
          file=out)
    with trial_timing(vector_step_cycles=step_cycles, kernel_start_cycles=int(start_cycles),
                      launch_overhead_us=0.0):
        t0 = [r.total_us for r in measure(every)]
    overhead = _linear_fit(t0, [1.0] * len(t0), [p.total_us for p in every])
    print(f"launch_overhead_us  = {overhead:7.2f} µs (table: {timing.launch_overhead_us})",
          file=out)


# ------------------------------------------------------------------------------ --points
def save_results(results, path: str) -> None:
    """Write simulated and published numbers of ``results`` as JSON."""
    with open(path, "w") as fh:
        json.dump([{"id": r.point.id, "soc": r.point.soc, "cores": r.cores,
                    "sim_us": r.total_us, "pub_us": r.point.published_us,
                    "holdout": r.point.holdout, "sim_pipes_us": r.pipes_us,
                    "pub_pipes_us": r.point.pipes_us, "wall_s": r.wall_s}
                   for r in results], fh, indent=1)


def load_saved(pointset, paths) -> list:
    """The results saved by ``--save`` in ``paths`` (later files win for a point measured twice),
    as :class:`~ascsim.calib.measure.Measured` of ``pointset``'s points, in file order."""
    from ascsim.calib.measure import Measured

    known = pointset.by_id()
    by_id = {}
    for path in paths:
        with open(path) as fh:
            rows = json.load(fh)
        for row in rows:
            if row["id"] not in known:
                raise ValueError(f"{path}: point {row['id']!r} is not in {pointset.path}")
            by_id[row["id"]] = Measured(known[row["id"]], row["sim_us"], row["sim_pipes_us"],
                                        row["cores"], row["wall_s"])
    return [by_id[p.id] for p in pointset.points if p.id in by_id]


def evaluate_points(args, out) -> int:
    """Simulate the selected points of a points file (or read them from ``--from-saved``
    files) and print the comparison."""
    from ascsim.calib.evaluate import HEADER, point_line, run_points, select
    from ascsim.calib.points import PointsError, load_points

    try:
        pointset = load_points(args.points)
    except PointsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.from_saved:
        try:
            results = load_saved(pointset, args.from_saved)
        except (OSError, ValueError, KeyError) as exc:
            print(f"error: saved results: {exc}", file=sys.stderr)
            return 2
        return _report(pointset, results, out)
    points = select(pointset.points, args.quick, args.soc, args.match, args.published_only)
    if not points:
        print("error: no point of the file matches the selection", file=sys.stderr)
        return 2
    print(f"running {len(points)} point(s)\n{HEADER}", file=out, flush=True)
    done = []

    def progress(result) -> None:
        print(point_line(result), file=out, flush=True)
        done.append(result)
        if args.save:  # after every point: a long run keeps what it has measured
            save_results(done, args.save)

    return _report(pointset, run_points(points, progress), out)


def _report(pointset, results, out) -> int:
    from ascsim.calib.evaluate import report

    numbers = report(pointset, results, out)
    total = [s for s in numbers["summaries"] if s.column == "total" and s.subset == "all"]
    if total:
        print(f"\n{len(total[0].errors)} published points: |error| of the total median "
              f"{total[0].median:.0%}, worst {total[0].worst:.0%}", file=out)
    reference = [s for s in numbers["summaries"]
                 if s.column == "total" and s.subset == "reference"]
    if reference:
        print(f"{len(reference[0].errors)} reference points (our kernels for a published "
              f"design, apart): |error| median {reference[0].median:.0%}, worst "
              f"{reference[0].worst:.0%}", file=out)
    return 0


def fit_points_file(args, out) -> int:
    """``--points FILE --soc FAMILY --fit``: the family's launch constants over its fit points."""
    from ascsim.calib.evaluate import run_points, select
    from ascsim.calib.fit import SMALL_US, fit_launch, fit_points
    from ascsim.calib.points import PointsError, load_points
    from ascsim.hw import socs

    if len(args.soc) != 1:
        print("error: --fit with --points needs exactly one --soc (a SoC family)",
              file=sys.stderr)
        return 2
    try:
        pointset = load_points(args.points)
    except PointsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    family = args.soc[0]
    chosen = fit_points(select(pointset.points, match=args.match), family)
    if not chosen:
        print(f"error: no fit point of {family} with a published time <= {SMALL_US:g} µs",
              file=sys.stderr)
        return 2
    clocks = {s.clock_mhz for s in socs._LOOKUP.values()
              if s.name.lower().startswith(family.lower())}
    if len(clocks) != 1:
        print(f"error: the SoCs of {family} do not share one clock ({sorted(clocks)})",
              file=sys.stderr)
        return 2
    spec = next(s for s in socs._LOOKUP.values() if s.name.lower().startswith(family.lower()))
    print(f"fitting {family} over {len(chosen)} fit point(s) (loss {args.loss}): "
          f"{', '.join(p.id for p in chosen)}", file=out, flush=True)
    result = fit_launch(chosen, family, clocks.pop(), run_points, args.loss)
    print(f"kernel_start_cycles = {result.kernel_start_cycles:7d} cycles "
          f"(table: {spec.timing.kernel_start_cycles}; from the Scalar column of "
          f"{len(result.scalar_points)} point(s))", file=out)
    for pid, alone in result.per_point_us.items():
        print(f"  {pid:<36} alone would take {alone:+7.2f} µs per launch", file=out)
    print(f"launch_overhead_us  = {result.launch_overhead_us:7.2f} µs "
          f"(table: {spec.timing.launch_overhead_us})", file=out)
    return 0


# ------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smallest point per kernel")
    parser.add_argument("--fit", action="store_true",
                        help="re-derive the fitted constants over the fit rows")
    parser.add_argument("--points", metavar="FILE",
                        help="evaluate a points file (schema: ascsim/calib/points.py)")
    parser.add_argument("--soc", action="append", default=[],
                        help="with --points: only SoCs whose name starts with this (repeatable)")
    parser.add_argument("--match", default="", help="with --points: only ids containing this")
    parser.add_argument("--published-only", action="store_true",
                        help="with --points: leave out the kept-aside points (no published "
                             "number); their series and rankings are then not checked")
    parser.add_argument("--save", metavar="JSON", help="with --points: write the results here")
    parser.add_argument("--loss", choices=("l2", "l1"), default="l2",
                        help="with --points --fit: squared (l2) or absolute (l1) relative errors")
    parser.add_argument("--from-saved", nargs="+", metavar="JSON",
                        help="with --points: report results saved by --save (several runs, "
                             "e.g. one per family) instead of simulating")
    parser.add_argument("--timing-only", action="store_true",
                        help="with --points: compute no values (same simulated times, no "
                             "result checks of the calibration kernels; much faster)")
    args = parser.parse_args(argv)
    out = sys.stdout
    if args.points and args.fit:
        return fit_points_file(args, out)
    if args.points:
        if not args.timing_only:
            return evaluate_points(args, out)
        print("TIMING ONLY: no values computed, the calibration kernels' results are not "
              "checked (simulated times are the same)", file=out)
        with SESSION.values(False):
            return evaluate_points(args, out)
    if (args.soc or args.match or args.save or args.timing_only or args.from_saved
            or args.published_only):
        parser.error("--soc, --match, --save, --timing-only, --from-saved and "
                     "--published-only need --points")
    if args.fit:
        fit(out)
        return 0
    results: list[Result] = []
    for table in TABLES:
        points = table[:1] if args.quick else table
        rows = measure(points)
        print_table(points[0].kernel, rows, out)
        results += rows
    groups = print_summary(results, out)
    absolute = [abs(e) for e in groups["total, all"]]
    print(f"\nall {len(absolute)} points: |error| of the total median "
          f"{statistics.median(absolute):.0%}, worst {max(absolute):.0%}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
