"""Run a calibration point on its SoC and read off what the published numbers measure."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ascsim.calib.kernels import KERNELS
from ascsim.calib.points import Point
from ascsim.session import SESSION


@dataclass(frozen=True)
class Measured:
    """A point as simulated: total device µs (all its launches), pipe µs, cores, wall s,
    and the number of launches the total adds up."""

    point: Point
    total_us: float
    pipes_us: dict
    cores: int
    wall_s: float
    launches: int = 1

    @property
    def error(self) -> float | None:
        """(simulated - published) / published; None for a kept-aside point."""
        if self.point.published_us is None:
            return None
        return error(self.total_us, self.point.published_us)

    def pipe_error(self, pipe: str) -> float:
        return error(self.pipes_us.get(pipe, 0.0), self.point.pipes_us[pipe])


def error(simulated: float, published: float) -> float:
    return (simulated - published) / published


def _busiest(cores, kind: str | None, pipe: str) -> float:
    return max((c.pipe_busy_us.get(pipe, 0.0) for c in cores
                if kind is None or c.kind == kind), default=0.0)


def _active(cores, kind: str) -> float:
    return max((c.time_us for c in cores if c.kind == kind), default=0.0)


def sim_pipes(report) -> dict[str, float]:
    """The simulated counterpart of every published pipe key (ascsim.calib.points.PIPES):
    busy time of the busiest core of the kind the profiler reports for that key."""
    cores = report.cores
    aic_mte2 = _busiest(cores, "AIC", "MTE2")
    return {
        "vec": _busiest(cores, "AIV", "V"),
        "scalar": _busiest(cores, None, "S"),
        "mte1": _busiest(cores, "AIC", "MTE1"),
        "mte2": aic_mte2 if aic_mte2 > 0 else _busiest(cores, "AIV", "MTE2"),
        "aiv_mte2": _busiest(cores, "AIV", "MTE2"),
        "mte3": _busiest(cores, "AIV", "MTE3"),
        "mac": _busiest(cores, "AIC", "M"),
        "cube": _busiest(cores, "AIC", "M"),
        "fixpipe": _busiest(cores, "AIC", "FIX"),
        "aiv": _active(cores, "AIV"),
        "aic": _active(cores, "AIC"),
        "aicore": _active(cores, "AIC"),
    }


def measure(point: Point) -> Measured:
    """Simulate ``point`` on its SoC (its kernel checks its own result); restores the SoC."""
    started = time.perf_counter()
    with SESSION.using_soc(point.soc):
        reports = KERNELS[point.kernel].run(**point.knobs)
    failed = [r.kernel for r in reports if r.failed]
    if failed:
        raise RuntimeError(f"point {point.id}: launch of {failed} failed")
    pipes: dict[str, float] = {}
    for report in reports:
        for key, value in sim_pipes(report).items():
            pipes[key] = pipes.get(key, 0.0) + value
    return Measured(point, sum(r.device_time_us for r in reports), pipes,
                    max(r.block_num for r in reports), time.perf_counter() - started,
                    len(reports))
