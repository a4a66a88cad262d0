"""The low-level cube API: ``load_data``, ``load_data_with_transpose``, ``mmad``, ``fixpipe`` and
the ``Nd2NzParams`` form of ``data_copy``.

Data in L1/L0A/L0B/L0C is kept in the hardware's fractal layouts (:mod:`ascsim.sim.fractal`), so
a kernel that gets a stride or a layout wrong computes wrong numbers, as it would on the device.
Every call is one instruction on its pipe (MTE2 for GM->L1, MTE1 for L1->L0A/L0B, M for Mmad, FIX
for FixPipe) and every data movement is one numpy gather/scatter built from index arrays.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic import data_copy as _dc
from ascsim.asc.basic._exec import execute
from ascsim.asc.context import current_core, user_location
from ascsim.asc.cube_params import (
    FixpipeConfig,
    FixpipeParamsV220,
    LoadData2DParams,
    LoadData2dTransposeParams,
    MmadParams,
    Nd2NzParams,
)
from ascsim.asc.enums import CO2Layout, QuantModes
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.sim import fractal
from ascsim.sim.access import strided
from ascsim.sim.errors import KernelError
from ascsim.sim.numerics import convert, cube_matmul

FRACTAL_BYTES = fractal.FRACTAL_BYTES

#: Layout Mmad expects in L0A, per NPU architecture (ascend-hw §2.2: ZZ on 2201, NZ on 3510).
L0A_LAYOUT = {2201: "ZZ", 3510: "NZ"}
#: Architectures whose MTE1 cannot transpose on the way into L0A (ascend-hw §2.3).
NO_L0A_TRANSPOSE = frozenset({3510})

#: Mmad input type -> accumulator (L0C) type (ascend-hw §3.1).
ACCUMULATOR = {"float16": "float32", "bfloat16": "float32", "float32": "float32",
               "int8": "int32", "uint8": "int32"}

#: FixPipe pre-quantisation: mode -> (L0C type, destination type); None = same type.
QUANT = {QuantModes.NoQuant: None,
         QuantModes.F322F16: ("float32", "float16"),
         QuantModes.F322BF16: ("float32", "bfloat16")}

_READ_LOADS = ("L0A", "L0B", "L1")


# ------------------------------------------------------------------------------ helpers
def _name(tensor) -> str:
    if isinstance(tensor, GlobalTensor):
        tensor._require_bound()
        return "GM"
    if not isinstance(tensor, LocalTensor):
        raise KernelError(f"expected a LocalTensor or GlobalTensor, got {type(tensor).__name__}",
                          user_location())
    tensor._require_bound()
    return tensor.mem.name


def _require(tensor, buffers: tuple[str, ...], what: str, op: str, loc) -> None:
    name = _name(tensor)
    if name not in buffers:
        raise KernelError(f"{op}: {what} must be in {' or '.join(buffers)}, got a tensor in "
                          f"{name}", loc)


def _check_alignment(op: str, tensors, loc) -> None:
    core = current_core()
    for t in tensors:
        if t is None or isinstance(t, GlobalTensor):
            continue
        align = core.soc.alignment.get(t.mem.name, 32)
        if t.addr % align:
            core.launch.findings.report(
                "alignment", f"{op}: {t.mem.name} address {t.addr} is not {align}-byte aligned",
                loc, hint=f"{t.mem.name} operands of cube instructions must start on a "
                f"{align}-byte boundary; offset views by whole fractals", core=core.core_id)


def _access(tensor, lo_elem: int, hi_elem: int) -> tuple:
    size = tensor.dtype.sizeof()
    if isinstance(tensor, GlobalTensor):
        base = tensor.byte_offset
        return (("GM", tensor.buffer.id), base + lo_elem * size, base + hi_elem * size)
    return (tensor.mem.key, tensor.addr + lo_elem * size, tensor.addr + hi_elem * size)


def _strided(tensor, lo_elem: int, row: int, pitch: int, rows: int) -> tuple:
    """The access record of ``rows`` rows of ``row`` elements every ``pitch`` elements."""
    size = tensor.dtype.sizeof()
    space, lo, _ = _access(tensor, lo_elem, lo_elem)
    return strided(space, lo, row * size, pitch * size, rows)


def _span(tensor, idx: np.ndarray, loc) -> tuple[np.ndarray, tuple | None]:
    """(numpy view of ``tensor`` covering every element index in ``idx``, access record)."""
    if not idx.size:
        return tensor.elements(0, 0, loc), None
    lo, hi = int(idx.min()), int(idx.max()) + 1
    return tensor.elements(0, hi, loc), _access(tensor, lo, hi)


def _local(*tensors):
    return tuple(t for t in tensors if isinstance(t, LocalTensor))


def _cycles(path: str, nbytes: int, bursts: int, gm=None) -> tuple[float, float]:
    return _dc.transfer_cycles(path, nbytes, max(1, bursts), gm=gm)


def _gm_rows(tensor, first_elems: np.ndarray, row_elems: int):
    """``(buffer_id, starts, ends)`` in bytes of GM rows starting at element offsets
    ``first_elems`` of ``tensor`` (for the L2 model), or None when it is not in GM."""
    if not isinstance(tensor, GlobalTensor) or not first_elems.size:
        return None
    size = tensor.dtype.sizeof()
    starts = tensor.byte_offset + first_elems.reshape(-1).astype(np.int64) * size
    return tensor.buffer.id, starts, starts + row_elems * size


def _same_size(op: str, dst, src, loc) -> None:
    if dst.dtype.sizeof() != src.dtype.sizeof():
        raise KernelError(f"{op}: source ({src.dtype.name}) and destination ({dst.dtype.name}) "
                          "element types must match", loc)


# ------------------------------------------------------------------------------ GM -> L1 ND2NZ
def nd2nz_copy(dst, src, params: Nd2NzParams, loc) -> None:
    """``data_copy(dst_l1, src_gm, Nd2NzParams)``: ND rows in GM -> NZ fractal strips in L1."""
    if not isinstance(src, GlobalTensor):
        raise KernelError("data_copy with Nd2NzParams copies from GM: the source must be a "
                          "GlobalTensor", loc)
    path, pipe = _dc.resolve_path(dst, src, loc)
    _same_size("data_copy(Nd2NzParams)", dst, src, loc)
    _check_alignment("data_copy(Nd2NzParams)", (dst,), loc)
    p = params
    c0 = fractal.c0_of(src.dtype.np_dtype)
    pieces = -(-p.d_value // c0)
    i = np.arange(p.nd_num)[:, None, None, None]
    j = np.arange(p.n_value)[None, :, None, None]
    piece = np.arange(pieces)[None, None, :, None]
    col = piece * c0 + np.arange(c0)
    valid = np.broadcast_to(col < p.d_value, (p.nd_num, p.n_value, pieces, c0))
    src_idx = (i * p.src_nd_matrix_stride + j * p.src_d_value + col)
    src_idx = np.broadcast_to(src_idx, valid.shape)
    dst_idx = (i * p.dst_nz_matrix_stride + j * p.dst_nz_n_stride * c0
               + piece * p.dst_nz_c0_stride * c0 + np.arange(c0))
    dst_idx = np.broadcast_to(dst_idx, valid.shape)
    src_view, read = _span(src, src_idx[valid], loc)
    dst_view, write = _span(dst, dst_idx.reshape(-1), loc)
    if dst_idx.size:
        values = np.zeros(valid.shape, dtype=dst.dtype.np_dtype)
        # Rows end mid-piece: the DMA zero-fills the rest of the 32-byte block in L1.
        values[valid] = src_view[src_idx[valid]].view(dst.dtype.np_dtype)
        dst_view[dst_idx.reshape(-1)] = values.reshape(-1)
    nbytes = int(dst_idx.size) * dst.dtype.sizeof()
    current_core().count_bytes(path, nbytes)
    rows = _gm_rows(src, (i * p.src_nd_matrix_stride + j * p.src_d_value), p.d_value)
    busy, latency = _cycles(path, nbytes, p.nd_num * p.n_value, rows)
    execute(pipe, "data_copy_nd2nz", busy, latency, loc, _local(dst),
            (read,) if read else (), (write,) if write else (), info=(path, nbytes))


_dc.EXTRA_FORMS[Nd2NzParams] = nd2nz_copy


# ------------------------------------------------------------------------------ load_data
def _params_arg(args, kwargs, names, types, op, loc):
    for name in names:
        if name in kwargs:
            return kwargs.pop(name)
    for arg in args:
        if isinstance(arg, types):
            return arg
    wanted = " or ".join(t.__name__ for t in types)
    raise KernelError(f"{op}: missing its parameter struct ({wanted})", loc)


def load_data(dst, src, *args, **kwargs) -> None:
    """``load_data(dst, src, LoadData2DParams)``: whole 512-byte fractals, L1 -> L0A/L0B (or GM ->
    L0A/L0B/L1 where that path exists), optionally transposing each 16-bit fractal."""
    loc = user_location()
    params = _params_arg(args, kwargs, ("params", "load_data_params"),
                         (LoadData2DParams, LoadData2dTransposeParams), "load_data", loc)
    if isinstance(params, LoadData2dTransposeParams):
        _load_transposed(dst, src, params, loc)
        return
    _require(dst, ("L0A", "L0B", "L1"), "the destination", "load_data", loc)
    path, pipe = _dc.resolve_path(dst, src, loc)
    _same_size("load_data", dst, src, loc)
    _check_alignment("load_data", (dst, src), loc)
    p = params
    if p.addr_mode != 0:
        raise KernelError(f"load_data: addr_mode {p.addr_mode} (decreasing addresses) is not "
                          "modelled; use addr_mode=0", loc)
    size = dst.dtype.sizeof()
    per = FRACTAL_BYTES // size
    within = np.arange(per)
    if p.if_transpose:
        if size != 2:
            raise KernelError("load_data: if_transpose transposes 16-bit fractals only; use "
                              "load_data_with_transpose for 8- and 32-bit types", loc)
        within = within.reshape(16, 16).T.reshape(-1)
    r = np.arange(p.repeat_times)[:, None]
    src_idx = (p.start_index + r * p.src_stride) * per + within[None, :]
    dst_idx = r * (1 + p.dst_gap) * per + np.arange(per)[None, :]
    src_view, read = _span(src, src_idx.reshape(-1), loc)
    dst_view, write = _span(dst, dst_idx.reshape(-1), loc)
    if src_idx.size:
        dst_view[dst_idx.reshape(-1)] = src_view[src_idx.reshape(-1)].view(dst.dtype.np_dtype)
    nbytes = p.repeat_times * FRACTAL_BYTES
    current_core().count_bytes(path, nbytes)
    busy, latency = _cycles(path, nbytes, 1)
    execute(pipe, "load_data", busy, latency, loc, _local(dst, src),
            (read,) if read else (), (write,) if write else (), info=(path, nbytes))


def load_data_with_transpose(dst, src, *args, **kwargs) -> None:
    """``load_data_with_transpose(dst, src, LoadData2dTransposeParams)`` (L1 -> L0A/L0B)."""
    loc = user_location()
    params = _params_arg(args, kwargs, ("params", "load_data_params"),
                         (LoadData2dTransposeParams,), "load_data_with_transpose", loc)
    _load_transposed(dst, src, params, loc)


def _load_transposed(dst, src, p: LoadData2dTransposeParams, loc) -> None:
    op = "load_data_with_transpose"
    _require(src, ("L1",), "the source", op, loc)
    _require(dst, ("L0A", "L0B"), "the destination", op, loc)
    core = current_core()
    if dst.mem.name == "L0A" and core.soc.npu_arch in NO_L0A_TRANSPOSE:
        raise KernelError(f"{op}: {core.soc.name} cannot transpose on the way into L0A "
                          "(the L1->L0A transpose was removed on this architecture)", loc)
    path, pipe = _dc.resolve_path(dst, src, loc)
    _same_size(op, dst, src, loc)
    _check_alignment(op, (dst, src), loc)
    if p.addr_mode != 0:
        raise KernelError(f"{op}: addr_mode {p.addr_mode} is not modelled; use addr_mode=0", loc)
    size = dst.dtype.sizeof()
    c0 = 32 // size
    per = FRACTAL_BYTES // size
    group = 1 if c0 == 16 else 2  # fractals per square block: 16x16 b16, 32x32 b8, 16x16 b32
    reps = p.repeat_times
    r = np.arange(reps)
    # Element positions (inside one square) of the two source fractals, as a (group, 16, c0)
    # grid: the square is the fractals stacked (b8: 16x32 on 16x32) or side by side (b32).
    grid = np.arange(group * per).reshape(group, 16, c0)
    if c0 > 16:
        square = grid.reshape(group * 16, c0)
        halves = square.T.reshape(group, 16, c0)
    elif c0 < 16:
        square = grid.transpose(1, 0, 2).reshape(16, group * c0)
        halves = square.T.reshape(16, group, c0).transpose(1, 0, 2)
    else:
        halves = grid.transpose(0, 2, 1)
    # halves[h] holds, for each element of destination fractal h, its index in the square.
    src_idx = ((p.start_index + r * p.src_stride)[:, None, None] * group * per
               + halves.reshape(group, per)[None])
    frac = r[:, None] * (1 + p.dst_gap) + np.arange(group)[None, :] * (1 + p.dst_frac_gap)
    dst_idx = frac[:, :, None] * per + np.arange(per)[None, None, :]
    src_view, read = _span(src, src_idx.reshape(-1), loc)
    dst_view, write = _span(dst, dst_idx.reshape(-1), loc)
    if src_idx.size:
        dst_view[dst_idx.reshape(-1)] = src_view[src_idx.reshape(-1)].view(dst.dtype.np_dtype)
    nbytes = reps * group * FRACTAL_BYTES
    core.count_bytes(path, nbytes)
    busy, latency = _cycles(path, nbytes, 1)
    execute(pipe, op, busy, latency, loc, _local(dst, src),
            (read,) if read else (), (write,) if write else (), info=(path, nbytes))


# ------------------------------------------------------------------------------ mmad
def mmad(dst, fm, filter, *args, **kwargs) -> None:  # noqa: A002 - pyasc's parameter name
    """``mmad(dst_l0c, a_l0a, b_l0b[, bias], MmadParams)``: C (+)= A . B (+ bias) in L0C."""
    loc = user_location()
    params = _params_arg(args, kwargs, ("params", "mmad_params"), (MmadParams,), "mmad", loc)
    bias = kwargs.pop("bias", None)
    for arg in args:
        if isinstance(arg, LocalTensor) and bias is None:
            bias = arg
    if kwargs:
        raise KernelError(f"mmad: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    _require(dst, ("L0C",), "dst", "mmad", loc)
    _require(fm, ("L0A",), "fm (the left matrix)", "mmad", loc)
    _require(filter, ("L0B",), "filter (the right matrix)", "mmad", loc)
    if bias is not None:
        _require(bias, ("BT", "L0C"), "bias", "mmad", loc)
    in_type, acc_type = fm.dtype.name, ACCUMULATOR.get(fm.dtype.name)
    if acc_type is None or filter.dtype.name != in_type:
        raise KernelError(f"mmad: unsupported input types {fm.dtype.name} x {filter.dtype.name}; "
                          f"supported: {', '.join(ACCUMULATOR)} (both inputs alike)", loc)
    if dst.dtype.name != acc_type:
        raise KernelError(f"mmad: {in_type} inputs accumulate in {acc_type}, but dst is "
                          f"{dst.dtype.name}", loc)
    if bias is not None and bias.dtype.name != acc_type:
        raise KernelError(f"mmad: the bias must be {acc_type}, got {bias.dtype.name}", loc)
    _check_alignment("mmad", (dst, fm, filter, bias), loc)
    core = current_core()
    p = params
    m, n, k = p.m, p.n, p.k
    c0 = fractal.c0_of(fm.dtype.np_dtype)
    m1, n1, k1 = -(-m // 16), -(-n // 16), -(-k // c0)
    mp, np_, kp = m1 * 16, n1 * 16, k1 * c0
    reads, writes = [], []
    a_flat = fm.elements(0, mp * kp, loc)
    b_flat = filter.elements(0, kp * np_, loc)
    c_flat = dst.elements(0, mp * np_, loc)
    reads += [fm.access(0, mp * kp), filter.access(0, kp * np_)]
    writes.append(dst.access(0, mp * np_))
    if mp and np_:
        to_nd = fractal.nz_to_nd if L0A_LAYOUT.get(core.soc.npu_arch, "ZZ") == "NZ" \
            else fractal.zz_to_nd
        a = to_nd(a_flat, mp, kp, c0)[:, :k]
        b = fractal.zn_to_nd(b_flat, kp, np_, c0)[:k, :]
        initial = _initial_c(dst, c_flat, bias, p, mp, np_, n, reads, loc)
        result = _matmul(a, b, initial, acc_type)
        c_flat[:] = fractal.nd_to_nz(result.astype(acc_type), fractal.L0C_C0).reshape(-1)
    busy = core.soc.cube.mmad_cycles(m, n, k, in_type)
    tensors = _local(dst, fm, filter, bias)
    execute("M", "mmad", busy, 0, loc, tensors, tuple(reads), tuple(writes),
            info=("mmad", m, n, k, in_type))


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


def _initial_c(dst, c_flat, bias, p: MmadParams, mp: int, np_: int, n: int, reads, loc):
    """The matrix the product is added to, or None to start from zero."""
    if bias is not None:
        if bias.mem.name == "BT":
            # Bias-table entries are one row of n values, broadcast down every row of C.
            row = np.zeros(np_, dtype=bias.dtype.np_dtype)
            row[:n] = bias.elements(0, n, loc)
            reads.append(bias.access(0, n))
            return np.broadcast_to(row, (mp, np_))
        reads.append(bias.access(0, mp * np_))
        return fractal.nz_to_nd(bias.elements(0, mp * np_, loc), mp, np_, fractal.L0C_C0)
    if not p.accumulate:
        return None
    if p.cmatrix_source:
        raise KernelError("mmad: cmatrix_source=True takes C's initial value from the bias "
                          "table, but no bias tensor was passed", loc)
    reads.append(dst.access(0, mp * np_))
    return fractal.nz_to_nd(c_flat, mp, np_, fractal.L0C_C0)


# ------------------------------------------------------------------------------ fixpipe
def fixpipe(dst, src, *args, **kwargs) -> None:
    """``fixpipe(dst, src_l0c, FixpipeParamsV220, FixpipeConfig)``: L0C -> GM / L1 (/ UB on SoCs
    with that path), with optional ReLU, fp32 -> fp16/bf16 conversion and NZ -> ND."""
    loc = user_location()
    params = _params_arg(args, kwargs, ("params", "intri_params"), (FixpipeParamsV220,),
                         "fixpipe", loc)
    config = kwargs.pop("config", None)
    for arg in args:
        if isinstance(arg, FixpipeConfig) or (callable(arg) and not isinstance(arg, LocalTensor)):
            config = arg
        elif isinstance(arg, LocalTensor):
            raise KernelError("fixpipe with a cbuf_workspace (tensor quantisation) is not "
                              "modelled; supported quant_pre: "
                              + ", ".join(q.name for q in QUANT), loc)
    if callable(config):  # pyasc passes FixpipeConfig.cfg_row_major itself as the default
        config = config()
    config = config or FixpipeConfig.cfg_row_major()
    _require(src, ("L0C",), "the source", "fixpipe", loc)
    path, pipe = _dc.resolve_path(dst, src, loc)
    p = params
    if path == "L0C->UB":
        dst = _aiv_ub(dst, p.sub_block_id, loc)
    quant = QUANT.get(p.quant_pre, "missing")
    if quant == "missing":
        raise KernelError(f"fixpipe: quant_pre {p.quant_pre.name} is not modelled; supported: "
                          + ", ".join(q.name for q in QUANT), loc)
    want_src, want_dst = quant if quant else (src.dtype.name, src.dtype.name)
    if src.dtype.name != want_src or dst.dtype.name != want_dst:
        raise KernelError(f"fixpipe: quant_pre {p.quant_pre.name} converts {want_src} -> "
                          f"{want_dst}, but src is {src.dtype.name} and dst {dst.dtype.name}",
                          loc)
    _check_alignment("fixpipe", (src, dst), loc)
    dst_size = dst.dtype.sizeof()
    i = np.arange(p.nd_num)[:, None, None]
    r = np.arange(p.m_size)[None, :, None]
    c = np.arange(p.n_size)[None, None, :]
    src_idx = (i * p.src_nd_stride * 256 + (c // 16) * p.src_stride * 16 + r * 16 + c % 16)
    if config.layout == CO2Layout.ROW_MAJOR:
        dst_idx = i * p.dst_nd_stride + r * p.dst_stride + c
        bursts = p.nd_num * p.m_size
    else:
        c0 = 8 if (p.is_channel_split and dst_size == 4) else 16
        if p.n_size % c0:
            raise KernelError(f"fixpipe: an NZ destination needs n_size a multiple of {c0}, "
                              f"got {p.n_size}", loc)
        dst_idx = (i * p.dst_nd_stride + (c // c0) * p.dst_stride * c0
                   + r * c0 + c % c0)
        bursts = p.nd_num * (p.n_size // c0)
    src_view, read = _span(src, src_idx.reshape(-1), loc)
    dst_view, write = _span(dst, dst_idx.reshape(-1), loc)
    if write is not None:
        # A strided record per ND matrix (rows, or NZ strips, of dst_stride pitch):
        # neighbouring blocks of one output interleave them, and a single covering range
        # would make them look like overlapping writes.
        row, pitch, count = ((p.n_size, p.dst_stride, p.m_size)
                             if config.layout == CO2Layout.ROW_MAJOR else
                             (p.m_size * c0, p.dst_stride * c0, p.n_size // c0))
        writes = tuple(_strided(dst, nd * p.dst_nd_stride, row, pitch, count)
                       for nd in range(p.nd_num))
    else:
        writes = (write,) if write else ()
    values = src_view[src_idx.reshape(-1)]
    if p.relu_en:
        values = np.maximum(values, values.dtype.type(0))
    if quant:
        values = convert(values, dst.dtype.np_dtype, "rint")
    dst_view[dst_idx.reshape(-1)] = values
    dst_bytes = int(dst_idx.size) * dst_size
    # FixPipe reads whole 16-column strips of L0C, and cannot outrun its L0C read port.
    src_bytes = p.nd_num * p.m_size * (-(-p.n_size // 16) * 16) * src.dtype.sizeof()
    core = current_core()
    core.count_bytes(path, dst_bytes)
    rows = (_gm_rows(dst, i * p.dst_nd_stride + r * p.dst_stride, p.n_size)
            if config.layout == CO2Layout.ROW_MAJOR else None)
    busy, latency = _cycles(path, dst_bytes, bursts, rows)
    read_rate = core.soc.core_bw(core.kind.lower()).for_path("L0C->L1")
    busy = max(busy, src_bytes / read_rate + core.timing.fixpipe_startup_cycles)
    execute(pipe, "fixpipe", busy, latency, loc, _local(dst, src),
            (read,) if read else (), writes, info=(path, dst_bytes))


def _aiv_ub(dst: LocalTensor, sub_block: int, loc) -> LocalTensor:
    """``dst``'s address in the UB of the AIV ``sub_block`` of the caller's group: FixPipe
    L0C->UB (3510) writes an AIV's UB directly, so the write lands in (and is recorded in) that
    AIV's memory space, as the Matmul API's ``_to_ub`` does."""
    core = current_core()
    for other in core.launch.cores:
        if other.kind == "AIV" and other.group == core.group and other.sub_block_idx == sub_block:
            return LocalTensor.bound(other.mem["UB"], dst.position, dst.addr, dst.length,
                                     dst.dtype, dst.slot, dst.alloc_end)
    raise KernelError(f"fixpipe to UB: the {core.kind} of block {core.block_idx} has no AIV "
                      f"with sub_block_id {sub_block} (L0C->UB needs a MIX kernel)", loc)


# The parameter structs are re-exported so ``asc`` gets the whole cube API from this module.
__all__ = ["FixpipeConfig", "FixpipeParamsV220", "LoadData2DParams", "LoadData2dTransposeParams",
           "MmadParams", "Nd2NzParams", "fixpipe", "load_data", "load_data_with_transpose", "mmad"]
