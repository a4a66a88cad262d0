"""Tile operations that move elements around inside UB: transpose, the gathers, scatter, the
index fill and the padding fill. Each is one vector routine (:mod:`ascsim.pto.ops.routine`)
over the windows it reads and writes.

Indices of ``gather``/``scatter`` are element numbers of the whole tile counted row by row
(``r * cols + c`` of its shape); ``gatherb`` takes byte offsets of 32-byte blocks from the
source tile's first byte. The compare form of ``gather`` collects the numbers (plus
``offset``) of the elements of the source's valid window that compare true against the first
element of the value tile, and stores the byte count it wrote in the first element of the
count tile; its ``cmp_mode`` counts EQ, NE, LT, LE, GT, GE from 0 (4 is GT, 0 is EQ, as
PyPTO Pro's gather test uses them).
"""

from __future__ import annotations

import numpy as np

from ascsim.pto.enums import FillPadMode, TilePad
from ascsim.pto.ops.common import KernelError, user_location
from ascsim.pto.ops.routine import Window, repeats_of, run, vec_tiles, window
from ascsim.pto.tile import Tile

BLOCK_BYTES = 32


def _reps(tile: Tile, rows: int, cols: int) -> int:
    return repeats_of(rows, cols, tile.np_dtype.itemsize)


def transpose(out: Tile, src: Tile) -> None:
    """``pl.transpose(out, src)``: ``out[c, r] = src[r, c]`` over ``src``'s valid window."""
    loc = user_location()
    vec_tiles("transpose", loc, out, src)
    rows, cols = src.valid
    if out.shape[0] < cols or out.shape[1] < rows:
        raise KernelError(f"transpose: a {out.shape[0]}x{out.shape[1]} output cannot hold the "
                          f"transpose of a {rows}x{cols} window", loc)
    if src.np_dtype.itemsize == 8:
        raise KernelError("transpose: 64-bit elements are not supported", loc)
    run("transpose", (window(out, cols, rows),), (window(src, rows, cols),), lambda v: (v.T,),
        (("transpose", _reps(src, rows, cols)),), src.np_dtype, loc)


def _whole(tile: Tile):
    return window(tile, *tile.shape)


def _stored(tile: Tile) -> Window:
    """Every stored element of ``tile``, in address order."""
    return Window(tile.region(), np.arange(tile.size // tile.np_dtype.itemsize))


def _check_indices(idx: np.ndarray, limit: int, op: str, loc) -> np.ndarray:
    idx = idx.astype(np.int64)
    bad = (idx < 0) | (idx >= limit)
    if bad.any():
        raise KernelError(f"{op}: index {int(idx[bad][0])} is outside the {limit} elements of "
                          "the tile", loc)
    return idx


#: gather's cmp_mode -> comparison
GATHER_CMP = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
              5: np.greater_equal}


def gather(out, src, idx, tmp, *more, cmp_mode=0, offset=0) -> None:
    """``pl.gather(out, src, idx, tmp, *, offset=0)``: ``out[i] = src[idx[i] + offset]`` over
    ``out``'s valid window;
    ``pl.gather(out, src, values, count, tmp, *, cmp_mode, offset)``: the compare form."""
    loc = user_location()
    if more:
        return _gather_compare(out, src, idx, tmp, more[0], int(cmp_mode), int(offset), loc)
    vec_tiles("gather", loc, out, src, idx, tmp)
    if idx.np_dtype.kind not in "iu" or idx.np_dtype.itemsize not in (2, 4):
        raise KernelError(f"gather: indices must be 16- or 32-bit integers, got "
                          f"{idx.dtype.name}", loc)
    offset = int(offset)
    rows, cols = out.valid
    limit = src.shape[0] * src.shape[1]

    def fn(values, index):
        return (values.reshape(-1)[_check_indices(index.astype(np.int64) + offset, limit,
                                                  "gather", loc)],)

    # The instruction turns the indices into byte offsets in tmp, then gathers.
    steps = (("muls", _reps(idx, rows, cols)), ("transpose", _reps(out, rows, cols)))
    run("gather", (window(out, rows, cols),), (_whole(src), window(idx, rows, cols)), fn, steps,
        src.np_dtype, loc, (tmp,))


def _gather_compare(out, src, values, count, tmp, cmp_mode, offset, loc) -> None:
    vec_tiles("gather", loc, out, src, values, count, tmp)
    cmp = GATHER_CMP.get(cmp_mode)
    if cmp is None:
        raise KernelError(f"gather: cmp_mode {cmp_mode} is outside [0, 5]", loc)
    rows, cols = src.valid
    capacity = out.shape[0] * out.shape[1]

    def fn(data, value):
        hits = np.flatnonzero(cmp(data.reshape(-1), value.reshape(-1)[0])) + offset
        n = min(hits.size, capacity)
        return (np.arange(n), hits[:n]), (np.arange(1), [n * out.np_dtype.itemsize])

    steps = (("compare", _reps(src, rows, cols)), ("transpose", _reps(src, rows, cols)))
    run("gather", (_whole(out), window(count, 1, 1)),
        (window(src, rows, cols), window(values, 1, 1)), fn, steps, src.np_dtype, loc, (tmp,))


def gatherb(out: Tile, src: Tile, offsets: Tile) -> None:
    """``pl.gatherb(out, src, offsets)``: block ``j`` of 32 bytes of ``out``'s valid window
    (row by row) comes from byte ``offsets[j]`` of ``src``."""
    loc = user_location()
    vec_tiles("gatherb", loc, out, src, offsets)
    size = out.np_dtype.itemsize
    per_block = BLOCK_BYTES // size
    rows, cols = out.valid
    if cols % per_block:
        raise KernelError(f"gatherb: the output rows ({cols} elements) are not whole 32-byte "
                          "blocks", loc)
    blocks = cols // per_block
    if offsets.shape[0] < rows or offsets.shape[1] < blocks:
        raise KernelError(f"gatherb: the offset tile must be at least {rows}x{blocks}", loc)
    src_bytes = src.size

    def fn(data, offs):
        offs = offs.astype(np.int64)
        if (offs % BLOCK_BYTES).any() or (offs < 0).any() or (offs + BLOCK_BYTES > src_bytes).any():
            bad = offs[(offs % BLOCK_BYTES != 0) | (offs < 0) | (offs + BLOCK_BYTES > src_bytes)]
            raise KernelError(f"gatherb: byte offset {int(bad[0])} is not a 32-byte block of "
                              f"the {src_bytes}-byte source tile", loc)
        elems = offs[..., None] // size + np.arange(per_block)
        return (data.reshape(-1)[elems].reshape(rows, cols),)

    run("gatherb", (window(out, rows, cols),),
        (_stored(src), window(offsets, rows, blocks)), fn,
        (("copy", _reps(out, rows, cols)),), out.np_dtype, loc)


#: gathermask pattern_mode -> (first column, step) of the columns kept in each row
GATHER_PATTERNS = {1: (0, 2), 2: (1, 2), 3: (0, 4), 4: (1, 4), 5: (2, 4), 6: (3, 4), 7: (0, 1)}


def gathermask(out: Tile, src: Tile, *, pattern_mode) -> None:
    """``pl.gathermask(out, src, *, pattern_mode)``: each row of ``src``'s valid window keeps
    the columns of a fixed pattern (1: even, 2: odd, 3-6: one of every four, 7: all)."""
    loc = user_location()
    vec_tiles("gathermask", loc, out, src)
    pattern = GATHER_PATTERNS.get(int(pattern_mode))
    if pattern is None:
        raise KernelError(f"gathermask: pattern_mode {pattern_mode!r} is outside [1, 7]", loc)
    first, step = pattern
    rows, cols = src.valid
    kept = len(range(first, cols, step))
    if out.shape[0] < rows or out.shape[1] < kept:
        raise KernelError(f"gathermask: a {out.shape[0]}x{out.shape[1]} output cannot hold "
                          f"{rows}x{kept} gathered elements", loc)
    run("gathermask", (window(out, rows, kept),), (window(src, rows, cols),),
        lambda v: (v[:, first::step],), (("copy", _reps(src, rows, cols)),), src.np_dtype, loc)


def scatter(out: Tile, src: Tile, idx: Tile) -> None:
    """``pl.scatter(out, src, idx)``: ``out[idx[i]] = src[i]`` over ``src``'s valid window."""
    loc = user_location()
    vec_tiles("scatter", loc, out, src, idx)
    rows, cols = src.valid
    limit = out.shape[0] * out.shape[1]

    def fn(values, index):
        return (_check_indices(index.reshape(-1), limit, "scatter", loc), values.reshape(-1)),

    run("scatter", (_whole(out),), (window(src, rows, cols), window(idx, rows, cols)), fn,
        (("muls", _reps(idx, rows, cols)), ("transpose", _reps(src, rows, cols))),
        src.np_dtype, loc)


def fill_index(out: Tile, start) -> None:
    """``pl.fill_index(out, start)``: ``start, start + 1, ...`` over ``out``'s valid window."""
    loc = user_location()
    vec_tiles("fill_index", loc, out)
    rows, cols = out.valid
    first = out.np_dtype.type(start)
    run("fill_index", (window(out, rows, cols),), (),
        lambda: ((first + np.arange(rows * cols)).astype(out.np_dtype).reshape(rows, cols),),
        (("duplicate", _reps(out, rows, cols)),), out.np_dtype, loc)


def pad_value(tile: Tile, op: str, loc):
    """The value ``tile``'s ``pad`` names: zero, or its type's largest/smallest (infinities
    for floats)."""
    pad = tile.ttype.pad
    dtype = tile.np_dtype
    if pad == TilePad.null:
        raise KernelError(f"{op}: the destination tile has no pad value (TilePad.null); give "
                          "its TileType pad=pl.TilePad.zero/max/min", loc)
    if pad == TilePad.zero:
        return dtype.type(0)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.max if pad == TilePad.max else info.min)
    return dtype.type(np.inf if pad == TilePad.max else -np.inf)


def fillpad(out: Tile, src: Tile, *, mode=FillPadMode.NORMAL, name="fillpad") -> None:
    """``pl.fillpad(out, src, *, mode)``: ``out`` = ``src``'s valid window, and every other
    element of ``out``'s shape = ``out``'s pad value. NORMAL: same shapes; EXPAND: ``out``
    larger; INPLACE: the same bytes."""
    loc = user_location()
    vec_tiles(name, loc, out, src)
    mode = FillPadMode(int(mode))
    if mode == FillPadMode.NORMAL and list(out.shape) != list(src.shape):
        raise KernelError(f"{name}: NORMAL needs equal shapes, got {out.shape} and {src.shape} "
                          "(EXPAND fills a larger tile)", loc)
    if mode == FillPadMode.EXPAND and (out.shape[0] < src.shape[0] or out.shape[1] < src.shape[1]):
        raise KernelError(f"{name}: EXPAND needs an output at least as large as the source", loc)
    if mode == FillPadMode.INPLACE and (out.mem is not src.mem or out.addr != src.addr):
        raise KernelError(f"{name}: INPLACE needs the output at the source's address", loc)
    value = pad_value(out, name, loc)
    rows, cols = src.valid
    shape = tuple(out.shape)
    if rows > shape[0] or cols > shape[1]:
        raise KernelError(f"{name}: the {rows}x{cols} source window does not fit the output", loc)

    def fn(data):
        result = np.full(shape, value, dtype=out.np_dtype)
        result[:rows, :cols] = data
        return (result,)

    steps = (("duplicate", _reps(out, *shape)), ("copy", _reps(src, rows, cols)))
    run(name, (window(out, *shape),), (window(src, rows, cols),), fn, steps, out.np_dtype, loc)


def _fillpad_mode(mode: FillPadMode, name: str):
    def op(out, src):
        fillpad(out, src, mode=mode, name=name)
    op.__name__ = name
    op.__doc__ = f"Backend ``{name}(out, src)``: ``pl.fillpad`` with ``mode={mode.name}``"
    return op


OPS = {"transpose": transpose, "gather": gather, "gatherb": gatherb, "gathermask": gathermask,
       "scatter": scatter, "fill_index": fill_index, "fillpad": fillpad}
HIDDEN = {"fillpad_expand": _fillpad_mode(FillPadMode.EXPAND, "fillpad_expand"),
          "fillpad_inplace": _fillpad_mode(FillPadMode.INPLACE, "fillpad_inplace")}
