"""Data movement between GM and tiles, and between tiles: ``load``, ``store``, ``move``.

Each call becomes one copy record whose path (``GM->UB``, ``GM->L1``, ``UB->GM``, ``L1->L0A``,
``L0C->GM`` ...) the machine prices and executes. Only the tile's *valid* window moves. A
row-major window becomes a :class:`~ascsim.isa.Copy` of row bursts; a window into or out of a
fractal layout becomes an :class:`~ascsim.isa.IndexedCopy` (element index arrays); an Acc
source becomes a :class:`~ascsim.isa.FixPipe` (type conversion, ReLU).

A load into a fractal tile (``Mat``) rounds the window up to whole fractals and zero-fills the
rounding, as the DMA's ND->NZ conversion fills the blocks a row ends in; the cube then reads
whole fractals of written bytes. Two loads read their source their own way: E8M0 into a ZZ /
NN Mat tile is an MX scale load (the tensor's last axis is the physical pair of scales, which
joins the group axis), and a load of MXFP4 codes moves 4-bit codes packed two to a byte.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascsim.isa import Bursts, Copy, FixPipe, IndexedCopy, KernelError
from ascsim.pto.dtypes import BYTE_FORMATS
from ascsim.pto.enums import (
    ATOMIC_RULES,
    AtomicType,
    MemorySpace,
    ReluPreMode,
    STPhase,
    TensorLayout,
)
from ascsim.pto.layout import round_up
from ascsim.pto.ops.common import current_core, expect_space, expect_tile, user_location
from ascsim.pto.ops.cube import resolve_scale
from ascsim.pto.tensor import GmTensor
from ascsim.pto.tile import Tile

FRACTAL_SPACES = (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc)


# ----------------------------------------------------------------------- GM side of a copy
def _axes(tensor: GmTensor, order, op: str, loc) -> tuple[int | None, int]:
    """Tensor axes the tile's rows and columns run along (rows None: a 1-D tensor)."""
    ndim = tensor.ndim
    if order is None:
        return (ndim - 2 if ndim >= 2 else None), ndim - 1
    axes = [int(a) + ndim if int(a) < 0 else int(a) for a in order]
    if len(axes) != 2 or len(set(axes)) != 2 or not all(0 <= a < ndim for a in axes):
        raise ValueError(f"{op}: order {list(order)} must name two distinct axes of the "
                         f"{ndim}-D tensor ({loc[0]}:{loc[1]})")
    return axes[0], axes[1]


def _base(tensor: GmTensor, offsets, op: str, loc) -> int:
    """Element offset (in the allocation) of the window's first element."""
    offsets = list(offsets)
    if len(offsets) != tensor.ndim:
        raise ValueError(f"{op}: {len(offsets)} offsets for a {tensor.ndim}-D tensor "
                         f"({loc[0]}:{loc[1]})")
    base = tensor.offset
    for axis, (o, s) in enumerate(zip(offsets, tensor.strides)):
        o = int(o)
        if o < 0:
            raise ValueError(f"{op}: offset {o} on axis {axis} is negative ({loc[0]}:{loc[1]})")
        base += o * s
    return base


def _gm_region(tensor: GmTensor):
    region = tensor.region()
    return region._replace(offset=0, count=region.count + tensor.offset)


@lru_cache(maxsize=1024)
def _gm_grid(rows: int, cols: int, row_stride: int, col_stride: int, wrows: int,
             wcols: int) -> np.ndarray:
    """Element offsets (flat, read-only) of a ``rows x cols`` window of a GM tensor from its
    first element, padded with -1 (no source: the DMA's fill) to ``wrows x wcols``. Cached:
    kernels load windows of the same shape every iteration, and a record keeps its index
    array for the launch."""
    grid = np.full((wrows, wcols), -1, dtype=np.int64)
    grid[:rows, :cols] = (np.arange(rows, dtype=np.int64)[:, None] * row_stride
                          + np.arange(cols, dtype=np.int64)[None, :] * col_stride)
    grid = grid.reshape(-1)
    grid.setflags(write=False)
    return grid


@lru_cache(maxsize=1024)
def _row_starts(rows: int, row_stride: int) -> np.ndarray:
    """First element of each of ``rows`` GM rows (for the L2 model), read-only."""
    starts = np.arange(rows, dtype=np.int64) * row_stride
    starts.setflags(write=False)
    return starts


@lru_cache(maxsize=256)
def _mx_scale_grid(rows: int, cols: int, row_stride: int, col_stride: int, phase_stride: int,
                   groups_in_rows: bool, wrows: int, wcols: int) -> np.ndarray:
    """:func:`_gm_grid` of an MX scale load: along the group axis (the tile's columns for A's
    ZZ scales, its rows for B's NN scales) scale ``g`` is element ``g % 2`` of the physical
    phase axis (the tensor's last, of length 2) at index ``g // 2`` of the tensor axis."""
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    if groups_in_rows:
        along = (r // 2) * row_stride + (r % 2) * phase_stride + c * col_stride
    else:
        along = r * row_stride + (c // 2) * col_stride + (c % 2) * phase_stride
    grid = np.full((wrows, wcols), -1, dtype=np.int64)
    grid[:rows, :cols] = along
    grid = grid.reshape(-1)
    grid.setflags(write=False)
    return grid


def _is_mx_scale_load(tile: Tile) -> bool:
    """Whether a load into ``tile`` is an MX scale load: E8M0 into a fractal-32 ZZ / NN Mat
    tile (PyPTO Pro load.md: such a load always reads the MX scale layout)."""
    return (tile.space == MemorySpace.Mat and tile.dtype.name == "FP8E8M0"
            and tile.ttype.fractal_bytes() != 512)


def _scale_axes(tensor: GmTensor, order, op: str, loc) -> tuple[int, int]:
    """The tensor axes of an MX scale tile's rows and columns: ``order``, by default the two
    axes before the last; the last axis is the physical phase axis of two scales."""
    ndim = tensor.ndim
    if ndim < 3 or tensor.shape[-1] != 2:
        raise ValueError(f"{op}: an MX scale tensor ends in a physical phase axis of 2 scales "
                         f"([M, G/2, 2] or [G/2, N, 2]), got shape {list(tensor.shape)} "
                         f"({loc[0]}:{loc[1]})")
    if order is None:
        return ndim - 3, ndim - 2
    rows_axis, cols_axis = _axes(tensor, order, op, loc)
    if ndim - 1 in (rows_axis, cols_axis):
        raise ValueError(f"{op}: order {list(order)} names the MX scale tensor's phase axis "
                         f"(the last), which order cannot select ({loc[0]}:{loc[1]})")
    return rows_axis, cols_axis


def _fractal_window(tile: Tile, rows: int, cols: int) -> tuple[int, int]:
    """``rows x cols`` rounded up to whole fractals of the tile (within its frame)."""
    if tile.space not in FRACTAL_SPACES or tile.layout in (TensorLayout.ND, TensorLayout.DN):
        return rows, cols
    frame = tile.frame
    return (min(round_up(rows, frame.frac_rows), frame.rows - tile.origin[0]),
            min(round_up(cols, frame.frac_cols), frame.cols - tile.origin[1]))


# ----------------------------------------------------------------------- load
def load(dst, src, offsets, *, order=None):
    """``pl.load(dst_tile, src_tensor, offsets, *, order=None)``: GM -> Vec / Mat (MTE2)."""
    loc = user_location()
    _load(dst, src, offsets, order, "load", loc)


def load_tile(dst, src, tile_offsets, *, order=None):
    """``pl.load_tile``: ``load`` with the two tile axes' offsets counted in tiles."""
    loc = user_location()
    _load(dst, src, _tile_offsets(dst, src, tile_offsets, order, "load_tile", loc), order,
          "load_tile", loc)


def _tile_offsets(tile, tensor, tile_offsets, order, op, loc) -> list[int]:
    tile = expect_tile(tile, op, "the tile", loc)
    rows_axis, cols_axis = _axes(tensor, order, op, loc)
    out = [int(o) for o in tile_offsets]
    if rows_axis is not None:
        out[rows_axis] *= tile.shape[0]
    out[cols_axis] *= tile.shape[1]
    return out


def _load(dst, src, offsets, order, op, loc) -> None:
    dst = expect_tile(dst, op, "dst", loc)
    if not isinstance(src, GmTensor):
        raise ValueError(f"{op}: src must be a GM tensor, got {type(src).__name__} "
                         f"({loc[0]}:{loc[1]})")
    expect_space(dst, (MemorySpace.Vec, MemorySpace.Mat), op, "dst", loc)
    mx_scale = _is_mx_scale_load(dst)
    if mx_scale:
        rows_axis, cols_axis = _scale_axes(src, order, op, loc)
    else:
        rows_axis, cols_axis = _axes(src, order, op, loc)
    base = _base(src, offsets, op, loc)
    rows, cols = dst.valid
    pitches = src.pitches or src.strides
    row_stride = pitches[rows_axis] if rows_axis is not None else 0
    col_stride = pitches[cols_axis]
    size = dst.np_dtype.itemsize
    core = current_core()
    if rows == 0 or cols == 0:
        return
    if dst.dtype.packed:
        _load_packed(core, dst, src, base, rows_axis, cols_axis, op, loc)
        return
    if mx_scale:
        wrows, wcols = _fractal_window(dst, rows, cols)
        src_index = _mx_scale_grid(rows, cols, row_stride, col_stride, pitches[-1],
                                   dst.layout == TensorLayout.NN, wrows, wcols)
        core.execute(IndexedCopy(_gm_region(src).at(base), dst.region(), src_index,
                                 dst.offsets(wrows, wcols).reshape(-1), rows * cols * size,
                                 rows, loc, op))
        return
    if col_stride == 1 and dst.layout == TensorLayout.ND and dst.space == MemorySpace.Vec:
        first = int(dst.offsets(1, 1)[0, 0])
        pitch = dst.frame.cols * size
        if rows == 1 or row_stride * size >= cols * size:
            bursts = Bursts(base * size, first * size, cols * size, max(row_stride * size,
                            cols * size), pitch, rows)
            core.execute(Copy(_gm_region(src), dst.region(), bursts, loc, op))
            return
    wrows, wcols = _fractal_window(dst, rows, cols)
    src_index = _gm_grid(rows, cols, row_stride, col_stride, wrows, wcols)
    dst_index = dst.offsets(wrows, wcols)
    transposed = rows_axis is not None and rows_axis > cols_axis
    core.execute(IndexedCopy(_gm_region(src).at(base), dst.region(), src_index,
                             dst_index.reshape(-1), rows * cols * size,
                             cols if transposed else rows, loc, op,
                             gm_rows=None if transposed else (_row_starts(rows, row_stride),
                                                              cols)))


def _load_packed(core, dst: Tile, src: GmTensor, base: int, rows_axis, cols_axis, op,
                 loc) -> None:
    """A load of 4-bit codes (the MXFP4 types, two to a byte): the tensor's shape and strides
    count bytes (its packed last axis holds two codes a byte), the offsets too; the tile's
    valid window counts codes. The window's strides come from the packed layout itself: a
    code further along the last axis is the next code, one along another axis is two codes a
    byte of that axis's stride away (``set_stride`` on such a tensor, which counts codes,
    describes this same layout)."""
    if src.dtype != dst.dtype:
        raise ValueError(f"{op}: a {dst.dtype!r} tile loads from a {dst.dtype!r} tensor, got "
                         f"{src.dtype!r} ({loc[0]}:{loc[1]})")
    last = src.ndim - 1
    code_strides = [1 if axis == last else 2 * s for axis, s in enumerate(src.strides)]
    row_stride = code_strides[rows_axis] if rows_axis is not None else 0
    rows, cols = dst.valid
    wrows, wcols = _fractal_window(dst, rows, cols)
    src_index = _gm_grid(rows, cols, row_stride, code_strides[cols_axis], wrows, wcols)
    core.execute(IndexedCopy(_gm_region(src).at(base), dst.region(), src_index,
                             dst.offsets(wrows, wcols).reshape(-1), -(-rows * cols // 2),
                             rows, loc, op, nibbles=True))


# ----------------------------------------------------------------------- store
def store(dst, src, offsets, *, relu_pre_mode=None, scale=None, order=None,
          atomic=AtomicType.AtomicNone, phase=None):
    """``pl.store(dst_tensor, src_tile, offsets, ...)``: Vec -> GM (MTE3) or Acc -> GM (FIX)."""
    loc = user_location()
    _store(dst, src, offsets, relu_pre_mode, scale, order, atomic, phase, "store", loc)


def store_tile(dst, src, tile_offsets, *, relu_pre_mode=None, scale=None, order=None,
               atomic=AtomicType.AtomicNone, phase=None):
    """``pl.store_tile``: ``store`` with the two tile axes' offsets counted in tiles."""
    loc = user_location()
    _store(dst, src, _tile_offsets(src, dst, tile_offsets, order, "store_tile", loc),
           relu_pre_mode, scale, order, atomic, phase, "store_tile", loc)


def _store(dst, src, offsets, relu_pre_mode, scale, order, atomic, phase, op, loc) -> None:
    src = expect_tile(src, op, "src", loc)
    if not isinstance(dst, GmTensor):
        raise ValueError(f"{op}: dst must be a GM tensor, got {type(dst).__name__} "
                         f"({loc[0]}:{loc[1]})")
    expect_space(src, (MemorySpace.Vec, MemorySpace.Acc), op, "src", loc)
    rows_axis, cols_axis = _axes(dst, order, op, loc)
    if rows_axis is not None and rows_axis > cols_axis:
        raise ValueError(f"{op}: order must be ascending ({loc[0]}:{loc[1]})")
    base = _base(dst, offsets, op, loc)
    rows, cols = src.valid
    if rows == 0 or cols == 0:
        return
    pitches = dst.pitches or dst.strides
    row_stride = pitches[rows_axis] if rows_axis is not None else 0
    rule = ATOMIC_RULES[AtomicType(atomic)]
    core = current_core()
    if src.space == MemorySpace.Acc:
        store_from_acc(core, dst, src, base, rows, cols, row_stride, relu_pre_mode, scale,
                       rule, phase, op, loc)
        return
    # MTE3 copies bytes: a tile of another type of the same width is stored as its bits (PyPTO
    # Pro's store checks only that each type is supported; lightning_indexer stores UINT16
    # indices into an INT16 tensor). Other widths would not even have the same element count.
    if src.dtype != dst.dtype and src.np_dtype.itemsize != np.dtype(dst.dtype.np_dtype).itemsize:
        raise ValueError(f"{op}: a Vec tile of {src.dtype!r} cannot be stored into a tensor of "
                         f"{dst.dtype!r}: their elements differ in width ({loc[0]}:{loc[1]})")
    size = src.np_dtype.itemsize
    if src.layout == TensorLayout.ND and pitches[cols_axis] == 1 and (
            rows == 1 or row_stride >= cols):
        first = int(src.offsets(1, 1)[0, 0])
        bursts = Bursts(first * size, base * size, cols * size, src.frame.cols * size,
                        max(row_stride, cols) * size, rows)
        core.execute(Copy(src.region(), _gm_region(dst), bursts, loc, op, atomic=rule))
        return
    gm_index = _gm_grid(rows, cols, row_stride, pitches[cols_axis], rows, cols)
    core.execute(IndexedCopy(src.region(), _gm_region(dst).at(base),
                             src.offsets(rows, cols).reshape(-1), gm_index, rows * cols * size,
                             rows, loc, op, gm_rows=(_row_starts(rows, row_stride), cols)))


def store_from_acc(core, dst: GmTensor, src: Tile, base: int, rows: int, cols: int,
                   row_stride: int, relu_pre_mode, scale, rule, phase, op, loc) -> None:
    """Acc -> GM through the fixpipe: the accumulator's NZ fractals to row-major GM rows (or
    to the NZ fractals of an NZ tensor), ReLU'd, scaled (``scale``: quantisation), converted
    to the tensor's type, combined with GM by ``rule`` (atomic add/max/min); ``phase`` is the
    unit-flag handshake with the matmuls that filled the tile."""
    if core.kind != "AIC":
        raise KernelError(f"{op} from an Acc tile is the AIC's fixpipe, but this code runs on "
                          "an AIV: put it inside `with pl.section_cube():`", loc)
    quant = resolve_scale(scale, src, dst.dtype, relu_pre_mode, phase, op, loc)
    if src.layout != TensorLayout.NZ:
        raise ValueError(f"{op}: an Acc tile is stored from its NZ fractals, got "
                         f"{src.layout.name} ({loc[0]}:{loc[1]})")
    start = int(src.offsets(1, 1)[0, 0])
    acc = src.region().at(start)
    relu = relu_pre_mode is not None and ReluPreMode(relu_pre_mode) == ReluPreMode.NormalRelu
    unit_flag = None
    if phase is not None and STPhase(phase) != STPhase.Unspecified:
        unit_flag = "final" if STPhase(phase) == STPhase.Final else "partial"
    layout, c0, stride = "ND", 16, row_stride
    if dst.layout == TensorLayout.NZ:
        base, c0, stride = _nz_base(dst, base, rows, cols, op, loc)
        layout = "NZ"
    gm = _gm_region(dst).at(base)
    core.execute(FixPipe(gm, rows, cols, loc, src=acc, src_stride=src.frame.rows,
                         dst_stride=stride, layout=layout, c0=c0, relu=relu,
                         convert=src.dtype != dst.dtype or quant is not None, atomic=rule,
                         op=op, unit_flag=unit_flag, quant=quant,
                         dst_format=BYTE_FORMATS.get(dst.dtype.name)))


def _nz_base(dst: GmTensor, base: int, rows: int, cols: int, op, loc) -> tuple[int, int, int]:
    """(first element, fractal width, strip height) of the window of an NZ GM tensor whose
    row-major position is ``base``: the tensor is stored as strips of ``c0`` columns, each
    the tensor's rows rounded up to 16 high."""
    if dst.ndim != 2:
        raise ValueError(f"{op}: an NZ tensor is 2-D, got {dst.ndim}-D ({loc[0]}:{loc[1]})")
    height, width = dst.shape
    c0 = 32 // dst.dtype.nbytes
    strip = round_up(height, 16)
    r0, c0_at = divmod(base - dst.offset, dst.strides[0])
    if c0_at % c0:
        raise ValueError(f"{op}: a window of an NZ tensor starts on a {c0}-column fractal "
                         f"boundary, got column {c0_at} ({loc[0]}:{loc[1]})")
    return dst.offset + (c0_at // c0) * strip * c0 + r0 * c0, c0, strip


OPS = {"load": load, "load_tile": load_tile, "store": store, "store_tile": store_tile}
