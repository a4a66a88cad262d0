"""Configuration registers read by later instructions: HF32 (Mmad), set_pad_value
(data_copy_pad), set_load_data_repeat / set_load_data_boundary (Load3D v2), against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from test_fused_conv import _l0a_to_matrix, im2col_reference

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.isa import KernelError
from ascsim.session import SESSION
from ascsim.sim import fractal


@pytest.fixture
def soc():
    previous = SESSION.soc
    yield lambda name: SESSION.set_soc(name)
    SESSION.set_soc(previous)


# ------------------------------------------------------------------------------ HF32
def hf32_reference(x: np.ndarray, ties: str) -> np.ndarray:
    """Round to 11 significant bits (10 stored) via frexp: the spacing at x is 2**(e - 11)."""
    x = x.astype(np.float64)
    _, e = np.frexp(x)
    q = np.ldexp(1.0, e - 11)
    scaled = x / q
    if ties == "even":
        r = np.rint(scaled)
    else:
        r = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    return r * q


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def _hf32_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                 mode: asc.ConstExpr[object]):
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    a1 = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, 128)
    b1 = asc.LocalTensor(asc.float32, asc.TPosition.B1, 4096, 128)
    a2 = asc.LocalTensor(asc.float32, asc.TPosition.A2, 0, 128)
    b2 = asc.LocalTensor(asc.float32, asc.TPosition.B2, 0, 128)
    c2 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    asc.data_copy(a1, a_gm, 128)
    asc.data_copy(b1, b_gm, 128)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if mode is not None:
        asc.set_hf32_mode(True)
        asc.set_hf32_trans_mode(mode == "away")
    asc.mmad(c2, a2, b2, asc.MmadParams(16, 16, 8, 0, False, True))
    asc.set_hf32_mode(False)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(c_gm, c2, asc.FixpipeParamsV220(16, 16, 16, 16))


@pytest.mark.parametrize("mode", [None, "even", "away"])
def test_mmad_rounds_fp32_inputs_to_hf32(mode):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 16)).astype(np.float32)
    a[0, :] = 1 + 2.0**-11  # exact ties: even rounds down, away rounds up
    b[:, 0] = 1.0
    # One fractal each: A's 16x8 block and B's ZN block are the whole matrices.
    a_flat = fractal.nd_to_nz(a, 8).reshape(-1)
    b_flat = fractal.nd_to_zn(b, 8).reshape(-1)
    c = np.zeros((16, 16), np.float32)
    _hf32_kernel[1](a_flat, b_flat, c, mode)
    if mode is None:
        ref = a.astype(np.float64) @ b.astype(np.float64)
    else:
        ref = hf32_reference(a, mode) @ hf32_reference(b, mode)
    np.testing.assert_allclose(c, ref, rtol=2e-6, atol=2e-6)
    expected_corner = 8.0 if mode == "even" else 8 * (1 + 2.0**-10) if mode == "away" else None
    if expected_corner is not None:
        assert c[0, 0] == np.float32(expected_corner)


# ------------------------------------------------------------------------------ set_pad_value
@asc.jit
def _pad_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, value: asc.ConstExpr[object]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=256)
    ub = buf.get(asc.float16)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    asc.duplicate(ub, 0.0, 128)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if value is not None:
        asc.set_pad_value(value)
    asc.data_copy_pad(ub, gx, asc.DataCopyExtParams(2, 20, 0, 0, 0),
                      asc.DataCopyPadExtParams(False, 2, 4, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, ub, 32)


def test_set_pad_value_fills_the_padding_of_is_pad_false_copies():
    x = np.arange(1, 21, dtype=np.float16)
    y = np.zeros(32, np.float16)
    _pad_kernel[1](x, y, 7.5)
    expected = np.zeros(32, np.float16)
    for row in range(2):
        base = row * 16
        expected[base:base + 2] = 7.5
        expected[base + 2:base + 12] = x[row * 10:(row + 1) * 10]
        expected[base + 12:base + 16] = 7.5
    np.testing.assert_array_equal(y, expected)


def test_set_pad_value_rejects_a_cube_position():
    @asc.jit
    def kern():
        asc.set_pad_value(1.0, asc.TPosition.A1)

    with pytest.raises(KernelError, match="set_pad_value: pos must be one of"):
        kern[1]()


# ------------------------------------------------------------------------------ Load3D
def _load3d_kernel():
    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(x: asc.GlobalAddress, geom: asc.ConstExpr[tuple], out: asc.ConstExpr[dict]):
        c1, h, w, c0, mn, kn, repeat, where, boundary, rows_cols = geom
        x_gm = asc.GlobalTensor()
        x_gm.set_global_buffer(x)
        size = c1 * h * w * c0
        l1 = asc.LocalTensor(x.dtype, asc.TPosition.A1, where, size)
        l0a = asc.LocalTensor(x.dtype, asc.TPosition.A2, 0, rows_cols)
        if boundary:  # the part past the boundary lives at the start of L1
            first = (boundary - where) // x.dtype.sizeof()
            asc.data_copy(l1, x_gm, first)
            low = asc.LocalTensor(x.dtype, asc.TPosition.A1, 0, size - first)
            asc.data_copy(low, x_gm[first:], size - first)
            asc.set_load_data_boundary(boundary)
        else:
            asc.data_copy(l1, x_gm, size)
        asc.set_fmatrix(h, w, [1, 1, 1, 1])
        asc.set_load_data_padding_value(0)
        asc.set_load_data_repeat(asc.LoadDataRepeatParam(repeat[0], repeat[1], repeat[2]))
        asc.load_data(l0a, l1, asc.LoadData3DParamsV2(
            channel_size=c1 * c0, k_extension=kn, m_extension=mn, k_start_pt=0,
            m_start_pt=0, stride_w=1, stride_h=1, filter_w=3, filter_h=3,
            dilation_filter_w=1, dilation_filter_h=1), asc.IsResetLoad3dConfig(False, False))
        out["l0a"] = l0a.elements(0, rows_cols, None).copy()
    return kern


LOAD3D = _load3d_kernel()


@pytest.mark.parametrize("name", ["Ascend910B1", "Ascend950PR_9579"])
@pytest.mark.parametrize("repeat", [(1, 0, 0), (3, 1, 0), (2, 1, 1)])
def test_load3d_repeat_stacks_the_windows(soc, name, repeat):
    spec = soc(name)
    c0, c1, h, w = 16, 2, 8, 8
    mn, kn = 32, 48
    times, stride, mode = repeat
    fmap = np.random.default_rng(2).uniform(-4, 4, (c1, h, w, c0)).astype(np.float16)
    rows, cols = (mn * times, kn) if mode == 0 else (mn, kn * times)
    out = {}
    LOAD3D[1](fmap.reshape(-1), (c1, h, w, c0, mn, kn, repeat, 0, 0, rows * cols), out)
    full = im2col_reference(fmap, (1, 1, 1, 1), (1, 1), (3, 3), (1, 1))
    got = _l0a_to_matrix(out["l0a"], rows, cols, c0, spec.npu_arch)
    for r in range(times):
        if mode == 0:
            want = full[r * stride * 16:r * stride * 16 + mn, :kn]
            assert np.array_equal(got[r * mn:(r + 1) * mn], want)
        else:
            want = full[:mn, r * stride * c0:r * stride * c0 + kn]
            assert np.array_equal(got[:, r * kn:(r + 1) * kn], want)


def test_load3d_wraps_source_addresses_at_the_boundary(soc):
    spec = soc("Ascend910B1")
    c0, c1, h, w = 16, 1, 8, 8
    mn, kn = 64, 144
    fmap = np.random.default_rng(3).uniform(-4, 4, (c1, h, w, c0)).astype(np.float16)
    boundary = 65536
    where = boundary - 1024  # the first 512 elements below the boundary, the rest wrap
    out = {}
    LOAD3D[1](fmap.reshape(-1), (c1, h, w, c0, mn, kn, (1, 0, 0), where, boundary, mn * kn),
              out)
    full = im2col_reference(fmap, (1, 1, 1, 1), (1, 1), (3, 3), (1, 1))
    got = _l0a_to_matrix(out["l0a"], mn, kn, c0, spec.npu_arch)
    assert np.array_equal(got, full[:mn, :kn])
