"""Vector instructions with irregular operands: cast, duplicate, copy, compare/select, reduce."""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic._exec import (
    BLOCK_BYTES,
    REPEAT_BYTES,
    access_of,
    check_repeat,
    count_repeats,
    execute,
    mask_positions,
    repeat_indices,
    strided_view,
    vector_cycles,
)
from ascsim.asc.basic.vector import compute_dtype, elementwise, parse_form
from ascsim.asc.context import user_location
from ascsim.asc.enums import CMPMODE, SELMODE, RoundMode
from ascsim.asc.params import BinaryRepeatParams, CopyRepeatParams, UnaryRepeatParams
from ascsim.sim.errors import KernelError
from ascsim.sim.numerics import convert

ROUND_MODE_NAMES = {
    RoundMode.CAST_NONE: "none", RoundMode.CAST_RINT: "rint", RoundMode.CAST_FLOOR: "floor",
    RoundMode.CAST_CEIL: "ceil", RoundMode.CAST_ROUND: "round", RoundMode.CAST_TRUNC: "trunc",
    RoundMode.CAST_ODD: "odd",
}

COMPARISONS = {
    CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal,
    CMPMODE.LE: np.less_equal, CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal,
}


# ------------------------------------------------------------------------------ cast
def cast(dst, src, round_mode, *args, **kwargs) -> None:
    """``cast(dst, src, RoundMode, count)`` or mask/repeat form: convert with that rounding."""
    loc = user_location()
    form = parse_form(args, kwargs, UnaryRepeatParams, "cast", loc)
    mode = ROUND_MODE_NAMES[RoundMode(round_mode)]
    target = dst.dtype.np_dtype

    def store(dst_view, index, result):
        dst_view[index] = convert(result, target, mode)

    # Pass the source through unchanged (no fp32 widening of the exact value is lost anyway).
    elementwise("cast", "cast", lambda x: x, dst, (src,), (), form, loc, out_fn=store)


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
        kw.pop("is_set_mask", None)
        params = UnaryRepeatParams(dst_blk_stride=int(blk), src_blk_stride=1,
                                   dst_rep_stride=int(rep), src_rep_stride=8)
        form = parse_form((mask, repeat_times, params), kw, UnaryRepeatParams, "duplicate", loc)
    else:
        form = parse_form(args, kwargs, UnaryRepeatParams, "duplicate", loc)
    elementwise("duplicate", "duplicate", None, dst, (), (scalar,), form, loc)


# ------------------------------------------------------------------------------ copy (UB->UB)
def copy(dst, src, mask, repeat_times, repeat_params: CopyRepeatParams | None = None,
         is_set_mask: bool = True) -> None:
    """``copy(dst, src, mask, repeat_times, CopyRepeatParams)``: UB to UB on the vector unit."""
    loc = user_location()
    params = repeat_params or CopyRepeatParams()
    if dst.dtype.sizeof() not in (2, 4):
        raise KernelError("copy supports 16- and 32-bit element types only", loc)
    unary = UnaryRepeatParams(dst_blk_stride=params.dst_stride, src_blk_stride=params.src_stride,
                              dst_rep_stride=params.dst_repeat_size,
                              src_rep_stride=params.src_repeat_size)
    form = parse_form((mask, repeat_times, unary), {}, UnaryRepeatParams, "copy", loc)
    elementwise("copy", "copy", lambda x: x, dst, (src,), (), form, loc)


# ------------------------------------------------------------------------------ compare/select
def _bytes_view(tensor, nbytes: int, loc) -> np.ndarray:
    """The first ``nbytes`` bytes of ``tensor`` (bit masks are read and written as bytes)."""
    return tensor.reinterpret_cast(np.uint8).elements(0, nbytes, loc)


def _compare(name, dst, src0, src1_or_scalar, cmp_mode, args, kwargs, scalar: bool) -> None:
    loc = user_location()
    fn = COMPARISONS[CMPMODE(cmp_mode)]
    srcs = (src0,) if scalar else (src0, src1_or_scalar)
    form = parse_form(args, kwargs, UnaryRepeatParams if scalar else BinaryRepeatParams, name,
                      loc)
    if form.count is not None:
        n = form.count
        operands = [compute_dtype(s.elements(0, n, loc)) for s in srcs]
        reads = [s.access(0, n) for s in srcs]
        repeats = count_repeats(n, src0.dtype.sizeof())
    else:
        per_repeat = REPEAT_BYTES // src0.dtype.sizeof()
        positions = mask_positions(form.mask, per_repeat, loc)
        operands, reads = [], []
        for role, s in zip(("src0", "src1"), srcs):
            blk = getattr(form.params, f"{role}_blk_stride",
                          getattr(form.params, "src_blk_stride", 1))
            rep = getattr(form.params, f"{role}_rep_stride",
                          getattr(form.params, "src_rep_stride", 8))
            idx = repeat_indices(positions, form.repeat_times, per_repeat, s.dtype.sizeof(),
                                 blk, rep)
            operands.append(compute_dtype(strided_view(s, idx, loc)[idx]))
            reads.append(access_of(s, idx))
        repeats = form.repeat_times
        n = operands[0].size
    if scalar:
        operands.append(np.asarray(src1_or_scalar, dtype=src0.dtype.np_dtype)
                        .astype(operands[0].dtype))
    bits = fn(*operands)
    nbytes = -(-bits.size // 8)
    _bytes_view(dst, nbytes, loc)[:] = np.packbits(bits, bitorder="little")
    busy, latency = vector_cycles("compare", src0.dtype.name, repeats)
    execute("V", name, busy, latency, loc, (dst, *srcs), tuple(reads),
            ((dst.mem.key, dst.addr, dst.addr + nbytes),))


def compare(dst, src0, src1, cmp_mode, *args, **kwargs) -> None:
    """``compare(dst_mask, src0, src1, CMPMODE, count)``: one result bit per element."""
    _compare("compare", dst, src0, src1, cmp_mode, args, kwargs, scalar=False)


def compare_scalar(dst, src0, scalar, cmp_mode, *args, **kwargs) -> None:
    """``compare_scalar(dst_mask, src0, scalar, CMPMODE, count)``."""
    _compare("compare_scalar", dst, src0, scalar, cmp_mode, args, kwargs, scalar=True)


def select(dst, sel_mask, src0, src1, sel_mode=SELMODE.VSEL_TENSOR_TENSOR_MODE, *args,
           **kwargs) -> None:
    """``select(dst, sel_mask, src0, src1|scalar, SELMODE, count)``: bit set → src0 else src1.

    Bit ``i`` of ``sel_mask`` (bytes, little-endian bit order) decides element ``i``; in
    mask/repeat form element ``p`` of repeat ``r`` uses bit ``r * per_repeat + p``.
    """
    loc = user_location()
    mode = SELMODE(sel_mode)
    scalar = mode == SELMODE.VSEL_TENSOR_SCALAR_MODE or not hasattr(src1, "mem")
    form = parse_form(args, kwargs, BinaryRepeatParams, "select", loc)
    srcs = (src0,) if scalar else (src0, src1)
    per_repeat = REPEAT_BYTES // dst.dtype.sizeof()
    if form.count is not None:
        n = form.count
        dst_idx = src_idx = bit_idx = np.arange(n)
        idx = {"dst": dst_idx, "src0": src_idx, "src1": src_idx}
        repeats = count_repeats(n, dst.dtype.sizeof())
    else:
        positions = mask_positions(form.mask, per_repeat, loc)
        idx = {}
        for role, t in zip(("dst", "src0", "src1"), (dst, *srcs)):
            idx[role] = repeat_indices(positions, form.repeat_times, per_repeat,
                                       t.dtype.sizeof(), getattr(form.params, f"{role}_blk_stride"),
                                       getattr(form.params, f"{role}_rep_stride"))
        bit_idx = (np.arange(form.repeat_times)[:, None] * per_repeat
                   + positions[None, :]).reshape(-1)
        repeats = form.repeat_times
    nbits = int(bit_idx.max()) + 1 if bit_idx.size else 0
    mask_bytes = _bytes_view(sel_mask, -(-nbits // 8), loc)
    bits = np.unpackbits(mask_bytes, bitorder="little")[bit_idx].astype(bool)
    a = strided_view(src0, idx["src0"], loc)[idx["src0"]]
    if scalar:
        b = np.asarray(src1, dtype=src0.dtype.np_dtype)
    else:
        b = strided_view(src1, idx["src1"], loc)[idx["src1"]]
    strided_view(dst, idx["dst"], loc)[idx["dst"]] = np.where(bits, a, b).astype(
        dst.dtype.np_dtype)
    busy, latency = vector_cycles("select", dst.dtype.name, repeats)
    reads = [access_of(s, idx[r]) for r, s in zip(("src0", "src1"), srcs)]
    reads.append((sel_mask.mem.key, sel_mask.addr, sel_mask.addr + mask_bytes.size))
    execute("V", "select", busy, latency, loc, (dst, sel_mask, *srcs), tuple(reads),
            (access_of(dst, idx["dst"]),))


# ------------------------------------------------------------------------------ reductions
REDUCERS = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min}
ARG_REDUCERS = {"reduce_max": np.argmax, "reduce_min": np.argmin}


def _reduce(name: str, dst, src, work, args, kwargs) -> None:
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
        values = compute_dtype(src.elements(0, count, loc))
        reads = (src.access(0, count),)
        repeats = count_repeats(count, src.dtype.sizeof())
    else:
        mask = kwargs.pop("mask", rest.pop(0) if rest else None)
        repeat_times = check_repeat(kwargs.pop("repeat_times", rest.pop(0) if rest else 1), loc)
        rep_stride = int(kwargs.pop("src_rep_stride", rest.pop(0) if rest else 8))
        if rest:
            cal_index = bool(rest.pop(0))
        per_repeat = REPEAT_BYTES // src.dtype.sizeof()
        positions = mask_positions(mask, per_repeat, loc)
        idx = repeat_indices(positions, repeat_times, per_repeat, src.dtype.sizeof(), 1,
                             rep_stride)
        values = compute_dtype(strided_view(src, idx, loc)[idx])
        reads = (access_of(src, idx),)
        repeats = repeat_times
    if values.size == 0:
        raise KernelError(f"{name}: nothing to reduce (count 0)", loc)
    out = dst.elements(0, 2 if cal_index else 1, loc)
    out[0] = REDUCERS[name](values.astype(np.float64) if name == "reduce_sum" else values)
    if cal_index and name in ARG_REDUCERS:
        index_type = {2: np.uint16, 4: np.uint32}[dst.dtype.sizeof()]
        out.view(index_type)[1] = ARG_REDUCERS[name](values)
    # A full reduction is a first pass over the repeats, then passes over the partial results.
    passes = 1 + int(np.ceil(np.log(max(repeats, 1)) / np.log(REPEAT_BYTES // BLOCK_BYTES)))
    busy, latency = vector_cycles(name if name != "reduce_sum" else "reduce", src.dtype.name,
                                  repeats)
    writes = (dst.access(0, 2 if cal_index else 1),)
    tensors = (dst, src) if work is None or not hasattr(work, "mem") else (dst, src, work)
    execute("V", name, busy + latency * (passes - 1), latency, loc, tensors, reads, writes)


def reduce_sum(dst, src, shared_tmp_buffer=None, *args, **kwargs) -> None:
    """``reduce_sum(dst, src, tmp, count)``: dst[0] = sum of the elements."""
    _reduce("reduce_sum", dst, src, shared_tmp_buffer, args, kwargs)


def reduce_max(dst, src, shared_tmp_buffer=None, *args, **kwargs) -> None:
    """``reduce_max(dst, src, tmp, count, cal_index=False)``: dst[0] = max (dst[1] = index)."""
    _reduce("reduce_max", dst, src, shared_tmp_buffer, args, kwargs)


def reduce_min(dst, src, shared_tmp_buffer=None, *args, **kwargs) -> None:
    """``reduce_min(dst, src, tmp, count, cal_index=False)``: dst[0] = min (dst[1] = index)."""
    _reduce("reduce_min", dst, src, shared_tmp_buffer, args, kwargs)
