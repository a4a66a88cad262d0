"""The low-level cube API: ``load_data``, ``load_data_with_transpose``, ``mmad``, ``fixpipe`` and
the ``Nd2NzParams`` form of ``data_copy``.

Data in L1/L0A/L0B/L0C is kept in the hardware's fractal layouts (:mod:`ascsim.sim.fractal`), so
a kernel that gets a stride or a layout wrong computes wrong numbers, as it would on the device.
Every call is one instruction on its pipe (MTE2 for GM->L1, MTE1 for L1->L0A/L0B, M for Mmad, FIX
for FixPipe) and every data movement is one numpy gather/scatter built from index arrays.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascsim.asc.basic import data_copy as _dc
from ascsim.asc.basic.core_config import hf32_rounding
from ascsim.asc.context import current_core, user_location
from ascsim.asc.cube_params import (
    DUAL_DST_SPLITS,
    FixpipeConfig,
    FixpipeParamsV220,
    LoadData2DParams,
    LoadData2dTransposeParams,
    MmadParams,
    Nd2NzParams,
    unit_flag_phase,
)
from ascsim.asc.enums import CO2Layout, QuantModes
from ascsim.asc.errors import CallFormError
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.isa import FixPipe, IndexedCopy, KernelError, Mmad, SparseIndexLoad
from ascsim.sim import fractal

FRACTAL_BYTES = fractal.FRACTAL_BYTES

#: FixPipe pre-quantisation: mode -> (L0C type, destination type); None = same type.
QUANT = {QuantModes.NoQuant: None,
         QuantModes.F322F16: ("float32", "float16"),
         QuantModes.F322BF16: ("float32", "bfloat16")}


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


def _same_size(op: str, dst, src, loc) -> None:
    if dst.dtype.sizeof() != src.dtype.sizeof():
        raise KernelError(f"{op}: source ({src.dtype.name}) and destination ({dst.dtype.name}) "
                          "element types must match", loc)


def indexed_copy(op: str, dst, src, src_idx, dst_idx, nbytes: int, bursts: int, loc,
                 gm_rows=None, fill=0):
    """Execute a fractal load: ``dst[dst_idx] = src[src_idx]`` (negative source indices:
    ``fill``), costed as ``nbytes`` in ``bursts`` bursts."""
    return current_core().execute(IndexedCopy(src.region(), dst.region(), src_idx, dst_idx,
                                              nbytes, max(1, bursts), loc, op, gm_rows, fill))


# ------------------------------------------------------------------------------ GM -> L1 ND2NZ
def nd2nz_copy(dst, src, params: Nd2NzParams, loc) -> None:
    """``data_copy(dst_l1, src_gm, Nd2NzParams)``: ND rows in GM -> NZ fractal strips in L1."""
    if not isinstance(src, GlobalTensor):
        raise KernelError("data_copy with Nd2NzParams copies from GM: the source must be a "
                          "GlobalTensor", loc)
    _same_size("data_copy(Nd2NzParams)", dst, src, loc)
    p = params
    src_idx, dst_idx, row_start = _nd2nz_indices(
        fractal.c0_of(src.dtype.np_dtype), p.nd_num, p.n_value, p.d_value,
        p.src_nd_matrix_stride, p.src_d_value, p.dst_nz_matrix_stride, p.dst_nz_n_stride,
        p.dst_nz_c0_stride)
    nbytes = int(dst_idx.size) * dst.dtype.sizeof()
    indexed_copy("data_copy_nd2nz", dst, src, src_idx, dst_idx, nbytes, p.nd_num * p.n_value,
                 loc, gm_rows=(row_start, p.d_value))


@lru_cache(maxsize=512)
def _nd2nz_indices(c0: int, nd_num: int, n_value: int, d_value: int, src_nd_stride: int,
                   src_d_value: int, dst_nz_matrix_stride: int, dst_nz_n_stride: int,
                   dst_nz_c0_stride: int):
    """(source, destination) element indices and GM row starts of an ND2NZ copy, as read-only
    arrays shared by every copy of the same parameters (a cube loop copies the same slab shape
    over and over)."""
    pieces = -(-d_value // c0)
    i = np.arange(nd_num)[:, None, None, None]
    j = np.arange(n_value)[None, :, None, None]
    piece = np.arange(pieces)[None, None, :, None]
    col = piece * c0 + np.arange(c0)
    shape = (nd_num, n_value, pieces, c0)
    row_start = i * src_nd_stride + j * src_d_value
    # Rows end mid-piece: the DMA zero-fills the rest of the 32-byte block in L1.
    src_idx = np.broadcast_to(np.where(col < d_value, row_start + col, -1), shape)
    dst_idx = np.broadcast_to(i * dst_nz_matrix_stride + j * dst_nz_n_stride * c0
                              + piece * dst_nz_c0_stride * c0 + np.arange(c0), shape)
    row_start.flags.writeable = False
    return src_idx, dst_idx, row_start


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
    _same_size("load_data", dst, src, loc)
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
    indexed_copy("load_data", dst, src, src_idx, dst_idx, p.repeat_times * FRACTAL_BYTES, 1, loc)


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
    soc = current_core().soc
    if dst.mem.name == "L0A" and not soc.l1_to_l0a_transpose:
        raise KernelError(f"{op}: {soc.name} cannot transpose on the way into L0A "
                          "(the L1->L0A transpose was removed on this architecture)", loc)
    _same_size(op, dst, src, loc)
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
    # halves[h] holds, for each element of destination fractal h, its index in the square;
    # the square's second source fractal lies src_frac_gap fractals after the first's end.
    in_square = halves.reshape(group, per)
    in_square = in_square + (in_square // per) * getattr(p, "src_frac_gap", 0) * per
    src_idx = ((p.start_index + r * p.src_stride)[:, None, None] * group * per
               + in_square[None])
    frac = r[:, None] * (1 + p.dst_gap) + np.arange(group)[None, :] * (1 + p.dst_frac_gap)
    dst_idx = frac[:, :, None] * per + np.arange(per)[None, None, :]
    indexed_copy(op, dst, src, np.broadcast_to(src_idx, dst_idx.shape), dst_idx,
                 reps * group * FRACTAL_BYTES, 1, loc)


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
        raise CallFormError(f"mmad: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    _require(dst, ("L0C",), "dst", "mmad", loc)
    _require(fm, ("L0A",), "fm (the left matrix)", "mmad", loc)
    _require(filter, ("L0B",), "filter (the right matrix)", "mmad", loc)
    if bias is not None:
        _require(bias, ("BT", "L0C"), "bias", "mmad", loc)
    p = params
    if bias is None and p.accumulate and p.cmatrix_source:
        raise KernelError("mmad: cmatrix_source=True takes C's initial value from the bias "
                          "table, but no bias tensor was passed", loc)
    hf32 = hf32_rounding() if fm.dtype.name == "float32" else None
    current_core().execute(Mmad(p.m, p.n, p.k, fm.dtype.name, loc, dst.region(), fm.region(),
                                filter.region(), None if bias is None else bias.region(),
                                bool(p.accumulate), hf32=hf32,
                                unit_flag=unit_flag_phase(p.unit_flag, "mmad", loc)))


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
    p = params
    quant = QUANT.get(p.quant_pre, "missing")
    if quant == "missing":
        raise KernelError(f"fixpipe: quant_pre {p.quant_pre.name} is not modelled; supported: "
                          + ", ".join(q.name for q in QUANT), loc)
    want_src, want_dst = quant if quant else (src.dtype.name, src.dtype.name)
    if src.dtype.name != want_src or dst.dtype.name != want_dst:
        raise KernelError(f"fixpipe: quant_pre {p.quant_pre.name} converts {want_src} -> "
                          f"{want_dst}, but src is {src.dtype.name} and dst {dst.dtype.name}",
                          loc)
    row_major = config.layout == CO2Layout.ROW_MAJOR
    c0 = 8 if (p.is_channel_split and dst.dtype.sizeof() == 4) else 16
    if not row_major and p.n_size % c0:
        raise KernelError(f"fixpipe: an NZ destination needs n_size a multiple of {c0}, "
                          f"got {p.n_size}", loc)
    unit = unit_flag_phase(p.unit_flag, "fixpipe", loc)
    for sub_block, at, m, n in _destinations(dst, p, loc):
        current_core().execute(FixPipe(
            dst.region(), m, n, loc, src=src[at:].region() if at else src.region(),
            nd_num=p.nd_num, src_nd_stride=p.src_nd_stride, src_stride=p.src_stride,
            dst_nd_stride=p.dst_nd_stride, dst_stride=p.dst_stride,
            layout="ND" if row_major else "NZ", c0=c0, relu=bool(p.relu_en),
            convert=bool(quant), sub_block=sub_block, unit_flag=unit))


def _destinations(dst, p: FixpipeParamsV220, loc) -> list[tuple[int, int, int, int]]:
    """``(sub-block, first L0C element, rows, columns)`` of each part a fixpipe writes: the
    whole block to ``sub_block_id``, or with ``dual_dst_ctl`` one half to each AIV (the
    machine moves each half as its own FixPipe record, to the same UB address in each AIV)."""
    split = DUAL_DST_SPLITS[p.dual_dst_ctl]
    if split is None:
        return [(p.sub_block_id, 0, p.m_size, p.n_size)]
    if _name(dst) != "UB":
        raise KernelError(f"fixpipe: dual_dst_ctl {p.dual_dst_ctl} splits the block over the "
                          f"two AIVs' UBs; the destination is in {_name(dst)}", loc)
    if p.nd_num != 1 or p.unit_flag:
        raise KernelError("fixpipe: dual_dst_ctl with nd_num > 1 or a unit_flag is not "
                          "modelled", loc)
    if split == "M":
        if p.m_size % 2:
            raise KernelError(f"fixpipe: dual_dst_ctl 1 (split M) needs an even m_size, got "
                              f"{p.m_size}", loc)
        half = p.m_size // 2
        # NZ in L0C: row r of every 16-column strip starts 16 * r elements into the strip.
        return [(0, 0, half, p.n_size), (1, half * 16, half, p.n_size)]
    if p.n_size % 32:
        raise KernelError(f"fixpipe: dual_dst_ctl 2 (split N) needs n_size a multiple of 32, "
                          f"got {p.n_size}", loc)
    half = p.n_size // 2
    # The second half starts half // 16 strips on, each strip src_stride rows high.
    return [(0, 0, p.m_size, half), (1, half // 16 * p.src_stride * 16, p.m_size, half)]


# The parameter structs are re-exported so ``asc`` gets the whole cube API from this module.
__all__ = ["FixpipeConfig", "FixpipeParamsV220", "LoadData2DParams", "LoadData2dTransposeParams",
           "MmadParams", "Nd2NzParams", "fixpipe", "load_data", "load_data_with_transpose", "mmad"]


# ------------------------------------------------------------------------------ 4:2 sparse
INDEX_FRACTAL_BYTES = FRACTAL_BYTES // 4  # 2 bits per int8 of a B fractal


def load_data_with_sparse(dst, src, idx, load_data_params: LoadData2DParams) -> None:
    """``load_data_with_sparse(dst_l0b, src_l1, idx_l1, LoadData2DParams)``: ``repeat_times``
    dense int8 B fractals from fractal ``start_index`` of ``src`` into ``dst`` (in a row), and
    their 128-byte index fractals from the same place of ``idx`` into the Cube's index buffer
    (only ``start_index`` and ``repeat_times`` apply, as on the device)."""
    loc = user_location()
    op = "load_data_with_sparse"
    _require(dst, ("L0B",), "the destination", op, loc)
    _require(src, ("L1",), "the source", op, loc)
    _require(idx, ("L1",), "the index matrix", op, loc)
    if dst.dtype.name != "int8" or src.dtype.name != "int8" or idx.dtype.name != "uint8":
        raise KernelError(f"{op}: dst and src are int8, idx uint8; got {dst.dtype.name}, "
                          f"{src.dtype.name}, {idx.dtype.name}", loc)
    p = load_data_params
    reps = int(p.repeat_times)
    if reps == 0:  # a documented NOP
        current_core().call_overhead()
        return
    within = np.arange(FRACTAL_BYTES)
    r = np.arange(reps)[:, None]
    indexed_copy(op, dst, src, (p.start_index + r) * FRACTAL_BYTES + within,
                 r * FRACTAL_BYTES + within, reps * FRACTAL_BYTES, 1, loc)
    current_core().execute(SparseIndexLoad(idx.region(), dst.region(),
                                           int(p.start_index) * INDEX_FRACTAL_BYTES,
                                           reps * INDEX_FRACTAL_BYTES, loc))


def mmad_with_sparse(dst, fm, filter, mmad_params: MmadParams) -> None:  # noqa: A002
    """``mmad_with_sparse(dst_l0c, a_l0a, b_l0b, MmadParams)``: C (+)= A . B with A ``m x k``
    (int8, 4:2 sparse) and B the dense ``k/2 x n`` loaded by ``load_data_with_sparse``."""
    loc = user_location()
    _require(dst, ("L0C",), "dst", "mmad_with_sparse", loc)
    _require(fm, ("L0A",), "fm (the sparse left matrix)", "mmad_with_sparse", loc)
    _require(filter, ("L0B",), "filter (the dense right matrix)", "mmad_with_sparse", loc)
    p = mmad_params
    current_core().execute(Mmad(p.m, p.n, p.k, fm.dtype.name, loc, dst.region(), fm.region(),
                                filter.region(), None, bool(p.accumulate),
                                op="mmad_with_sparse", sparse=True))


__all__ += ["load_data_with_sparse", "mmad_with_sparse"]
