"""``cast`` with every RoundMode, against a reference built from exact rational arithmetic.

The reference (``_round_exact``) works on ``fractions.Fraction``: it scales the exact source
value by the target's ulp at that magnitude, rounds the quotient to an integer the way the mode
says, and scales back. It shares nothing with ascsim.sim.numerics.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_helpers import BF16, assert_same, run_vector, strided_index

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
RM = asc.RoundMode
MODES = ("CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC",
         "CAST_ODD")

# (mantissa bits with the implicit one, minimum normal exponent, largest finite value)
FORMATS = {
    F16: (11, -14, 65504.0),
    BF16: (8, -126, 3.3895313892515355e38),
    F32: (24, -126, float(np.finfo(F32).max)),
}


def _round_int(q: Fraction, mode: str) -> int:
    """Round the rational ``q`` to an integer as ``mode`` says."""
    fl = math.floor(q)
    frac = q - fl
    if mode in ("CAST_NONE", "CAST_RINT"):
        if frac != Fraction(1, 2):
            return fl + (frac > Fraction(1, 2))
        return fl if fl % 2 == 0 else fl + 1
    if mode == "CAST_FLOOR":
        return fl
    if mode == "CAST_CEIL":
        return math.ceil(q)
    if mode == "CAST_TRUNC":
        return math.trunc(q)
    if mode == "CAST_ROUND":  # half away from zero
        mag = math.floor(abs(q) + Fraction(1, 2))
        return mag if q >= 0 else -mag
    if mode == "CAST_ODD":  # truncate; if anything was dropped, force the last bit to 1
        t = math.trunc(q)
        if t != q:
            mag = abs(t) | 1
            t = mag if q > 0 else -mag
        return t
    raise ValueError(mode)


def _round_exact(v: float, target, mode: str) -> float:
    """The exact value ``v`` rounded to the float format ``target``."""
    if v == 0 or not math.isfinite(v):
        return v
    p, emin, _ = FORMATS[target]
    q = Fraction(v)
    e = max(math.floor(math.log2(abs(v))), emin)
    # log2 may be off by one near powers of two; fix the exponent exactly.
    while abs(q) >= Fraction(2) ** (e + 1):
        e += 1
    while e > emin and abs(q) < Fraction(2) ** e:
        e -= 1
    ulp = Fraction(2) ** (e - p + 1)
    r = _round_int(q / ulp, mode) * ulp
    return math.copysign(float(r), v)


def float_reference(src: np.ndarray, target, mode: str) -> np.ndarray:
    vals = [_round_exact(float(v), target, mode) for v in src.astype(np.float64)]
    return np.array(vals, dtype=np.float64).astype(target)


def int_reference(src: np.ndarray, target, mode: str) -> np.ndarray:
    info = np.iinfo(target)
    out = []
    for v in src.astype(np.float64):
        if math.isnan(v):
            out.append(0)
        elif math.isinf(v):
            out.append(info.max if v > 0 else info.min)
        else:
            out.append(min(max(_round_int(Fraction(v), mode), info.min), info.max))
    return np.array(out, dtype=target)


def run_cast(src: np.ndarray, target, mode: str) -> np.ndarray:
    n = src.size
    got, _ = run_vector(lambda d, s: asc.cast(d, s, RM[mode], n), np.zeros(n, target), src)
    return got


# ------------------------------------------------------------------------ float -> float
def _ties(target) -> np.ndarray:
    """fp32 values exactly halfway between neighbours of ``target``, both signs."""
    p = FORMATS[target][0]
    k = np.arange(1, 40, dtype=np.float64)
    halves = (2.0 ** (p - 1) + k + 0.5) * 2.0 ** (1 - p)  # 1 + (k + 0.5) ulp, in [1, 2)
    vals = np.concatenate([halves, halves * 2.0**-5, -halves, -halves * 1024])
    return vals.astype(F32)


@pytest.mark.parametrize("target", [F16, BF16], ids=["fp32-fp16", "fp32-bf16"])
@pytest.mark.parametrize("mode", MODES)
def test_fp32_to_narrow_float_ties_and_negatives(target, mode):
    rng = np.random.default_rng(7)
    src = np.concatenate([_ties(target), rng.uniform(-300, 300, 200).astype(F32),
                          np.array([0.0, -0.0, 1.0, -1.0, 2.0**-20, -(2.0**-20)], F32)])
    assert_same(run_cast(src, target, mode), float_reference(src, target, mode))


def test_documented_example_half_of_an_ulp_above_one_half():
    # Ascend C's Cast page: 0.5 + 2**-12 to half gives 0.5 for RINT/FLOOR/TRUNC and
    # 0.5 + 2**-11 for CEIL/ROUND/ODD.
    src = np.full(16, 0.5 + 2.0**-12, F32)
    expected = {"CAST_RINT": 0.5, "CAST_FLOOR": 0.5, "CAST_TRUNC": 0.5,
                "CAST_CEIL": 0.5 + 2.0**-11, "CAST_ROUND": 0.5 + 2.0**-11,
                "CAST_ODD": 0.5 + 2.0**-11}
    for mode, value in expected.items():
        assert (run_cast(src, F16, mode) == value).all(), mode


def test_round_mode_differences_on_exact_ties():
    # 1 + 1.5 ulp and 1 + 2.5 ulp (fp16 ulp at 1 is 2**-10).
    src = np.array([1 + 1.5 * 2.0**-10, 1 + 2.5 * 2.0**-10, -(1 + 2.5 * 2.0**-10)] + [0] * 5,
                   F32)
    ulp = 2.0**-10
    assert run_cast(src, F16, "CAST_RINT")[:3].tolist() == [1 + 2 * ulp, 1 + 2 * ulp,
                                                            -(1 + 2 * ulp)]
    assert run_cast(src, F16, "CAST_ROUND")[:3].tolist() == [1 + 2 * ulp, 1 + 3 * ulp,
                                                             -(1 + 3 * ulp)]
    assert run_cast(src, F16, "CAST_ODD")[:3].tolist() == [1 + ulp, 1 + 3 * ulp, -(1 + 3 * ulp)]
    assert run_cast(src, F16, "CAST_FLOOR")[:3].tolist() == [1 + ulp, 1 + 2 * ulp,
                                                             -(1 + 3 * ulp)]


@pytest.mark.parametrize("source", [F16, BF16], ids=["fp16", "bf16"])
def test_widening_to_fp32_is_exact(source):
    rng = np.random.default_rng(8)
    src = rng.uniform(-1e4, 1e4, 300).astype(source)
    for mode in ("CAST_NONE", "CAST_RINT", "CAST_FLOOR"):
        np.testing.assert_array_equal(run_cast(src, F32, mode), src.astype(F32))


def test_subnormal_results_round_with_the_mode():
    tiny = 2.0**-24  # smallest fp16 subnormal
    src = np.array([0.5 * tiny, 1.5 * tiny, -0.75 * tiny, 2.5 * tiny] + [0] * 4, F32)
    for mode in MODES:
        assert_same(run_cast(src, F16, mode), float_reference(src, F16, mode))


# ------------------------------------------------------------------------ float -> same float
@pytest.mark.parametrize("mode", ["CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND",
                                  "CAST_TRUNC"])
def test_fp32_to_fp32_rounds_to_an_integral_value(mode):
    # Ascend C's Cast table: float -> float rounds src to an integer with round_mode
    # (input 0.5: RINT 0, FLOOR 0, CEIL 1, ROUND 1, TRUNC 0).
    src = np.array([0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 1e9 + 0.5], F32)
    expected = np.array([float(_round_int(Fraction(float(v)), mode)) for v in src], F32)
    np.testing.assert_array_equal(run_cast(src, F32, mode), expected)


def test_fp32_to_fp32_cast_none_copies():
    src = np.array([0.5, -1.25, 3.75, 7.0, 0, 0, 0, 0], F32)
    np.testing.assert_array_equal(run_cast(src, F32, "CAST_NONE"), src)


# ------------------------------------------------------------------------ float -> int
INT_MODES = ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC")


@pytest.mark.parametrize(("source", "target"), [(F32, np.int32), (F16, np.int8),
                                                (F16, np.int32), (F32, np.int16)],
                         ids=["fp32-int32", "fp16-int8", "fp16-int32", "fp32-int16"])
@pytest.mark.parametrize("mode", INT_MODES)
def test_float_to_int(source, target, mode):
    rng = np.random.default_rng(9)
    halves = np.arange(-6, 6) + 0.5
    special = [0.49999997, -0.49999997, 1e10, -1e10, np.inf, -np.inf, np.nan, 300.0, -300.0]
    with np.errstate(over="ignore"):  # 1e10 is meant to overflow fp16 to inf
        src = np.concatenate([halves, rng.uniform(-200, 200, 100), special]).astype(source)
    assert_same(run_cast(src, np.dtype(target), mode), int_reference(src, target, mode))


def test_documented_int_example():
    # Ascend C: 2**22 + 0.5 to int32: RINT 2**22, FLOOR 2**22, CEIL/ROUND 2**22 + 1, TRUNC 2**22.
    src = np.full(8, 2.0**22 + 0.5, F32)
    want = {"CAST_RINT": 0, "CAST_FLOOR": 0, "CAST_CEIL": 1, "CAST_ROUND": 1, "CAST_TRUNC": 0}
    for mode, extra in want.items():
        assert (run_cast(src, np.int32, mode) == 2**22 + extra).all(), mode


def test_int_to_float_rounds_large_values():
    src = np.array([2**24 + 1, -(2**24 + 3), 2**31 - 1, 7] + [0] * 4, np.int32)
    for mode in ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC", "CAST_ODD"):
        assert_same(run_cast(src, F32, mode), float_reference(src, F32, mode))


def test_odd_rounding_to_an_int_is_a_kernel_error():
    src = np.ones(8, F32)
    with pytest.raises(KernelError, match="CAST_ODD"):
        run_cast(src, np.int32, "CAST_ODD")


# ------------------------------------------------------------------------ mask/repeat form
def _masked_cast_reference(src, out, mode, mask, repeat_times, strides):
    per_repeat = 256 // max(src.dtype.itemsize, out.dtype.itemsize)
    (db, dr), (sb, sr) = strides
    d_idx = strided_index(mask, repeat_times, per_repeat, out.dtype.itemsize, db, dr)
    s_idx = strided_index(mask, repeat_times, per_repeat, src.dtype.itemsize, sb, sr)
    expected = out.copy()
    for d, s in zip(d_idx, s_idx):
        if d:
            expected[np.array(d)] = float_reference(src[np.array(s)], out.dtype, mode)
    return expected


@pytest.mark.parametrize(("source", "target", "strides"), [
    (F32, F16, ((1, 4), (1, 8))),    # Ascend C's usual fp32->fp16 params {1, 1, 4, 8}
    (F16, F32, ((1, 8), (1, 4))),    # and fp16->fp32 {1, 1, 8, 4}
    (F32, BF16, ((2, 9), (1, 8))),
])
@pytest.mark.parametrize("mask", [64, 37, [0xF0F0_0000_FFFF_0001, 0]])
def test_cast_mask_form_packs_the_narrow_operand(source, target, strides, mask):
    rng = np.random.default_rng(10)
    repeat_times = 3
    src = rng.uniform(-100, 100, 64 * 8 * repeat_times).astype(source)
    out = rng.uniform(-1, 1, 64 * 8 * repeat_times).astype(target)
    (db, dr), (sb, sr) = strides

    def body(d, s):
        asc.cast(d, s, RM.CAST_RINT, mask, repeat_times, asc.UnaryRepeatParams(db, sb, dr, sr))

    got, _ = run_vector(body, out, src)
    assert_same(got, _masked_cast_reference(src, out, "CAST_RINT", mask, repeat_times, strides))


# ------------------------------------------------------------------------ properties
_f32_values = st.floats(min_value=-6e4, max_value=6e4, allow_nan=False, width=32)


@settings(max_examples=40)
@given(values=st.lists(_f32_values, min_size=1, max_size=90),
       target=st.sampled_from([F16, BF16]), mode=st.sampled_from(MODES))
def test_property_fp32_to_narrow(values, target, mode):
    src = np.array(values, F32)
    assert_same(run_cast(src, target, mode), float_reference(src, target, mode))


@settings(max_examples=40)
@given(values=st.lists(st.floats(min_value=-3e9, max_value=3e9, width=32), min_size=1,
                       max_size=90),
       mode=st.sampled_from(INT_MODES))
def test_property_fp32_to_int32(values, mode):
    src = np.array(values, F32)
    assert_same(run_cast(src, np.dtype(np.int32), mode), int_reference(src, np.int32, mode))


@settings(max_examples=30)
@given(mask=st.one_of(st.integers(1, 64), st.integers(0, 2**64 - 1).map(lambda w: [w, 0])),
       repeat_times=st.integers(1, 6), dst=st.tuples(st.integers(1, 3), st.integers(4, 16)),
       src=st.tuples(st.integers(0, 3), st.integers(0, 16)), data=st.data())
def test_property_cast_mask_form(mask, repeat_times, dst, src, data):
    db, dr = dst
    dr = max(dr, 4 * db)  # distinct repeats must not overwrite each other
    sb, sr = src
    # drawn by Hypothesis, so that a failure shrinks to a small array of simple values
    x = data.draw(hnp.arrays(F32, 64 * 8 * (repeat_times + 1) * 4,
                             elements=st.floats(-100, 100, width=32)))
    out = np.zeros(16 * 8 * (repeat_times + 1) * 16, F16)

    def body(d, s):
        asc.cast(d, s, RM.CAST_TRUNC, mask, repeat_times, asc.UnaryRepeatParams(db, sb, dr, sr))

    got, _ = run_vector(body, out, x)
    assert_same(got, _masked_cast_reference(x, out, "CAST_TRUNC", mask, repeat_times,
                                            ((db, dr), (sb, sr))))
