"""duplicate, copy, compare/compare_scalar, select and reduce_* against numpy.

Bit masks are byte arrays with the least significant bit first (element ``i`` is bit ``i % 8``
of byte ``i // 8``); numpy's ``packbits(bitorder="little")`` is the reference encoding.
"""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import BF16, FLOATS, assert_same, run_vector, strided_index

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
CMP = {
    asc.CMPMODE.LT: np.less, asc.CMPMODE.GT: np.greater, asc.CMPMODE.EQ: np.equal,
    asc.CMPMODE.LE: np.less_equal, asc.CMPMODE.GE: np.greater_equal,
    asc.CMPMODE.NE: np.not_equal,
}


def _bits(packed: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` bits of a byte array, LSB first, as explicit shifts."""
    return np.array([(int(packed[i // 8]) >> (i % 8)) & 1 for i in range(n)], dtype=bool)


def _id(dtype):
    return np.dtype(dtype).name


# ------------------------------------------------------------------------ duplicate
@pytest.mark.parametrize("dtype", FLOATS + (np.dtype(np.int16), np.dtype(np.int32)), ids=_id)
def test_duplicate_count_form(dtype):
    out = np.full(300, 9, dtype)
    got, _ = run_vector(lambda d: asc.duplicate(d, 1.5 if dtype.kind != "i" else 7, 250), out)
    value = dtype.type(1.5) if dtype.kind != "i" else 7
    assert (got[:250] == value).all()
    assert (got[250:] == 9).all()


@pytest.mark.parametrize("dtype", [F16, F32, BF16], ids=_id)
@pytest.mark.parametrize("mask_kind", ["count", "bits"])
def test_duplicate_mask_form(dtype, mask_kind):
    per = 256 // dtype.itemsize
    mask = per - 5 if mask_kind == "count" else [0xAAAA_0000_FFFF_1234, 0x8001 if per == 128 else 0]
    repeat_times, blk, rep = 3, 2, 20
    n = 1 + max(max(r) for r in strided_index(mask, repeat_times, per, dtype.itemsize, blk, rep))
    out = np.arange(n + 16).astype(dtype)

    def body(d):
        asc.duplicate(d, -2.25, mask, repeat_times, blk, rep)

    got, _ = run_vector(body, out)
    expected = out.copy()
    for row in strided_index(mask, repeat_times, per, dtype.itemsize, blk, rep):
        expected[np.array(row)] = -2.25
    assert_same(got, expected)


# ------------------------------------------------------------------------ copy (UB -> UB)
@pytest.mark.parametrize("dtype", [F16, F32, np.dtype(np.int16)], ids=_id)
@pytest.mark.parametrize(("mask", "params"), [
    (128, (1, 1, 8, 8)), (40, (2, 1, 16, 8)), ([0x0F0F_0F0F_0F0F_0F0F, 1], (1, 3, 9, 24)),
    (64, (1, 1, 8, 0)),
])
def test_copy_with_copy_repeat_params(dtype, mask, params):
    per = 256 // dtype.itemsize
    if isinstance(mask, int):
        mask = min(mask, per)
    dst_blk, src_blk, dst_rep, src_rep = params
    repeat_times = 4
    d_idx = strided_index(mask, repeat_times, per, dtype.itemsize, dst_blk, dst_rep)
    s_idx = strided_index(mask, repeat_times, per, dtype.itemsize, src_blk, src_rep)
    src = (np.arange(1 + max(max(r) for r in s_idx)) % 1000).astype(dtype)
    out = np.full(1 + max(max(r) for r in d_idx), -1, dtype)

    def body(d, s):
        asc.copy(d, s, mask, repeat_times, asc.CopyRepeatParams(*params))

    got, _ = run_vector(body, out, src)
    expected = out.copy()
    for d, s in zip(d_idx, s_idx):
        expected[np.array(d)] = src[np.array(s)]
    np.testing.assert_array_equal(got, expected)


def test_copy_moves_nan_bit_patterns_unchanged():
    raw = np.array([0x7C01, 0xFE00, 0x7E55, 0x0001] * 32, np.uint16)
    src = raw.view(np.float16)

    def body(d, s):
        asc.copy(d, s, 128, 1, asc.CopyRepeatParams())

    got, _ = run_vector(body, np.zeros(128, F16), src)
    np.testing.assert_array_equal(got.view(np.uint16), raw)


def test_copy_takes_pyasc_repeat_time_keyword():
    src = (np.arange(256) % 100).astype(F16)

    def body(d, s):
        asc.copy(dst=d, src=s, mask=128, repeat_time=2, repeat_params=asc.CopyRepeatParams())

    got, _ = run_vector(body, np.zeros(256, F16), src)
    np.testing.assert_array_equal(got, src)

    def twice(d, s):
        asc.copy(d, s, 128, 2, asc.CopyRepeatParams(), repeat_time=2)

    with pytest.raises(TypeError, match="give the repeat count once"):
        run_vector(twice, np.zeros(256, F16), src)


# ------------------------------------------------------------------------ compare
@pytest.mark.parametrize("mode", list(CMP), ids=lambda m: m.name)
@pytest.mark.parametrize("dtype", FLOATS + (np.dtype(np.int32),), ids=_id)
def test_compare_count_form_every_mode(mode, dtype):
    rng = np.random.default_rng(int(mode))
    n = 256
    a = rng.integers(-3, 4, n).astype(dtype)
    b = rng.integers(-3, 4, n).astype(dtype)  # small ints: many equal pairs
    got, _ = run_vector(lambda d, x, y: asc.compare(d, x, y, mode, n), np.zeros(64, np.uint8),
                        a, b)
    np.testing.assert_array_equal(_bits(got, n), CMP[mode](a, b))
    np.testing.assert_array_equal(got[: n // 8], np.packbits(CMP[mode](a, b), bitorder="little"))
    assert (got[n // 8:] == 0).all()


def test_compare_bit_order_is_lsb_first():
    a = np.zeros(64, F32)
    a[[0, 3, 9, 63]] = 1.0
    got, _ = run_vector(lambda d, x, y: asc.compare(d, x, y, asc.CMPMODE.GT, 64),
                        np.zeros(32, np.uint8), a, np.zeros(64, F32))
    assert got[:8].tolist() == [0b0000_1001, 0b0000_0010, 0, 0, 0, 0, 0, 0b1000_0000]


@pytest.mark.parametrize("mode", list(CMP), ids=lambda m: m.name)
@pytest.mark.parametrize("dtype", [F16, F32], ids=_id)
def test_compare_scalar_every_mode(mode, dtype):
    a = (np.arange(128) % 7 - 3).astype(dtype)
    got, _ = run_vector(lambda d, x: asc.compare_scalar(d, x, 1.0, mode, 128),
                        np.zeros(32, np.uint8), a)
    np.testing.assert_array_equal(_bits(got, 128), CMP[mode](a, dtype.type(1.0)))


@pytest.mark.parametrize("dtype", [F16, F32], ids=_id)
@pytest.mark.parametrize("mask_kind", ["count", "bits"])
def test_compare_mask_form(dtype, mask_kind):
    """Repeat r's result bits start at bit r * per_repeat; disabled lanes keep their old bit."""
    per = 256 // dtype.itemsize
    mask = per // 2 + 1 if mask_kind == "count" else [0xF0F0_F0F0_0000_FFFF, 0x3 if per == 128
                                                       else 0]
    repeat_times = 3
    rng = np.random.default_rng(12)
    s0_idx = strided_index(mask, repeat_times, per, dtype.itemsize, 1, 8)
    s1_idx = strided_index(mask, repeat_times, per, dtype.itemsize, 2, 16)
    a = rng.integers(-2, 3, 1 + max(max(r) for r in s0_idx)).astype(dtype)
    b = rng.integers(-2, 3, 1 + max(max(r) for r in s1_idx)).astype(dtype)
    old = rng.integers(0, 256, per * repeat_times // 8 + 32).astype(np.uint8)

    def body(d, x, y):
        asc.compare(d, x, y, asc.CMPMODE.LE, mask, repeat_times,
                    asc.BinaryRepeatParams(1, 1, 2, 8, 8, 16))

    got, _ = run_vector(body, old, a, b)
    expected = np.unpackbits(old, bitorder="little")
    for r, (i0, i1) in enumerate(zip(s0_idx, s1_idx)):
        enabled = np.array(strided_index(mask, 1, per, dtype.itemsize, 1, 8)[0])
        expected[r * per + enabled] = a[np.array(i0)] <= b[np.array(i1)]
    np.testing.assert_array_equal(got, np.packbits(expected, bitorder="little"))


# ------------------------------------------------------------------------ select
@pytest.mark.parametrize("dtype", FLOATS, ids=_id)
def test_select_tensor_tensor_count_form(dtype):
    rng = np.random.default_rng(13)
    n = 256
    bits = rng.integers(0, 2, n).astype(bool)
    sel = np.packbits(bits, bitorder="little")
    a, b = rng.uniform(-9, 9, n).astype(dtype), rng.uniform(-9, 9, n).astype(dtype)

    def body(d, m, x, y):
        asc.select(d, m, x, y, asc.SELMODE.VSEL_TENSOR_TENSOR_MODE, n)

    got, _ = run_vector(body, np.zeros(n, dtype), sel, a, b)
    np.testing.assert_array_equal(got, np.where(bits, a, b))


@pytest.mark.parametrize("dtype", [F16, F32], ids=_id)
def test_select_tensor_scalar_count_form(dtype):
    rng = np.random.default_rng(14)
    n = 192
    bits = rng.integers(0, 2, n).astype(bool)
    a = rng.uniform(-9, 9, n).astype(dtype)

    def body(d, m, x):
        asc.select(d, m, x, -0.5, asc.SELMODE.VSEL_TENSOR_SCALAR_MODE, n)

    got, _ = run_vector(body, np.zeros(n, dtype), np.packbits(bits, bitorder="little"), a)
    np.testing.assert_array_equal(got, np.where(bits, a, dtype.type(-0.5)))


@pytest.mark.parametrize("sel_mode", list(asc.SELMODE), ids=lambda m: m.name)
def test_select_mask_form_bit_consumption(sel_mode):
    """Mode 0 reuses the first per-repeat bits every repeat; modes 1 and 2 move on."""
    dtype, per, repeat_times, mask = F32, 64, 3, 40
    rng = np.random.default_rng(15)
    bits = rng.integers(0, 2, per * repeat_times).astype(bool)
    a = rng.uniform(1, 9, per * repeat_times).astype(dtype)
    b = -rng.uniform(1, 9, per * repeat_times).astype(dtype)
    out = np.full(per * repeat_times, 100, dtype)
    scalar = sel_mode == asc.SELMODE.VSEL_TENSOR_SCALAR_MODE

    def body(d, m, x, y):
        asc.select(d, m, x, -7.0 if scalar else y, sel_mode, mask, repeat_times,
                   asc.BinaryRepeatParams())

    got, _ = run_vector(body, out, np.packbits(bits, bitorder="little"), a, b)
    expected = out.copy()
    for r in range(repeat_times):
        lanes = np.arange(mask)
        used = bits[lanes] if sel_mode == asc.SELMODE.VSEL_CMPMASK_SPR else bits[r * per + lanes]
        other = np.full(mask, -7.0, dtype) if scalar else b[r * per + lanes]
        expected[r * per + lanes] = np.where(used, a[r * per + lanes], other)
    np.testing.assert_array_equal(got, expected)


def test_compare_then_select_is_a_where():
    rng = np.random.default_rng(16)
    n = 128
    a, b = rng.uniform(-1, 1, n).astype(F16), rng.uniform(-1, 1, n).astype(F16)

    def body(d, x, y, m):
        asc.compare(m, x, y, asc.CMPMODE.GT, n)
        asc.select(d, m, x, y, asc.SELMODE.VSEL_TENSOR_TENSOR_MODE, n)

    got, _ = run_vector(body, np.zeros(n, F16), a, b, np.zeros(32, np.uint8))
    np.testing.assert_array_equal(got, np.maximum(a, b))


def test_select_scalar_mode_with_a_tensor_is_a_kernel_error():
    x = np.zeros(64, F32)

    def body(d, m, a, b):
        asc.select(d, m, a, b, asc.SELMODE.VSEL_TENSOR_SCALAR_MODE, 64)

    with pytest.raises(KernelError, match="scalar"):
        run_vector(body, x, np.zeros(32, np.uint8), x, x)


# ------------------------------------------------------------------------ reductions
def _index_of(got: np.ndarray) -> int:
    return int(got[1:2].view({2: np.uint16, 4: np.uint32}[got.dtype.itemsize])[0])


@pytest.mark.parametrize("dtype", [F16, F32], ids=_id)
@pytest.mark.parametrize("n", [1, 100, 2000])
def test_reduce_count_form(dtype, n):
    rng = np.random.default_rng(n)
    src = rng.uniform(-4, 4, n).astype(dtype)
    work = np.zeros(256, dtype)
    s64 = src.astype(np.float64)
    got, _ = run_vector(lambda d, s, w: asc.reduce_sum(d, s, w, n), np.zeros(16, dtype), src,
                        work)
    # The device sums in a tree; allow the rounding of n additions in fp32 (or one fp16 ulp).
    tol = np.abs(s64).sum() * 2.0**-22 + abs(s64.sum()) * float(np.finfo(dtype).eps)
    assert abs(float(got[0]) - s64.sum()) <= tol
    for name, ref, arg in (("reduce_max", np.max, np.argmax), ("reduce_min", np.min, np.argmin)):
        op = getattr(asc, name)
        got, _ = run_vector(lambda d, s, w, op=op: op(d, s, w, n, True), np.zeros(16, dtype),
                            src, work)
        assert got[0] == ref(src)
        assert _index_of(got) == arg(src)  # the first of equal extremes


def test_reduce_max_index_is_the_first_of_ties():
    src = np.array([1, 5, 2, 5, 5, 0, 0, 0] * 4, F32)
    got, _ = run_vector(lambda d, s, w: asc.reduce_max(d, s, w, 32, cal_index=True),
                        np.zeros(8, F32), src, np.zeros(64, F32))
    assert got[0] == 5 and _index_of(got) == 1


@pytest.mark.parametrize("dtype", [F16, F32], ids=_id)
@pytest.mark.parametrize("name", ["reduce_max", "reduce_min", "reduce_sum"])
def test_reduce_mask_form(dtype, name):
    per = 256 // dtype.itemsize
    mask, repeat_times, rep_stride = per - 3, 5, 8
    rng = np.random.default_rng(17)
    src = rng.uniform(-4, 4, per * repeat_times).astype(dtype)
    lanes = np.array(strided_index(mask, repeat_times, per, dtype.itemsize, 1, rep_stride))
    values = src[lanes.reshape(-1)]
    op = getattr(asc, name)
    cal = name != "reduce_sum"

    def body(d, s, w):
        if cal:
            op(d, s, w, mask, repeat_times, rep_stride, True)
        else:
            op(d, s, w, mask, repeat_times, rep_stride)

    got, _ = run_vector(body, np.zeros(16, dtype), src, np.zeros(per * 8, dtype))
    if name == "reduce_sum":
        s64 = values.astype(np.float64)
        assert abs(float(got[0]) - s64.sum()) <= np.abs(s64).sum() * float(np.finfo(dtype).eps)
    else:
        ref, arg = (np.max, np.argmax) if name == "reduce_max" else (np.min, np.argmin)
        assert got[0] == ref(values)
        assert _index_of(got) == lanes.reshape(-1)[arg(values)]


def test_reduce_mask_form_index_skips_disabled_lanes():
    # Only lanes 60..63 of each fp32 repeat are on; the max sits in repeat 2, lane 61.
    src = np.zeros(64 * 3, F32)
    src[2 * 64 + 61] = 3.0
    src[5] = 99.0  # disabled lane: must not win

    def body(d, s, w):
        asc.reduce_max(d, s, w, [0xF << 60, 0], 3, 8, True)

    got, _ = run_vector(body, np.zeros(8, F32), src, np.zeros(64, F32))
    assert got[0] == 3.0 and _index_of(got) == 2 * 64 + 61
