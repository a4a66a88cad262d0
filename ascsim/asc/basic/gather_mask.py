"""``gather_mask`` (Ascend C GatherMask, the vreducev2 instruction): keep the elements of each
repeat that a bit pattern selects and pack them, in order, at the start of dst.

The pattern is either built in (``src1_pattern`` 1..7, the same bits in every repeat: 1 even
positions, 2 odd positions, 3..6 the first..fourth of every four, 7 all) or a LocalTensor of
uint16 (16-bit data) or uint32 (32-bit data) whose bits are consumed LSB first, one per
position. The count of kept elements is returned and stays in a register that
``get_gather_mask_remain_count`` reads; like Ascend C's GatherMask, the call leaves the mask
registers in normal mode with the words (high 0, low ``mask``).

Modelled: normal mode (``reduce_mode=False``: every position of each repeat,
``params.repeat_times`` repeats laid out by ``src0_block_stride``/``src0_repeat_stride``). Not
modelled, with an error saying so: counter mode (``reduce_mode=True``, whose ``mask`` means a
per-repeat or a total count depending on the chip), and a tensor pattern that moves between
repeats (``src1_repeat_stride`` other than 0 with more than one repeat), whose stride unit is
not documented in the sources at hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.asc.basic.mask import registers
from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import GatherMaskMode
from ascsim.asc.params import U8, U16, _check_ranges
from ascsim.isa import REPEAT_BYTES, KernelError, SetVectorRegisters, VectorSequence, repeat_indices


@dataclass(frozen=True)
class GatherMaskParams:
    """``GatherMaskParams(src0_block_stride=1, repeat_times=0, src0_repeat_stride=8,
    src1_repeat_stride=8)`` (Ascend C's defaults; strides in 32-byte blocks)."""

    src0_block_stride: int = 1
    repeat_times: int = 0
    src0_repeat_stride: int = 8
    src1_repeat_stride: int = 8

    def __post_init__(self):
        _check_ranges(self, {"src0_block_stride": U8, "repeat_times": U16,
                             "src0_repeat_stride": U16, "src1_repeat_stride": U8})


#: built-in pattern -> which positions of a repeat it keeps
BUILT_IN_PATTERNS = {1: lambda p: p % 2 == 0, 2: lambda p: p % 2 == 1,
                     3: lambda p: p % 4 == 0, 4: lambda p: p % 4 == 1,
                     5: lambda p: p % 4 == 2, 6: lambda p: p % 4 == 3,
                     7: lambda p: np.ones(p.shape, dtype=bool)}
_PATTERN_TYPE = {2: "uint16", 4: "uint32"}


def gather_mask(dst, src0, src1_pattern, reduce_mode: bool = False, mask: int = 0,
                params: GatherMaskParams | None = None,
                mode: GatherMaskMode = GatherMaskMode.DEFAULT) -> int:
    """``gather_mask(dst, src0, src1_pattern, reduce_mode, mask, params, mode)``: the kept
    elements of src0 packed into dst; returns how many were kept (see the module docstring)."""
    loc = user_location()
    params = params or GatherMaskParams()
    size = src0.dtype.sizeof()
    if size not in _PATTERN_TYPE or dst.dtype.sizeof() != size:
        raise KernelError(f"gather_mask: dst and src0 must be one 16- or 32-bit type, got "
                          f"{dst.dtype.name}, {src0.dtype.name}", loc)
    if GatherMaskMode(mode) != GatherMaskMode.DEFAULT:
        raise KernelError("gather_mask: only GatherMaskMode.DEFAULT exists (V2 is reserved)", loc)
    if reduce_mode:
        raise KernelError("gather_mask(reduce_mode=True) (counter mode) is not modelled: its "
                          "mask counts per repeat or in total depending on the chip", loc)
    per_repeat = REPEAT_BYTES // size
    repeats = int(params.repeat_times)
    positions = np.arange(per_repeat)
    read = repeat_indices(positions, repeats, size, int(params.src0_block_stride),
                          int(params.src0_repeat_stride))
    srcs = [src0.region(int(read.max()) + 1 if repeats else 0)]
    if isinstance(src1_pattern, (int, np.integer)):
        if int(src1_pattern) not in BUILT_IN_PATTERNS:
            raise KernelError(f"gather_mask: a built-in pattern is 1..7, got {src1_pattern}",
                              loc)
        keep = np.tile(BUILT_IN_PATTERNS[int(src1_pattern)](positions), repeats)
        kept = int(keep.sum())
    else:
        if src1_pattern.dtype.name != _PATTERN_TYPE[size]:
            raise KernelError(f"gather_mask: a pattern tensor for {size * 8}-bit data is "
                              f"{_PATTERN_TYPE[size]}, got {src1_pattern.dtype.name}", loc)
        if repeats > 1 and int(params.src1_repeat_stride):
            raise KernelError("gather_mask: a pattern tensor with src1_repeat_stride != 0 over "
                              "several repeats is not modelled; use src1_repeat_stride=0 (the "
                              "same pattern in every repeat) or one repeat per call", loc)
        keep, kept = None, None
        srcs.append(src1_pattern.region(per_repeat // (8 * size)))
    result = {}

    def fn(values, pattern=None):
        bits = keep if pattern is None else np.tile(np.unpackbits(
            pattern.view(np.uint8), bitorder="little").astype(bool)[:per_repeat], repeats)
        chosen = values[read[bits]]
        result["kept"] = chosen.size
        return np.arange(chosen.size), chosen

    extent = repeats * per_repeat
    current_core().execute(VectorSequence(
        "gather_mask", dst.region(extent), tuple(srcs), fn, ("copy",), repeats,
        src0.dtype.np_dtype.name, loc))
    if kept is None:
        if "kept" not in result:
            raise KernelError("gather_mask with a pattern tensor: the kept count depends on the "
                              "pattern's values, which a timing-only run does not compute", loc)
        kept = result["kept"]
    # Ascend C's GatherMask sets the mask words to (0, mask) and ends in normal mode.
    current_core().execute(SetVectorRegisters("normal", int(mask), 0, loc, remain=kept,
                                              side_effect=True))
    return kept


def get_gather_mask_remain_count() -> int:
    """How many elements the last ``gather_mask`` of this core kept (0 before any)."""
    return registers().remain


__all__ = ["BUILT_IN_PATTERNS", "GatherMaskParams", "gather_mask",
           "get_gather_mask_remain_count"]
