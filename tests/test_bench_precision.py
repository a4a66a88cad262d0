"""The precision rule: each branch with crafted arrays (fp16 thresholds unless stated)."""

import numpy as np
import pytest
import torch

from ascsim.bench.precision import THRESHOLDS, check_precision, truncate

N = 1000
FP16 = THRESHOLDS["float16"]


def _golden():
    # normal-range values, exactly representable in fp16
    return torch.linspace(0.5, 1.0, N).half().double().numpy()


def _refuse():
    raise AssertionError("the reference must not be computed when the plain test passes")


def test_threshold_table():
    assert FP16.mere == 2**-10 and FP16.mare == 2**-7 and FP16.small_value == 2**-11
    assert FP16.small_error == 2**-16 and FP16.cancel == 2**-5
    bf, f32 = THRESHOLDS["bfloat16"], THRESHOLDS["float32"]
    assert (bf.mere, bf.mare, bf.small_value, bf.cancel) == (2**-7, 2**-4, 2**-8, 2**-3)
    assert (f32.mere, f32.mare, f32.small_value, f32.small_error) == (2**-13, 2**-10, 2**-14,
                                                                        2**-30)


def test_plain_pass_does_not_need_the_reference():
    g = _golden()
    a = g * (1 + 2**-11)  # ~ half an fp16 ulp everywhere
    r = check_precision(a, g, "float16", reference=_refuse)
    assert r.passed and r.branch == "plain"
    assert r.mere == pytest.approx(2**-11, rel=1e-3) and r.mare < FP16.mare


def test_plain_relative_error_formula():
    g = np.array([1.0, 0.0, 2.0])
    a = np.array([1.5, 1e-7, 2.0])
    r = check_precision(a, g, "float32", reference=g)
    # |a − g| / (|g| + 1e-7): 0.5/1.0, 1e-7/1e-7 at the zero golden, 0
    assert r.mare == pytest.approx(1.0) and r.mere == pytest.approx((0.5 + 1.0) / 3)


def test_normal_range_mere_fails():
    g = _golden()
    r = check_precision(g * 1.01, g, "float16", reference=g)
    assert not r.passed and r.branch == "fallback" and "normal-range MERE" in r.why
    assert r.mere == pytest.approx(0.01)


def _with_small(value_a, value_ref, count=10):
    g = _golden()
    g[:count] = 1e-5   # small-value positions: |golden| < 2^-11
    a, ref = g.copy(), g.copy()
    a[:count], ref[:count] = value_a, value_ref
    return a, g, ref


def test_small_values_within_small_error_pass():
    a, g, ref = _with_small(2e-5, 1e-5)  # abs error 1e-5 < 2^-16, relative error ~1
    r = check_precision(a, g, "float16", reference=ref)
    assert r.passed and r.branch == "fallback" and r.mare > FP16.mare
    assert r.small.positions == 10 and r.small.candidate_errors == 0


def test_small_values_error_count_ratio():
    a, g, ref = _with_small(1e-4, 1e-5)  # candidate errs at 10, the reference at none
    r = check_precision(a, g, "float16", reference=ref)
    assert not r.passed and "small-value: 10 errors vs 0" in r.why and r.small.ratio == 10
    a, g, ref = _with_small(1e-4, 9e-5)  # the same-precision reference errs there too
    r = check_precision(a, g, "float16", reference=ref)
    assert r.passed and r.small.ratio == 1.0


def test_cancellation_positions():
    g = _golden()
    g[:10] = 0.01        # between the small-value threshold and the cancellation boundary
    a = g.copy()
    a[:10] = 0.0         # the candidate cancelled to zero
    r = check_precision(a, g, "float16", reference=a.copy())
    assert r.passed and r.cancellation.positions == 10 and r.cancellation.reference_errors == 10
    r = check_precision(a, g, "float16", reference=g)
    assert not r.passed and "cancellation: 10 errors vs 0" in r.why


def _deep(ref_bad):
    g = _golden()
    a, ref = g.copy(), g.copy()
    a[:5] *= 1.02                 # 5 normal-range MARE violators, MERE still below T
    ref[:ref_bad] *= 1.02
    return a, g, ref


def test_deep_reduction_fallback():
    a, g, ref = _deep(5)
    r = check_precision(a, g, "float16", reference=ref)
    assert r.passed and r.deep_reduction.candidate_errors == 5 and "deep-reduction" in r.why
    r = check_precision(*_deep(0)[:2], "float16", reference=_deep(0)[2])
    assert not r.passed and "reference gets right" in r.why and r.deep_reduction is None
    a, g, ref = _deep(1)          # shared violator, but 5 vs 1 errors
    r = check_precision(a, g, "float16", reference=ref)
    assert not r.passed and "ratio 5.00 > 2" in r.why


def test_non_finite_and_missing_reference():
    g = _golden()
    a = g.copy()
    a[3] = np.nan
    r = check_precision(a, g, "float16", reference=g)
    assert not r.passed and "NaN where the golden is not" in r.why
    r = check_precision(g * 1.01, g, "float16")
    assert not r.passed and "no same-precision reference" in r.why
    with pytest.raises(ValueError, match="shape"):
        check_precision(g[:5], g, "float16")
    with pytest.raises(ValueError, match="thresholds"):
        check_precision(g, g, "int8")


def test_golden_truncated_from_truth():
    assert truncate(np.array([1 / 3]), "bfloat16")[0] == torch.tensor(1 / 3).bfloat16().item()
    # truth 3e-4 truncates into the small-value class even where the golden says otherwise
    g = _golden()
    truth = g.copy()
    truth[:4] = 3e-4
    a = g.copy()
    a[:4] = g[:4] * 1.5
    r = check_precision(a, g, "float16", truth=truth, reference=truth)
    assert r.small.positions == 4


def test_bf16_and_fp32_plain():
    g = torch.linspace(1, 2, N, dtype=torch.float64)
    assert check_precision(g.bfloat16(), g.bfloat16(), "bfloat16").passed
    r = check_precision(g * (1 + 2e-4), g, "float32", reference=g)
    assert not r.passed  # 2e-4 > fp32 T = 1.22e-4


def test_nans_and_infinities_as_cann_bench_compares_them():
    """Matched NaNs and same-signed infinities are left out; an infinity on one side is the
    dtype's largest finite value (an fp16 output saturating where the golden_truncated is
    65504 passes; one where it is 1.0 does not)."""
    g = _golden()
    g[:3] = [np.nan, np.inf, -np.inf]
    assert check_precision(g.copy(), g, "float16", reference=_refuse).passed
    a = g.copy()
    a[2] = np.inf
    r = check_precision(a, g, "float16", reference=g)
    assert not r.passed and "opposite sign at 1 positions" in r.why
    # the fp64 truth overflows fp16 only once truncated: golden_truncated is inf, both agree
    truth = _golden()
    truth[5] = 1e6
    a = truth.copy()
    a[5] = np.inf
    assert check_precision(a, truth, "float16", reference=_refuse).passed
    # an output saturating to inf where the golden is 65504 (the largest fp16) passes
    truth[5] = 65504.0
    assert check_precision(a, truth, "float16", reference=_refuse).passed
    truth[5] = 1.0
    r = check_precision(a, truth, "float16", reference=truth)
    assert not r.passed
    everything = np.full(4, np.inf)
    r = check_precision(everything, everything, "float32")
    assert r.passed and "every position" in r.why
