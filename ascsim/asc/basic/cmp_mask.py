"""The compare-mask register (CMPMASK, 128 bits): ``get_cmp_mask``, ``set_cmp_mask``, and the
two instructions that use it instead of a UB mask -- ``compare(src0, src1, cmp_mode, mask,
repeat_params)`` (one repeat, result bits into the register) and ``select(dst, src0, src1,
repeat_times=, repeat_params=, sel_mode=SELMODE.VSEL_CMPMASK_SPR)`` (every repeat chooses by
the register's first bits).

Moves are :class:`~ascsim.isa.instr.CmpMaskMove` records; the register-form compare and select
are :class:`~ascsim.isa.instr.VectorCompare` / :class:`~ascsim.isa.instr.VectorSelect`
records without a UB mask.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic.mask import note_own_mask, registers
from ascsim.asc.basic.vector import operand_strides
from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import CMPMODE, SELMODE
from ascsim.asc.params import BinaryRepeatParams
from ascsim.isa import (
    CMPMASK_BYTES,
    REPEAT_BYTES,
    CmpMaskMove,
    KernelError,
    VectorCompare,
    VectorSelect,
    check_repeat,
    mask_positions,
    repeat_indices,
)

COMPARISONS = {CMPMODE.LT: "lt", CMPMODE.GT: "gt", CMPMODE.EQ: "eq", CMPMODE.LE: "le",
               CMPMODE.GE: "ge", CMPMODE.NE: "ne"}


def _move(tensor, to_register: bool, name: str) -> None:
    loc = user_location(3)
    if tensor.get_size() * tensor.dtype.sizeof() < CMPMASK_BYTES:
        raise KernelError(f"{name}: the tensor holds fewer than the register's "
                          f"{CMPMASK_BYTES} bytes", loc)
    current_core().execute(CmpMaskMove(tensor.region(), to_register, loc, name))


def get_cmp_mask(dst) -> None:
    """``get_cmp_mask(dst)``: the register's 16 bytes into ``dst`` (UB)."""
    _move(dst, False, "get_cmp_mask")


def set_cmp_mask(src) -> None:
    """``set_cmp_mask(src)``: the first 16 bytes of ``src`` (UB) into the register."""
    _move(src, True, "set_cmp_mask")


def _positions(mask, is_set_mask: bool, per_repeat: int, name: str, loc) -> np.ndarray:
    if not is_set_mask:
        reg = registers()
        if reg.mode == "counter":
            return np.arange(min(reg.low, per_repeat))
        mask = [reg.low, reg.high]
    return mask_positions(mask, per_repeat, loc)


def compare_to_register(src0, src1, cmp_mode, mask=None, repeat_params=None,
                        is_set_mask: bool = True) -> None:
    """``compare(src0, src1, cmp_mode, mask, repeat_params, is_set_mask=True)``: one repeat;
    bit ``p`` of the register = the comparison at enabled position ``p`` (other bits keep
    their values)."""
    loc = user_location(2)
    if mask is None:
        raise KernelError("compare (result in the compare-mask register) needs mask and "
                          "repeat_params", loc)
    params = repeat_params or BinaryRepeatParams()
    size = src0.dtype.sizeof()
    per_repeat = REPEAT_BYTES // size
    positions = _positions(mask, is_set_mask, per_repeat, "compare", loc)
    lanes = tuple(repeat_indices(positions, 1, size, *operand_strides(params, role))
                  for role in ("src0", "src1"))
    current_core().execute(VectorCompare(
        COMPARISONS[CMPMODE(cmp_mode)], None, (src0.region(), src1.region()), lanes, positions,
        1, loc, op="compare"))
    if is_set_mask:
        note_own_mask(mask, per_repeat, loc)


def select_by_register(dst, src0, src1, repeat_times, repeat_params, sel_mode) -> None:
    """``select(dst, src0, src1, repeat_times=, repeat_params=, sel_mode=)``: the elements the
    mask registers enable, in each repeat, from src0 where the compare-mask register's bit of
    that position is set, else from src1."""
    loc = user_location(2)
    mode = SELMODE(sel_mode)
    if mode != SELMODE.VSEL_CMPMASK_SPR:
        raise KernelError(f"select without a selection mask: SELMODE.{mode.name} keeps a UB "
                          "address in the compare-mask register, which is not modelled; use "
                          "SELMODE.VSEL_CMPMASK_SPR or pass sel_mask", loc)
    size = dst.dtype.sizeof()
    per_repeat = REPEAT_BYTES // size
    repeats = check_repeat(repeat_times, loc)
    reg = registers()
    if reg.mode == "counter":
        positions, count = np.arange(per_repeat), reg.low
        repeats = -(-count // per_repeat)
    else:
        positions, count = mask_positions([reg.low, reg.high], per_repeat, loc), None
    lanes = tuple(repeat_indices(positions, repeats, size, *operand_strides(repeat_params, role))
                  [:count] for role in ("dst", "src0", "src1"))
    bits = np.tile(positions, repeats)[:count]
    current_core().execute(VectorSelect(dst.region(), None, (src0.region(), src1.region()),
                                        lanes, bits, repeats, loc))


__all__ = ["get_cmp_mask", "set_cmp_mask"]
