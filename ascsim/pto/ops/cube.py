"""The cube side of the tile API: ``move`` between tiles, ``insert``, ``matmul`` and
``matmul_acc``.

A ``move`` is an element copy between two tiles' layouts, whatever the pair of memories: the
element ``(r, c)`` of the source lands at ``(r, c)`` of the destination (a re-layout: Mat NZ ->
Right ZN, Mat ZN -> Left NZ), or at ``(c, r)`` when the destination's shape is the source's
transposed (``[N, K]`` NZ -> ``[K, N]`` ZN: the same bytes). The machine executes it as an
:class:`~ascsim.isa.IndexedCopy` on the path of the two memories (L1->L0A, L1->L0B, L1->BT,
UB->UB, UB->L1), so the pipe, the cost and the checks are the machine's. An Acc source is the
fixpipe (:class:`~ascsim.isa.FixPipe`, L0C->UB into one or both AIVs of the group).

Moves into the cube's buffers move whole fractals (the hardware moves 512-byte fractals): the
window is the destination's valid shape rounded up to its fractals, so the rows and columns a
tail leaves in the last fractal carry the source's (zero-filled) padding, not stale bytes.

``matmul`` reads its operands in their fractal frames (Left NZ, Right ZN, Acc NZ) through an
:class:`~ascsim.isa.Mmad` that names the frames, with ``m`` and ``k`` the left tile's valid
shape and ``n`` the right tile's valid columns; ``phase=`` becomes the record's unit flag.
``matmul_mx`` / ``matmul_mx_acc`` emit the same record with ``mx`` (the operands' formats),
after PyPTO Pro's checks of the scale tiles: the machine reads the E8M0 scales itself, at the
data's addresses >> 4 in the MX buffers (:mod:`ascsim.sim.mx`). 4-bit (MXFP4) tiles move as
codes packed two to a byte (``IndexedCopy.nibbles``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascsim.isa import FixPipe, IndexedCopy, KernelError, Mmad
from ascsim.isa.operands import Region
from ascsim.pto.dtypes import BYTE_FORMATS, machine_type
from ascsim.pto.enums import AccPhase, AccToVecMode, MemorySpace, ReluPreMode, TensorLayout
from ascsim.pto.layout import Frame, round_up, window_offsets
from ascsim.pto.ops.common import current_core, expect_space, expect_tile, user_location
from ascsim.pto.tensor import GmTensor
from ascsim.pto.tile import Tile

#: Layout pairs that store a matrix and its transpose in the same bytes.
TRANSPOSED_PAIRS = {frozenset({TensorLayout.NZ, TensorLayout.ZN}),
                    frozenset({TensorLayout.ND, TensorLayout.DN}),
                    frozenset({TensorLayout.ZZ, TensorLayout.NN})}

#: The Mmad's operand layouts on the 950 (L0A NZ, L0B ZN, L0C NZ).
MMAD_LAYOUTS = {"lhs": TensorLayout.NZ, "rhs": TensorLayout.ZN, "dst": TensorLayout.NZ}

#: A phase= value -> the unit-flag phase of the record.
UNIT_PHASES = {1: "partial", 2: "final"}

#: The fixpipe's split of an Acc -> Vec move: mode -> the sub-blocks that receive a part.
ACC_TO_VEC_TARGETS = {AccToVecMode.SingleModeVec0: (0,), AccToVecMode.SingleModeVec1: (1,),
                      AccToVecMode.DualModeSplitM: (0, 1), AccToVecMode.DualModeSplitN: (0, 1)}


def _where(loc) -> str:
    return f"({loc[0]}:{loc[1]})"


def _pair(offset, op: str, loc) -> tuple[int, int]:
    values = [int(v) for v in offset]
    if len(values) != 2:
        raise ValueError(f"{op}: offset takes two values [row, col], got {list(offset)} "
                         f"{_where(loc)}")
    if min(values) < 0:
        raise ValueError(f"{op}: offset {values} is negative {_where(loc)}")
    return values[0], values[1]


# ----------------------------------------------------------------------- element copies
def _copy(dst: Tile, src: Tile, rows: int, cols: int, src_at, dst_at, transpose: bool,
          op: str, loc, convert: bool = False) -> None:
    """Copy the ``rows x cols`` window of ``src`` at ``src_at`` to ``dst`` at ``dst_at``
    (transposed: to ``(c, r)`` of a ``cols x rows`` window), one record."""
    if rows <= 0 or cols <= 0:
        return
    src_idx = _flat(src.frame, src.origin[0] + src_at[0], src.origin[1] + src_at[1], rows,
                    cols, False)
    window = (cols, rows) if transpose else (rows, cols)
    r0, c0 = dst.origin[0] + dst_at[0], dst.origin[1] + dst_at[1]
    dst_idx = _flat(dst.frame, r0, c0, *window, transpose)
    packed = dst.dtype.packed  # 4-bit codes, two to a byte: the indices count codes
    nbytes = -(-rows * cols // 2) if packed else rows * cols * dst.np_dtype.itemsize
    current_core().execute(IndexedCopy(src.region(), dst.region(), src_idx, dst_idx, nbytes, 1,
                                       loc, op, convert=convert, nibbles=packed,
                                       dst_runs=None if packed else
                                       _runs(dst.frame, r0, c0, *window)))


@lru_cache(maxsize=1024)
def _flat(frame: Frame, r0: int, c0: int, rows: int, cols: int, transpose: bool) -> np.ndarray:
    """The window's element offsets as one read-only run, row by row (column by column when
    ``transpose``); cached, so a kernel's records share the arrays of its repeated moves."""
    offsets = window_offsets(frame, r0, c0, rows, cols)
    flat = np.ascontiguousarray(offsets.T if transpose else offsets).reshape(-1)
    flat.setflags(write=False)
    return flat


@lru_cache(maxsize=1024)
def _runs(frame: Frame, r0: int, c0: int, rows: int, cols: int) -> tuple | None:
    """``(first, run, pitch, count)`` when the window's elements are equal runs at a constant
    pitch (a window of whole rows of an ND frame, or of rows of NZ strips), else None."""
    flat = np.sort(window_offsets(frame, r0, c0, rows, cols).reshape(-1))
    steps = np.diff(flat)
    if (steps == 0).any():
        return None
    breaks = np.flatnonzero(steps != 1)
    starts = np.concatenate((flat[:1], flat[breaks + 1]))
    ends = np.concatenate((flat[breaks], flat[-1:])) + 1
    lengths = ends - starts
    if (lengths != lengths[0]).any():
        return None
    pitches = np.diff(starts)
    if pitches.size and (pitches != pitches[0]).any():
        return None
    pitch = int(pitches[0]) if pitches.size else int(lengths[0])
    return int(starts[0]), int(lengths[0]), pitch, int(starts.size)


def _transposed(dst: Tile, src: Tile) -> bool:
    return frozenset({dst.layout, src.layout}) in TRANSPOSED_PAIRS


def _whole_fractals(tile: Tile, rows: int, cols: int) -> tuple[int, int]:
    """``rows x cols`` rounded up to ``tile``'s fractals, within its frame."""
    frame = tile.frame
    return (min(round_up(rows, frame.frac_rows), frame.rows - tile.origin[0]),
            min(round_up(cols, frame.frac_cols), frame.cols - tile.origin[1]))


# ----------------------------------------------------------------------- fixpipe scale
#: Per-channel scale tiles: 64-bit words (the low 32 bits are an fp32 scale), [1, N] with
#: N a multiple of 16 and at most 512.
SCALE_TILE_TYPES = ("INT64", "UINT64")
MAX_SCALE_CHANNELS = 512


def resolve_scale(scale, src: Tile, dst_dtype, relu, phase, op: str, loc):
    """``scale=`` of a store or move out of an Acc tile as the FixPipe's ``quant``: a float
    scale, or the region of a per-channel scale tile (None: no quantisation)."""
    if scale is None:
        return None
    if dst_dtype.name == "UINT8":
        raise ValueError(f"{op}: scale= cannot quantise to UINT8 {_where(loc)}")
    if dst_dtype.name == "BF16":
        raise ValueError(f"{op}: scale= cannot produce BF16 from {src.dtype!r} {_where(loc)}")
    if isinstance(scale, Tile):
        if scale.space != MemorySpace.Scaling:
            raise ValueError(f"{op}: a per-channel scale tile lives in MemorySpace.Scaling, got "
                             f"a {scale.space.name} tile {_where(loc)}")
        if scale.dtype.name == "FP32":
            raise ValueError(f"{op}: scale tile dtype FP32 is not supported: encode the scales "
                             f"on the host with torch_npu.npu_trans_quant_param {_where(loc)}")
        if scale.dtype.name not in SCALE_TILE_TYPES:
            raise ValueError(f"{op}: scale tile dtype must be INT64, got {scale.dtype.name} "
                             f"{_where(loc)}")
        rows, cols = scale.shape
        if rows != 1 or cols % 16 or cols > MAX_SCALE_CHANNELS:
            raise ValueError(f"{op}: a per-channel scale tile has shape [1, N] (row == 1, N a "
                             f"multiple of 16, at most {MAX_SCALE_CHANNELS}), got {scale.shape} "
                             f"{_where(loc)}")
        if relu is not None:
            raise ValueError(f"{op}: a per-channel scale cannot be used together with "
                             f"relu_pre_mode {_where(loc)}")
        if phase is not None:
            raise ValueError(f"{op}: a per-channel scale cannot be combined with phase "
                             f"{_where(loc)}")
        return _first(scale)
    if isinstance(scale, GmTensor):
        raise ValueError(f"{op}: a scale Tensor is not supported for per-channel quantization: "
                         f"load it into a Scaling tile {_where(loc)}")
    if isinstance(scale, (bool, np.bool_)):
        raise ValueError(f"{op}: scale must be a float, an integer holding float bits, or a "
                         f"Scaling tile, got {scale!r} {_where(loc)}")
    if isinstance(scale, (float, np.floating)):
        return float(np.float32(scale))
    if isinstance(scale, (int, np.integer)):  # an fp32 bit pattern (struct.pack("!f", s))
        return float(np.uint32(int(scale) & 0xFFFFFFFF).view(np.float32))
    raise ValueError(f"{op}: scale must be a float, an integer holding float bits, or a "
                     f"Scaling tile, got {type(scale).__name__} {_where(loc)}")


# ----------------------------------------------------------------------- move
def move(dst, src, offset=None, *, acc_to_vec_mode=None, relu_pre_mode=None, scale=None):
    """``pl.move(dst_tile, src_tile, offset=None, *, acc_to_vec_mode=None,
    relu_pre_mode=None, scale=None)``: tile -> tile on the path of the two memories."""
    loc = user_location()
    dst = expect_tile(dst, "move", "dst", loc)
    src = expect_tile(src, "move", "src", loc)
    path = MOVE_PATHS.get((src.space, dst.space))
    if path is None:
        raise ValueError(f"move: unsupported data path {src.space.name} -> {dst.space.name} "
                         f"{_where(loc)}")
    if scale is not None and src.space != MemorySpace.Acc:
        raise ValueError(f"move: scale= applies to moves out of an Acc tile only {_where(loc)}")
    fused = acc_to_vec_mode is not None or relu_pre_mode is not None or scale is not None
    if acc_to_vec_mode is not None and src.space != MemorySpace.Acc:
        raise ValueError(f"move: acc_to_vec_mode applies to Acc -> Vec moves only {_where(loc)}")
    if relu_pre_mode is not None and src.space != MemorySpace.Acc:
        raise ValueError(f"move: relu_pre_mode applies to moves out of an Acc tile only "
                         f"{_where(loc)}")
    if offset is not None and not fused and _inside(src, dst):
        _on("AIV", "move", src, dst, loc)
        _insert(dst, src, _pair(offset, "move", loc), "move", loc)
        return
    _on(MOVE_CORES[(src.space, dst.space)], "move", src, dst, loc)
    path(dst, src, offset, acc_to_vec_mode, relu_pre_mode, scale, loc)


def _inside(src: Tile, dst: Tile) -> bool:
    """Whether ``src`` is a strict sub-block of ``dst`` (of its transpose for a transposed
    layout pair): a move with an offset is then an insert."""
    shape = dst.shape[::-1] if _transposed(dst, src) else dst.shape
    return (all(s <= d for s, d in zip(src.shape, shape))
            and any(s < d for s, d in zip(src.shape, shape)))


def _to_cube_buffer(dst: Tile, src: Tile, offset, mode, relu, scale, loc) -> None:
    """Mat -> Left / Right / ScaleLeft / ScaleRight: whole fractals of the destination's valid
    window, from ``offset`` of the source (a sub-block extraction)."""
    at = (0, 0) if offset is None else _pair(offset, "move", loc)
    if offset is None and dst.shape != src.shape and dst.shape != src.shape[::-1]:
        raise ValueError(f"move: shapes {src.shape} -> {dst.shape} differ and are not a "
                         f"transpose; pass offset= to extract a sub-block {_where(loc)}")
    transpose = not all(d <= s for d, s in zip(dst.shape, src.shape))
    if transpose and not all(d <= s for d, s in zip(dst.shape[::-1], src.shape)):
        raise ValueError(f"move: a {dst.shape} tile does not fit in the {src.shape} source "
                         f"{_where(loc)}")
    for axis in (0, 1):
        if not 0 <= at[axis] < src.shape[axis]:
            raise ValueError(f"move: offset {list(at)} is outside the source's shape "
                             f"{src.shape} {_where(loc)}")
    rows, cols = _whole_fractals(dst, *dst.valid)
    # The source window in the source's orientation, clamped to what its frame holds.
    src_rows, src_cols = (cols, rows) if transpose else (rows, cols)
    src_rows = min(src_rows, src.frame.rows - src.origin[0] - at[0])
    src_cols = min(src_cols, src.frame.cols - src.origin[1] - at[1])
    rows, cols = (src_cols, src_rows) if transpose else (src_rows, src_cols)
    if src.dtype != dst.dtype:
        raise ValueError(f"move: a {src.dtype!r} tile cannot move into a {dst.dtype!r} "
                         f"{dst.space.name} tile {_where(loc)}")
    _copy(dst, src, src_rows, src_cols, at, (0, 0), transpose, "move", loc)


def _to_bias(dst: Tile, src: Tile, offset, mode, relu, scale, loc) -> None:
    """Mat -> Bias: one row of ``N`` values, converted to the accumulator's fp32."""
    if src.dtype.name not in ("FP16", "BF16", "FP32") or dst.dtype.name != "FP32":
        raise ValueError(f"move: Mat -> Bias converts FP16/BF16/FP32 to an FP32 bias, got "
                         f"{src.dtype!r} -> {dst.dtype!r} {_where(loc)}")
    if dst.shape[0] != 1:
        raise ValueError(f"move: a Bias tile is one row [1, N], got {dst.shape} {_where(loc)}")
    rows, cols = min(src.valid[0], dst.valid[0]), min(src.valid[1], dst.valid[1])
    at = (0, 0) if offset is None else _pair(offset, "move", loc)
    _copy(dst, src, rows, cols, at, (0, 0), False, "move", loc,
          convert=src.dtype != dst.dtype)


def _plain(dst: Tile, src: Tile, offset, mode, relu, scale, loc) -> None:
    """Mat -> Scaling and Vec -> Vec: the source's valid window, same type, re-laid out."""
    if src.dtype != dst.dtype:
        raise ValueError(f"move: a {src.dtype!r} tile cannot move into a {dst.dtype!r} tile "
                         f"{_where(loc)}")
    at = (0, 0) if offset is None else _pair(offset, "move", loc)
    rows, cols = src.valid
    transpose = (offset is None and dst.shape != src.shape and dst.shape == src.shape[::-1])
    fits = (cols, rows) if transpose else (rows, cols)
    if fits[0] > dst.shape[0] or fits[1] > dst.shape[1]:
        raise ValueError(f"move: the {src.shape} source's valid window {src.valid} does not "
                         f"fit the {dst.shape} destination {_where(loc)}")
    _copy(dst, src, rows - at[0], cols - at[1], at, (0, 0), transpose, "move", loc)


def _to_mat(dst: Tile, src: Tile, offset, mode, relu, scale, loc) -> None:
    """Vec -> Mat: an insert at ``offset`` (or the origin)."""
    _insert(dst, src, (0, 0) if offset is None else _pair(offset, "move", loc), "move", loc)


def _acc_to_vec(dst: Tile, src: Tile, offset, mode, relu, scale, loc) -> None:
    """Acc -> Vec: the fixpipe writes the Acc tile's valid window into the UB of one AIV, or
    splits it between both (rows or columns) at the same UB address. With ``offset=[om, on]``
    it extracts the sub-block ``[offset, offset + dst.valid_shape)`` of the Acc tile instead
    (PyPTO Pro's move page: the offset is in the source's physical coordinates); a dual mode
    then splits that block, so the destination's valid shape is the whole block the two AIVs
    share (lightning_indexer's two 64-column halves of one accumulator)."""
    mode = AccToVecMode.SingleModeVec0 if mode is None else AccToVecMode(mode)
    quant = resolve_scale(scale, src, dst.dtype, relu, None, "move", loc)
    if isinstance(quant, Region) and len(ACC_TO_VEC_TARGETS[mode]) > 1:
        raise ValueError(f"move: a per-channel scale only supports single-mode "
                         f"acc_to_vec_mode (SingleModeVec0/1) {_where(loc)}")
    if dst.layout not in (TensorLayout.ND, TensorLayout.NZ):
        raise ValueError(f"move: an Acc -> Vec destination is ND or NZ, got "
                         f"{dst.layout.name} {_where(loc)}")
    if offset is None:
        om, on = 0, 0
        rows, cols = src.valid
    else:
        om, on = _pair(offset, "move", loc)
        if not (0 <= om < src.shape[0] and 0 <= on < src.shape[1]):
            raise ValueError(f"move: offset [{om}, {on}] is outside the {src.shape} Acc tile "
                             f"{_where(loc)}")
        rows = min(dst.valid[0], src.shape[0] - om)
        cols = min(dst.valid[1], src.shape[1] - on)
    parts = _acc_parts(mode, rows, cols)
    first = int(dst.offsets(1, 1)[0, 0])
    acc, vec = src.region(), dst.region().at(first)
    nz = dst.layout == TensorLayout.NZ
    for sub_block, (r0, c0, m, n) in zip(ACC_TO_VEC_TARGETS[mode], parts):
        if m <= 0 or n <= 0:
            continue
        if m > dst.shape[0] or n > dst.shape[1]:
            raise ValueError(f"move: the {m} x {n} part of the Acc tile for AIV{sub_block} "
                             f"does not fit the {dst.shape} Vec tile {_where(loc)}")
        src_at = int(src.offsets(1, 1, om + r0, on + c0)[0, 0])
        current_core().execute(FixPipe(
            vec, m, n, loc, src=acc.at(src_at), src_stride=src.frame.rows,
            dst_stride=dst.frame.rows if nz else dst.frame.cols,
            layout="NZ" if nz else "ND", c0=dst.frame.frac_cols if nz else 16,
            relu=relu is not None and ReluPreMode(relu) == ReluPreMode.NormalRelu,
            convert=src.dtype != dst.dtype or quant is not None, sub_block=sub_block,
            op="move", quant=quant.at(c0) if isinstance(quant, Region) else quant,
            dst_format=BYTE_FORMATS.get(dst.dtype.name)))


def _acc_parts(mode: AccToVecMode, rows: int, cols: int) -> list[tuple[int, int, int, int]]:
    """``(first row, first column, rows, columns)`` of the Acc window each receiving AIV gets:
    SplitM gives AIV0 ``ceil(M/2)`` rows; SplitN gives AIV0 half of N rounded up to 32 (all of
    N when N <= 16); AIV1 gets the rest."""
    if mode in (AccToVecMode.SingleModeVec0, AccToVecMode.SingleModeVec1):
        return [(0, 0, rows, cols)]
    if mode == AccToVecMode.DualModeSplitM:
        first = round_up(rows, 2) // 2
        return [(0, 0, first, cols), (first, 0, rows - first, cols)]
    first = cols if cols <= 16 else round_up(cols, 32) // 2
    return [(0, 0, rows, first), (0, first, rows, cols - first)]


#: (src space, dst space) -> how the move runs.
MOVE_PATHS = {(MemorySpace.Mat, MemorySpace.Left): _to_cube_buffer,
              (MemorySpace.Mat, MemorySpace.Right): _to_cube_buffer,
              (MemorySpace.Mat, MemorySpace.ScaleLeft): _to_cube_buffer,
              (MemorySpace.Mat, MemorySpace.ScaleRight): _to_cube_buffer,
              (MemorySpace.Mat, MemorySpace.Bias): _to_bias,
              (MemorySpace.Mat, MemorySpace.Scaling): _plain,
              (MemorySpace.Acc, MemorySpace.Vec): _acc_to_vec,
              (MemorySpace.Vec, MemorySpace.Vec): _plain,
              (MemorySpace.Vec, MemorySpace.Mat): _to_mat}


#: The core that issues each move: the AIC drives L1, L0 and the fixpipe, an AIV its UB -> L1
#: path. (A Vec -> Vec move runs wherever the kernel's vector ops run.)
MOVE_CORES = {pair: "AIV" if pair[0] == MemorySpace.Vec else "AIC" for pair in MOVE_PATHS}
MOVE_CORES[(MemorySpace.Vec, MemorySpace.Vec)] = None


def _on(kind: str | None, op: str, src: Tile, dst: Tile, loc) -> None:
    """Refuse an op issued by the wrong kind of core (a cube op outside the cube section)."""
    core = current_core()
    if kind is not None and core.kind != kind:
        where = "pl.section_cube()" if kind == "AIC" else "pl.section_vector()"
        raise KernelError(f"{op} {src.space.name} -> {dst.space.name} is issued by the "
                          f"{kind}, but this code runs on an {core.kind}: put it inside "
                          f"`with {where}:`", loc)


# ----------------------------------------------------------------------- insert
def insert(dst, src, offset):
    """``pl.insert(dst_tile, src_tile, offset)``: a Vec tile into a Mat tile at ``offset``
    (UB -> L1 over MTE3, from an AIV into its AIC's L1)."""
    loc = user_location()
    dst = expect_tile(dst, "insert", "dst", loc)
    src = expect_tile(src, "insert", "src", loc)
    expect_space(dst, (MemorySpace.Mat,), "insert", "dst", loc)
    expect_space(src, (MemorySpace.Vec,), "insert", "src", loc)
    _on("AIV", "insert", src, dst, loc)
    _insert(dst, src, _pair(offset, "insert", loc), "insert", loc)


def _insert(dst: Tile, src: Tile, at: tuple[int, int], op: str, loc) -> None:
    """``src``'s valid window into ``dst`` at ``at`` -- in ``dst``'s transposed coordinates
    when the layouts are a transposed pair (an NZ tile into a ZN Mat: the on-chip transpose)."""
    if src.dtype != dst.dtype:
        raise ValueError(f"{op}: a {src.dtype!r} tile cannot be inserted into a {dst.dtype!r} "
                         f"tile {_where(loc)}")
    transpose = _transposed(dst, src)
    rows, cols = src.valid
    # A window that runs past the destination writes the L1 bytes after it, as the device
    # does (the machine reports a local-overflow there).
    dst_at = (at[1], at[0]) if transpose else at
    _copy(dst, src, rows, cols, (0, 0), dst_at, transpose, op, loc)


# ----------------------------------------------------------------------- matmul
def _operand(tile, space: MemorySpace, role: str, op: str, loc) -> Tile:
    tile = expect_tile(tile, op, role, loc)
    expect_space(tile, (space,), op, role, loc)
    want = MMAD_LAYOUTS.get(role)
    if want is not None and tile.layout != want:
        raise ValueError(f"{op}: the cube reads {role} as a {want.name} {space.name} tile, got "
                         f"{tile.layout.name} {_where(loc)}")
    return tile


def _first(tile: Tile):
    return tile.region().at(int(tile.offsets(1, 1)[0, 0]))


def _phase(phase, op: str, loc) -> str | None:
    if phase is None:
        return None
    return UNIT_PHASES.get(int(AccPhase(phase)))


def _mmad(dst, lhs, rhs, bias, accumulate: bool, phase, op: str, loc, mx: bool = False) -> None:
    """One Mmad record (``mx``: the MX product, its formats from the operands' types)."""
    dst = _operand(dst, MemorySpace.Acc, "dst", op, loc)
    lhs = _operand(lhs, MemorySpace.Left, "lhs", op, loc)
    rhs = _operand(rhs, MemorySpace.Right, "rhs", op, loc)
    if bias is not None:
        bias = _operand(bias, MemorySpace.Bias, "bias", op, loc)
    _on("AIC", op, lhs, dst, loc)
    m, k = lhs.valid
    n = rhs.valid[1]
    if rhs.valid[0] < k:
        raise ValueError(f"{op}: lhs has {k} valid columns but rhs only {rhs.valid[0]} valid "
                         f"rows {_where(loc)}")
    if m > dst.shape[0] or n > dst.shape[1]:
        raise ValueError(f"{op}: an {m} x {n} product does not fit the {dst.shape} Acc tile "
                         f"{_where(loc)}")
    if bias is not None and bias.shape[0] != 1:
        raise ValueError(f"{op}: the bias is one row [1, N], got a {bias.shape} Bias tile "
                         f"{_where(loc)}")
    if bias is not None and bias.valid[1] < n:
        raise ValueError(f"{op}: the bias has {bias.valid[1]} values for {n} columns "
                         f"{_where(loc)}")
    current_core().execute(Mmad(
        m, n, k, machine_type(lhs.dtype), loc, dst=_first(dst), a=_first(lhs), b=_first(rhs),
        bias=None if bias is None else _first(bias), accumulate=accumulate, op=op,
        a_rows=lhs.frame.rows, b_cols=rhs.frame.cols, c_rows=dst.frame.rows,
        unit_flag=_phase(phase, op, loc),
        mx=(machine_type(lhs.dtype), machine_type(rhs.dtype)) if mx else None))


def matmul(dst, lhs, rhs, bias=None, *, phase=None):
    """``pl.matmul(dst, lhs, rhs[, bias], *, phase=None)``: ``dst = lhs @ rhs (+ bias)``."""
    _mmad(dst, lhs, rhs, bias, False, phase, "matmul", user_location())


def matmul_bias(dst, lhs, rhs, bias, *, phase=None):
    """``pl.matmul_bias(dst, lhs, rhs, bias)``: the backend name of a matmul with a bias."""
    _mmad(dst, lhs, rhs, bias, False, phase, "matmul_bias", user_location())


def matmul_acc(dst, acc, lhs, rhs, *, phase=None):
    """``pl.matmul_acc(dst, acc, lhs, rhs, *, phase=None)``: ``dst = acc + lhs @ rhs``, in
    place (the Cube accumulates into the L0C buffer it writes)."""
    loc = user_location()
    acc = expect_tile(acc, "matmul_acc", "acc", loc)
    dst = expect_tile(dst, "matmul_acc", "dst", loc)
    if (acc.mem, acc.addr, acc.origin) != (dst.mem, dst.addr, dst.origin):
        raise ValueError(f"matmul_acc: the Cube accumulates in place, so acc must be the dst "
                         f"tile (or a tile over the same L0C bytes) {_where(loc)}")
    _mmad(dst, lhs, rhs, None, True, phase, "matmul_acc", loc)


# ----------------------------------------------------------------------- MX matmul
#: MX operand types: the FP8 pair and the FP4 pair (either type on each side of a pair).
MX_FP8 = ("FP8E4M3FN", "FP8E5M2")
MX_FP4 = ("FP4E2M1", "FP4E1M2")
#: Elements of K per E8M0 scale, and the multiple K must be (PyPTO Pro matmul_mx.md).
MX_GROUP = 32
MX_K_MULTIPLE = 64


def _check_mx(op: str, dst: Tile, lhs: Tile, rhs: Tile, scale_a, scale_b, loc) -> None:
    """PyPTO Pro's checks of an MX matmul's declared tiles (block_ops ``_check_mx_operands``),
    in its wording."""
    lhs_k, rhs_k = lhs.shape[1], rhs.shape[0]
    if lhs_k != rhs_k:
        raise ValueError(f"{op}: lhs and rhs K dimensions must match, got lhs K={lhs_k}, "
                         f"rhs K={rhs_k}. {_where(loc)}")
    for name, k in (("lhs", lhs_k), ("rhs", rhs_k)):
        if k % MX_K_MULTIPLE:
            raise ValueError(f"{op}: K dimension must be a multiple of {MX_K_MULTIPLE} for MX "
                             f"matmul, got {name} K={k}. {_where(loc)}")
    if dst.shape != [lhs.shape[0], rhs.shape[1]]:
        raise ValueError(f"{op}: dst_tile shape must be [lhs M, rhs N], expected "
                         f"{[lhs.shape[0], rhs.shape[1]]}, got {dst.shape}. {_where(loc)}")
    for scale, data, name, data_name, space, axis in (
            (scale_a, lhs, "scale_a", "lhs_tile", MemorySpace.ScaleLeft, 1),
            (scale_b, rhs, "scale_b", "rhs_tile", MemorySpace.ScaleRight, 0)):
        if not isinstance(scale, Tile):
            raise ValueError(f"{op}: {name} must be a Tile {_where(loc)}")
        if scale.dtype.name != "FP8E8M0":
            raise ValueError(f"{op}: {name} must use FP8E8M0 dtype, got {scale.dtype!r} "
                             f"{_where(loc)}")
        expect_space(scale, (space,), op, name, loc)
        expected = list(data.shape)
        expected[axis] //= MX_GROUP
        if scale.shape != expected:
            raise ValueError(f"{op}: {name} shape must match {data_name} MX groups, expected "
                             f"{expected} for {data_name} shape {data.shape}, got "
                             f"{scale.shape}. {_where(loc)}")
        if scale.addr != data.addr >> 4:
            raise ValueError(f"{op}: {name} address must equal {data_name} address >> 4, got "
                             f"{data_name}=0x{data.addr:X}, expected {name}="
                             f"0x{data.addr >> 4:X}, actual {name}=0x{scale.addr:X}. "
                             f"{_where(loc)}")
    types = (lhs.dtype.name, rhs.dtype.name)
    fp8, fp4 = all(t in MX_FP8 for t in types), all(t in MX_FP4 for t in types)
    if not (fp8 or fp4) or dst.dtype.name != "FP32":
        raise ValueError(f"{op}: (lhs,rhs) must be FP8/FP4 combo and dst FP32, got "
                         f"({lhs.dtype!r},{rhs.dtype!r},{dst.dtype!r}). {_where(loc)}")


def _mx(op: str, dst, acc, lhs, rhs, scale_a, scale_b, phase, loc) -> None:
    dst = _operand(dst, MemorySpace.Acc, "dst", op, loc)
    lhs = _operand(lhs, MemorySpace.Left, "lhs", op, loc)
    rhs = _operand(rhs, MemorySpace.Right, "rhs", op, loc)
    if acc is not None:
        acc = _operand(acc, MemorySpace.Acc, "acc", op, loc)
        if acc.shape != dst.shape:
            raise ValueError(f"{op}: acc_tile shape must match dst_tile shape, got "
                             f"{acc.shape} and {dst.shape}. {_where(loc)}")
        if (acc.mem, acc.addr, acc.origin) != (dst.mem, dst.addr, dst.origin):
            raise ValueError(f"{op}: the Cube accumulates in place, so acc must be the dst "
                             f"tile (or a tile over the same L0C bytes) {_where(loc)}")
    _check_mx(op, dst, lhs, rhs, scale_a, scale_b, loc)
    # The instruction reads the scales at the data's addresses >> 4 (checked above), so
    # the scale tiles themselves are no operands of the record.
    _mmad(dst, lhs, rhs, None, acc is not None, phase, op, loc, mx=True)


def matmul_mx(dst, lhs, rhs, scale_a, scale_b, *, phase=None):
    """``pl.matmul_mx(dst, lhs, rhs, scale_a, scale_b, *, phase=None)``: ``dst =
    dequant(lhs, scale_a) @ dequant(rhs, scale_b)`` (E8M0 scales per 32 elements of K)."""
    _mx("matmul_mx", dst, None, lhs, rhs, scale_a, scale_b, phase, user_location())


def matmul_mx_acc(dst, acc, lhs, rhs, scale_a, scale_b, *, phase=None):
    """``pl.matmul_mx_acc(dst, acc, lhs, rhs, scale_a, scale_b, *, phase=None)``: ``dst = acc
    + dequant(lhs, scale_a) @ dequant(rhs, scale_b)``, in place."""
    _mx("matmul_mx_acc", dst, acc, lhs, rhs, scale_a, scale_b, phase, user_location())


OPS = {"move": move, "insert": insert, "matmul": matmul, "matmul_acc": matmul_acc,
       "matmul_mx": matmul_mx, "matmul_mx_acc": matmul_mx_acc}
HIDDEN = {"matmul_bias": matmul_bias}
