"""What a bench run measured: one record per case × variant, per-variant summaries, the whole run.

Plain data, apart from the code that computes it (:mod:`ascsim.bench.runner`) and the code that
renders it (:mod:`ascsim.bench.report`, :mod:`ascsim.bench.plots`), which both import it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascsim.bench.opinfo import OpTiming
from ascsim.bench.precision import PrecisionResult
from ascsim.bench.score import CaseOutcome, ScoreSummary
from ascsim.bench.tasks import Task

STATUSES = ("pass", "precision_fail", "runtime_fail")


@dataclass(frozen=True)
class CaseRun:
    """One case under one variant."""

    case_id: int
    variant: str
    status: str                       # one of STATUSES
    error: str | None                 # for runtime_fail: what broke
    precision: PrecisionResult | None
    timing: OpTiming | None
    t_base_us: float | None
    t_hw_us: float | None
    hap: float | None                 # None when not formed (failed case or invalid anchors)
    speedup: float | None
    wall_s: float                     # host wall time of the simulated call
    violations: tuple = ()            # submission rules broken (package runs): rules.Violation
    below_floor: str | None = None    # finding: the simulated time is below published t_hw_us

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} not in {STATUSES}")
        if (self.status == "runtime_fail") != (self.error is not None):
            raise ValueError("an error message goes with runtime_fail and only with it")

    @property
    def outcome(self) -> CaseOutcome:
        return CaseOutcome(ran=self.status != "runtime_fail", passed=self.status == "pass",
                           hap=self.hap, speedup=self.speedup)

    def to_json(self) -> dict:
        return {"case_id": self.case_id, "variant": self.variant, "status": self.status,
                "error": self.error,
                "precision": None if self.precision is None else self.precision.to_json(),
                "timing": None if self.timing is None else self.timing.to_json(),
                "t_base_us": self.t_base_us, "t_hw_us": self.t_hw_us, "hap": self.hap,
                "speedup": self.speedup, "wall_s": self.wall_s,
                "violations": [v.to_json() for v in self.violations],
                "below_floor": self.below_floor,
                "sim_over_t_hw": self.sim_over_t_hw}

    @property
    def sim_over_t_hw(self) -> float | None:
        """Simulated time over T_HW: how close to the hardware floor (1.0 = on it)."""
        if self.timing is None or not self.t_hw_us:
            return None
        return self.timing.device_time_us / self.t_hw_us


@dataclass(frozen=True)
class VariantSummary:
    """One variant over every case: its score, summed device time and host wall time."""

    variant: str
    summary: ScoreSummary
    total_device_us: float
    wall_s: float

    def to_json(self) -> dict:
        return {"variant": self.variant, **self.summary.to_json(),
                "total_device_us": self.total_device_us, "wall_s": self.wall_s}


@dataclass(frozen=True)
class BenchResult:
    """Everything a bench run measured; reports are rendered from this alone."""

    task: Task
    soc: str
    variants: tuple[str, ...]
    runs: tuple[CaseRun, ...]
    summaries: tuple[VariantSummary, ...]
    baseline_note: str
    wall_s: float

    def run(self, case_id: int, variant: str) -> CaseRun:
        for r in self.runs:
            if r.case_id == case_id and r.variant == variant:
                return r
        raise KeyError((case_id, variant))

    def summary(self, variant: str) -> VariantSummary:
        for s in self.summaries:
            if s.variant == variant:
                return s
        raise KeyError(variant)

    def best_variant(self) -> str:
        return max(self.summaries, key=lambda s: s.summary.score).variant

    def to_json(self) -> dict:
        return {"task": self.task.to_json(), "soc": self.soc, "variants": list(self.variants),
                "baseline_note": self.baseline_note, "wall_s": self.wall_s,
                "cases": [c.to_json() for c in self.task.cases],
                "summaries": [s.to_json() for s in self.summaries],
                "runs": [r.to_json() for r in self.runs]}
