"""Fused vector casts and dequantisation: ``add_relu_cast``, ``sub_relu_cast``, ``mul_cast``,
``add_deq_relu``, ``cast_deq`` and the DEQSCALE register they read (``set_deq_scale``,
``VdeqInfo``).

Each call is one :class:`~ascsim.isa.instr.Vector` record whose op row holds the arithmetic
(:mod:`ascsim.sim.dequant` says the rounding and saturation rules and where they come from).
The dequantising ops read the DEQSCALE register as it is when they issue; ``set_deq_scale``
sets it with a :class:`~ascsim.isa.instr.SetVectorRegisters` record (its vector-table form
first writes the 16 table words into the given UB tensor from the scalar unit, as Ascend C
does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.asc.basic.mask import registers
from ascsim.asc.basic.vector import operand_strides, parse_form, vector_op
from ascsim.asc.context import current_core, user_location
from ascsim.asc.params import BinaryRepeatParams, UnaryRepeatParams
from ascsim.asc.tensor import LocalTensor
from ascsim.isa import (
    BLOCK_BYTES,
    REPEAT_BYTES,
    KernelError,
    SetVectorRegisters,
    Vector,
    mask_positions,
    region_of,
)
from ascsim.sim.dequant import TABLE_WORDS, pack_deq_word

#: Source and destination element types each fused op takes (Ascend C's tables for the
#: 910B/910_93 generation).
FUSED_TYPES = {
    "add_relu_cast": {("float16", "int8"), ("int16", "int8"), ("float32", "float16")},
    "sub_relu_cast": {("float16", "int8"), ("int16", "int8"), ("float32", "float16")},
    "mul_cast": {("float16", "int8"), ("float16", "uint8")},
    "add_deq_relu": {("int32", "float16")},
    "cast_deq": {("int32", "float16"), ("int16", "int8"), ("int16", "uint8")},
}


def _check_types(name: str, dst, src, loc) -> None:
    pair = (src.dtype.np_dtype.name, dst.dtype.np_dtype.name)
    if pair not in FUSED_TYPES[name]:
        allowed = ", ".join(f"{s} -> {d}" for s, d in sorted(FUSED_TYPES[name]))
        raise KernelError(f"{name}: {pair[0]} -> {pair[1]} is not supported; supported: "
                          f"{allowed}", loc)


def _fused(name: str):
    def op(dst, src0, src1, *args, **kwargs) -> None:
        loc = user_location()
        _check_types(name, dst, src0, loc)
        if src1.dtype.np_dtype != src0.dtype.np_dtype:
            raise KernelError(f"{name}: src0 and src1 must have one type, got "
                              f"{src0.dtype.np_dtype.name} and {src1.dtype.np_dtype.name}", loc)
        form = parse_form(args, kwargs, BinaryRepeatParams, name, loc)
        attrs = (_deq_register(name, loc), True) if name == "add_deq_relu" else None
        vector_op(name, dst, (src0, src1), (), form, loc, attrs=attrs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``{name}(dst, src0, src1, count)`` or the mask/repeat form "
                  "(BinaryRepeatParams); see :mod:`ascsim.sim.dequant` for its arithmetic.")
    return op


add_relu_cast = _fused("add_relu_cast")
sub_relu_cast = _fused("sub_relu_cast")
mul_cast = _fused("mul_cast")
add_deq_relu = _fused("add_deq_relu")


def _deq_register(name: str, loc, want: str = "half", ub=None) -> tuple:
    """DEQSCALE as the op reads it. Never set in this launch: a ``register-unset`` finding,
    and the register's reset value 0 (a zero scale and offset; a table at UB address 0, the
    ``ub`` region's memory)."""
    reg = registers().deq
    if reg is None:
        core = current_core()
        core.launch.findings.report(
            "register-unset", f"{name} reads the DEQSCALE register, which no set_deq_scale "
            "set in this launch: the device uses the register's reset value (0)", loc,
            hint="call set_deq_scale with the form this conversion needs first",
            core=core.core_id)
        zero = {"half": ("half", 0.0), "b8": ("b8", 0.0, 0, False)}
        if want in zero:
            return zero[want]
        return ("table", region_of((ub.mem, 0, TABLE_WORDS, np.dtype(np.uint64), None, None,
                                    None)))
    if reg[0] != want:
        forms = {"half": "set_deq_scale(scale) with an fp16 scale",
                 "b8": "set_deq_scale(scale, offset, sign_mode)",
                 "table": "set_deq_scale(vdeq, vdeq_info)"}
        raise KernelError(f"{name}: this conversion reads DEQSCALE as set by {forms[want]}, "
                          f"but it was last set by {forms[reg[0]]}", loc)
    return reg


# ------------------------------------------------------------------------------ cast_deq
def _split_cast_deq(args, kwargs):
    """(the form's args, kwargs, is_vec_deq, half_block): pyasc passes the two flags after
    the count, or after ``is_set_mask`` in the mask/repeat form."""
    kwargs = dict(kwargs)
    is_vec_deq = kwargs.pop("is_vec_deq", True)
    half_block = kwargs.pop("half_block", True)
    rest = list(args)
    mask_form = ("mask" in kwargs or "repeat_params" in kwargs
                 or (len(rest) >= 3 and not isinstance(rest[2], bool)))
    keep = 3 if mask_form else 1 if "count" not in kwargs else 0
    form_args, flags = rest[:keep], rest[keep:]
    if mask_form and flags and "is_set_mask" not in kwargs:
        kwargs["is_set_mask"] = flags.pop(0)
    if flags:
        is_vec_deq = flags.pop(0)
    if flags:
        half_block = flags.pop(0)
    if flags:
        raise KernelError("cast_deq: too many arguments", user_location(3))
    return tuple(form_args), kwargs, bool(is_vec_deq), bool(half_block)


def _b8_lanes(form, dst, src, half_block: bool, loc):
    """(dst byte lanes, src lanes, repeats) of an int16 -> 8-bit dequantisation: the 16
    results of source block ``j`` fill half of destination block ``j`` -- bytes 16..31 with
    ``half_block`` (Ascend C's "lower half"), else bytes 0..15."""
    half = BLOCK_BYTES // 2 if half_block else 0
    if form.count is not None:
        s = np.arange(form.count)
        dst_idx = (s // 16) * BLOCK_BYTES + half + s % 16
        return dst_idx, s, max(1, -(-form.count * 2 // REPEAT_BYTES))
    per_repeat = REPEAT_BYTES // 2
    if form.counter is not None:
        positions, repeats = np.arange(per_repeat), -(-form.counter // per_repeat)
    else:
        positions, repeats = mask_positions(form.mask, per_repeat, loc), form.repeat_times
    src_blk, src_rep = operand_strides(form.params, "src")
    dst_blk, dst_rep = operand_strides(form.params, "dst")
    r = np.arange(repeats)[:, None]
    block, within = positions // 16, positions % 16
    src_idx = ((r * src_rep + block * src_blk) * 16 + within).reshape(-1)[:form.counter]
    dst_idx = ((r * dst_rep + block * dst_blk) * BLOCK_BYTES + half
               + within).reshape(-1)[:form.counter]
    return dst_idx, src_idx, repeats


def cast_deq(dst, src, *args, **kwargs) -> None:
    """``cast_deq(dst, src, count, is_vec_deq=True, half_block=True)`` or ``(dst, src, mask,
    repeat_times, repeat_params, is_set_mask=True, is_vec_deq=True, half_block=True)``.

    int32 -> fp16 with DEQSCALE's fp16 scale; int16 -> int8/uint8 with its (scale, offset,
    sign) or, ``is_vec_deq``, its 16-word table (lane ``p`` of a block uses word ``p``); the
    8-bit results of a 32-byte source block fill half a destination block (``half_block``).
    """
    loc = user_location()
    _check_types("cast_deq", dst, src, loc)
    args, kwargs, is_vec_deq, half_block = _split_cast_deq(args, kwargs)
    form = parse_form(args, kwargs, UnaryRepeatParams, "cast_deq", loc)
    if src.dtype.np_dtype == np.int32:
        vector_op("dequant", dst, (src,), (), form, loc,
                  attrs=(_deq_register("cast_deq", loc), False))
        return
    dst_idx, src_idx, repeats = _b8_lanes(form, dst, src, half_block, loc)
    core = current_core()
    if is_vec_deq:
        table = _deq_register("cast_deq(is_vec_deq=True)", loc, "table", dst.region())[1]
        rec = Vector("dequant_table", dst.region(), (src.region(), table), loc,
                     lanes=(dst_idx, src_idx, src_idx % TABLE_WORDS), repeats=repeats)
    else:
        register = _deq_register("cast_deq(is_vec_deq=False)", loc, "b8")
        rec = Vector("dequant", dst.region(), (src.region(),), loc, lanes=(dst_idx, src_idx),
                     repeats=repeats, attrs=(register, False))
    core.execute(rec)
    form.leave_mask(REPEAT_BYTES // 2, loc)


# ------------------------------------------------------------------------------ set_deq_scale
@dataclass(frozen=True)
class VdeqInfo:
    """The 16 (scale, offset, sign mode) groups of a vector-dequant table: ``scale`` fp32
    values, ``offset`` 9-bit signed integers, ``sign_mode`` True for int8 results."""

    scale: tuple = (1.0,) * TABLE_WORDS
    offset: tuple = (0,) * TABLE_WORDS
    sign_mode: tuple = (True,) * TABLE_WORDS

    def __init__(self, scale=None, offset=None, sign_mode=None):
        for name, value, default in (("scale", scale, 1.0), ("offset", offset, 0),
                                     ("sign_mode", sign_mode, True)):
            value = (default,) * TABLE_WORDS if value is None else tuple(value)
            if len(value) != TABLE_WORDS:
                raise ValueError(f"VdeqInfo.{name} needs {TABLE_WORDS} values, got "
                                 f"{len(value)}")
            object.__setattr__(self, name, value)


def _set_deq(deq: tuple, loc) -> None:
    current_core().execute(SetVectorRegisters(None, None, None, loc, deq=deq))


def set_deq_scale(*args, **kwargs) -> None:
    """``set_deq_scale(scale)`` (an fp16 scale: int32 -> fp16), ``set_deq_scale(scale, offset,
    sign_mode)`` (int16 -> 8 bit) or ``set_deq_scale(vdeq, vdeq_info)`` (the 16-word table,
    written into ``vdeq``, a uint64 UB tensor of at least 16 elements)."""
    loc = user_location()
    vdeq = kwargs.pop("vdeq", None)
    info = kwargs.pop("vdeq_info", None)
    scale = kwargs.pop("scale", None)
    offset = kwargs.pop("offset", None)
    sign_mode = kwargs.pop("sign_mode", None)
    if kwargs:
        raise KernelError(f"set_deq_scale: unexpected keyword argument(s) {sorted(kwargs)}",
                          loc)
    rest = list(args)
    if rest and isinstance(rest[0], LocalTensor):
        vdeq = rest.pop(0)
    if vdeq is not None:
        info = info if info is not None else (rest.pop(0) if rest else None)
        if not isinstance(info, VdeqInfo) or rest:
            raise KernelError("set_deq_scale(vdeq, vdeq_info) takes a VdeqInfo", loc)
        if vdeq.dtype.np_dtype != np.uint64 or vdeq.get_size() < TABLE_WORDS:
            raise KernelError(f"set_deq_scale: vdeq must be a uint64 tensor of at least "
                              f"{TABLE_WORDS} elements (128 bytes)", loc)
        for i, group in enumerate(zip(info.scale, info.offset, info.sign_mode)):
            vdeq.set_value(i, pack_deq_word(*group))
        _set_deq(("table", vdeq.region(TABLE_WORDS)), loc)
        return
    values = [scale, offset, sign_mode]
    for i, value in enumerate(values):
        if value is None and rest:
            values[i] = rest.pop(0)
    scale, offset, sign_mode = values
    if scale is None or rest:
        raise KernelError("set_deq_scale takes (scale), (scale, offset, sign_mode) or "
                          "(vdeq, vdeq_info)", loc)
    if offset is None and sign_mode is None:
        _set_deq(("half", float(np.float16(scale))), loc)
        return
    if offset is None or sign_mode is None:
        raise KernelError("set_deq_scale(scale, offset, sign_mode) needs all three", loc)
    offset = int(offset)
    offset = (offset & 0x1FF) - (0x200 if offset & 0x100 else 0)  # only 9 bits are kept
    _set_deq(("b8", float(np.float32(scale)), offset, bool(sign_mode)), loc)


__all__ = ["VdeqInfo", "add_deq_relu", "add_relu_cast", "cast_deq", "mul_cast",
           "set_deq_scale", "sub_relu_cast"]
