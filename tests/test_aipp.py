"""AIPP: set_aipp_functions + load_image_to_local against numpy references written from the
Ascend C / ACL descriptions (plain loops over pixels)."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.isa import KernelError

RNG = np.random.default_rng(12)


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def _aipp_kernel(img: asc.GlobalAddress, uv: asc.GlobalAddress, setup: asc.ConstExpr[tuple],
                 n_out: asc.ConstExpr[int], out_dtype: asc.ConstExpr[object],
                 out: asc.ConstExpr[dict]):
    fmt, params, load = setup
    g0, g1 = asc.GlobalTensor(), asc.GlobalTensor()
    g0.set_global_buffer(img)
    g1.set_global_buffer(uv)
    l1 = asc.LocalTensor(out_dtype, asc.TPosition.A1, 0, n_out)
    if fmt == asc.AippInputFormat.YUV420SP_U8:
        asc.set_aipp_functions(g0, g1, fmt, params)
    else:
        asc.set_aipp_functions(g0, fmt, params)
    asc.load_image_to_local(l1, load)
    out["img"] = l1.elements(0, n_out, None).copy()


def _run(image, uv, fmt, params, load, out_dtype, shape):
    out = {}
    n = int(np.prod(shape))
    _aipp_kernel[1](image.reshape(-1), uv.reshape(-1), (fmt, params, load), n, out_dtype, out)
    return out["img"].reshape(shape)


def test_rgb888_crop_swap_mean_and_constant_padding_to_int8():
    h, w = 6, 10
    image = RNG.integers(0, 256, (h, w, 3)).astype(np.uint8)
    params = asc.AippParams(
        asc.int8, padding_params=asc.AippPaddingParams(0, -1, -2, -3, -4),
        swap_params=asc.AippSwapParams(is_swap_rb=True),
        dtc_params=asc.AippDataTypeConvParams(100, 50, 10),
        c_padding_params=asc.AippChannelPaddingParams(0, 7))
    load = asc.LoadImageToLocalParams(4, 3, 2, 1, w, 0, 0, 1, 2)
    got = _run(image, np.zeros(32, np.uint8), asc.AippInputFormat.RGB888_U8, params, load,
               asc.int8, (3, 7, 32))
    expected = np.full((3, 7, 32), 7, np.int8)
    for r in range(3):
        for c in range(7):
            if c < 1 or c >= 5:
                expected[r, c, :3] = (-1, -2, -3)
                continue
            rgb = image[1 + r, 2 + c - 1].astype(int)
            bgr = rgb[::-1]
            expected[r, c, :3] = np.clip(bgr - np.array([100, 50, 10]), -128, 127)
    np.testing.assert_array_equal(got, expected)


def test_yuv420sp_to_rgb_with_the_colour_space_matrix():
    h, w = 4, 8
    y = RNG.integers(16, 236, (h, w)).astype(np.uint8)
    uv = RNG.integers(16, 240, (h // 2, w)).astype(np.uint8)
    m = ((256, 0, 359), (256, -88, -183), (256, 454, 0))
    csc = asc.AippColorSpaceConvParams(True, *m[0], *m[1], *m[2], 0, 0, 0, 0, 128, 128)
    params = asc.AippParams(asc.int8, csc_params=csc,
                            c_padding_params=asc.AippChannelPaddingParams(1, 0))
    load = asc.LoadImageToLocalParams(w, h, 0, 0, w)
    got = _run(y, uv, asc.AippInputFormat.YUV420SP_U8, params, load, asc.uint8, (h, w, 4))
    expected = np.zeros((h, w, 4), np.uint8)
    for r in range(h):
        for c in range(w):
            yuv = np.array([y[r, c], uv[r // 2, (c // 2) * 2], uv[r // 2, (c // 2) * 2 + 1]],
                           dtype=np.int64) - np.array([0, 128, 128])
            rgb = (np.array(m, dtype=np.int64) @ yuv) >> 8
            expected[r, c, :3] = np.clip(rgb, 0, 255)
    np.testing.assert_array_equal(got, expected)


def test_fp16_normalisation_and_edge_padding():
    h, w = 5, 6
    image = RNG.integers(0, 256, (h, w)).astype(np.uint8)
    dtc = asc.AippDataTypeConvParams(120, 0, 0, 0.5, 0, 0, 1 / 255, 1, 1)
    params = asc.AippParams(asc.float16, padding_params=asc.AippPaddingParams(1),
                            dtc_params=dtc)
    load = asc.LoadImageToLocalParams(3, 2, 1, 2, w, 1, 1, 2, 0)
    got = _run(image, np.zeros(32, np.uint8), asc.AippInputFormat.YUV400_U8, params, load,
               asc.float16, (4, 5, 16))
    win = image[2:4, 1:4].astype(np.float32)
    norm = ((win - 120 - np.float32(np.float16(0.5))) * np.float32(np.float16(1 / 255)))
    norm = norm.astype(np.float16)
    padded = np.pad(norm, ((1, 1), (2, 0)), mode="edge")
    expected = np.zeros((4, 5, 16), np.float16)
    expected[..., 0] = padded
    np.testing.assert_array_equal(got, expected)


def test_block_padding_modes_are_reported_as_not_modelled():
    params = asc.AippParams(asc.int8, padding_params=asc.AippPaddingParams(2))
    load = asc.LoadImageToLocalParams(2, 2, 0, 0, 4, 0, 0, 1, 1)
    with pytest.raises(KernelError, match="padding_mode 2"):
        _run(np.zeros((4, 4, 3), np.uint8), np.zeros(32, np.uint8),
             asc.AippInputFormat.RGB888_U8, params, load, asc.int8, (2, 4, 32))


def test_set_aipp_functions_alone_changes_nothing_data_copy_moves():
    """pyasc's own AIPP test: configuring AIPP does not touch a plain data_copy."""
    @asc.jit
    def kern(x: asc.GlobalAddress, z: asc.GlobalAddress):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=768)
        ub = buf.get(asc.int8)
        gx, gz = asc.GlobalTensor(), asc.GlobalTensor()
        gx.set_global_buffer(x)
        gz.set_global_buffer(z)
        asc.set_aipp_functions(gx, asc.AippInputFormat.RGB888_U8,
                               asc.AippParams(asc.int8, swap_params=asc.AippSwapParams(True)))
        asc.data_copy(ub, gx, 768)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(gz, ub, 768)

    x = RNG.integers(0, 127, 768).astype(np.int8)
    z = np.zeros_like(x)
    kern[1](x, z)
    np.testing.assert_array_equal(z, x)
