"""Executors of the cube records: :class:`Mmad`, :class:`FixPipe` and :class:`CubeProduct`
(semantics and costs: :mod:`ascsim.isa.instr`).

Data in L0A/L0B/L0C is kept in the hardware's fractal layouts (:mod:`ascsim.sim.fractal`): the
layout Mmad reads from L0A is the SoC's (``SocSpec.l0a_layout``), so a kernel that gets a stride
or a layout wrong computes wrong numbers, as it would on the device. Products go through
:mod:`ascsim.sim.numerics` (fp16/bf16 products exact, summed in fp32; int8 in int32).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import MATMUL_EVENTS, CubeProduct, FixPipe, MatmulBookkeeping, Mmad
from ascsim.isa.operands import Region
from ascsim.sim import exec_sparse, fp4, fractal, hifloat8, mx, unit_flag
from ascsim.sim.access import strided
from ascsim.sim.exec_copy import route
from ascsim.sim.numerics import convert, cube_matmul, start_cube_matmul, to_hf32
from ascsim.sim.views import (
    ATOMIC_OPS,
    check_accesses,
    check_alignment,
    gates_done,
    gates_ready,
    index_access,
    span,
    stored,
    view,
    write_rows,
)

#: Mmad input type -> accumulator (L0C) type (ascend-hw §3.1; the 950's 8-bit floats in fp32).
ACCUMULATOR = {"float16": "float32", "bfloat16": "float32", "float32": "float32",
               "int8": "int32", "uint8": "int32", "float8_e4m3fn": "float32",
               "float8_e5m2": "float32", "hifloat8": "float32"}
#: Input formats stored as raw bytes (no numpy type of their own): format -> decoder to fp32.
BYTE_FORMATS = {"hifloat8": hifloat8.decode}
#: The bits of a per-channel scale word the fixpipe uses (see :func:`_scales`).
DEQ_TENSOR_MASK = 0xFFFFE000
#: FixPipe destination formats stored as raw bytes: format -> encoder from fp32.
BYTE_ENCODERS = {"hifloat8": hifloat8.encode}


# ------------------------------------------------------------------------------ mmad
@lru_cache(maxsize=4096, typed=True)
def _mmad_busy(costs, m: int, n: int, k: int, dtype: str) -> float:
    """``costs.mmad(m, n, k, dtype)``, once per cost table and shape: a blocked Matmul issues
    the same few Mmad shapes for every K step of every block. (Typed: a kernel-side
    ``RuntimeInt`` divides like C, so it is not the same key as the equal Python int.)"""
    return costs.mmad(m, n, k, dtype)


def execute_mmad(core, rec: Mmad):
    loc = rec.loc
    hf32 = rec.hf32 if rec.dtype == "float32" else None
    # HF32 consumes K twice as fast as fp32: priced as the fp32 Mmad of half the K; a sparse
    # Mmad as the dense product of its K/2.
    half_k = hf32 or rec.sparse
    busy = _mmad_busy(core.costs, rec.m, rec.n, -(-rec.k // 2) if half_k else rec.k, rec.dtype)
    if rec.dst is None:  # cost-only: the values come from a CubeProduct
        if rec.sparse:
            exec_sparse.require_sparse(core, rec.op, loc)
        start = core.begin("M", rec.after)
        return core.place("M", rec.op, start, busy, core.costs.mmad_drain, loc, (), (), rec)
    if rec.sparse:
        return _execute_sparse(core, rec, busy)
    dst, a, b, bias = rec.dst, rec.a, rec.b, rec.bias
    acc_type = (_check_mx_types(dst, a, b, bias, rec.mx, rec.k, loc) if rec.mx else
                _check_types(dst, a, b, bias, rec.dtype, loc))
    check_alignment(core, rec.op, (dst, a, b, bias), loc)
    m, n, k = rec.m, rec.n, rec.k
    # MXFP4: codes two to a byte, 64 to a fractal row; offsets below count codes, bytes half.
    per_byte = 2 if rec.mx and rec.mx[0] in fp4.FORMATS else 1
    c0 = fractal.c0_of(a.dtype) * per_byte
    mp, np_, kp = -(-m // 16) * 16, -(-n // 16) * 16, -(-k // c0) * c0
    frames = _Frames(rec.a_rows or mp, rec.b_cols or np_, rec.c_rows or mp)
    _check_frames(frames, mp, np_, loc)
    row = c0 // per_byte  # bytes of a fractal row
    reads = [_window(a, mp * row, frames.a_rows * row, kp // c0),
             _window(b, np_ * row, frames.b_cols * row, kp // c0)]
    writes = (_window(dst, mp * 16, frames.c_rows * 16, np_ // 16),)
    scales = _mx_scales(core, a, b, frames, kp, loc) if rec.mx else ()
    if rec.unit_flag is not None:
        unit_flag.wait(core, "M", (dst.mem.key, dst.offset), rec.unit_flag, loc)
    if not core.launch.values:
        reads += _initial_reads(rec, mp, np_, frames)
        check_accesses(core, [(r, acc) for r, acc in zip((a, b, *_initial_regions(rec)), reads)]
                       + [(dst, writes[0])] + [(s.region, s.access) for s in scales], loc)
    elif mp and np_:
        a_flat = view(core, a, 0, frames.a_rows * kp // per_byte, loc)
        b_flat = view(core, b, 0, kp * frames.b_cols // per_byte, loc)
        if per_byte == 2:
            a_flat, b_flat = fp4.unpack(a_flat), fp4.unpack(b_flat)
        c_flat = view(core, dst, 0, frames.c_rows * np_, loc)
        if core.soc.l0a_layout == "NZ":
            a_nd = fractal.nz_to_nd(a_flat, mp, kp, c0, frames.a_rows)[:, :k]
        else:
            a_nd = fractal.zz_to_nd(a_flat, mp, kp, c0)[:, :k]
        b_nd = fractal.zn_to_nd(b_flat, kp, frames.b_cols, c0)[:k, :np_]
        if hf32:
            a_nd, b_nd = to_hf32(a_nd, hf32), to_hf32(b_nd, hf32)
        decode = BYTE_FORMATS.get(rec.dtype)
        if decode is not None:
            a_nd, b_nd = decode(a_nd), decode(b_nd)
        initial = _initial_c(core, rec, c_flat, mp, np_, frames, reads, loc)
        if rec.mx:
            if per_byte == 2:
                a_nd, b_nd = fp4.decode(a_nd, rec.mx[0]), fp4.decode(b_nd, rec.mx[1])
            sa, sb = (view(core, s.region, 0, s.region.count, loc)[s.index] for s in scales)
            result = mx.product(a_nd, b_nd[:, :np_], sa[:mp, :], sb[:, :np_], initial)
        else:
            result = _matmul(a_nd, b_nd, initial, acc_type).astype(acc_type)
        if frames.c_rows == mp:
            c_flat[:] = fractal.nd_to_nz(result, fractal.L0C_C0).reshape(-1)
        else:  # only the m rows of each 16-column strip of the larger frame
            strips = c_flat.reshape(np_ // 16, frames.c_rows, 16)
            strips[:, :mp, :] = fractal.nd_to_nz(result, fractal.L0C_C0)
    reads += [s.access for s in scales]
    regions = (dst, a, b, bias)
    ready = gates_ready(regions)
    start = core.begin("M", ready if ready > rec.after else rec.after)
    instr = core.place("M", rec.op, start, busy, core.costs.mmad_drain, loc, tuple(reads),
                       writes, rec)
    gates_done(regions, instr.done)
    if rec.unit_flag is not None:
        unit_flag.done(core, "M", (dst.mem.key, dst.offset), rec.unit_flag, instr.done, loc)
    return instr


class _Scales(NamedTuple):
    """Where an MX Mmad's scales for one operand are: the MX buffer's region, the element
    index of every scale in its frame, and the access record of the bytes read."""

    region: Region
    index: np.ndarray
    access: tuple


#: Data buffer -> its MX scale buffer (the scale of data at byte X is at byte X >> 4).
MX_BUFFERS = {"L0A": "L0AMX", "L0B": "L0BMX"}


def _mx_scales(core, a: Region, b: Region, frames: _Frames, kp: int, loc) -> tuple:
    """The scale operands of an MX Mmad: A's ``a_rows x K/32`` ZZ frame in L0AMX at A's byte
    address >> 4, B's ``K/32 x b_cols`` NN frame in L0BMX at B's byte address >> 4."""
    groups = kp // mx.GROUP
    out = []
    for data, index in ((a, _scale_a_index(frames.a_rows, groups)),
                        (b, _scale_b_index(groups, frames.b_cols))):
        mem = core.mem.get(MX_BUFFERS.get(data.mem.space, ""))
        if mem is None or not mem.capacity:
            raise KernelError(f"mmad_mx: {core.soc.name} has no MX scale buffer beside "
                              f"{data.mem.space}", loc)
        region = Region(mem, data.offset >> 4, index.size, np.dtype(np.uint8))
        out.append(_Scales(region, index, region.access(0, index.size)))
    return tuple(out)


@lru_cache(maxsize=64)
def _scale_a_index(rows: int, groups: int) -> np.ndarray:
    index = mx.scale_a_offsets(rows, groups)
    index.setflags(write=False)
    return index


@lru_cache(maxsize=64)
def _scale_b_index(groups: int, cols: int) -> np.ndarray:
    index = mx.scale_b_offsets(groups, cols)
    index.setflags(write=False)
    return index


#: The element formats of an MX Mmad's operands (either of a pair on each side): the FP8
#: pair (stored in their own types) and the FP4 pair (stored as bytes of two codes).
MX_FP8 = ("float8_e4m3fn", "float8_e5m2")


def _check_mx_types(dst: Region, a: Region, b: Region, bias: Region | None,
                    formats: tuple[str, str], k: int, loc) -> str:
    pair = MX_FP8 if formats[0] in MX_FP8 else tuple(fp4.FORMATS)
    for side, region, fmt in (("A", a, formats[0]), ("B", b, formats[1])):
        stored_as = fmt if pair is MX_FP8 else "uint8"
        if fmt not in pair or region.dtype.name != stored_as:
            raise KernelError(f"mmad_mx: {side} is {fmt} stored as {region.dtype.name}; the "
                              f"formats are both of {', '.join(MX_FP8)} or both of "
                              f"{', '.join(fp4.FORMATS)} (stored as bytes)", loc)
    if dst.dtype.name != "float32":
        raise KernelError(f"mmad_mx: the accumulator is float32, got {dst.dtype.name}", loc)
    if bias is not None:
        raise KernelError("mmad_mx: takes no bias", loc)
    if k % mx.K_MULTIPLE:
        raise KernelError(f"mmad_mx: k ({k}) must be a multiple of {mx.K_MULTIPLE}", loc)
    return "float32"


def _execute_sparse(core, rec: Mmad, busy: float):
    """A 4:2 sparse Mmad (:mod:`ascsim.sim.exec_sparse`): int8, tight frames, no bias."""
    loc = rec.loc
    exec_sparse.require_sparse(core, "mmad_with_sparse", loc)
    dst, a, b = rec.dst, rec.a, rec.b
    if a.dtype.name != "int8" or b.dtype.name != "int8" or dst.dtype.name != "int32":
        raise KernelError("mmad_with_sparse: int8 A and B, int32 C", loc)
    if rec.bias is not None or rec.k % 4:
        raise KernelError(f"mmad_with_sparse: k ({rec.k}) must be a multiple of 4 and no bias "
                          "is taken", loc)
    check_alignment(core, rec.op, (dst, a, b), loc)
    c0 = fractal.c0_of(a.dtype)
    mp, np_ = -(-rec.m // 16) * 16, -(-rec.n // 16) * 16
    kp, kdp = -(-rec.k // c0) * c0, -(-(rec.k // 2) // c0) * c0
    reads = [a.access(0, mp * kp), b.access(0, kdp * np_)]
    writes = (dst.access(0, mp * np_),)
    if rec.accumulate:
        reads.append(writes[0])
    if core.launch.values:
        exec_sparse.sparse_product(core, rec, loc)
    else:
        check_accesses(core, [(a, reads[0]), (b, reads[1]), (dst, writes[0])], loc)
    regions = (dst, a, b)
    start = core.begin("M", max(gates_ready(regions), rec.after))
    instr = core.place("M", rec.op, start, busy, core.costs.mmad_drain, loc, tuple(reads),
                       writes, rec)
    gates_done(regions, instr.done)
    return instr


class _Frames(NamedTuple):
    """Rows of A's and C's fractal frames, columns of B's (see :class:`Mmad`)."""

    a_rows: int
    b_cols: int
    c_rows: int


def _check_frames(frames: _Frames, mp: int, np_: int, loc) -> None:
    for name, size, need in (("a_rows", frames.a_rows, mp), ("b_cols", frames.b_cols, np_),
                             ("c_rows", frames.c_rows, mp)):
        if size < need or size % 16:
            raise KernelError(f"mmad: {name}={size} must be a multiple of 16 of at least "
                              f"{need}", loc)


def _window(region: Region, run: int, pitch: int, count: int) -> tuple:
    """The access record of ``count`` runs of ``run`` elements, ``pitch`` elements apart."""
    size = region.dtype.itemsize
    return strided(region.mem.key, region.offset, run * size, pitch * size, count)


def _check_types(dst: Region, a: Region, b: Region, bias: Region | None, dtype: str,
                 loc) -> str:
    in_type, b_type = a.dtype.name, b.dtype.name
    if dtype in BYTE_FORMATS:  # bytes holding a format numpy has no type for
        if in_type != "uint8" or b_type != "uint8":
            raise KernelError(f"mmad: {dtype} inputs are stored as bytes, got {in_type} x "
                              f"{b_type}", loc)
        in_type = b_type = dtype
    acc_type = ACCUMULATOR.get(in_type)
    if acc_type is None or b_type != in_type:
        raise KernelError(f"mmad: unsupported input types {in_type} x {b_type}; "
                          f"supported: {', '.join(ACCUMULATOR)} (both inputs alike)", loc)
    if dst.dtype.name != acc_type:
        raise KernelError(f"mmad: {in_type} inputs accumulate in {acc_type}, but dst is "
                          f"{dst.dtype.name}", loc)
    if bias is not None and bias.dtype.name != acc_type:
        raise KernelError(f"mmad: the bias must be {acc_type}, got {bias.dtype.name}", loc)
    return acc_type


def _matmul(a: np.ndarray, b: np.ndarray, initial: np.ndarray | None,
            acc_type: str) -> np.ndarray:
    """``initial`` (or 0) + A·B in the accumulator type."""
    if acc_type == "int32":
        # int8 products summed exactly, kept modulo 2**32 like the 32-bit accumulator.
        out = a.astype(np.int64) @ b.astype(np.int64)
        if initial is not None:
            out += initial
        return out.astype(np.int32)
    return cube_matmul(a, b, initial)


def _initial_regions(rec: Mmad) -> tuple:
    """The region the initial C comes from, if any (the bias, or C itself)."""
    if rec.bias is not None:
        return (rec.bias,)
    return (rec.dst,) if rec.accumulate else ()


def _initial_reads(rec: Mmad, mp: int, np_: int, frames: _Frames) -> list:
    """The access records of the initial C (see :func:`_initial_c`)."""
    bias = rec.bias
    if bias is not None:
        return [bias.access(0, rec.n if bias.mem.space == "BT" else mp * np_)]
    return [_window(rec.dst, mp * 16, frames.c_rows * 16, np_ // 16)] if rec.accumulate else []


def _initial_c(core, rec: Mmad, c_flat, mp: int, np_: int, frames: _Frames, reads: list,
               loc):
    """The matrix the product is added to, or None to start from zero."""
    bias = rec.bias
    if bias is not None:
        if bias.mem.space == "BT":
            # Bias-table entries are one row of n values, broadcast down every row of C.
            row = np.zeros(np_, dtype=bias.dtype)
            row[:rec.n] = view(core, bias, 0, rec.n, loc)
            reads.append(bias.access(0, rec.n))
            return np.broadcast_to(row, (mp, np_))
        reads.append(bias.access(0, mp * np_))
        return fractal.nz_to_nd(view(core, bias, 0, mp * np_, loc), mp, np_, fractal.L0C_C0)
    if not rec.accumulate:
        return None
    reads.append(_window(rec.dst, mp * 16, frames.c_rows * 16, np_ // 16))
    return fractal.nz_to_nd(c_flat, mp, np_, fractal.L0C_C0, frames.c_rows)


# ------------------------------------------------------------------------------ fixpipe
def execute_fixpipe(core, rec: FixPipe):
    if rec.src is None:
        return _fixpipe_block(core, rec)
    loc, src = rec.loc, rec.src
    dst = rec.dst
    if rec.sub_block is not None and dst.mem.space == "UB":
        dst = _aiv_ub(core, dst, rec.sub_block, loc)
    cost = route(core, src, dst, loc)
    check_alignment(core, rec.op, (src, dst), loc)
    nd, m, n, c0 = rec.nd_num, rec.m, rec.n, rec.c0
    i = np.arange(nd)[:, None, None]
    r = np.arange(m)[None, :, None]
    c = np.arange(n)[None, None, :]
    src_idx = (i * rec.src_nd_stride * 256 + (c // 16) * rec.src_stride * 16 + r * 16 + c % 16)
    if rec.layout == "ND":
        dst_idx = i * rec.dst_nd_stride + r * rec.dst_stride + c
        bursts = nd * m
    else:
        dst_idx = i * rec.dst_nd_stride + (c // c0) * rec.dst_stride * c0 + r * c0 + c % c0
        bursts = nd * (n // c0)
    values = core.launch.values
    if values:
        src_view, read = span(core, src, src_idx.reshape(-1), loc)
        dst_view, write = span(core, dst, dst_idx.reshape(-1), loc)
    else:
        read = index_access(src, src_idx.reshape(-1)) if src_idx.size else None
        write = index_access(dst, dst_idx.reshape(-1)) if dst_idx.size else None
        check_accesses(core, [(r, a) for r, a in ((src, read), (dst, write)) if a], loc)
    if read is not None and nd == 1:
        # The m rows of each 16-column strip (a strip is src_stride rows high): the rows
        # below m were not read, and may never have been written.
        size = src.dtype.itemsize
        read = strided(src.mem.key, src.offset, m * 16 * size, rec.src_stride * 16 * size,
                       -(-n // 16))
    if write is not None:
        # A strided record per ND matrix (rows, or NZ strips, of dst_stride pitch):
        # neighbouring blocks of one output interleave them, and a single covering range
        # would make them look like overlapping writes.
        row, pitch, count = ((n, rec.dst_stride, m) if rec.layout == "ND" else
                             (m * c0, rec.dst_stride * c0, n // c0))
        size = dst.dtype.itemsize
        writes = tuple(strided(dst.mem.key, dst.offset + k * rec.dst_nd_stride * size,
                               row * size, pitch * size, count) for k in range(nd))
    else:
        writes = ()
    quant = rec.quant
    if isinstance(quant, Region):  # the per-column scales are read from the fixpipe buffer
        read_quant = quant.access(0, n)
        if not values:
            check_accesses(core, [(quant, read_quant)], loc)
    if values:
        result = src_view[src_idx.reshape(-1)]
        if rec.relu:
            result = np.maximum(result, result.dtype.type(0))
        if quant is not None:
            result = result.astype(np.float32) * _scales(core, quant, nd, m, n, loc)
        encode = BYTE_ENCODERS.get(rec.dst_format)
        if encode is not None:
            if rec.atomic is not None:  # the combine would add codes, not values
                raise KernelError(f"{rec.op}: an atomic {rec.atomic} into {rec.dst_format} "
                                  "output is not supported", loc)
            result = encode(result)
        elif rec.convert and result.dtype != dst.dtype:
            # (fp32 to fp32 after a scale is no conversion: ``convert`` would round to
            # integers, its meaning for a same-type cast on the vector unit.)
            result = convert(result, dst.dtype, "rint")
        flat = dst_idx.reshape(-1)
        if rec.atomic is not None:  # combined with what GM holds, in GM's type
            result = ATOMIC_OPS[rec.atomic](dst_view[flat], result.astype(dst.dtype))
        dst_view[flat] = result
        stored(dst, dst_view)
    dst_bytes = int(dst_idx.size) * dst.dtype.itemsize
    # FixPipe reads whole 16-column strips of L0C, and cannot outrun its L0C read port.
    src_bytes = nd * m * (-(-n // 16) * 16) * src.dtype.itemsize
    core.count_bytes(cost.path, dst_bytes)
    gm = None
    if rec.layout == "ND" and dst.mem.space == "GM" and dst_idx.size:
        size = dst.dtype.itemsize
        starts = dst.offset + (i * rec.dst_nd_stride + r * rec.dst_stride).reshape(-1) * size
        gm = (dst.mem.id, starts, starts + n * size)
    elif dst.mem.space == "GM" and dst_idx.size:  # NZ strips: the written element runs
        size = dst.dtype.itemsize
        first, count = _element_runs(dst_idx)
        starts = dst.offset + first * size
        gm = (dst.mem.id, starts, starts + count * size)
    regions = (src, dst)
    flag_key = (src.mem.key, src.offset)
    if rec.unit_flag is not None:
        unit_flag.wait(core, "FIX", flag_key, rec.unit_flag, loc)
    ready = gates_ready(regions)
    start = core.begin(cost.pipe, ready if ready > rec.after else rec.after)
    busy, latency = core.costs.transfer(core, cost, dst_bytes, bursts, gm, start)
    busy = max(busy, core.costs.l0c_read_cycles(src_bytes))
    reads = (read,) if read else ()
    if isinstance(quant, Region):
        reads += (read_quant,)
    instr = core.place(cost.pipe, rec.op, start, busy, latency, loc, reads, writes, rec)
    gates_done(regions, instr.done)
    if rec.unit_flag is not None:
        unit_flag.done(core, "FIX", flag_key, rec.unit_flag, instr.done, loc)
    return instr


def _element_runs(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first element, length) of the runs of consecutive elements ``index`` covers, so the
    L2 model sees a FixPipe's NZ strips as the GM ranges they write."""
    flat = np.unique(index.reshape(-1))
    breaks = np.flatnonzero(np.diff(flat) != 1) + 1
    first = flat[np.concatenate(([0], breaks))]
    ends = np.concatenate((breaks, [flat.size]))
    return first.astype(np.int64), (ends - np.concatenate(([0], breaks))).astype(np.int64)


def _scales(core, quant, nd: int, m: int, n: int, loc) -> np.ndarray:
    """The fp32 scale of every element of an ``nd x m x n`` FixPipe source, flattened."""
    if not isinstance(quant, Region):
        return np.float32(quant)
    words = view(core, quant, 0, n, loc).astype(np.uint64)
    # The 950's fixpipe keeps the sign, the exponent and the top 10 mantissa bits of each
    # per-channel fp32 scale (PTO-ISA masks the word with 0xFFFFE000, as hicann/pypto's MX
    # scale-tile test notes).
    per_column = (words & np.uint64(DEQ_TENSOR_MASK)).astype(np.uint32).view(np.float32)
    return np.broadcast_to(per_column, (nd, m, n)).reshape(-1)


def _fixpipe_block(core, rec: FixPipe):
    """The block form: a result computed in bulk, written row by row (or timed only)."""
    dst, loc = rec.dst, rec.loc
    path = rec.path or f"L0C->{dst.mem.space}"
    cost = core.costs.path(core.kind, path)
    if cost is None:
        raise KernelError(f"there is no {path} data path on {core.soc.name}", loc)
    m, n = rec.m, rec.n
    writes = ()
    if dst is not None:
        size = dst.dtype.itemsize
        writes = (strided(dst.mem.key, dst.offset, n * size, rec.dst_stride * size, m),)
        if rec.values is not None and core.launch.values:
            write_rows(core, dst, m, n, rec.dst_stride, rec.values, rec.atomic, loc)
        elif m and n:
            check_accesses(core, ((dst, writes[0]),), loc)
    nbytes = m * n * np.dtype(rec.dtype).itemsize
    ready = gates_ready((dst,))
    start = core.begin(cost.pipe, ready if ready > rec.after else rec.after)
    busy, latency = core.costs.transfer(core, cost, nbytes, m, None, start)
    if rec.hold_until > start:  # UnitFlag: issued early, holds FIX until the units come
        busy += rec.hold_until - start
    instr = core.place(cost.pipe, rec.op, start, busy, latency, loc, (), writes, rec)
    core.count_bytes(path, nbytes)
    gates_done((dst,), instr.done)
    return instr


def _aiv_ub(core, dst: Region, sub_block: int, loc) -> Region:
    """``dst``'s address in the UB of the AIV ``sub_block`` of the caller's group: FixPipe
    L0C->UB (3510) writes an AIV's UB directly, so the write lands in (and is recorded in) that
    AIV's memory space."""
    aiv = core.launch.partner(core, "AIV", sub_block)
    if aiv is None:
        raise KernelError(f"fixpipe to UB: the {core.kind} of block {core.block_idx} has no AIV "
                          f"with sub_block_id {sub_block} (L0C->UB needs a MIX kernel)", loc)
    return dst._replace(mem=aiv.mem["UB"])


# ------------------------------------------------------------------------------ products
class _Ready:
    """A product computed in the caller's thread, with a worker product's interface."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def execute_cube_product(core, rec: CubeProduct):
    if rec.sparse_index is not None:
        exec_sparse.require_sparse(core, "sparse Matmul", rec.loc)
    if not core.launch.values:
        return _Ready(None)
    a, b = rec.a(), rec.b()
    bias = rec.bias() if rec.bias is not None else None
    if rec.sparse_index is not None:
        out = exec_sparse.selected_product(a, b, rec.sparse_index(), rec.loc)
        return _Ready(out if bias is None else out + bias.astype(np.int32))
    if rec.hf32 and a.dtype == np.float32 and b.dtype == np.float32:
        a, b = to_hf32(a, rec.hf32), to_hf32(b, rec.hf32)
    if a.dtype.kind in "iu":  # int8 in int32, exactly
        out = np.matmul(a.astype(np.int32), b.astype(np.int32))
        if bias is not None:
            out += bias.astype(np.int32)
        return _Ready(out)
    return start_cube_matmul(a, b, None if bias is None else bias.astype(np.float32))


def execute_matmul_bookkeeping(core, rec: MatmulBookkeeping) -> None:
    """The Matmul API's own scalar work for one event, priced by the cost model."""
    cycles = core.costs.matmul_scalar(rec.event, rec.const_tiling)
    if cycles is None:
        raise KernelError(f"Matmul bookkeeping event {rec.event!r}: expected one of "
                          f"{MATMUL_EVENTS}", rec.loc)
    core.scalar_work(cycles)


EXECUTORS = {Mmad: execute_mmad, FixPipe: execute_fixpipe, CubeProduct: execute_cube_product,
             MatmulBookkeeping: execute_matmul_bookkeeping}
