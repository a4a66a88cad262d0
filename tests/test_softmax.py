"""asc.adv.softmax against numpy: rows from the tiling or from the source's ShapeInfo."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.sim.errors import KernelError


@asc.jit
def _softmax_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, s: asc.GlobalAddress,
                    m: asc.GlobalAddress, rows: asc.ConstExpr[int], cols: asc.ConstExpr[int],
                    from_shape: asc.ConstExpr[bool], state_dtype: asc.ConstExpr[object]):
    pipe = asc.TPipe()
    b_src, b_dst = asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC)
    b_sum, b_max = asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC)
    n, lanes = rows * cols, 32 // state_dtype.sizeof()
    pipe.init_buffer(buf=b_src, num=n * x.dtype.sizeof())
    pipe.init_buffer(buf=b_dst, num=n * x.dtype.sizeof())
    pipe.init_buffer(buf=b_sum, num=rows * 32)
    pipe.init_buffer(buf=b_max, num=rows * 32)
    src, dst = b_src.get(x.dtype), b_dst.get(x.dtype)
    sum_t, max_t = b_sum.get(state_dtype), b_max.get(state_dtype)
    gx, gy, gs, gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    gs.set_global_buffer(s)
    gm.set_global_buffer(m)
    asc.data_copy(src, gx, count=n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if from_shape:
        src.set_shape_info(asc.ShapeInfo(asc.array(asc.int32, (2, rows // 2, cols))))
        tiling = asc.adv.SoftmaxTiling()
    else:
        tiling = asc.adv.SoftmaxTiling(src_m=rows, src_k=cols)
    asc.adv.softmax(dst, sum_t, max_t, src, tiling)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, dst, count=n)
    asc.data_copy(gs, sum_t, count=rows * lanes)
    asc.data_copy(gm, max_t, count=rows * lanes)


@pytest.mark.parametrize("data, state", [(np.float32, np.float32), (np.float16, np.float16),
                                         (np.float16, np.float32)])
@pytest.mark.parametrize("from_shape", [False, True])
def test_softmax_rows(data, state, from_shape):
    rows, cols = 8, 64
    lanes = 32 // np.dtype(state).itemsize
    x = np.random.default_rng(0).uniform(-4, 4, (rows, cols)).astype(data)
    y = np.zeros_like(x)
    s = np.zeros((rows, lanes), state)
    m = np.zeros((rows, lanes), state)
    _softmax_kernel[1](x, y, s, m, rows, cols, from_shape, asc.DataType(np.dtype(state).name))
    x64 = x.astype(np.float64)
    row_max = x64.max(axis=1, keepdims=True)
    e = np.exp(x64 - row_max)
    row_sum = e.sum(axis=1, keepdims=True)
    tol = 2e-3 if data == np.float16 else 1e-6
    np.testing.assert_allclose(y.astype(np.float64), e / row_sum, rtol=tol, atol=tol)
    np.testing.assert_allclose(m.astype(np.float64), np.repeat(row_max, lanes, axis=1))
    np.testing.assert_allclose(s.astype(np.float64), np.repeat(row_sum, lanes, axis=1),
                               rtol=tol if state == np.float16 else 1e-5)


@asc.jit
def _no_shape(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4096)
    t = buf.get(asc.float32)
    asc.adv.softmax(t, t[512:], t[768:], t, asc.adv.SoftmaxTiling())


def test_softmax_without_any_shape_is_refused():
    with pytest.raises(KernelError, match="the source has no ShapeInfo"):
        _no_shape[1](np.zeros(8, np.float32))


def test_shape_info_holds_its_shapes():
    info = asc.ShapeInfo((4, 16), data_format=asc.DataFormat.NZ)
    assert info.shape == info.original_shape == (4, 16) and info.shape_dim == 2
    assert info.data_format == asc.DataFormat.NZ
    with pytest.raises(ValueError, match="negative dimension"):
        asc.ShapeInfo((4, -1))


def test_get_shape_size_multiplies_the_dimensions():
    shape = (2, 3, 7)
    assert asc.get_shape_size(asc.ShapeInfo(asc.array(asc.int32, shape))) == np.prod(shape)
    assert asc.get_shape_size(asc.ShapeInfo()) == 1
    with pytest.raises(TypeError, match="expects a ShapeInfo"):
        asc.get_shape_size((2, 3))
