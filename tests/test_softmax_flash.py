"""asc.adv.softmax_flash_v2 against numpy: the first form, the update form chained over two
column tiles (the online softmax of FlashAttention-2), the all-float form, and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

ROWS, COLS = 8, 64


@asc.jit
def _flash(x: asc.GlobalAddress, in_sum: asc.GlobalAddress, in_max: asc.GlobalAddress,
           y: asc.GlobalAddress, out_sum: asc.GlobalAddress, out_max: asc.GlobalAddress,
           out_exp: asc.GlobalAddress, tiling: asc.adv.SoftmaxTiling, rows: asc.ConstExpr[int],
           cols: asc.ConstExpr[int], update: asc.ConstExpr[bool], check: asc.ConstExpr[bool]):
    lanes = 32 // in_sum.dtype.sizeof()
    exp_lanes = 32 // x.dtype.sizeof()
    x_gm, s_gm, m_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    y_gm, os_gm, om_gm, oe_gm = (asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(),
                                 asc.GlobalTensor())
    x_gm.set_global_buffer(x)
    s_gm.set_global_buffer(in_sum)
    m_gm.set_global_buffer(in_max)
    y_gm.set_global_buffer(y)
    os_gm.set_global_buffer(out_sum)
    om_gm.set_global_buffer(out_max)
    oe_gm.set_global_buffer(out_exp)
    pipe = asc.TPipe()
    xb, yb, sb = asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC), \
        asc.TBuf(asc.TPosition.VECCALC)
    mb, eb, tb = asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC), \
        asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=xb, len=rows * cols * x.dtype.sizeof())
    pipe.init_buffer(buf=yb, len=rows * cols * x.dtype.sizeof())
    pipe.init_buffer(buf=sb, len=rows * 32)
    pipe.init_buffer(buf=mb, len=rows * 32)
    pipe.init_buffer(buf=eb, len=rows * 32)
    pipe.init_buffer(buf=tb, len=4096)
    x_ub, y_ub = xb.get(x.dtype), yb.get(x.dtype)
    s_ub, m_ub, e_ub = sb.get(in_sum.dtype), mb.get(in_sum.dtype), eb.get(x.dtype)
    asc.data_copy(x_ub, x_gm, count=rows * cols)
    if update:
        asc.data_copy(s_ub, s_gm, count=rows * lanes)
        asc.data_copy(m_ub, m_gm, count=rows * lanes)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    shape = asc.adv.SoftMaxShapeInfo(rows, cols, rows, cols)
    config = asc.adv.SoftmaxConfig(check, rows, cols)
    asc.adv.softmax_flash_v2(y_ub, s_ub, m_ub, x_ub, e_ub, s_ub, m_ub, tiling, shape,
                             shared_tmp_buffer=tb.get(asc.uint8), is_update=update,
                             is_basic_block=True, config=config)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(y_gm, y_ub, count=rows * cols)
    asc.data_copy(os_gm, s_ub, count=rows * lanes)
    asc.data_copy(om_gm, m_ub, count=rows * lanes)
    if update:
        asc.data_copy(oe_gm, e_ub, count=rows * exp_lanes)


def _tiling(rows=ROWS, cols=COLS):
    return asc.adv.SoftmaxTiling(src_m=rows, src_k=cols, src_size=rows * cols, split_m=rows,
                                 split_k=cols, split_size=rows * cols, range_m=1)


def _call(x, state_dtype, in_sum=None, in_max=None, update=False, tiling=None, check=False):
    rows, cols = x.shape
    lanes = 32 // np.dtype(state_dtype).itemsize
    exp_lanes = 32 // x.dtype.itemsize
    in_sum = np.zeros((rows, lanes), state_dtype) if in_sum is None else in_sum
    in_max = np.zeros((rows, lanes), state_dtype) if in_max is None else in_max
    y = np.zeros_like(x)
    out_sum, out_max = np.zeros_like(in_sum), np.zeros_like(in_max)
    out_exp = np.zeros((rows, exp_lanes), x.dtype)
    report = _flash[1](x, in_sum, in_max, y, out_sum, out_max, out_exp,
                       tiling or _tiling(rows, cols), rows, cols, update, check)
    assert report.findings == [], [f.format() for f in report.findings]
    return y, out_sum, out_max, out_exp


def test_first_form_half_data_float_state():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, (ROWS, COLS)).astype(np.float16)
    y, s, m, _ = _call(x, np.float32)
    xf = x.astype(np.float32)
    ref_max = xf.max(axis=1)
    ref_exp = np.exp(xf - ref_max[:, None])
    np.testing.assert_array_equal(m, np.repeat(ref_max[:, None], 8, axis=1))
    np.testing.assert_allclose(y.astype(np.float32), ref_exp, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(s[:, 0], ref_exp.sum(axis=1), rtol=1e-5)
    assert (s == s[:, :1]).all()  # one value per row, repeated over the 32-byte block


def test_update_form_chains_two_tiles_into_the_full_row_softmax():
    rng = np.random.default_rng(1)
    full = rng.normal(0, 3, (ROWS, 2 * COLS)).astype(np.float16)
    # Make the second tile hold the larger maxima in some rows, the first in others.
    full[::2, COLS:] += np.float16(4)
    first, second = full[:, :COLS].copy(), full[:, COLS:].copy()
    _, s1, m1, _ = _call(first, np.float32)
    y2, s2, m2, e2 = _call(second, np.float32, s1, m1, update=True)
    xf = full.astype(np.float32)
    g_max = xf.max(axis=1)
    np.testing.assert_array_equal(m2[:, 0], g_max)
    np.testing.assert_allclose(s2[:, 0], np.exp(xf - g_max[:, None]).sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(e2.astype(np.float32),
                               np.repeat(np.exp(m1[:, :1] - g_max[:, None]), 16, axis=1),
                               rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(y2.astype(np.float32),
                               np.exp(second.astype(np.float32) - g_max[:, None]),
                               rtol=1e-3, atol=1e-3)


def test_all_float32_form():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 2, (ROWS, COLS)).astype(np.float32)
    y, s, m, _ = _call(x, np.float32)
    ref = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, ref, rtol=1e-6)
    np.testing.assert_allclose(s[:, 0], ref.sum(axis=1), rtol=1e-6)


def test_unchecked_tiling_for_another_shape_is_an_error():
    x = np.zeros((ROWS, COLS), np.float16)
    with pytest.raises(KernelError, match="is_check_tiling=False"):
        _call(x, np.float32, tiling=_tiling(ROWS, 2 * COLS), check=False)
    # With the check on, the library recomputes the tiling and the call works.
    y, _, _, _ = _call(x, np.float32, tiling=_tiling(ROWS, 2 * COLS), check=True)
    np.testing.assert_array_equal(y, np.ones_like(y))


def test_float_data_with_half_state_is_refused():
    x = np.zeros((ROWS, COLS), np.float32)
    with pytest.raises(KernelError, match="not a SoftmaxFlashV2 form"):
        _call(x, np.float16)


def test_steps_cost_more_for_the_update_form_and_without_basic_blocks():
    from ascsim.asc.adv.softmax import softmax_flash_v2_steps

    first = softmax_flash_v2_steps(8, 512, True, False, True)
    update = softmax_flash_v2_steps(8, 512, True, True, True)
    rowwise = softmax_flash_v2_steps(8, 512, True, False, False)
    assert len(update) > len(first) and len(rowwise) > len(first)
