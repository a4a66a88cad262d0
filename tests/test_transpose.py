"""transpose (16x16, NCHW<->NHWC) and trans_data_to_5hd (NCHW -> NC1HWC0) against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

B16 = [np.float16, np.int16, np.uint16]


def _data(dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype)
    return rng.integers(0, 1000, n).astype(dtype)


@pytest.mark.parametrize("dtype", B16)
def test_transpose_16x16(dtype):
    x = _data(dtype, 256)
    got, _ = run_vector(lambda d, s: asc.transpose(d, s), np.zeros(256, dtype), x)
    np.testing.assert_array_equal(got, x.reshape(16, 16).T.reshape(-1))


def test_transpose_needs_16_bit_elements():
    x = np.zeros(256, np.float32)
    with pytest.raises(KernelError, match="16-bit elements, got float32"):
        run_vector(lambda d, s: asc.transpose(d, s), x, x)


@pytest.mark.parametrize("kind, src_shape, axes", [
    (asc.TransposeType.TRANSPOSE_NCHW2NHWC, (2, 16, 4, 8), (0, 2, 3, 1)),
    (asc.TransposeType.TRANSPOSE_NHWC2NCHW, (2, 4, 8, 16), (0, 3, 1, 2)),
])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_transpose_ext_layouts(kind, src_shape, axes, dtype):
    x = _data(dtype, int(np.prod(src_shape)), seed=1)
    n, c = src_shape[0], src_shape[1 if axes == (0, 2, 3, 1) else 3]
    h, w = (src_shape[2], src_shape[3]) if axes == (0, 2, 3, 1) else src_shape[1:3]

    def body(d, s, tmp):
        params = asc.TransposeParamsExt(n_size=n, c_size=c, h_size=h, w_size=w,
                                        transpose_type=kind)
        asc.transpose(d, s, tmp, params)

    got, _ = run_vector(body, np.zeros(x.size, dtype), x, np.zeros(1024, np.uint8))
    np.testing.assert_array_equal(got, x.reshape(src_shape).transpose(axes).reshape(-1))


def test_transpose_ext_refuses_other_types():
    x = np.zeros(256, np.float16)

    def body(d, s, tmp):
        params = asc.TransposeParamsExt(1, 16, 4, 4, asc.TransposeType.TRANSPOSE_NZ2ND_0213)
        asc.transpose(d, s, tmp, params)

    with pytest.raises(KernelError, match="TRANSPOSE_NZ2ND_0213 is not a transpose of this API"):
        run_vector(body, x, x, np.zeros(64, np.uint8))


C, H, W = 32, 8, 8  # two C1 groups of 16 channels, four repeats of 16 positions


def _to_5hd_params():
    return asc.TransDataTo5HDParams(dst_high_half=False, src_high_half=False,
                                    repeat_times=H * W // 16, dst_rep_stride=16, src_rep_stride=1)


def _expected_5hd(x):
    return x.reshape(1, C // 16, 16, H, W).transpose(0, 1, 3, 4, 2).reshape(-1)


@pytest.mark.parametrize("dtype", B16)
@pytest.mark.parametrize("form", ["tensors", "addresses", "address-tensors"])
def test_trans_data_to_5hd(dtype, form):
    x = _data(dtype, C * H * W, seed=2)

    def body(d, s, dst_addr, src_addr):
        for j in range(C // 16):
            base = j * 16 * H * W
            dsts = [d[base + 16 * k] for k in range(16)]
            srcs = [s[base + H * W * i] for i in range(16)]
            if form == "tensors":
                asc.trans_data_to_5hd(dsts, srcs, _to_5hd_params())
                continue
            dst_addrs = [t.get_phy_addr() for t in dsts]
            src_addrs = [t.get_phy_addr() for t in srcs]
            if form == "addresses":
                asc.trans_data_to_5hd(dst_addrs, src_addrs, _to_5hd_params())
                continue
            for i in range(16):
                dst_addr.set_value(i, dst_addrs[i])
                src_addr.set_value(i, src_addrs[i])
            asc.trans_data_to_5hd(dst_addr, src_addr, _to_5hd_params())

    addr = np.zeros(16, np.uint64)
    got, report = run_vector(body, np.zeros(x.size, dtype), x, addr, addr)
    np.testing.assert_array_equal(got, _expected_5hd(x))


def test_trans_data_to_5hd_needs_addresses_of_tensors():
    x = np.zeros(256, np.float16)

    def body(d, s):
        asc.trans_data_to_5hd([4096 + 32 * k for k in range(16)], [32 * i for i in range(16)],
                              _to_5hd_params())

    with pytest.raises(KernelError, match="did not come from a tensor's get_phy_addr"):
        run_vector(body, x, x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
@pytest.mark.parametrize("blk, rep", [(1, 8), (2, 20)])
def test_brcb_fills_a_block_per_element(dtype, blk, rep):
    repeats = 3
    x = _data(dtype, 8 * repeats, seed=4)
    per_block = 32 // np.dtype(dtype).itemsize
    out = np.full((rep * (repeats - 1) + 7 * blk + 1) * per_block, 5, dtype)
    got, _ = run_vector(lambda d, s: asc.brcb(d, s, repeats, asc.BrcbRepeatParams(blk, rep)),
                        out, x)
    expected = out.copy()
    for r in range(repeats):
        for i in range(8):
            block = r * rep + i * blk
            expected[block * per_block:(block + 1) * per_block] = x[r * 8 + i]
    np.testing.assert_array_equal(got, expected)
