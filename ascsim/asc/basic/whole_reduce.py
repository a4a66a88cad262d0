"""``whole_reduce_sum/max/min``: one result per repeat (Ascend C WholeReduceSum/Max/Min).

Repeat ``r`` reduces the lanes ``mask`` enables, read ``src_blk_stride`` blocks apart with
repeats ``src_rep_stride`` blocks apart. Its result goes to ``dst`` at ``r * dst_rep_stride``
units of one repeat's output: the sum (one element); for max/min, by ``order``, the value and
its index (two elements, in either order), the value only (one element), or the index only
(one uint32). The index is the lane's position within its repeat, stored as the bits of an
unsigned integer of dst's width (uint32 for ORDER_ONLY_INDEX); ties give the first lane.
Values are computed in fp32 and rounded once to dst's type. One
:class:`~ascsim.isa.instr.VectorSequence` record per call.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic.mask import note_own_mask, register_bit_mask
from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import ReduceOrder
from ascsim.isa import (
    REPEAT_BYTES,
    KernelError,
    VectorSequence,
    check_repeat,
    mask_positions,
    repeat_indices,
)

_UINT = {2: np.uint16, 4: np.uint32}
#: name -> (numpy reduction, arg-reduction, cost class)
REDUCTIONS = {"whole_reduce_sum": (np.sum, None, "reduce"),
              "whole_reduce_max": (np.max, np.argmax, "reduce_max"),
              "whole_reduce_min": (np.min, np.argmin, "reduce_min")}
#: order -> (value slot, index slot, slots per repeat); None: not written.
ORDER_SLOTS = {ReduceOrder.ORDER_VALUE_INDEX: (0, 1, 2),
               ReduceOrder.ORDER_INDEX_VALUE: (1, 0, 2),
               ReduceOrder.ORDER_ONLY_VALUE: (0, None, 1),
               ReduceOrder.ORDER_ONLY_INDEX: (None, 0, 1)}


def _whole_reduce(name, dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                  src_rep_stride, order, is_set_mask=True) -> None:
    loc = user_location()
    if not is_set_mask:  # the mask registers (set_vector_mask) decide
        mask = register_bit_mask(name, loc)
    else:  # the call writes its mask into the registers first
        note_own_mask(mask, REPEAT_BYTES // src.dtype.sizeof(), loc)
    reduce, arg, cost = REDUCTIONS[name]
    if dst.dtype != src.dtype or not dst.dtype.is_float():
        raise KernelError(f"{name}: dst and src must be one float type, got {dst.dtype.name}, "
                          f"{src.dtype.name}", loc)
    repeats = check_repeat(repeat_time, loc)
    size = src.dtype.sizeof()
    positions = mask_positions(mask, REPEAT_BYTES // size, loc)
    read = repeat_indices(positions, repeats, size, int(src_blk_stride),
                          int(src_rep_stride)).reshape(repeats, -1)
    value_slot, index_slot, slots = (0, None, 1) if arg is None else ORDER_SLOTS[ReduceOrder(order)]
    as_uint32 = value_slot is None  # ORDER_ONLY_INDEX: uint32 results
    out = dst.reinterpret_cast("uint32") if as_uint32 else dst
    base = np.arange(repeats) * int(dst_rep_stride) * slots
    index_type = np.uint32 if as_uint32 else _UINT[size]
    extent = int(base.max()) + slots if repeats else 0

    def fn(values):
        lanes = values[read].astype(np.float32) if positions.size else np.zeros((repeats, 0))
        where, results = [], []
        if value_slot is not None:
            where.append(base + value_slot)
            results.append(reduce(lanes, axis=1).astype(out.dtype.np_dtype))
        if index_slot is not None:
            where.append(base + index_slot)
            index = positions[arg(lanes, axis=1)].astype(index_type)
            results.append(index if as_uint32 else index.view(out.dtype.np_dtype))
        return np.concatenate(where), np.concatenate(results)

    if not positions.size:
        raise KernelError(f"{name}: the mask enables no lane", loc)
    current_core().execute(VectorSequence(
        name, out.region(extent), (src.region(int(read.max()) + 1),), fn, (cost,), repeats,
        src.dtype.np_dtype.name, loc))


def whole_reduce_sum(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                     src_rep_stride, is_set_mask=True) -> None:
    """``whole_reduce_sum(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
    src_rep_stride)``: the sum of each repeat."""
    _whole_reduce("whole_reduce_sum", dst, src, mask, repeat_time, dst_rep_stride,
                  src_blk_stride, src_rep_stride, ReduceOrder.ORDER_ONLY_VALUE, is_set_mask)


def whole_reduce_max(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                     src_rep_stride, order=ReduceOrder.ORDER_VALUE_INDEX,
                     is_set_mask=True) -> None:
    """The max of each repeat and its lane, laid out by ``order``."""
    _whole_reduce("whole_reduce_max", dst, src, mask, repeat_time, dst_rep_stride,
                  src_blk_stride, src_rep_stride, order, is_set_mask)


def whole_reduce_min(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                     src_rep_stride, order=ReduceOrder.ORDER_VALUE_INDEX,
                     is_set_mask=True) -> None:
    """The min of each repeat and its lane, laid out by ``order``."""
    _whole_reduce("whole_reduce_min", dst, src, mask, repeat_time, dst_rep_stride,
                  src_blk_stride, src_rep_stride, order, is_set_mask)


__all__ = ["whole_reduce_max", "whole_reduce_min", "whole_reduce_sum"]
