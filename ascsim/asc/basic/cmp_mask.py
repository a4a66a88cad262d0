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
    region_of,
    repeat_indices,
)
from ascsim.sim.exec_registers import cmp_mask_bytes

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


def _register_lanes(dst, repeat_times, repeat_params, roles, loc):
    """(lanes per role, repeat-relative positions, repeats, count) of a register-form select:
    the mask registers decide the elements, as for every instruction without its own mask."""
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
                  [:count] for role in roles)
    return lanes, positions, repeats, count, per_repeat


def select_by_register(dst, src0, src1, repeat_times, repeat_params, sel_mode) -> None:
    """``select(dst, src0, src1, repeat_times=, repeat_params=, sel_mode=)``: the elements the
    mask registers enable, from src0 where the selection bit is set, else from src1.

    ``VSEL_CMPMASK_SPR``: the bits are the compare-mask register's, the same first bits in every
    repeat. ``VSEL_TENSOR_TENSOR_MODE``: the register's low 8 bytes hold the UB byte address of
    the selection mask (``set_cmp_mask`` of a tensor holding it), whose bits are consumed
    repeat after repeat (Ascend C's SetCmpMask page). ``VSEL_TENSOR_SCALAR_MODE`` has no form
    with two tensors here: it is the 5-argument ``select(dst, sel_mask, src0, repeat_times,
    repeat_params)``."""
    loc = user_location(2)
    mode = SELMODE(sel_mode)
    if mode == SELMODE.VSEL_TENSOR_SCALAR_MODE:
        raise KernelError("select(dst, src0, src1, ..., sel_mode=VSEL_TENSOR_SCALAR_MODE): the "
                          "tensor-scalar mode takes the scalar from the compare-mask register "
                          "in the form select(dst, sel_mask, src0, repeat_times, "
                          "repeat_params)", loc)
    lanes, positions, repeats, count, per_repeat = _register_lanes(
        dst, repeat_times, repeat_params, ("dst", "src0", "src1"), loc)
    if mode == SELMODE.VSEL_CMPMASK_SPR:
        mask, bits = None, np.tile(positions, repeats)[:count]
    else:
        address = int(np.frombuffer(cmp_mask_bytes(current_core())[:8].tobytes(), np.uint64)[0])
        bits = (np.arange(repeats)[:, None] * per_repeat + positions[None, :]).reshape(-1)
        bits = bits[:count]
        nbytes = -(-(int(bits.max()) + 1) // 8) if bits.size else 0
        mem = dst.region().mem
        if address + nbytes > mem.capacity:
            raise KernelError(f"select(VSEL_TENSOR_TENSOR_MODE): the compare-mask register "
                              f"names UB byte {address} as the selection mask, past UB's "
                              f"{mem.capacity} bytes: set it with set_cmp_mask first", loc)
        mask = region_of((mem, address, nbytes, np.dtype(np.uint8), None, None, None))
    current_core().execute(VectorSelect(dst.region(), mask, (src0.region(), src1.region()),
                                        lanes, bits, repeats, loc))


def select_scalar_by_register(dst, sel_mask, src0, repeat_times, repeat_params) -> None:
    """``select(dst, sel_mask, src0, repeat_times, repeat_params)``: the tensor-scalar mode
    with the scalar in the compare-mask register (its first element of ``dst``'s type, put
    there by ``set_cmp_mask``); ``sel_mask``'s bits are consumed repeat after repeat."""
    loc = user_location(2)
    lanes, positions, repeats, count, per_repeat = _register_lanes(
        dst, repeat_times, repeat_params, ("dst", "src0"), loc)
    bits = (np.arange(repeats)[:, None] * per_repeat + positions[None, :]).reshape(-1)[:count]
    size = dst.dtype.sizeof()
    raw = cmp_mask_bytes(current_core())[:size].tobytes()
    scalar = np.frombuffer(raw, dst.dtype.np_dtype)[0]
    current_core().execute(VectorSelect(dst.region(), sel_mask.region(), (src0.region(),),
                                        lanes, bits, repeats, loc, scalar))


__all__ = ["get_cmp_mask", "set_cmp_mask"]
