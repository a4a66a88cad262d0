"""The block, pair and repeat reductions (Ascend C BlockReduceSum/Max/Min, PairReduceSum,
RepeatReduceSum).

* ``block_reduce_sum/max/min``: each 32-byte block of a repeat (16 fp16 or 8 fp32 lanes) gives
  one result, so a repeat gives 8, stored contiguously; ``dst_rep_stride`` counts units of
  those 8 results.
* ``pair_reduce_sum``: lanes ``2i`` and ``2i + 1`` give result ``i``, so a repeat gives half its
  lanes; ``dst_rep_stride`` counts units of those halves.
* ``repeat_reduce_sum``: one sum per repeat, count masks only; ``dst_rep_stride`` counts
  elements of dst and ``dst_blk_stride`` has no effect (both as Ascend C documents).

Sums add pairwise as a binary tree in the operands' type, rounding every step; for fp16 a step
whose result overflows saturates to +-65504 (Ascend C documents ``60000 + 60000 -> 65504`` for
BlockReduceSum and RepeatReduceSum). Masked-off lanes take no part. A result whose lanes are all
masked off is not written: Ascend C documents this for PairReduceSum; block reductions follow
the same rule here. One :class:`~ascsim.isa.instr.VectorSequence` record per call.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic.mask import note_own_mask
from ascsim.asc.context import current_core, user_location
from ascsim.isa import (
    BLOCK_BYTES,
    REPEAT_BYTES,
    KernelError,
    VectorSequence,
    check_repeat,
    mask_positions,
    repeat_indices,
)

FP16_MAX = 65504.0
"""Largest finite fp16 value, where an overflowing fp16 tree step saturates."""


def _tree_step_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = a + b
    if total.dtype == np.float16:
        overflow = np.isinf(total) & np.isfinite(a) & np.isfinite(b)
        total = np.where(overflow, np.copysign(np.float16(FP16_MAX), total), total)
    return total


#: name -> (tree step, identity of a masked-off lane, cost class)
TREE_OPS = {"sum": (_tree_step_sum, 0.0, "block_reduce"),
            "max": (np.maximum, -np.inf, "block_reduce_max"),
            "min": (np.minimum, np.inf, "block_reduce_min")}


def tree_reduce(lanes: np.ndarray, step) -> np.ndarray:
    """Reduce the last axis (a power of two long) pairwise, as the hardware adds: neighbours
    first, then neighbouring pair results, in the array's own type."""
    while lanes.shape[-1] > 1:
        lanes = step(lanes[..., 0::2], lanes[..., 1::2])
    return lanes[..., 0]


def _check_types(name, dst, src, loc) -> None:
    if dst.dtype != src.dtype or dst.dtype.name not in ("float16", "float32"):
        raise KernelError(f"{name}: dst and src must both be float16 or both float32, got "
                          f"{dst.dtype.name}, {src.dtype.name}", loc)


def _grouped_reduce(name, dst, src, repeat, mask, dst_rep_stride, src_blk_stride,
                    src_rep_stride, group: int, kind: str, cost=None) -> None:
    """Reduce every ``group`` neighbouring lanes of each repeat to one result."""
    loc = user_location()
    _check_types(name, dst, src, loc)
    step, identity, default_cost = TREE_OPS[kind]
    repeats = check_repeat(repeat, loc)
    size = src.dtype.sizeof()
    per_repeat = REPEAT_BYTES // size
    positions = mask_positions(mask, per_repeat, loc)
    note_own_mask(mask, per_repeat, loc)  # the call writes its mask into the registers
    if not positions.size or not repeats:
        return  # no lane enabled: nothing is read or written
    all_lanes = np.arange(per_repeat)
    read = repeat_indices(all_lanes, repeats, size, int(src_blk_stride),
                          int(src_rep_stride)).reshape(repeats, per_repeat)
    enabled = np.zeros(per_repeat, dtype=bool)
    enabled[positions] = True
    groups = per_repeat // group
    written = enabled.reshape(groups, group).any(axis=1)  # results with an enabled lane
    out_index = (np.arange(repeats)[:, None] * int(dst_rep_stride) * groups
                 + np.flatnonzero(written)[None, :]).reshape(-1)
    read_enabled = read[:, enabled]
    np_type = src.dtype.np_dtype

    def fn(values):
        lanes = np.full((repeats, per_repeat), identity, dtype=np_type)
        lanes[:, enabled] = values[read_enabled]
        results = tree_reduce(lanes.reshape(repeats, groups, group), step)
        return out_index, results[:, written].reshape(-1).astype(np_type)

    current_core().execute(VectorSequence(
        name, dst.region(int(out_index.max()) + 1), (src.region(int(read_enabled.max()) + 1),),
        fn, (cost or default_cost,), repeats, np_type.name, loc))


def block_reduce_sum(dst, src, repeat, mask, dst_rep_stride, src_blk_stride,
                     src_rep_stride) -> None:
    """``block_reduce_sum(dst, src, repeat, mask, dst_rep_stride, src_blk_stride,
    src_rep_stride)``: the sum of each 32-byte block, 8 results per repeat."""
    _grouped_reduce("block_reduce_sum", dst, src, repeat, mask, dst_rep_stride,
                    src_blk_stride, src_rep_stride, BLOCK_BYTES // src.dtype.sizeof(), "sum")


def block_reduce_max(dst, src, repeat, mask, dst_rep_stride, src_blk_stride,
                     src_rep_stride) -> None:
    """The max of each 32-byte block, 8 results per repeat."""
    _grouped_reduce("block_reduce_max", dst, src, repeat, mask, dst_rep_stride,
                    src_blk_stride, src_rep_stride, BLOCK_BYTES // src.dtype.sizeof(), "max")


def block_reduce_min(dst, src, repeat, mask, dst_rep_stride, src_blk_stride,
                     src_rep_stride) -> None:
    """The min of each 32-byte block, 8 results per repeat."""
    _grouped_reduce("block_reduce_min", dst, src, repeat, mask, dst_rep_stride,
                    src_blk_stride, src_rep_stride, BLOCK_BYTES // src.dtype.sizeof(), "min")


def pair_reduce_sum(dst, src, repeat_time, mask, dst_rep_stride, src_blk_stride,
                    src_rep_stride) -> None:
    """``pair_reduce_sum(dst, src, repeat_time, mask, dst_rep_stride, src_blk_stride,
    src_rep_stride)``: the sum of each pair of neighbouring lanes, half a repeat of results.

    Priced as the block add (VCGADD): no separate figure for the pair add is at hand."""
    _grouped_reduce("pair_reduce_sum", dst, src, repeat_time, mask, dst_rep_stride,
                    src_blk_stride, src_rep_stride, 2, "sum")


def repeat_reduce_sum(dst, src, repeat_time, mask, dst_blk_stride, src_blk_stride,
                      dst_rep_stride, src_rep_stride) -> None:
    """``repeat_reduce_sum(dst, src, repeat_time, mask, dst_blk_stride, src_blk_stride,
    dst_rep_stride, src_rep_stride)``: one tree sum per repeat of the first ``mask`` lanes,
    stored ``dst_rep_stride`` elements apart."""
    loc = user_location()
    if isinstance(mask, (list, tuple)):
        raise KernelError("repeat_reduce_sum takes a count mask only (an int); use "
                          "whole_reduce_sum for a bit mask", loc)
    del dst_blk_stride  # documented as having no effect
    per_repeat = REPEAT_BYTES // src.dtype.sizeof()
    # One result per repeat, dst_rep_stride elements apart: a group of a whole repeat whose
    # output unit is one element, i.e. dst_rep_stride in units of one repeat's single result.
    _grouped_reduce("repeat_reduce_sum", dst, src, repeat_time, mask, dst_rep_stride,
                    src_blk_stride, src_rep_stride, per_repeat, "sum", cost="reduce")


__all__ = ["block_reduce_max", "block_reduce_min", "block_reduce_sum", "pair_reduce_sum",
           "repeat_reduce_sum", "tree_reduce"]
