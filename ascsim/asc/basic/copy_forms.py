"""More ``data_copy`` forms: slices (``SliceInfo``), UB NZ -> GM ND (``Nz2NdParamsFull``) and
L0C -> GM / L1 (``DataCopyCO12DstParams``).

- **Slices** (``data_copy(dst, src, dst_slices, src_slices, dim_value=1)``, GM <-> UB): per
  dimension (innermost first) a :class:`SliceInfo` picks positions ``start_index ..
  end_index``: in the innermost dimension runs of ``burst_len`` 32-byte blocks with
  ``stride`` elements between runs, in outer dimensions every ``stride + 1``-th index. The
  selected source elements, in row-major order, go to the selected destination elements in
  the same order (the two selections must be equally large). One
  :class:`~ascsim.isa.instr.IndexedCopy`.
- **Nz2NdParamsFull** (``data_copy(gm, ub, params)``): ``nd_num`` NZ matrices of ``n_value``
  rows and ``d_value`` columns (16-column strips ``src_n_stride * 16`` elements apart,
  matrices ``src_nd_matrix_stride * 256`` apart) to ND rows ``dst_d_stride`` elements apart
  (matrices ``dst_nd_matrix_stride`` apart). One :class:`~ascsim.isa.instr.IndexedCopy`.
- **DataCopyCO12DstParams** (``data_copy(gm_or_l1, l0c, params)``): a
  :class:`~ascsim.isa.instr.FixPipe` of ``m_size`` x ``n_size``; NZ output with ``dst_stride``
  32-byte rows between strips, or ND rows of ``dst_stride`` elements with ``nz2nd_en``;
  ``relu_pre`` 1 applies ReLU; ``quant_pre`` converts (F322F16, F322BF16) or quantises with
  the scalar of ``set_fix_pipe_pre_quant_flag`` (DEQF16, QF322B8_PRE, REQ8: the low 32 bits
  are an fp32 scale, of which 10 mantissa bits are used -- Ascend C's L0C-to-GM page).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ascsim.asc.basic import cube as _cube
from ascsim.asc.basic import data_copy as _dc
from ascsim.asc.basic.core_config import core_registers
from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import QuantModes
from ascsim.asc.params import U16, U32, _check_ranges, coerce_fields
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.isa import BLOCK_BYTES, FixPipe, IndexedCopy, KernelError
from ascsim.sim.dequant import scale_1_8_10


# ------------------------------------------------------------------------------ slices
@dataclass(frozen=True)
class SliceInfo:
    """``SliceInfo(start_index=0, end_index=None, stride=0, burst_len=None, shape_value=0)``:
    one dimension of a slice copy (see the module docstring). ``end_index`` defaults to the
    dimension's last element, ``burst_len`` (32-byte blocks, innermost dimension only) to 1."""

    start_index: int = 0
    end_index: int | None = None
    stride: int = 0
    burst_len: int | None = None
    shape_value: int = 0

    def __post_init__(self):
        if self.end_index is None:
            object.__setattr__(self, "end_index", max(int(self.shape_value) - 1, 0))
        if self.burst_len is None:
            object.__setattr__(self, "burst_len", 1)
        coerce_fields(self)
        _check_ranges(self, dict.fromkeys([f.name for f in fields(self)], U32))


def _dimension_positions(info: SliceInfo, innermost: bool, elem_bytes: int, what: str,
                         loc) -> np.ndarray:
    if info.end_index < info.start_index or info.end_index >= max(info.shape_value, 1):
        raise KernelError(f"data_copy: {what} slice {info} must have start_index <= end_index "
                          f"< shape_value", loc)
    if not innermost:
        if info.burst_len != 1:
            raise KernelError(f"data_copy: {what} burst_len must be 1 outside the innermost "
                              f"dimension, got {info.burst_len}", loc)
        return np.arange(info.start_index, info.end_index + 1, info.stride + 1)
    run = info.burst_len * BLOCK_BYTES // elem_bytes
    span = info.end_index - info.start_index + 1
    period = run + info.stride
    if run < 1 or (span + info.stride) % period:
        raise KernelError(f"data_copy: {what} innermost slice {info}: end_index - start_index "
                          "+ 1 must be N runs of burst_len blocks with stride elements "
                          "between them", loc)
    runs = (span + info.stride) // period
    starts = info.start_index + np.arange(runs) * period
    return (starts[:, None] + np.arange(run)).reshape(-1)


def _slice_indices(slices, dim_value: int, elem_bytes: int, what: str, loc) -> np.ndarray:
    slices = list(slices)[:dim_value]
    if len(slices) != dim_value or dim_value < 1:
        raise KernelError(f"data_copy: {what} needs {dim_value} SliceInfo entries (one per "
                          f"dimension), got {len(slices)}", loc)
    index = np.zeros(1, dtype=np.int64)
    pitch = 1
    for d, info in enumerate(slices):  # innermost first
        positions = _dimension_positions(info, d == 0, elem_bytes, what, loc)
        index = (positions[:, None] * pitch + index[None, :]).reshape(-1)
        pitch *= info.shape_value
    return index


def slice_copy(dst, src, slice_list1, slice_list2, dim_value: int = 1) -> None:
    """``data_copy(dst, src, slice_list1, slice_list2, dim_value)``: ``slice_list1`` holds the
    destination's SliceInfo per dimension, ``slice_list2`` the source's (Ascend C's order)."""
    dst_slices, src_slices = slice_list1, slice_list2
    loc = user_location(3)
    if isinstance(dst, GlobalTensor) == isinstance(src, GlobalTensor):
        raise KernelError("data_copy with SliceInfo copies GM -> UB or UB -> GM", loc)
    if dst.dtype.sizeof() != src.dtype.sizeof():
        raise KernelError("data_copy with SliceInfo: source and destination types must match",
                          loc)
    size = dst.dtype.sizeof()
    dim_value = int(dim_value)
    src_idx = _slice_indices(src_slices, dim_value, size, "the source", loc)
    dst_idx = _slice_indices(dst_slices, dim_value, size, "the destination", loc)
    if src_idx.size != dst_idx.size:
        raise KernelError(f"data_copy with SliceInfo: the source slices select {src_idx.size} "
                          f"elements, the destination slices {dst_idx.size}", loc)
    runs = max(1, src_idx.size * size // BLOCK_BYTES)
    current_core().execute(IndexedCopy(src.region(), dst.region(), src_idx, dst_idx,
                                       src_idx.size * size, runs, loc, "data_copy_slice"))


# ------------------------------------------------------------------------------ NZ -> ND
@dataclass(frozen=True)
class Nz2NdParamsFull:
    """``Nz2NdParamsFull(nd_num, n_value, d_value, src_nd_matrix_stride, src_n_stride,
    dst_d_stride, dst_nd_matrix_stride)`` (see the module docstring). pyasc's constructor
    also takes its IR handle as an eighth argument; it has no meaning here and is ignored."""

    nd_num: int
    n_value: int
    d_value: int
    src_nd_matrix_stride: int
    src_n_stride: int
    dst_d_stride: int
    dst_nd_matrix_stride: int
    handle: object = None

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"nd_num": (0, 4095), "n_value": (1, 8192), "d_value": (1, 8192),
                             "src_nd_matrix_stride": (1, 512), "src_n_stride": (0, 4096),
                             "dst_d_stride": (1, 65535), "dst_nd_matrix_stride": (1, 65535)})


def nz2nd_copy(dst, src, p: Nz2NdParamsFull, loc) -> None:
    """``data_copy(gm, ub, Nz2NdParamsFull)``."""
    if not isinstance(dst, GlobalTensor) or not isinstance(src, LocalTensor):
        raise KernelError("data_copy with Nz2NdParamsFull copies UB (NZ) -> GM (ND)", loc)
    _cube._require(src, ("UB",), "the source", "data_copy(Nz2NdParamsFull)", loc)
    if p.d_value % 16:
        raise KernelError(f"data_copy(Nz2NdParamsFull): d_value {p.d_value} must be a "
                          "multiple of 16", loc)
    i = np.arange(p.nd_num)[:, None, None]
    j = np.arange(p.n_value)[None, :, None]
    c = np.arange(p.d_value)[None, None, :]
    src_idx = (i * p.src_nd_matrix_stride * 256 + (c // 16) * p.src_n_stride * 16 + j * 16
               + c % 16)
    dst_idx = np.broadcast_to(i * p.dst_nd_matrix_stride + j * p.dst_d_stride + c,
                              src_idx.shape)
    size = dst.dtype.sizeof()
    current_core().execute(IndexedCopy(
        src.region(), dst.region(), src_idx.reshape(-1), dst_idx.reshape(-1),
        src_idx.size * size, p.nd_num * p.n_value * (p.d_value // 16), loc, "data_copy_nz2nd"))


# ------------------------------------------------------------------------------ L0C -> GM/L1
@dataclass(frozen=True)
class DataCopyCO12DstParams:
    """``DataCopyCO12DstParams(n_size, m_size, dst_stride, src_stride,
    quant_pre=QuantModes.NoQuant, relu_pre=0, channel_split=False, nz2nd_en=False)``."""

    n_size: int
    m_size: int
    dst_stride: int
    src_stride: int
    quant_pre: QuantModes = QuantModes.NoQuant
    relu_pre: int = 0
    channel_split: bool = False
    nz2nd_en: bool = False

    def __post_init__(self):
        coerce_fields(self)
        object.__setattr__(self, "quant_pre", QuantModes(int(self.quant_pre)))
        _check_ranges(self, {"n_size": (0, 4095), "m_size": U16, "dst_stride": U32,
                             "src_stride": U16, "relu_pre": (0, 1)})


#: Quant modes: mode -> (L0C type, destination types, uses the scalar register).
CO12_QUANT = {
    QuantModes.NoQuant: (None, None, False),
    QuantModes.F322F16: ("float32", ("float16",), False),
    QuantModes.F322BF16: ("float32", ("bfloat16",), False),
    QuantModes.DEQF16: ("int32", ("float16",), True),
    QuantModes.QF322B8_PRE: ("float32", ("int8", "uint8"), True),
    QuantModes.REQ8: ("int32", ("int8", "uint8"), True),
}


def co12_copy(dst, src, p: DataCopyCO12DstParams, loc) -> None:
    """``data_copy(gm_or_l1, l0c, DataCopyCO12DstParams)``."""
    op = "data_copy(DataCopyCO12DstParams)"
    _cube._require(src, ("L0C",), "the source", op, loc)
    mode = CO12_QUANT.get(p.quant_pre)
    if mode is None:
        raise KernelError(f"{op}: quant_pre {p.quant_pre.name} (a per-channel tensor quant) "
                          "is not modelled; supported: "
                          + ", ".join(q.name for q in CO12_QUANT), loc)
    acc, outs, scalar = mode
    if acc is None:
        if dst.dtype.name != src.dtype.name:
            raise KernelError(f"{op}: NoQuant keeps {src.dtype.name}, but dst is "
                              f"{dst.dtype.name}", loc)
    elif src.dtype.name != acc or dst.dtype.name not in outs:
        raise KernelError(f"{op}: quant_pre {p.quant_pre.name} converts {acc} -> "
                          f"{' or '.join(outs)}, but src is {src.dtype.name} and dst "
                          f"{dst.dtype.name}", loc)
    quant = None
    if scalar:
        word = core_registers()["pre_quant"]
        if word is None:
            raise KernelError(f"{op}: quant_pre {p.quant_pre.name} reads the scalar of "
                              "set_fix_pipe_pre_quant_flag, which was never set", loc)
        low = np.asarray(word & 0xFFFF_FFFF, dtype=np.uint32).view(np.float32)
        quant = float(scale_1_8_10(low))
    if p.n_size == 0 or p.m_size == 0:  # a documented NOP
        return
    c0 = 8 if (p.channel_split and dst.dtype.sizeof() == 4) else 16
    if not p.nz2nd_en and p.n_size % c0:
        raise KernelError(f"{op}: an NZ destination needs n_size a multiple of {c0}, got "
                          f"{p.n_size}", loc)
    current_core().execute(FixPipe(
        dst.region(), p.m_size, p.n_size, loc, src=src.region(), src_stride=p.src_stride,
        dst_stride=p.dst_stride, layout="ND" if p.nz2nd_en else "NZ", c0=c0,
        relu=bool(p.relu_pre), convert=acc is not None, quant=quant, op="data_copy_co12"))


_dc.EXTRA_FORMS[Nz2NdParamsFull] = nz2nd_copy
_dc.EXTRA_FORMS[DataCopyCO12DstParams] = co12_copy
_dc.SLICE_FORM = slice_copy

__all__ = ["DataCopyCO12DstParams", "Nz2NdParamsFull", "SliceInfo"]
