"""HAP per case and the operator score (reference §1.3, §1.8, §4.3).

    T_HW  = max(0.1·T_base, 1 µs)          (the bench's estimate of the hardware limit)
    HAP_i = (T_base − T_HW) / ((T_cand − T_HW) + (T_base − T_HW))
    Score = [w_c·(N − N_fail)/N + Σ_i δ_acc,i·(w_f + w_p·HAP_i)/N] · 100,  w = 0.2 / 0.3 / 0.5

HAP is 0.5 at parity with the baseline, 1.0 at T_HW, tends to 0 when much slower and is not
clipped above 1. A HAP that cannot be formed (T_base ≤ T_HW, or a non-positive denominator)
is None and scores 0. N_fail counts runtime/interface failures; δ_acc is 1 when precision passed.
Speedup (T_base/T_cand) and its mean/geomean are diagnostics only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

W_C, W_F, W_P = 0.2, 0.3, 0.5
T_HW_FRACTION = 0.1
T_HW_FLOOR_US = 1.0


def t_hw(t_base_us: float) -> float:
    return max(T_HW_FRACTION * t_base_us, T_HW_FLOOR_US)


FALLBACK_BASE_FACTOR, FALLBACK_BASE_FLOOR_US = 10.0, 10.0


def anchors(t_base_us: float | None, t_hw_us: float | None) -> tuple[float | None, float | None]:
    """(T_base, T_HW) a case is scored with.

    T_HW is the case's published ``t_hw_us`` (cann-bench's metadata) when it has one, else the
    estimate :func:`t_hw` of its baseline. A case with a published T_HW but no baseline is
    scored, as cann-bench scores it, against the stand-in baseline max(10·T_HW, 10 µs).
    No baseline and no T_HW: (None, None), no HAP.
    """
    if t_hw_us is not None and t_hw_us > 0:
        if t_base_us is None or not t_base_us > 0:
            t_base_us = max(FALLBACK_BASE_FACTOR * t_hw_us, FALLBACK_BASE_FLOOR_US)
        return t_base_us, t_hw_us
    if t_base_us is None:
        return None, None
    return t_base_us, t_hw(t_base_us)


def floor_finding(t_cand_us: float, t_hw_us: float | None) -> str | None:
    """A finding when a simulated time is below the case's published hardware floor: the
    timing model would be wrong there, or the candidate skipped work the task needs."""
    if t_hw_us is None or not t_cand_us < t_hw_us:
        return None
    return (f"simulated {t_cand_us:.3g} us is below the case's hardware floor t_hw_us "
            f"{t_hw_us:.3g} us (ratio {t_cand_us / t_hw_us:.2f}): the timing model "
            "underestimates this case, or the candidate skips work the task needs")


def hap(t_base_us: float, t_cand_us: float, t_hw_us: float | None = None) -> float | None:
    thw = t_hw(t_base_us) if t_hw_us is None else t_hw_us
    head = t_base_us - thw
    denom = (t_cand_us - thw) + head
    if head <= 0 or denom <= 0:
        return None
    return head / denom


def speedup(t_base_us: float, t_cand_us: float) -> float:
    return t_base_us / t_cand_us if t_cand_us > 0 else math.inf


@dataclass(frozen=True)
class CaseOutcome:
    """What the score needs from one case: did it run, did it pass precision, its HAP."""

    ran: bool                  # False: runtime/interface failure
    passed: bool               # δ_acc (only meaningful when ran)
    hap: float | None = None
    speedup: float | None = None

    def __post_init__(self) -> None:
        if self.passed and not self.ran:
            raise ValueError("a case that did not run cannot pass precision")


def score(outcomes: Sequence[CaseOutcome]) -> float:
    n = len(outcomes)
    if n == 0:
        raise ValueError("no cases to score")
    n_fail = sum(not o.ran for o in outcomes)
    acc = sum(W_F + W_P * (o.hap or 0.0) for o in outcomes if o.ran and o.passed)
    return (W_C * (n - n_fail) / n + acc / n) * 100.0


def geomean(values: Sequence[float]) -> float | None:
    # Not statistics.geometric_mean: it averages the logs with math.fsum, which moves the last
    # one or two bits of the geomean in the bench JSON (4.41165561323885 -> 4.411655613238847
    # for fused_conv_tanh's semi variant on Ascend950PR_9579); this plain mean keeps the
    # figures that earlier runs wrote, so their JSON compares equal.
    if not values or any(v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass(frozen=True)
class ScoreSummary:
    """Score of a set of case outcomes plus the diagnostic speedups over passing cases."""

    n: int
    n_runtime_fail: int
    n_precision_fail: int
    score: float
    mean_hap: float | None
    mean_speedup: float | None
    geomean_speedup: float | None

    def to_json(self) -> dict:
        return dict(self.__dict__)


def summarize(outcomes: Sequence[CaseOutcome]) -> ScoreSummary:
    passing = [o for o in outcomes if o.ran and o.passed]
    haps = [o.hap or 0.0 for o in passing]
    speeds = [o.speedup for o in passing if o.speedup is not None and math.isfinite(o.speedup)]
    return ScoreSummary(
        n=len(outcomes), n_runtime_fail=sum(not o.ran for o in outcomes),
        n_precision_fail=sum(o.ran and not o.passed for o in outcomes), score=score(outcomes),
        mean_hap=sum(haps) / len(haps) if haps else None,
        mean_speedup=sum(speeds) / len(speeds) if speeds else None,
        geomean_speedup=geomean(speeds))
