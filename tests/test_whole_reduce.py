"""whole_reduce_sum/max/min against numpy: one result per repeat, masks, strides, orders."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector, strided_index

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

R = 4
ORDERS = [asc.ReduceOrder.ORDER_VALUE_INDEX, asc.ReduceOrder.ORDER_INDEX_VALUE,
          asc.ReduceOrder.ORDER_ONLY_VALUE, asc.ReduceOrder.ORDER_ONLY_INDEX]


def _rows(x, mask, blk, rep):
    per = 256 // x.dtype.itemsize
    return [np.array(i) for i in strided_index(mask, R, per, x.dtype.itemsize, blk, rep)]


def _positions(mask, per):
    if isinstance(mask, list):
        return [p for p in range(per) if (mask[p // 64] >> (p % 64)) & 1]
    return list(range(mask))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("mask_kind", ["count", "bits"])
def test_whole_reduce_sum(dtype, mask_kind):
    per = 256 // np.dtype(dtype).itemsize
    mask = per - 5 if mask_kind == "count" else [0xF0F0_0000_0000_FFFF, 0x3 if per == 128 else 0]
    x = np.random.default_rng(0).uniform(-4, 4, 2048).astype(dtype)
    out = np.full(64, 9, dtype)
    got, _ = run_vector(lambda d, s: asc.whole_reduce_sum(d, s, mask, R, 3, 2, 17), out, x)
    expected = out.copy()
    for r, idx in enumerate(_rows(x, mask, 2, 17)):
        expected[r * 3] = x[idx].astype(np.float64).sum()
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                               rtol=2e-3 if dtype == np.float16 else 1e-5)


@pytest.mark.parametrize("name", ["whole_reduce_max", "whole_reduce_min"])
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_whole_reduce_max_min(name, order, dtype):
    per = 256 // np.dtype(dtype).itemsize
    mask = [0xFFFF_0000_FFFF_00FF, 0xFF if per == 128 else 0]
    x = np.random.default_rng(1).permutation(2048).astype(dtype)  # distinct values
    out = np.zeros(64, dtype)
    op = getattr(asc, name)
    got, _ = run_vector(lambda d, s: op(d, s, mask, R, 1, 1, 8, order=order), out, x)
    pick = np.argmax if name.endswith("max") else np.argmin
    positions = np.array(_positions(mask, per))
    uint = {2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]
    for r, idx in enumerate(_rows(x, mask, 1, 8)):
        lane = pick(x[idx])
        value, index = x[idx][lane], positions[lane]
        if order == asc.ReduceOrder.ORDER_ONLY_INDEX:
            assert got.view(np.uint32)[r] == index
        elif order == asc.ReduceOrder.ORDER_ONLY_VALUE:
            assert got[r] == value
        else:
            first = order == asc.ReduceOrder.ORDER_VALUE_INDEX
            pair = got[2 * r:2 * r + 2]
            assert pair[0 if first else 1] == value
            assert pair.view(uint)[1 if first else 0] == index


def test_whole_reduce_with_an_unset_mask_uses_the_mask_registers():
    x = np.random.default_rng(3).uniform(-1, 1, 128).astype(np.float32)
    out = np.zeros(8, np.float32)

    def body(d, s):
        asc.set_vector_mask(0, 0xFF00, dtype=asc.float32, mode=asc.MaskMode.NORMAL)
        asc.whole_reduce_sum(d, s, asc.MASK_PLACEHOLDER, 2, 1, 1, 8, is_set_mask=False)

    got, _ = run_vector(body, out, x)
    np.testing.assert_allclose(got[:2], x.reshape(2, 64)[:, 8:16].sum(axis=1), rtol=1e-5)


def test_whole_reduce_refuses_an_unset_mask_in_counter_mode():
    x = np.zeros(128, np.float32)

    def body(d, s):
        asc.set_mask_count()
        asc.whole_reduce_sum(d, s, 0, 1, 1, 1, 8, is_set_mask=False)

    with pytest.raises(KernelError, match="counter mode"):
        run_vector(body, x, x)


def test_reduce_accepts_pyasc_repeat_time_keyword():
    x = np.random.default_rng(2).uniform(-1, 1, 256).astype(np.float32)
    got, _ = run_vector(lambda d, s: asc.reduce_sum(d, s, shared_tmp_buffer=None, mask=64,
                                                    repeat_time=4, src_rep_stride=8),
                        np.zeros(8, np.float32), x)
    np.testing.assert_allclose(got[0], x.astype(np.float64).sum(), rtol=1e-5)
