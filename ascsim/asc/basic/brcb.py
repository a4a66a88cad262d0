"""``asc.brcb``: broadcast elements to whole blocks (Ascend C Brcb), one
:class:`~ascsim.isa.instr.VectorSequence` record.

Repeat ``r`` reads eight consecutive elements ``src[8r : 8r + 8]``; element ``i`` fills one
32-byte block of ``dst``, block ``r * dst_rep_stride + i * dst_blk_stride``.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.context import current_core, user_location
from ascsim.asc.params import BrcbRepeatParams
from ascsim.isa import KernelError, VectorSequence, check_repeat

BLOCK = 32
PER_REPEAT = 8  # source elements per repeat: one per destination block


def brcb(dst, src, repeat_times, repeat_params: BrcbRepeatParams | None = None) -> None:
    """``brcb(dst, src, repeat_times, BrcbRepeatParams(dst_blk_stride, dst_rep_stride))``."""
    loc = user_location()
    if dst.dtype != src.dtype or dst.dtype.sizeof() not in (2, 4):
        raise KernelError(f"brcb: dst and src must be one 16- or 32-bit type, got "
                          f"{dst.dtype.name}, {src.dtype.name}", loc)
    repeats = check_repeat(repeat_times, loc)
    if repeats == 0:
        return
    params = repeat_params or BrcbRepeatParams()
    per_block = BLOCK // dst.dtype.sizeof()
    blocks = (np.arange(repeats)[:, None] * int(params.dst_rep_stride)
              + np.arange(PER_REPEAT)[None, :] * int(params.dst_blk_stride)).reshape(-1)
    written = (blocks[:, None] * per_block + np.arange(per_block)[None, :]).reshape(-1)
    n = repeats * PER_REPEAT

    def fn(values):
        return written, np.repeat(values[:n], per_block)

    current_core().execute(VectorSequence(
        "brcb", dst.region(int(written.max()) + 1), (src.region(n),), fn, (("brcb", repeats),),
        repeats, dst.dtype.np_dtype.name, loc))


__all__ = ["brcb"]
