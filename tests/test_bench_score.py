"""HAP and the operator score (reference §1.3, §1.8) pinned at known values."""

import math

import pytest

from ascsim.bench.score import CaseOutcome, geomean, hap, score, speedup, summarize, t_hw


def test_t_hw():
    assert t_hw(25.83) == pytest.approx(2.583) and t_hw(5.0) == 1.0


@pytest.mark.parametrize("s, want", [(1, 0.5), (2, 0.6923), (3, 0.7941), (3.92, 0.853),
                                     (5, 0.9), (10, 1.0)])
def test_hap_closed_form(s, want):
    # with T_HW = 0.1·T_base: HAP = 0.9·s / (1 + 0.8·s)
    assert hap(100.0, 100.0 / s) == pytest.approx(want, abs=5e-4)
    assert hap(100.0, 100.0 / s) == pytest.approx(0.9 * s / (1 + 0.8 * s))


def test_hap_unclipped_and_invalid():
    assert hap(100.0, 5.0) > 1.0          # faster than T_HW
    assert hap(0.8, 0.5) is None          # T_base below the 1 µs floor: no valid anchor
    assert hap(1.5, 0.2) is None          # non-positive denominator


def test_score_all_pass_uniform():
    outs = [CaseOutcome(True, True, hap(30.0, 30.0 / 3.92), 3.92)] * 24
    assert score(outs) == pytest.approx(92.65, abs=0.01)
    assert score([CaseOutcome(True, True, 0.5)] * 24) == pytest.approx(75.0)


def test_score_failures():
    ok = CaseOutcome(True, True, 0.5)
    prec = CaseOutcome(True, False)
    runtime = CaseOutcome(False, False)
    # 2 cases: one passing at parity (0.2+0.3+0.25), one precision failure (0.2 only)
    assert score([ok, prec]) == pytest.approx((0.75 + 0.2) / 2 * 100)
    assert score([ok, runtime]) == pytest.approx((0.75 + 0.0) / 2 * 100)
    assert score([CaseOutcome(True, True, None)]) == pytest.approx(50.0)  # None HAP counts 0
    with pytest.raises(ValueError):
        CaseOutcome(False, True)


def test_summary_diagnostics():
    outs = [CaseOutcome(True, True, hap(10, 10 / s), s) for s in (1.0, 4.0)] + \
        [CaseOutcome(True, False, None, 9.0), CaseOutcome(False, False)]
    s = summarize(outs)
    assert (s.n, s.n_runtime_fail, s.n_precision_fail) == (4, 1, 1)
    assert s.mean_speedup == pytest.approx(2.5) and s.geomean_speedup == pytest.approx(2.0)
    assert s.mean_hap == pytest.approx((0.5 + hap(10, 2.5)) / 2)
    assert speedup(10, 4) == 2.5 and math.isinf(speedup(1, 0)) and geomean([]) is None
