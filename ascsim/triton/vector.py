"""Tile operations as vector-unit records (``V`` pipe): element-wise ops, fills, casts,
reductions, choices by a known mask.

Each Triton operation on tiles is one :class:`~ascsim.isa.Vector` record over a fresh tile (or a
short, fixed chain of them), in count form when every operand is its allocation's first
elements in order, else with one element index array per operand -- which is how a broadcast
(``x - row_max[:, None]``) and a view (``x[None, :]``, ``x.T``) are addressed. A reduction along
an axis is a halving tree of element-wise ops (log2 of the axis length records, as the
compiler's vector reduction does); a reduction of a whole tile is one
:class:`~ascsim.isa.VectorReduce`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascsim.isa import (
    Region,
    ScalarLoad,
    Vector,
    VectorCompare,
    VectorReduce,
    VectorSelect,
    VectorSequence,
)
from ascsim.sim.source import user_location
from ascsim.triton import dtypes
from ascsim.triton import program as _program
from ascsim.triton.tensor import tensor

REPEAT_BYTES = 256  # bytes of one vector repeat (ascend-hw §2.2)


@lru_cache(maxsize=256)
def _iota(n: int) -> np.ndarray:
    out = np.arange(n, dtype=np.int64)
    out.setflags(write=False)
    return out


def region(prog, t: tensor) -> Region:
    """The whole allocation of tile ``t`` as an operand."""
    alloc = t.alloc
    size = t.dtype.np_dtype.itemsize
    return Region(prog.ub, alloc.lo, alloc.size // size, t.dtype.np_dtype, alloc.lo + alloc.size)


def mask_region(prog, t: tensor) -> Region:
    """The bytes of the packed mask tile ``t`` as an operand."""
    alloc = t.alloc
    return Region(prog.ub, alloc.lo, alloc.size, np.dtype(np.uint8), alloc.lo + alloc.size)


def new_mask(prog, shape: tuple, loc) -> tensor:
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    alloc = prog.planner.allocate(-(-n // 8), loc)
    return tensor(dtypes.int1, shape, alloc=alloc, packed=True)


def compare(cmp: str, a: tensor, b, shape: tuple, loc) -> tensor:
    """``a cmp b`` (``b`` a tile or a scalar) into a new packed mask tile."""
    prog = _program.current()
    out = new_mask(prog, shape, loc)
    n = out.numel
    lanes_a = np.broadcast_to(a.lanes(), shape).reshape(-1)
    widest = a.dtype.np_dtype.itemsize
    if isinstance(b, tensor):
        srcs = (region(prog, a), region(prog, b))
        lanes = (lanes_a, np.broadcast_to(b.lanes(), shape).reshape(-1))
        scalar, reads = None, (a.alloc, b.alloc)
    else:
        srcs, lanes, scalar, reads = (region(prog, a),), (lanes_a,), b, (a.alloc,)
    rec = VectorCompare(cmp, mask_region(prog, out), srcs, lanes, _iota(n),
                        _repeats(n, widest), loc, scalar)
    prog.order.issue("V", rec, reads, (out.alloc,), loc)
    return out


def select(mask: tensor, x: tensor, y, dtype, shape: tuple, loc) -> tensor:
    """``x`` where the packed ``mask`` is set, else ``y`` (a tile or a scalar)."""
    prog = _program.current()
    out = new_tile(prog, dtype, shape, loc)
    n = out.numel
    bits = np.broadcast_to(mask.lanes(), shape).reshape(-1)
    lanes_x = np.broadcast_to(x.lanes(), shape).reshape(-1)
    if isinstance(y, tensor):
        srcs = (region(prog, x), region(prog, y))
        lanes = (_iota(n), lanes_x, np.broadcast_to(y.lanes(), shape).reshape(-1))
        scalar, reads = None, (mask.alloc, x.alloc, y.alloc)
    else:
        srcs, lanes = (region(prog, x),), (_iota(n), lanes_x)
        scalar, reads = dtype.np_dtype.type(y), (mask.alloc, x.alloc)
    rec = VectorSelect(region(prog, out), mask_region(prog, mask), srcs, lanes, bits,
                       _repeats(n, dtype.np_dtype.itemsize), loc, scalar)
    prog.order.issue("V", rec, reads, (out.alloc,), loc)
    return out


def mask_bytes(op: str, a: tensor, b: tensor | None, loc) -> tensor:
    """``a & b``, ``a | b``, ``a ^ b`` or ``~a`` of packed masks of one shape, byte-wise."""
    prog = _program.current()
    out = new_mask(prog, a.shape, loc)
    nbytes = -(-out.numel // 8)
    srcs = (a,) if b is None else (a, b)
    rec = Vector(op, mask_region(prog, out)._replace(count=nbytes),
                 tuple(mask_region(prog, s)._replace(count=nbytes) for s in srcs), loc)
    prog.order.issue("V", rec, tuple(s.alloc for s in srcs), (out.alloc,), loc)
    return out


def new_tile(prog, dtype, shape: tuple, loc) -> tensor:
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    alloc = prog.planner.allocate(n * dtype.np_dtype.itemsize, loc)
    return tensor(dtype, shape, alloc=alloc)


def _repeats(n: int, itemsize: int) -> int:
    return max(1, -(-n * itemsize // REPEAT_BYTES))


def _plain(t: tensor, n: int) -> bool:
    """Whether ``t`` is its allocation's first ``n`` elements in order."""
    return t.index is None and t.numel == n


def elementwise(unit_op: str, dtype, shape: tuple, srcs: tuple, scalars: tuple = (),
                attrs=None, loc=None) -> tensor:
    """``unit_op`` over the tiles ``srcs`` (broadcast to ``shape``) into a new tile."""
    loc = loc or user_location()
    prog = _program.current()
    out = new_tile(prog, dtype, shape, loc)
    n = out.numel
    if all(_plain(s, n) for s in srcs):
        rec = Vector(unit_op, region(prog, out)._replace(count=n),
                     tuple(region(prog, s)._replace(count=n) for s in srcs), loc,
                     scalars, attrs=attrs)
    else:
        lanes = (_iota(n), *(np.broadcast_to(s.lanes(), shape).reshape(-1) for s in srcs))
        widest = max(t.dtype.np_dtype.itemsize for t in (out, *srcs))
        rec = Vector(unit_op, region(prog, out), tuple(region(prog, s) for s in srcs), loc,
                     scalars, lanes, _repeats(n, widest), attrs)
    prog.order.issue("V", rec, tuple(s.alloc for s in srcs), (out.alloc,), loc)
    return out


def fill(dtype, shape: tuple, value, loc=None) -> tensor:
    """A new tile of ``shape`` holding ``value`` everywhere (the vector unit's duplicate)."""
    loc = loc or user_location()
    out = new_tile(_program.current(), dtype, shape, loc)
    fill_tile(out, value, loc)
    return out


def fill_tile(out: tensor, value, loc) -> None:
    """Set every element of the fresh tile ``out`` to ``value``."""
    prog = _program.current()
    rec = Vector("duplicate", region(prog, out)._replace(count=out.numel), (), loc,
                 (out.dtype.np_dtype.type(value),))
    prog.order.issue("V", rec, (), (out.alloc,), loc)


def overwrite(out: tensor, positions: np.ndarray, src, loc) -> None:
    """Set the elements ``positions`` (flat, row-major) of the fresh tile ``out`` to tile
    ``src``'s elements there (broadcast to ``out``) or to the scalar ``src``: one masked
    vector instruction."""
    prog = _program.current()
    if not positions.size:
        return
    size = out.dtype.np_dtype.itemsize
    if isinstance(src, tensor):
        lanes = (positions, np.broadcast_to(src.lanes(), out.shape).reshape(-1)[positions])
        rec = Vector("copy", region(prog, out), (region(prog, src),), loc, (), lanes,
                     _repeats(int(positions.size), size))
        reads = (src.alloc, out.alloc)
    else:
        rec = Vector("duplicate", region(prog, out), (), loc,
                     (out.dtype.np_dtype.type(src),), (positions,),
                     _repeats(int(positions.size), size))
        reads = (out.alloc,)
    prog.order.issue("V", rec, reads, (out.alloc,), loc)


def reduce_all(how: str, src: tensor, loc) -> tensor:
    """One :class:`VectorReduce` of every element of ``src`` into a one-element tile."""
    prog = _program.current()
    out = new_tile(prog, src.dtype, (), loc)
    lanes = src.lanes().reshape(-1)
    rec = VectorReduce(how, region(prog, out), region(prog, src), lanes, lanes, False,
                       _repeats(lanes.size, src.dtype.np_dtype.itemsize), loc)
    prog.order.issue("V", rec, (src.alloc,), (out.alloc,), loc)
    return out


#: reduction -> the element-wise op of one halving step
HALVING = {"sum": "add", "max": "max", "min": "min"}
BLOCK_BYTES = 32  # vector operands start on 32-byte boundaries (ascend-hw §2.2)


def _halve(prog, unit: str, src: tensor, lanes: np.ndarray, loc,
           columns: bool = False) -> tuple[tensor, np.ndarray]:
    """One step: ``lanes[..., :h] op lanes[..., h:]`` into a new tile (``h`` = half the last
    axis; an odd last element is folded into the first of each row). ``columns``: the result
    keeps the last axis outermost (rows of ``lanes`` along the tile's rows' padding)."""
    kept, length = lanes.shape[:-1], lanes.shape[-1]
    half = length // 2
    if columns:
        out = new_tile(prog, src.dtype, (half, *kept), loc)
        out_lanes = np.moveaxis(out.lanes(), 0, -1)
    else:
        out = new_tile(prog, src.dtype, (*kept, half), loc)
        out_lanes = out.lanes()
    size = src.dtype.np_dtype.itemsize
    rec = Vector(unit, region(prog, out), (region(prog, src),) * 2, loc, (),
                 (out_lanes.reshape(-1), lanes[..., :half].reshape(-1),
                  lanes[..., half:2 * half].reshape(-1)), _repeats(out.numel, size))
    prog.order.issue("V", rec, (src.alloc,), (out.alloc,), loc)
    if length % 2:
        firsts = out_lanes[..., 0].reshape(-1)
        rec = Vector(unit, region(prog, out), (region(prog, out), region(prog, src)), loc, (),
                     (firsts, firsts, lanes[..., -1].reshape(-1)), _repeats(firsts.size, size))
        prog.order.issue("V", rec, (out.alloc, src.alloc), (out.alloc,), loc)
    return out, out_lanes


def reduce_axis(how: str, src: tensor, axis: int, loc) -> tensor:
    """Reduce ``src`` along ``axis`` by halving, as the compiler's vector reduction does: while
    half of what is left of each row is whole 32-byte blocks, the two halves of every row are
    combined in place of the row; the last few elements of each row (less than a block) are
    then turned into columns of a tile whose rows are padded to whole blocks, and combined row
    against row, so that every operand starts on a block boundary."""
    prog = _program.current()
    unit = HALVING[how]
    size = src.dtype.np_dtype.itemsize
    lanes = np.moveaxis(src.lanes(), axis, -1)
    kept = lanes.shape[:-1]
    current = src
    while lanes.shape[-1] > 1 and (lanes.shape[-1] // 2) * size % BLOCK_BYTES == 0:
        current, lanes = _halve(prog, unit, current, lanes, loc)
    length = lanes.shape[-1]
    if length > 1:
        rows = int(np.prod(kept, dtype=np.int64))
        pitch = -(-rows * size // BLOCK_BYTES) * BLOCK_BYTES // size
        columns = new_tile(prog, src.dtype, (length, pitch), loc)
        dst = (np.arange(length, dtype=np.int64)[:, None] * pitch
               + np.arange(rows, dtype=np.int64)[None, :]).reshape(-1)
        rec = Vector("copy", region(prog, columns), (region(prog, current),), loc, (),
                     (dst, lanes.reshape(rows, length).T.reshape(-1)), _repeats(dst.size, size))
        prog.order.issue("V", rec, (current.alloc,), (columns.alloc,), loc)
        current, lanes = columns, columns.lanes().T  # (pitch, length): rows along the padding
        while lanes.shape[-1] > 1:
            current, lanes = _halve(prog, unit, current, lanes, loc, columns=True)
        lanes = lanes[:rows]
    lanes = lanes.reshape(kept) if kept else lanes.reshape(())
    return tensor(src.dtype, kept, alloc=current.alloc, index=lanes)


def scalar_read(t: tensor):
    """The one element of tile ``t``, read by the scalar unit (it waits for the instruction
    that wrote it and stalls until the value arrives, so nothing issued later can overtake
    the read)."""
    loc = user_location()
    prog = _program.current()
    lane = int(t.lanes().reshape(-1)[0])
    return prog.core.execute(ScalarLoad(region(prog, t).at(lane, 1), loc))


#: How a block of index arithmetic reaches UB: the vector unit's index generation (an arithmetic
#: progression, priced as one fill-class pass: the cost table has no class of its own for it)
#: and one add pass for its offset. What the kernel computed from the indices before they
#: became data is folded into those two passes, as the compiler folds constant arithmetic.
MATERIALISE_STEPS = ("duplicate", "adds")


def materialise(values: np.ndarray, dtype, loc) -> tensor:
    """A tile holding the known block ``values`` (index arithmetic used as data)."""
    prog = _program.current()
    shape = values.shape
    out = new_tile(prog, dtype, shape, loc)
    flat = np.ascontiguousarray(values, dtype=dtype.np_dtype).reshape(-1)
    rec = VectorSequence("index", region(prog, out)._replace(count=flat.size), (),
                         lambda: flat, MATERIALISE_STEPS,
                         _repeats(flat.size, dtype.np_dtype.itemsize), dtype.np_dtype.name, loc)
    prog.order.issue("V", rec, (), (out.alloc,), loc)
    return out


def arg_reduce(how: str, src: tensor, axis: int | None, loc) -> tensor:
    """The index of the first maximum (``how="max"``) or minimum of ``src`` along ``axis``
    (None: of every element), as int32: the vector unit's reduce with index, once per
    output element. Each reduced row is first laid out from a 32-byte boundary, and each
    result gets its own block, so that every operand is aligned."""
    prog = _program.current()
    size = src.dtype.np_dtype.itemsize
    lanes = src.lanes()
    if axis is None:
        lanes = lanes.reshape(1, -1)
        kept: tuple = ()
    else:
        lanes = np.moveaxis(lanes, axis, -1)
        kept = lanes.shape[:-1]
        lanes = lanes.reshape(-1, lanes.shape[-1])
    rows, length = lanes.shape
    per_block = BLOCK_BYTES // size
    pitch = -(-length // per_block) * per_block
    source, row_lanes = src, lanes
    in_place = np.array_equal(lanes.reshape(-1), _iota(rows * length)) and (
        rows == 1 or pitch == length)  # rows already start on block boundaries
    if not in_place:
        source = new_tile(prog, src.dtype, (rows, pitch), loc)
        dst = (np.arange(rows, dtype=np.int64)[:, None] * pitch
               + np.arange(length, dtype=np.int64)[None, :]).reshape(-1)
        rec = Vector("copy", region(prog, source), (region(prog, src),), loc, (),
                     (dst, lanes.reshape(-1)), _repeats(dst.size, size))
        prog.order.issue("V", rec, (src.alloc,), (source.alloc,), loc)
        row_lanes = dst.reshape(rows, length)
    out = new_tile(prog, src.dtype, (rows, per_block), loc)
    fill_tile(out, 0, loc)  # the blocks' unused elements: the gather below reads whole blocks
    numbers = np.arange(length, dtype=np.int64)
    src_region, out_region = region(prog, source), region(prog, out)
    for r in range(rows):
        rec = VectorReduce(how, out_region.at(r * per_block, 2), src_region, row_lanes[r],
                           numbers, True, _repeats(length, size), loc)
        prog.order.issue("V", rec, (source.alloc,), (out.alloc,), loc)
    # The indices (element 1 of each result block) gathered into one tile by a pattern
    # mask over the whole result (the vector unit's gather-by-mask, one copy-class pass).
    unsigned = dtypes.from_numpy(f"uint{size * 8}")
    picked = np.arange(rows, dtype=np.int64) * per_block + 1
    indices = new_tile(prog, unsigned, kept, loc)
    rec = VectorSequence("gather_mask", region(prog, indices)._replace(count=rows),
                         (region(prog, out)._replace(count=rows * per_block),),
                         lambda values: values.view(unsigned.np_dtype)[picked], ("copy",),
                         _repeats(rows * per_block, size), src.dtype.np_dtype.name, loc)
    prog.order.issue("V", rec, (out.alloc,), (indices.alloc,), loc)
    return indices


def copy_lanes(out: tensor, dst_lanes: np.ndarray, src: tensor, src_lanes: np.ndarray,
               loc) -> None:
    """Copy tile ``src``'s elements ``src_lanes`` to the elements ``dst_lanes`` of tile ``out``
    (both flat element numbers of their allocations): one masked vector copy."""
    if not dst_lanes.size:
        return
    prog = _program.current()
    widest = max(out.dtype.np_dtype.itemsize, src.dtype.np_dtype.itemsize)
    rec = Vector("copy", region(prog, out), (region(prog, src),), loc, (),
                 (dst_lanes, src_lanes), _repeats(int(dst_lanes.size), widest))
    prog.order.issue("V", rec, (src.alloc,), (out.alloc,), loc)


def routine(name: str, dtype, shape: tuple, srcs: tuple, fn, steps: tuple, loc) -> tensor:
    """A new tile of ``shape`` and ``dtype`` computed by ``fn`` from the plain tiles ``srcs``
    (each viewed as its first elements in row-major order, reshaped to its tile's shape): one
    :class:`VectorSequence` priced as the cost ``steps``."""
    prog = _program.current()
    out = new_tile(prog, dtype, shape, loc)
    n = out.numel
    shapes = tuple(s.shape for s in srcs)

    def compute(*views):
        with np.errstate(all="ignore"):
            result = fn(*(v.reshape(s) for v, s in zip(views, shapes)))
        return np.asarray(result).reshape(-1)

    widest = max((s.dtype.np_dtype.itemsize for s in (out, *srcs)), default=4)
    rec = VectorSequence(name, region(prog, out)._replace(count=n),
                         tuple(region(prog, s)._replace(count=s.numel) for s in srcs), compute,
                         steps, _repeats(max(n, *(s.numel for s in srcs)), widest),
                         (srcs[0] if srcs else out).dtype.np_dtype.name, loc)
    prog.order.issue("V", rec, tuple(s.alloc for s in srcs), (out.alloc,), loc)
    return out


def plain(t: tensor, loc) -> tensor:
    """``t`` as a tile that is its allocation's first elements in row-major order (a view is
    copied once)."""
    if t.index is None and not t.packed:
        return t
    return elementwise("copy", t.dtype, t.shape, (t,), loc=loc)


def read_block(t: tensor) -> np.ndarray:
    """The values of tile ``t``, read by the scalar unit one element at a time (one
    :class:`ScalarLoad` per distinct element): what the compiler's scalar loop over an access
    through data-dependent addresses or masks does before each element's access."""
    loc = user_location()
    prog = _program.current()
    src = region(prog, t)
    lanes, where = np.unique(t.lanes().reshape(-1), return_inverse=True)
    values = np.empty(lanes.size, dtype=t.dtype.np_dtype)
    execute = prog.core.execute
    for i, lane in enumerate(lanes.tolist()):
        values[i] = execute(ScalarLoad(src.at(lane, 1), loc))
    return values[where].reshape(t.shape)
