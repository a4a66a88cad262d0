"""``asc.bilinear_interpolation``: gathered blocks scaled and summed (Ascend C
BilinearInterpolation), one :class:`~ascsim.isa.instr.VectorSequence` record.

``v_repeat`` vertical iterations of ``h_repeat`` horizontal ones each. Horizontal iteration
``t`` (counted over all of them) reads eight byte offsets ``src0_offset[8t : 8t + 8]``, each
the start of a 32-byte block of ``src0``; the eight blocks (one repeat of 256 bytes) are
multiplied by ``src1[t]`` (``repeat_mode`` False) or block ``b`` by ``src1[8t + b]`` (True).
The ``h_repeat`` products of a vertical iteration are summed, in the element type, into eight
blocks of ``dst`` starting ``v_r_offset`` elements after the previous vertical iteration's,
``dst_blk_stride`` blocks apart. ``mask`` picks the positions of the repeat that are written.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.context import current_core, user_location
from ascsim.isa import REPEAT_BYTES, KernelError, VectorSequence, mask_positions

BLOCK = 32
BLOCKS = 8  # blocks per horizontal iteration


def bilinear_interpolation(dst, src0, src0_offset, src1, mask, h_repeat, repeat_mode,
                           dst_blk_stride, v_r_offset, v_repeat, shared_tmp_buffer=None) -> None:
    """``bilinear_interpolation(dst, src0, src0_offset, src1, mask, h_repeat, repeat_mode,
    dst_blk_stride, v_r_offset, v_repeat, shared_tmp_buffer)``."""
    loc = user_location()
    dtype = dst.dtype
    if not dtype.is_float() or src0.dtype != dtype or src1.dtype != dtype:
        raise KernelError(f"bilinear_interpolation: dst, src0 and src1 must be one float type, "
                          f"got {dtype.name}, {src0.dtype.name}, {src1.dtype.name}", loc)
    if src0_offset.dtype.name != "uint32":
        raise KernelError(f"bilinear_interpolation: src0_offset holds uint32 byte offsets, got "
                          f"{src0_offset.dtype.name}", loc)
    h, v = int(h_repeat), int(v_repeat)
    stride, v_offset = int(dst_blk_stride), int(v_r_offset)
    if h <= 0 or v <= 0:
        raise KernelError(f"bilinear_interpolation: h_repeat ({h}) and v_repeat ({v}) must be "
                          "positive", loc)
    size = dtype.sizeof()
    per_block = BLOCK // size
    positions = mask_positions(mask, REPEAT_BYTES // size, loc)
    blocks_read = v * h * BLOCKS
    scales = blocks_read if repeat_mode else v * h
    np_dtype = dtype.np_dtype
    written = (np.arange(v)[:, None] * v_offset
               + (positions // per_block * stride * per_block + positions % per_block)[None, :])
    lane = np.arange(per_block)

    def fn(data, offsets, scale):
        offsets = offsets.astype(np.int64)
        if (offsets % size).any():
            raise KernelError(f"bilinear_interpolation: byte offset {int(offsets[0])} is not a "
                              f"multiple of the element size {size}", loc)
        starts = offsets // size
        if starts.size and (starts.min() < 0 or starts.max() + per_block > data.size):
            raise KernelError("bilinear_interpolation: an offset points outside src0", loc)
        rows = []
        for i in range(v):
            acc = None
            for j in range(h):
                t = i * h + j
                repeat = data[starts[t * BLOCKS:(t + 1) * BLOCKS, None] + lane].astype(np.float32)
                factor = (np.repeat(scale[t * BLOCKS:(t + 1) * BLOCKS], per_block) if repeat_mode
                          else scale[t]).astype(np.float32)
                product = (repeat.reshape(-1) * factor).astype(np_dtype)  # vmul rounds
                acc = product if acc is None else (
                    acc.astype(np.float32) + product.astype(np.float32)).astype(np_dtype)
            rows.append(acc[positions])
        return written.reshape(-1), np.concatenate(rows)

    extent = int(written.max()) + 1 if written.size else 0
    scratch = () if shared_tmp_buffer is None else (shared_tmp_buffer.region(),)
    current_core().execute(VectorSequence(
        "bilinear_interpolation", dst.region(extent),
        (src0.region(), src0_offset.region(blocks_read), src1.region(scales)), fn,
        ("transpose", "mul", "add"), v * h, np_dtype.name, loc, (), scratch))


__all__ = ["bilinear_interpolation"]
