"""``gatherb`` (whole 32-byte blocks by byte offsets) and ``scatter`` (elements to byte
offsets), one :class:`~ascsim.isa.instr.VectorBlockGather` / :class:`~ascsim.isa.instr.
VectorScatter` record each.

``scatter``'s mask/repeat form: lane ``p`` of repeat ``r`` takes src element ``(r *
src_rep_stride) * per_block + p`` (the repeat's blocks in a row) and its offset from element
``r * per_repeat + p`` of ``dst_offset`` (one uint32 per lane, in lane order). Ascend C has
Scatter on the 950 (and the 310 families), not on the 910B / 910_93 generation: there it is
an error, as the device has no such instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.asc.basic.mask import note_own_mask
from ascsim.asc.context import current_core, user_location
from ascsim.asc.params import U8, U16, _check_ranges, coerce_fields
from ascsim.isa import (
    REPEAT_BYTES,
    KernelError,
    VectorBlockGather,
    VectorScatter,
    check_repeat,
    mask_positions,
    repeat_indices,
)


@dataclass(frozen=True)
class GatherRepeatParams:
    """``GatherRepeatParams(dst_blk_stride=1, dst_rep_stride=8)``: strides in 32-byte blocks
    of the destination blocks of one repeat and of consecutive repeats (0 counts as 1 for the
    block stride)."""

    dst_blk_stride: int = 1
    dst_rep_stride: int = 8

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"dst_blk_stride": U8, "dst_rep_stride": U16})


def _check_offsets(name: str, offsets, loc) -> None:
    if offsets.dtype.name != "uint32":
        raise KernelError(f"{name}: the offset tensor must be uint32 (byte offsets), got "
                          f"{offsets.dtype.name}", loc)


def gatherb(dst, src0, offset, repeat_times, repeat_params: GatherRepeatParams) -> None:
    """``gatherb(dst, src0, offset, repeat_times, repeat_params)``: each repeat gathers 8
    blocks of 32 bytes of ``src0`` at the byte offsets ``offset[r * 8 .. r * 8 + 7]``."""
    loc = user_location()
    _check_offsets("gatherb", offset, loc)
    if dst.dtype.sizeof() != src0.dtype.sizeof():
        raise KernelError("gatherb: dst and src0 must have one element size", loc)
    p = repeat_params if repeat_params is not None else GatherRepeatParams()
    current_core().execute(VectorBlockGather(
        dst.region(), src0.region(), offset.region(), check_repeat(repeat_times, loc),
        p.dst_blk_stride, p.dst_rep_stride, loc))


def scatter(dst, src, dst_offset, dst_base, *args, **kwargs) -> None:
    """``scatter(dst, src, dst_offset, dst_base, count)`` or ``(..., mask, repeat_times,
    src_rep_stride)``: ``dst`` at byte ``dst_base + dst_offset[i]`` = the lane's src element."""
    loc = user_location()
    core = current_core()
    if not core.soc.vector_scatter:
        raise KernelError(f"scatter: {core.soc.name} has no scatter instruction (Ascend C has "
                          "it on the Ascend950 parts); pick such a SoC "
                          "(--soc) or write the elements with gather's inverse", loc)
    _check_offsets("scatter", dst_offset, loc)
    if dst.dtype.sizeof() != src.dtype.sizeof():
        raise KernelError("scatter: dst and src must have one element size", loc)
    kwargs = dict(kwargs)
    rest = list(args)
    count = kwargs.pop("count", None)
    if count is None and len(rest) == 1 and "mask" not in kwargs:
        count = rest.pop()
    size = src.dtype.sizeof()
    per_repeat = REPEAT_BYTES // size
    if count is not None:
        count = int(count)
        lanes = np.arange(count)
        src_lanes = offset_lanes = lanes
        repeats = -(-count // per_repeat)
    else:
        names = ("mask", "repeat_times", "src_rep_stride")
        values = {n: kwargs.pop(n) if n in kwargs else (rest.pop(0) if rest else None)
                  for n in names}
        if None in values.values():
            raise KernelError("scatter: give count, or mask, repeat_times and "
                              "src_rep_stride", loc)
        positions = mask_positions(values["mask"], per_repeat, loc)
        repeats = check_repeat(values["repeat_times"], loc)
        src_lanes = repeat_indices(positions, repeats, size, 1, int(values["src_rep_stride"]))
        offset_lanes = (np.arange(repeats)[:, None] * per_repeat + positions).reshape(-1)
        note_own_mask(values["mask"], per_repeat, loc)
    if rest or kwargs:
        raise KernelError(f"scatter: unexpected arguments {rest or sorted(kwargs)}", loc)
    core.execute(VectorScatter(dst.region(), src.region(), dst_offset.region(), int(dst_base),
                               src_lanes, offset_lanes, repeats, loc))


__all__ = ["GatherRepeatParams", "gatherb", "scatter"]
