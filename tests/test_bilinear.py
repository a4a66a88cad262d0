"""bilinear_interpolation against a plain-loop numpy reference, and TBuf's queue methods."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

H, V = 2, 2


def _reference(out, src0, offsets, src1, mask, repeat_mode, blk_stride, v_offset):
    """Element by element: products rounded to fp16, sums of the h repeats in fp16."""
    out = out.copy()
    for i in range(V):
        acc = np.zeros(128, np.float16)
        for j in range(H):
            t = i * H + j
            for b in range(8):
                start = int(offsets[t * 8 + b]) // 2
                scale = src1[t * 8 + b] if repeat_mode else src1[t]
                for e in range(16):
                    p = np.float16(np.float32(src0[start + e]) * np.float32(scale))
                    acc[b * 16 + e] = p if j == 0 else np.float16(np.float32(acc[b * 16 + e]) +
                                                                  np.float32(p))
        for pos in range(mask):
            out[i * v_offset + (pos // 16) * blk_stride * 16 + pos % 16] = acc[pos]
    return out


@pytest.mark.parametrize("repeat_mode", [False, True])
@pytest.mark.parametrize("mask, blk_stride, v_offset", [(128, 1, 128), (100, 2, 256)])
def test_bilinear_interpolation(repeat_mode, mask, blk_stride, v_offset):
    rng = np.random.default_rng(7)
    src0 = rng.uniform(-10, 10, 512).astype(np.float16)
    offsets = (rng.permutation(32) * 32).astype(np.uint32)  # gathered out of order
    src1 = rng.uniform(-2, 2, 32).astype(np.float16)
    out = rng.uniform(-1, 1, 1024).astype(np.float16)

    def body(d, s0, off, s1):
        asc.bilinear_interpolation(d, s0, off, s1, mask, H, repeat_mode, blk_stride, v_offset, V,
                                   None)

    got, _ = run_vector(body, out, src0, offsets, src1)
    expected = _reference(out, src0, offsets, src1, mask, repeat_mode, blk_stride, v_offset)
    np.testing.assert_array_equal(got, expected)


def test_bilinear_interpolation_checks_its_offsets():
    x = np.zeros(256, np.float16)
    offsets = np.full(32, 3, np.uint32)
    with pytest.raises(KernelError, match="not a multiple of the element size"):
        run_vector(lambda d, s0, off, s1: asc.bilinear_interpolation(
            d, s0, off, s1, 128, 1, False, 1, 128, 1, None), x, x, offsets, x)


@asc.jit
def _tbuf_as_queue(x: asc.GlobalAddress, y: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=256)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    t = buf.alloc_tensor(asc.float32)
    asc.data_copy(t, gx, count=64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.muls(t, t, 2.0, 64)
    buf.enque(t)
    u = buf.deque(asc.float32)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, u, count=64)
    buf.free_tensor(u)


def test_tbuf_queue_methods_hand_out_the_whole_buffer():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    _tbuf_as_queue[1](x, y)
    np.testing.assert_array_equal(y, x * 2)
