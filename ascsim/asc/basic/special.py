"""Vector instructions with irregular operands: cast, duplicate, copy, compare/select, reduce."""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic.cmp_mask import (
    compare_to_register,
    select_by_register,
    select_scalar_by_register,
)
from ascsim.asc.basic.vector import operand_strides, parse_form, vector_op
from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import CMPMODE, SELMODE, RoundMode
from ascsim.asc.errors import CallFormError
from ascsim.asc.params import BinaryRepeatParams, CopyRepeatParams, UnaryRepeatParams
from ascsim.isa import (
    REPEAT_BYTES,
    KernelError,
    VectorCompare,
    VectorReduce,
    VectorSelect,
    count_repeats,
    mask_positions,
    repeat_indices,
)

ROUND_MODE_NAMES = {
    RoundMode.CAST_NONE: "none", RoundMode.CAST_RINT: "rint", RoundMode.CAST_FLOOR: "floor",
    RoundMode.CAST_CEIL: "ceil", RoundMode.CAST_ROUND: "round", RoundMode.CAST_TRUNC: "trunc",
    RoundMode.CAST_ODD: "odd",
}

COMPARISONS = {CMPMODE.LT: "lt", CMPMODE.GT: "gt", CMPMODE.EQ: "eq", CMPMODE.LE: "le",
               CMPMODE.GE: "ge", CMPMODE.NE: "ne"}

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# ------------------------------------------------------------------------------ cast
def cast(dst, src, round_mode, *args, **kwargs) -> None:
    """``cast(dst, src, RoundMode, count)`` or mask/repeat form: convert with that rounding.

    In the mask/repeat form each operand's blocks hold its own element size, so the fp16 side
    of an fp32<->fp16 cast fills 4 blocks per repeat (Ascend C passes repeat stride 4 for it).
    """
    loc = user_location()
    form = parse_form(args, kwargs, UnaryRepeatParams, "cast", loc)
    rm = RoundMode(round_mode)
    vector_op("cast", dst, (src,), (), form, loc,
              attrs=(ROUND_MODE_NAMES[rm], f"RoundMode.{rm.name}"))


# ------------------------------------------------------------------------------ duplicate
def duplicate(dst, scalar, *args, **kwargs) -> None:
    """``duplicate(dst, scalar, count)`` or ``(dst, scalar, mask, repeat_times,
    dst_block_stride, dst_repeat_stride)``: fill with one value."""
    loc = user_location()
    if len(args) >= 4 or "dst_repeat_stride" in kwargs:
        kw = dict(kwargs)
        rest = list(args)
        mask = kw.pop("mask", rest.pop(0) if rest else None)
        repeat_times = kw.pop("repeat_times", rest.pop(0) if rest else None)
        blk = kw.pop("dst_block_stride", rest.pop(0) if rest else 1)
        rep = kw.pop("dst_repeat_stride", rest.pop(0) if rest else 8)
        if rest:
            kw["is_set_mask"] = rest.pop(0)
        params = UnaryRepeatParams(dst_blk_stride=int(blk), src_blk_stride=1,
                                   dst_rep_stride=int(rep), src_rep_stride=8)
        form = parse_form((mask, repeat_times, params), kw, UnaryRepeatParams, "duplicate", loc)
    else:
        form = parse_form(args, kwargs, UnaryRepeatParams, "duplicate", loc)
    vector_op("duplicate", dst, (), (scalar,), form, loc)


# ------------------------------------------------------------------------------ copy (UB->UB)
def copy(dst, src, mask, repeat_times=None, repeat_params: CopyRepeatParams | None = None,
         is_set_mask: bool = True, *, repeat_time=None) -> None:
    """``copy(dst, src, mask, repeat_times, CopyRepeatParams)``: UB to UB on the vector unit
    (``repeat_time=`` is pyasc's keyword for ``repeat_times``).

    The bits are moved as they are (viewed as unsigned ints), so NaN payloads survive.
    """
    loc = user_location()
    if (repeat_times is None) == (repeat_time is None):
        raise CallFormError("copy: give the repeat count once, as repeat_times (positional) or "
                            "repeat_time=", loc)
    repeat_times = repeat_time if repeat_times is None else repeat_times
    params = repeat_params or CopyRepeatParams()
    size = dst.dtype.sizeof()
    if size not in (2, 4) or src.dtype.sizeof() != size:
        raise KernelError("copy supports 16- and 32-bit element types of equal size only", loc)
    unary = UnaryRepeatParams(dst_blk_stride=params.dst_stride, src_blk_stride=params.src_stride,
                              dst_rep_stride=params.dst_repeat_size,
                              src_rep_stride=params.src_repeat_size)
    form = parse_form((mask, repeat_times, unary), {"is_set_mask": is_set_mask},
                      UnaryRepeatParams, "copy", loc)
    bits = _UINT_OF_SIZE[size]
    vector_op("copy", dst.reinterpret_cast(bits), (src.reinterpret_cast(bits),), (), form, loc)


# ------------------------------------------------------------------------------ compare/select
class _Lanes:
    """Which elements an instruction touches: per operand role the element indices, and the
    bit number each lane has in a per-element bit mask (compare output, select input).

    Count form: lane ``i`` is element ``i`` and bit ``i``. Mask/repeat form: lane ``(r, p)``
    (repeat ``r``, enabled position ``p``) is at the strided element of each operand and owns
    bit ``r * per_repeat + p`` -- each repeat's bits follow the previous repeat's.
    """

    __slots__ = ("index", "bit", "positions", "per_repeat", "repeats")

    def __init__(self, form, operands: dict, elem_bytes: int, loc):
        self.per_repeat = REPEAT_BYTES // elem_bytes
        form.leave_mask(self.per_repeat, loc)
        if form.count is not None:
            lanes = np.arange(form.count)
            self.index = dict.fromkeys(operands, lanes)
            self.bit = lanes
            self.positions = lanes % self.per_repeat
            self.repeats = count_repeats(form.count, elem_bytes)
            return
        if form.counter is not None:  # counter mode: whole repeats, cut after the count
            positions = np.arange(self.per_repeat)
            repeats = -(-form.counter // self.per_repeat)
        else:
            positions, repeats = mask_positions(form.mask, self.per_repeat, loc), form.repeat_times
        self.index = {}
        for role, tensor in operands.items():
            blk, rep = operand_strides(form.params, role)
            self.index[role] = repeat_indices(positions, repeats, tensor.dtype.sizeof(), blk,
                                              rep)[:form.counter]
        self.positions = np.tile(positions, repeats)[:form.counter]
        self.bit = (np.arange(repeats)[:, None] * self.per_repeat
                    + positions[None, :]).reshape(-1)[:form.counter]
        self.repeats = repeats


def _compare(name, dst, src0, src1_or_scalar, cmp_mode, args, kwargs, scalar: bool) -> None:
    """Bit ``lane.bit`` of ``dst`` = the comparison of that lane (LSB first in each byte).

    Lanes the mask disables keep their old bit: the vector unit does not write masked lanes,
    for compare as for every other instruction.
    """
    loc = user_location()
    cmp = COMPARISONS[CMPMODE(cmp_mode)]
    srcs = {"src0": src0} if scalar else {"src0": src0, "src1": src1_or_scalar}
    params = UnaryRepeatParams if scalar else BinaryRepeatParams
    form = parse_form(args, kwargs, params, name, loc)
    lanes = _Lanes(form, srcs, src0.dtype.sizeof(), loc)
    current_core().execute(VectorCompare(
        cmp, dst.region(), tuple(t.region() for t in srcs.values()),
        tuple(lanes.index[r] for r in srcs), lanes.bit, lanes.repeats, loc,
        src1_or_scalar if scalar else None, name))


def compare(*args, **kwargs) -> None:
    """``compare(dst_mask, src0, src1, CMPMODE, count)``: one result bit per element; or
    ``compare(src0, src1, CMPMODE, mask, repeat_params)``: into the compare-mask register."""
    if "dst" not in kwargs and (isinstance(args[2] if len(args) > 2 else None, CMPMODE)
                                or (len(args) < 3 and "cmp_mode" in kwargs)):
        compare_to_register(*args, **kwargs)
        return
    names = ("dst", "src0", "src1", "cmp_mode")
    fixed = dict(zip(names, args))
    for name in names[len(fixed):]:
        fixed[name] = kwargs.pop(name)
    _compare("compare", *fixed.values(), args[4:], kwargs, scalar=False)


def compare_scalar(dst, src0, scalar, cmp_mode, *args, **kwargs) -> None:
    """``compare_scalar(dst_mask, src0, scalar, CMPMODE, count)``."""
    _compare("compare_scalar", dst, src0, scalar, cmp_mode, args, kwargs, scalar=True)


def select(dst, sel_mask, src0, src1=None, sel_mode=None, *args, **kwargs) -> None:
    """``select(dst, sel_mask, src0, src1|scalar, SELMODE, count)``: bit set -> src0, else src1.

    Which bit of ``sel_mask`` (bytes, LSB first) a lane uses follows Ascend C's Select page:
    VSEL_CMPMASK_SPR (mode 0) applies the same first ``per_repeat`` bits in every repeat;
    VSEL_TENSOR_SCALAR_MODE (1, src1 a scalar) and VSEL_TENSOR_TENSOR_MODE (2) consume the mask
    repeat after repeat. Lanes the mask disables keep dst's old value. The forms without a
    selection mask or scalar read the compare-mask register (:mod:`ascsim.asc.basic.cmp_mask`).
    """
    if isinstance(sel_mode, BinaryRepeatParams):  # select(dst, sel_mask, src0, repeats, params)
        select_scalar_by_register(dst, sel_mask, src0, src1, sel_mode)
        return
    if src1 is None and "repeat_params" in kwargs:  # forms that read the compare-mask register
        if sel_mode is not None:  # select(dst, src0, src1, repeat_times=, ..., sel_mode=)
            select_by_register(dst, sel_mask, src0, kwargs.pop("repeat_times"),
                               kwargs.pop("repeat_params"), sel_mode)
        else:  # select(dst, sel_mask, src0, repeat_times, repeat_params): tensor-scalar
            select_scalar_by_register(dst, sel_mask, src0, kwargs.pop("repeat_times"),
                                      kwargs.pop("repeat_params"))
        return
    loc = user_location()
    mode = SELMODE.VSEL_TENSOR_TENSOR_MODE if sel_mode is None else SELMODE(sel_mode)
    scalar = mode == SELMODE.VSEL_TENSOR_SCALAR_MODE
    if scalar == hasattr(src1, "mem"):
        raise KernelError(f"select: SELMODE.{mode.name} takes src1 as "
                          f"{'a scalar' if scalar else 'a tensor'}", loc)
    form = parse_form(args, kwargs, BinaryRepeatParams, "select", loc)
    operands = {"dst": dst, "src0": src0} if scalar else {"dst": dst, "src0": src0, "src1": src1}
    lanes = _Lanes(form, operands, dst.dtype.sizeof(), loc)
    bit = lanes.positions if mode == SELMODE.VSEL_CMPMASK_SPR else lanes.bit
    srcs = (src0,) if scalar else (src0, src1)
    current_core().execute(VectorSelect(
        dst.region(), sel_mask.region(), tuple(t.region() for t in srcs),
        tuple(lanes.index[r] for r in operands), bit, lanes.repeats, loc,
        src1 if scalar else None))


# ------------------------------------------------------------------------------ reductions
#: pyasc reduction -> the vector unit's (VectorReduce.how).
REDUCERS = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min"}


def _reduce(name: str, dst, src, work, args, kwargs) -> None:
    """dst[0] = the reduction; with ``cal_index`` dst[1] holds (as the bits of an unsigned
    int of dst's width) the index of the first max/min.

    The index counts elements as the repeats lay them out: lane ``p`` of repeat ``r`` has index
    ``r * per_repeat + p``, which is the element offset in src for the default repeat stride.
    """
    loc = user_location()
    kwargs = dict(kwargs)
    cal_index = bool(kwargs.pop("cal_index", False))
    kwargs.pop("shared_tmp_buffer", None)
    kwargs.pop("work_local", None)
    rest = list(args)
    if "count" in kwargs or (len(rest) in (1, 2) and "mask" not in kwargs):
        count = int(kwargs.pop("count", rest.pop(0) if rest else 0))
        if rest:
            cal_index = bool(rest.pop(0))
        lane_index = index = np.arange(count)
        repeats = count_repeats(count, src.dtype.sizeof())
    else:
        mask = kwargs.pop("mask", rest.pop(0) if rest else None)
        repeat_times = kwargs.pop("repeat_times", None)
        if repeat_times is None:  # pyasc's reductions name it repeat_time
            repeat_times = kwargs.pop("repeat_time", rest.pop(0) if rest else 1)
        rep_stride = int(kwargs.pop("src_rep_stride", rest.pop(0) if rest else 8))
        if rest:
            cal_index = bool(rest.pop(0))
        params = UnaryRepeatParams(src_rep_stride=rep_stride)
        form = parse_form((mask, repeat_times, params), {}, UnaryRepeatParams, name, loc)
        lanes = _Lanes(form, {"src": src}, src.dtype.sizeof(), loc)
        index, lane_index = lanes.index["src"], lanes.bit
        repeats = lanes.repeats
    if kwargs:
        raise CallFormError(f"{name}: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    work_region = work.region() if work is not None and hasattr(work, "mem") else None
    current_core().execute(VectorReduce(REDUCERS[name], dst.region(), src.region(), index,
                                        lane_index, cal_index, repeats, loc, work_region, name))


def reduce_sum(dst, src, shared_tmp_buffer=None, *args, **kwargs) -> None:
    """``reduce_sum(dst, src, tmp, count)``: dst[0] = sum of the elements."""
    _reduce("reduce_sum", dst, src, shared_tmp_buffer, args, kwargs)


def reduce_max(dst, src, shared_tmp_buffer=None, *args, **kwargs) -> None:
    """``reduce_max(dst, src, tmp, count, cal_index=False)``: dst[0] = max (dst[1] = index)."""
    _reduce("reduce_max", dst, src, shared_tmp_buffer, args, kwargs)


def reduce_min(dst, src, shared_tmp_buffer=None, *args, **kwargs) -> None:
    """``reduce_min(dst, src, tmp, count, cal_index=False)``: dst[0] = min (dst[1] = index)."""
    _reduce("reduce_min", dst, src, shared_tmp_buffer, args, kwargs)
