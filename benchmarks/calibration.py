"""Simulated vs published device times for SwiGLU and RMSNorm on an Ascend 910B4.

The published numbers (shared/reference/calibration.md) are msprof "Task Duration" medians of
the pyasc example kernels on a real 910B4 (20 AIC / 40 AIV, 1.5 GHz). Our examples
``examples/swiglu.py`` and ``examples/rmsnorm.py`` follow the same algorithms (tile sizes,
core counts, double buffering), so the difference is the cost model's error. For RMSNorm the
per-pipe busy times (busiest core) are compared with the published Vec/Scalar/MTE2/MTE3 columns.

    .venv/bin/python benchmarks/calibration.py            # every published point
    .venv/bin/python benchmarks/calibration.py --quick    # one point of each kernel

Error = (simulated - published) / published. Nothing here feeds back into the model: constants
are never tuned to single points.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass

from ascsim.demo import load_example
from ascsim.session import SESSION

SOC = "Ascend910B4"


@dataclass(frozen=True)
class Published:
    """One published measurement: shape (B, S, H) and times in µs (pipes: label -> µs)."""

    shape: tuple[int, int, int]
    total_us: float
    pipes: tuple[tuple[str, float], ...] = ()

    def __post_init__(self):
        if len(self.shape) != 3 or self.total_us <= 0:
            raise ValueError(f"bad published point {self}")


# SwiGLU fp32, pyasc column.
SWIGLU = (
    Published((2, 64, 256), 4.22),
    Published((2, 64, 512), 4.74),
    Published((2, 128, 512), 5.48),
    Published((2, 256, 512), 7.02),
    Published((2, 512, 512), 10.44),
    Published((2, 1024, 512), 17.20),
    Published((2, 1024, 1024), 30.62),
    Published((2, 2048, 512), 31.48),
    Published((2, 2048, 1024), 57.30),
)


def _rms(shape, total, vec, scalar, mte2, mte3) -> Published:
    return Published(shape, total, (("V", vec), ("S", scalar), ("MTE2", mte2), ("MTE3", mte3)))


# RMSNorm fp32: total, Vec, Scalar, MTE2, MTE3.
RMSNORM = (
    _rms((2, 64, 256), 3.56, 0.48, 1.91, 0.45, 0.17),
    _rms((2, 64, 512), 3.70, 0.58, 1.94, 0.54, 0.17),
    _rms((2, 128, 512), 4.36, 0.90, 2.20, 0.74, 0.22),
    _rms((2, 256, 512), 5.36, 1.21, 2.98, 1.24, 0.48),
    _rms((2, 512, 512), 6.88, 1.92, 3.29, 2.04, 1.21),
    _rms((2, 1024, 512), 10.14, 3.74, 4.51, 3.47, 2.02),
    _rms((2, 1024, 1024), 19.02, 9.96, 5.87, 6.28, 3.58),
    _rms((2, 2048, 512), 16.54, 7.23, 6.43, 6.05, 3.42),
    _rms((2, 2048, 1024), 34.44, 19.74, 8.94, 11.53, 5.99),
)

PIPE_LABELS = {"V": "Vec", "S": "Scalar", "MTE2": "MTE2", "MTE3": "MTE3"}


def error(simulated: float, published: float) -> float:
    return (simulated - published) / published


def simulate(example: str, shape: tuple[int, int, int]):
    """Run the example at ``shape`` on the 910B4 (its own torch check included)."""
    report = load_example(example).run(SOC, shape=shape)
    SESSION.clear()
    return report


def _fmt_err(e: float) -> str:
    return f"{e:+7.0%}"


def run_kernel(example: str, points, out) -> list[float]:
    """Print one table; returns the total-time errors."""
    with_pipes = bool(points[0].pipes)
    head = f"{'shape':<16}{'cores':>6}{'sim µs':>9}{'pub µs':>9}{'error':>8}"
    if with_pipes:
        head += "".join(f"{PIPE_LABELS[p] + ' sim/pub':>22}" for p, _ in points[0].pipes)
    print(f"\n{example} fp32 on {SOC}", file=out)
    print(head, file=out)
    errors = []
    pipe_errors: dict[str, list[float]] = {p: [] for p, _ in points[0].pipes}
    for point in points:
        report = simulate(example, point.shape)
        e = error(report.device_time_us, point.total_us)
        errors.append(e)
        line = (f"{str(point.shape):<16}{report.block_num:>6}{report.device_time_us:>9.2f}"
                f"{point.total_us:>9.2f}{_fmt_err(e):>8}")
        busy = report.pipe_busy_us()
        for pipe, published in point.pipes:
            sim = busy.get(pipe, 0.0)
            pipe_errors[pipe].append(error(sim, published))
            line += f"{sim:>8.2f}/{published:<5.2f}{_fmt_err(error(sim, published)):>8}"
        print(line, file=out)
    summary = [("total", errors)] + [(PIPE_LABELS[p], errs) for p, errs in pipe_errors.items()]
    for label, errs in summary:
        absolute = [abs(x) for x in errs]
        print(f"  {label:<7} |error| median {statistics.median(absolute):5.0%}, "
              f"worst {max(absolute):5.0%} (signed mean {statistics.fmean(errs):+.0%})",
              file=out)
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one point per kernel")
    args = parser.parse_args(argv)
    swiglu, rmsnorm = (SWIGLU[:1], RMSNORM[:1]) if args.quick else (SWIGLU, RMSNORM)
    errors = run_kernel("swiglu", swiglu, sys.stdout) + run_kernel("rmsnorm", rmsnorm, sys.stdout)
    absolute = [abs(e) for e in errors]
    print(f"\nall {len(errors)} points: |error| of the total median "
          f"{statistics.median(absolute):.0%}, worst {max(absolute):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
