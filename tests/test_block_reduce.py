"""block_reduce_sum/max/min, pair_reduce_sum and repeat_reduce_sum against numpy: per-block,
per-pair and per-repeat results, masks, strides, fp16 tree saturation."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

R = 3


def _tree(values: np.ndarray, op) -> np.float64:
    """Pairwise tree in the values' own type (plain loop, on purpose)."""
    vals = list(values)
    while len(vals) > 1:
        vals = [op(vals[i], vals[i + 1]) for i in range(0, len(vals), 2)]
    return vals[0]


def _sat_add(a, b):
    s = a + b
    if s.dtype == np.float16 and np.isinf(s):
        return np.float16(np.copysign(65504.0, float(s)))
    return s


OPS = {"sum": (_sat_add, 0.0), "max": (np.maximum, -np.inf), "min": (np.minimum, np.inf)}


def _reference(x, out, mask, group, dst_unit, dst_rep, blk, rep, kind):
    """Group ``group`` lanes of each repeat; results of a group with no enabled lane stay."""
    dtype = x.dtype.type
    per = 256 // x.dtype.itemsize
    per_block = 32 // x.dtype.itemsize
    if isinstance(mask, list):
        enabled = [(mask[p // 64] >> (p % 64)) & 1 == 1 for p in range(per)]
    else:
        enabled = [p < mask for p in range(per)]
    op, identity = OPS[kind]
    expected = out.copy()
    for r in range(R):
        for g in range(per // group):
            lanes = []
            for p in range(g * group, (g + 1) * group):
                idx = (r * rep + (p // per_block) * blk) * per_block + p % per_block
                lanes.append(x[idx] if enabled[p] else dtype(identity))
            if any(enabled[g * group:(g + 1) * group]):
                expected[r * dst_rep * dst_unit + g] = _tree(np.array(lanes, dtype), op)
    return expected


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("mask_kind", ["count", "bits"])
def test_block_reduce(kind, dtype, mask_kind):
    per = 256 // np.dtype(dtype).itemsize
    mask = per - 20 if mask_kind == "count" else [0xF0F0_0000_0000_FFFF, 0x3 if per == 128 else 0]
    x = np.random.default_rng(0).uniform(-4, 4, 2048).astype(dtype)
    out = np.full(128, 9, dtype)
    op = getattr(asc, f"block_reduce_{kind}")
    got, _ = run_vector(lambda d, s: op(d, s, repeat=R, mask=mask, dst_rep_stride=2,
                                        src_blk_stride=2, src_rep_stride=17), out, x)
    expected = _reference(x, out, mask, 32 // np.dtype(dtype).itemsize, 8, 2, 2, 17, kind)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("mask", [61, [0xFFFF_0000_0000_0F0F, 0xFF00]])
def test_pair_reduce_sum(dtype, mask):
    per = 256 // np.dtype(dtype).itemsize
    x = np.random.default_rng(1).uniform(-4, 4, 2048).astype(dtype)
    out = np.full(512, 7, dtype)
    got, _ = run_vector(lambda d, s: asc.pair_reduce_sum(d, s, repeat_time=R, mask=mask,
                                                         dst_rep_stride=1, src_blk_stride=1,
                                                         src_rep_stride=8), out, x)
    expected = _reference(x, out, mask, 2, per // 2, 1, 1, 8, "sum")
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_repeat_reduce_sum(dtype):
    per = 256 // np.dtype(dtype).itemsize
    x = np.random.default_rng(2).uniform(-4, 4, 2048).astype(dtype)
    out = np.full(64, 5, dtype)
    got, _ = run_vector(lambda d, s: asc.repeat_reduce_sum(
        d, s, repeat_time=R, mask=per - 3, dst_blk_stride=0, src_blk_stride=1,
        dst_rep_stride=4, src_rep_stride=8), out, x)
    expected = _reference(x, out, per - 3, per, 1, 4, 1, 8, "sum")
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(got[[0, 4, 8]].astype(np.float64),
                               x[:R * per].reshape(R, per)[:, :per - 3].astype(np.float64)
                               .sum(axis=1), rtol=3e-3, atol=0.05)


def test_fp16_tree_sum_saturates_as_documented():
    # Ascend C's example: [60000, 60000, -30000, 100] -> 65504 + (-29900), about 35604 (the
    # nearest fp16 values are 35584 and 35616; without saturation it would be inf).
    x = np.zeros(128, np.float16)
    x[:4] = [60000, 60000, -30000, 100]
    out = np.zeros(16, np.float16)
    got, _ = run_vector(lambda d, s: asc.repeat_reduce_sum(d, s, 1, 4, 0, 1, 1, 8), out, x)
    expected = np.float16(65504) + np.float16(-29900)
    assert got[0] == expected and abs(float(expected) - 35604) < 32
    got, _ = run_vector(lambda d, s: asc.block_reduce_sum(d, s, 1, 128, 1, 1, 8), out, x)
    assert got[0] == expected


def test_an_empty_mask_writes_nothing():
    x = np.ones(128, np.float16)
    out = np.full(16, 3, np.float16)
    got, _ = run_vector(lambda d, s: asc.block_reduce_max(d, s, 1, 0, 8, 1, 8), out, x)
    np.testing.assert_array_equal(got, out)


def test_repeat_reduce_sum_refuses_a_bit_mask():
    x = np.zeros(128, np.float16)
    with pytest.raises(KernelError, match="count mask only"):
        run_vector(lambda d, s: asc.repeat_reduce_sum(d, s, 1, [1, 0], 0, 1, 1, 8), x, x)


def test_block_reduce_refuses_an_integer_type():
    x = np.zeros(64, np.int32)
    with pytest.raises(KernelError, match="float16 or both float32"):
        run_vector(lambda d, s: asc.block_reduce_sum(d, s, 1, 64, 8, 1, 8), x, x)
