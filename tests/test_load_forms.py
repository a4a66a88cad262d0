"""load_data with LoadData2DParamsV2 / LoadData3DParamsV2Pro / LoadData3DParamsV1 and
load_data_with_transpose with LoadData2dTransposeParamsV2, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from test_fused_conv import _l0a_to_matrix, im2col_reference

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.isa import KernelError
from ascsim.session import SESSION


@pytest.fixture
def soc():
    previous = SESSION.soc
    yield lambda name: SESSION.set_soc(name)
    SESSION.set_soc(previous)


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def _load_kernel(x: asc.GlobalAddress, n_src: asc.ConstExpr[int], n_dst: asc.ConstExpr[int],
                 call: asc.ConstExpr[object], out: asc.ConstExpr[dict],
                 to_l0b: asc.ConstExpr[bool] = False):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    l1 = asc.LocalTensor(x.dtype, asc.TPosition.B1 if to_l0b else asc.TPosition.A1, 0, n_src)
    l0 = asc.LocalTensor(x.dtype, asc.TPosition.B2 if to_l0b else asc.TPosition.A2, 0, n_dst)
    l0.elements(0, n_dst, None)[:] = 0
    asc.data_copy(l1, x_gm, n_src)
    call(l0, l1)
    out["dst"] = l0.elements(0, n_dst, None).copy()


@pytest.mark.parametrize("transpose", [False, True])
def test_load_2d_v2_moves_the_window_of_fractals(soc, transpose):
    soc("Ascend950PR_9579")
    per = 256  # fp16 fractal: 16 x 16
    src = np.random.default_rng(6).uniform(-9, 9, 30 * per).astype(np.float16)
    p = asc.LoadData2DParamsV2(1, 1, 2, 3, 5, 4, transpose, 0)
    out = {}
    _load_kernel[1](src, src.size, 12 * per, lambda d, s: asc.load_data(d, s, p), out)
    expected = np.zeros(12 * per, np.float16)
    for j in range(3):
        for i in range(2):
            frac = src[((1 + j) * 5 + 1 + i) * per:][:per].reshape(16, 16)
            expected[(j * 4 + i) * per:][:per] = (frac.T if transpose else frac).reshape(-1)
    np.testing.assert_array_equal(out["dst"], expected)


def test_load_2d_v2_is_a_950_form(soc):
    soc("Ascend910B1")
    p = asc.LoadData2DParamsV2(0, 0, 1, 1, 1, 1, False, 0)
    with pytest.raises(KernelError, match="no LoadData 2D v2"):
        _load_kernel[1](np.zeros(256, np.float16), 256, 256,
                        lambda d, s: asc.load_data(d, s, p), {})


def test_transpose_v2_skips_src_frac_gap_fractals(soc):
    """fp32 squares are two 16 x 8 fractals; with src_frac_gap=2 the second one lies two
    fractals after the first: the result equals V1's on the same data laid out without gap."""
    soc("Ascend950PR_9579")
    per = 128  # fp32 fractal
    rng = np.random.default_rng(7)
    halves = rng.uniform(-9, 9, (2, per)).astype(np.float32)
    gapped = np.zeros(4 * per, np.float32)
    gapped[:per], gapped[3 * per:] = halves
    tight = halves.reshape(-1)

    def with_gap(d, s):
        asc.load_data_with_transpose(d, s, asc.LoadData2dTransposeParamsV2(0, 1, 0, 0, 0, 2, 0))

    def without_gap(d, s):
        asc.load_data_with_transpose(d, s, asc.LoadData2dTransposeParams(0, 1, 0, 0, 0, 0))

    got, want = {}, {}
    _load_kernel[1](gapped, gapped.size, 2 * per, with_gap, got, True)
    _load_kernel[1](tight, tight.size, 2 * per, without_gap, want, True)
    square = np.concatenate([halves[0].reshape(16, 8), halves[1].reshape(16, 8)], axis=1)
    np.testing.assert_array_equal(got["dst"], want["dst"])
    # ... and V1's result is the transposed 16 x 16 square, as two 8 x 16 fractals.
    np.testing.assert_array_equal(np.sort(got["dst"]), np.sort(square.T.reshape(-1)))


@pytest.mark.parametrize("name", ["Ascend910B1", "Ascend950PR_9579"])
def test_load_3d_v2_pro_unpacks_its_config_words(soc, name):
    spec = soc(name)
    c0, c1, h, w = 16, 2, 6, 7
    fmap = np.random.default_rng(2).uniform(-4, 4, (c1, h, w, c0)).astype(np.float16)
    mn, kn, m0, k0 = 32, 64, 3, 16
    ext = m0 << 48 | k0 << 32 | mn << 16 | kn
    flt = 1 << 40 | 1 << 32 | 3 << 24 | 2 << 16 | 1 << 8 | 2  # dil 1x1, filter 3x2, stride 1x2
    p = asc.LoadData3DParamsV2Pro(c1 * c0, False, False, False, False, False, ext, flt)

    def call(d, s):
        asc.set_fmatrix(h, w, [1, 2, 1, 0])
        asc.set_load_data_padding_value(0)
        asc.load_data(d, s, p)

    out = {}
    _load_kernel[1](fmap.reshape(-1), fmap.size, mn * kn, call, out)
    full = im2col_reference(fmap, (1, 2, 1, 0), (1, 2), (3, 2), (1, 1))
    got = _l0a_to_matrix(out["dst"], mn, kn, c0, spec.npu_arch)
    want = full[m0:m0 + mn, k0:k0 + kn]
    np.testing.assert_array_equal(got[: want.shape[0]], want)


def test_load_3d_v1_is_not_on_the_simulated_socs(soc):
    soc("Ascend910B1")
    p = asc.LoadData3DParamsV1((0, 0, 0, 0), 16, 16, 0, 0, 0, 0, 0, 1, 1, 3, 3, 1, 1, 1, 0, 1,
                               0, 0)
    with pytest.raises(KernelError, match="has Load3D v2 only"):
        _load_kernel[1](np.zeros(256, np.float16), 256, 256,
                        lambda d, s: asc.load_data(d, s, p), {})


def test_load_2d_v2_indices_are_shared_and_read_only():
    """Each record keeps its indices until the launch ends: equal loads share one pair."""
    from ascsim.asc.basic.load_forms import _load_2d_v2_indices

    first = _load_2d_v2_indices(256, True, 1, 8, 3, 0, 8, 1)
    assert _load_2d_v2_indices(256, True, 1, 8, 3, 0, 8, 1) is first
    src, dst = first
    assert not src.flags.writeable and not dst.flags.writeable
    # Strip 3 of a transposed 8-fractal column: fractal (k, 3) of an 8-wide source.
    assert src[0, 0, 1] == (0 * 8 + 3) * 256 + 16 and dst[0, 0, 1] == 1
    assert src[7, 0, 0] == (7 * 8 + 3) * 256
