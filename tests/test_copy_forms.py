"""data_copy with SliceInfo, Nz2NdParamsFull and DataCopyCO12DstParams against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.isa import KernelError
from ascsim.sim import fractal


@asc.jit
def _slice_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n_ub: asc.ConstExpr[int],
                  to_ub: asc.ConstExpr[tuple], to_gm: asc.ConstExpr[tuple],
                  dim: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=n_ub * 4)
    ub = buf.get(x.dtype)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    asc.data_copy(ub, gx, list(to_ub[0]), list(to_ub[1]), dim)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, ub, slice_list1=list(to_gm[0]), slice_list2=list(to_gm[1]),
                  dim_value=dim)


def test_slice_copy_the_documented_example():
    """Ascend C's example: rows 0 and 2 of a 3 x 87 fp32 array, columns 16..39 and 47..70,
    into a dense 2 x 48 UB tile, then back out to GM at the same places."""
    x = np.arange(3 * 87, dtype=np.float32).reshape(3, 87)
    src = (asc.SliceInfo(16, 70, 7, 3, 87), asc.SliceInfo(0, 2, 1, 1, 3))
    dst = (asc.SliceInfo(0, 47, 0, 3, 48), asc.SliceInfo(0, 1, 0, 1, 2))
    y = np.full((3, 87), -1, np.float32)
    _slice_kernel[1](x.reshape(-1), y.reshape(-1), 96, (dst, src), (src, dst), 2)
    cols = np.r_[16:40, 47:71]
    expected = np.full((3, 87), -1, np.float32)
    expected[np.ix_([0, 2], cols)] = x[np.ix_([0, 2], cols)]
    np.testing.assert_array_equal(y, expected)


def test_slice_copy_rejects_unequal_selections():
    x = np.zeros(64, np.float32)
    bad = ((asc.SliceInfo(0, 15, 0, 2, 16),), (asc.SliceInfo(0, 7, 0, 1, 8),))
    with pytest.raises(KernelError, match="select 16 elements, the destination slices 8"):
        _slice_kernel[1](x, x.copy(), 64, (bad[1], bad[0]), bad, 1)


@asc.jit
def _nz2nd_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int],
                  params: asc.ConstExpr[object]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=n * 2)
    ub = buf.get(x.dtype)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    asc.data_copy(ub, gx, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, ub, params)


def test_nz2nd_the_documented_half_example():
    """nd_num 2, 4 rows x 32 columns, strips 4 blocks apart, matrices 256 elements apart;
    destination rows 160 elements apart, matrices 48 apart."""
    rng = np.random.default_rng(4)
    mats = rng.uniform(-1, 1, (2, 4, 32)).astype(np.float16)
    ub = np.zeros(512, np.float16)
    for i in range(2):
        for c in range(32):
            for j in range(4):
                ub[i * 256 + (c // 16) * 4 * 16 + j * 16 + c % 16] = mats[i, j, c]
    y = np.zeros(4 * 160, np.float16)
    _nz2nd_kernel[1](ub, y, 512, asc.Nz2NdParamsFull(2, 4, 32, 1, 4, 160, 48))
    expected = np.zeros(4 * 160, np.float16)
    for i in range(2):
        for j in range(4):
            expected[i * 48 + j * 160:i * 48 + j * 160 + 32] = mats[i, j]
    np.testing.assert_array_equal(y, expected)


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def _co12_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                 case: asc.ConstExpr[tuple]):
    in_name, out_name, params, word = case
    dt = asc.int8 if in_name == "int8" else asc.float16
    acc = asc.int32 if in_name == "int8" else asc.float32
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    n_in = 512 if in_name == "int8" else 256
    a1 = asc.LocalTensor(dt, asc.TPosition.A1, 0, n_in)
    b1 = asc.LocalTensor(dt, asc.TPosition.B1, 4096, n_in)
    a2 = asc.LocalTensor(dt, asc.TPosition.A2, 0, n_in)
    b2 = asc.LocalTensor(dt, asc.TPosition.B2, 0, n_in)
    c2 = asc.LocalTensor(acc, asc.TPosition.CO1, 0, 256)
    asc.data_copy(a1, a_gm, n_in)
    asc.data_copy(b1, b_gm, n_in)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad(c2, a2, b2, asc.MmadParams(16, 16, 32 if in_name == "int8" else 16, 0, False,
                                        True))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if word is not None:
        asc.set_fix_pipe_pre_quant_flag(word)
    asc.data_copy(c_gm, c2, params)


def _product(in_name):
    rng = np.random.default_rng(8)
    if in_name == "int8":
        a = rng.integers(-20, 20, (16, 32)).astype(np.int8)
        b = rng.integers(-20, 20, (32, 16)).astype(np.int8)
        return a, b, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float64), 32
    a = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    b = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64), 16


def _run_co12(in_name, out_dtype, params, word):
    a, b, exact, c0 = _product(in_name)
    out = np.zeros(256, out_dtype)
    _co12_kernel[1](fractal.nd_to_nz(a, c0).reshape(-1), fractal.nd_to_zn(b, c0).reshape(-1),
                    out, (in_name, np.dtype(out_dtype).name, params, word))
    return exact, out


def test_co12_nd_with_relu_and_fp16_conversion():
    params = asc.DataCopyCO12DstParams(16, 16, 16, 16, asc.QuantModes.F322F16, 1, False, True)
    exact, out = _run_co12("float16", np.float16, params, None)
    np.testing.assert_allclose(out.reshape(16, 16), np.maximum(exact, 0).astype(np.float16),
                               rtol=1e-3, atol=1e-3)


def test_co12_nz_output_keeps_the_strips():
    params = asc.DataCopyCO12DstParams(16, 16, 16, 16)
    exact, out = _run_co12("float16", np.float32, params, None)
    # One 16-column strip: the NZ destination is the 16 x 16 matrix row by row.
    np.testing.assert_allclose(out.reshape(16, 16), exact, rtol=1e-5, atol=1e-5)


def test_co12_scalar_dequant_uses_the_pre_quant_register():
    scale = np.float32(0.01234)
    word = int(scale.view(np.uint32))
    params = asc.DataCopyCO12DstParams(16, 16, 16, 16, asc.QuantModes.DEQF16, 0, False, True)
    exact, out = _run_co12("int8", np.float16, params, word)
    cut = (scale.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    expected = (exact.astype(np.float32) * cut).astype(np.float16)
    np.testing.assert_array_equal(out.reshape(16, 16), expected)


def test_co12_scalar_quant_without_the_register_is_an_error():
    params = asc.DataCopyCO12DstParams(16, 16, 16, 16, asc.QuantModes.DEQF16, 0, False, True)
    with pytest.raises(KernelError, match="never set"):
        _run_co12("int8", np.float16, params, None)
