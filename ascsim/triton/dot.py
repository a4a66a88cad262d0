"""``tl.dot`` on the cube: ND -> NZ into L1, L1 -> L0A / L0B, Mmad into L0C, FixPipe out.

The AIC of the block (:mod:`ascsim.triton.mix`) runs a dot as triton-ascend's compiler lowers
it for the A2/A3 series:

* **operands** come into L1 in NZ fractals (``IndexedCopy`` on MTE2: the DMA's ND -> NZ, one
  run per row of the block). A ``tl.load`` whose value only feeds ``tl.dot`` is the cube's
  own load from the kernel's tensor (:mod:`ascsim.triton.cube_loads` marks those loads at the
  first launch); any other operand -- a tile the vector unit made, a cast, index arithmetic --
  is written by the AIV to a GM workspace slot and read from there, after the compiler's
  cross-core flag (MTE3 -> MTE2);
* L1 -> L0A in the SoC's L0A layout (ZZ on 2201, NZ on 3510) and L1 -> L0B in ZN, on MTE1;
* one ``Mmad`` into an accumulator in L0C (fp16/bf16/fp32 summed in fp32, int8 in int32),
  accumulating in place for ``tl.dot(a, b, acc)`` and ``acc += tl.dot(a, b)``;
* the result (:class:`CubeTensor`) stays in L0C until it is used: stored by ``tl.store`` it is
  one ``FixPipe`` L0C -> GM (converted to the tensor's type on the way, as ``.to(tl.float16)``
  is); used by the vector unit it is fixpiped to a workspace slot and read into UB by the AIV
  after the flag FIX -> MTE2.

Two dots' operand buffers are held at a time (the compiler's double buffering), so the next
K step's copies run while the cube computes this one.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascsim.isa import Bursts, Copy, FixPipe, IndexedCopy, Mmad, Region
from ascsim.sim import fractal
from ascsim.sim.source import user_location
from ascsim.triton import dtypes, mix, vector
from ascsim.triton import program as _program
from ascsim.triton.errors import CompilationError
from ascsim.triton.tensor import tensor

#: Operand type -> accumulator type of the cube (ascend-hw §3.1).
ACCUMULATORS = {"fp16": dtypes.float32, "bf16": dtypes.float32, "fp32": dtypes.float32,
                "int8": dtypes.int32}
#: Accumulator types FixPipe converts to on the way out (round to nearest even).
FIXPIPE_OUT = {"fp32": ("fp32", "fp16", "bf16"), "int32": ("int32",)}
ROWS = fractal.FRACTAL_ROWS


def _fail(loc, text: str):
    raise CompilationError(f"{loc[0]}:{loc[1]}: {text}")


def _up(n: int, m: int) -> int:
    return -(-n // m) * m


# ---------------------------------------------------------------------- values
class GmBlock:
    """A ``tl.load`` that feeds only ``tl.dot``: its elements stay in GM until the cube loads
    them into L1 (``offsets``: element offsets into ``gm``, -1 where the mask drops one)."""

    __slots__ = ("dtype", "shape", "gm", "offsets", "fill", "kept", "loc")

    def __init__(self, dtype, gm, offsets: np.ndarray, fill, kept: int, loc):
        self.dtype, self.gm, self.offsets = dtype, gm, offsets
        self.shape = offsets.shape
        self.fill, self.kept, self.loc = fill, kept, loc

    def trans(self, *dims) -> GmBlock:
        """The block transposed: the cube loads it with the offsets swapped."""
        if dims not in ((), ((1, 0),), (1, 0)):
            _fail(self.loc, f"a dot operand can be transposed as (1, 0) only, got {dims}")
        return GmBlock(self.dtype, self.gm, self.offsets.T, self.fill, self.kept, self.loc)

    @property
    def T(self) -> GmBlock:  # noqa: N802 - Triton's own name
        return self.trans()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise CompilationError(f"{self.loc[0]}:{self.loc[1]}: this tl.load feeds tl.dot only "
                               f"(the cube loads it); .{name} of it is not supported")


class CubeTensor(tensor):
    """A ``tl.dot`` result in L0C of the block's AIC.

    ``l0c``: its allocation (None while ``pending``: a dot whose Mmad waits to learn whether
    it accumulates into another result, as ``acc += tl.dot(a, b)`` does). ``acc_dtype``: the
    type in L0C; ``dtype`` the value's (a ``.to()`` of a result is FixPipe's conversion)."""

    __slots__ = ("l0c", "pending", "acc_dtype", "ub")

    def __init__(self, dtype, shape, l0c=None, pending=None, acc_dtype=None):
        super().__init__(dtype, shape)
        self.l0c, self.pending = l0c, pending
        self.acc_dtype = acc_dtype or dtype
        self.ub = None

    def __repr__(self) -> str:
        return f"tensor(L0C, {self.dtype}, shape={list(self.shape)})"


def is_cube(value) -> bool:
    return isinstance(value, CubeTensor)


# ---------------------------------------------------------------------- layouts
@lru_cache(maxsize=256)
def _l0_index(role: str, rows: int, cols: int, c0: int, layout: str) -> np.ndarray:
    """For each element of the L0 image of an operand, its element number in the L1 NZ image
    (-1: padding the L1 image does not hold). A: ``rows x cols`` = M x K in ``layout`` (ZZ or
    NZ) over the frame (16-rows, C0-columns); B: K x N in ZN over (C0-rows, 16-columns)."""
    if role == "A":
        fr, fc = _up(rows, ROWS), _up(cols, c0)
    else:
        fr, fc = _up(rows, c0), _up(cols, ROWS)
    r = np.broadcast_to(np.arange(fr)[:, None], (fr, fc))
    c = np.broadcast_to(np.arange(fc)[None, :], (fr, fc))
    if role == "B":
        conv = fractal.nd_to_zn
    else:
        conv = fractal.nd_to_nz if layout == "NZ" else fractal.nd_to_zz
    r0, c0_ = conv(r, c0).reshape(-1), conv(c, c0).reshape(-1)
    l1_rows, l1_cols = _up(rows, ROWS), _up(cols, c0)  # the L1 NZ frame
    inside = (r0 < l1_rows) & (c0_ < l1_cols)
    index = (c0_ // c0) * l1_rows * c0 + r0 * c0 + c0_ % c0
    index = np.where(inside, index, -1).astype(np.int64)
    index.setflags(write=False)
    return index


def _l1_index(offsets: np.ndarray, c0: int) -> np.ndarray:
    """The GM element of every element of the L1 NZ image of a block (-1: fill)."""
    return fractal.nd_to_nz(offsets, c0, fill=-1).reshape(-1)


# ---------------------------------------------------------------------- operands
def cube_load(ptr, mask, other, loc):
    """A ``tl.load`` whose value only feeds ``tl.dot`` (:mod:`ascsim.triton.cube_loads`): a
    2-D block is left in GM for the cube; anything else loads into UB as usual."""
    from ascsim.triton import memory

    if not isinstance(ptr, tensor) or ptr.gm is None or len(ptr.shape) != 2:
        return memory.load(ptr, mask, other, loc)
    keep = memory._mask(mask, ptr.shape, "tl.load", loc)
    fill = 0
    if isinstance(other, tensor):
        if other.known is None or np.unique(other.known).size > 1:
            _fail(loc, "tl.load: other= must be a scalar (or a block of one value)")
        fill = other.known.reshape(-1)[0].item()
    elif other is not None:
        fill = other
    return gm_operand(ptr, keep, fill, loc)


def gm_operand(ptr: tensor, keep, fill, loc) -> GmBlock:
    """A marked ``tl.load`` of a 2-D block: left in GM for the cube."""
    shape = ptr.shape
    offsets = np.broadcast_to(ptr.known, shape).astype(np.int64)
    kept = offsets.size
    if keep is not None:
        offsets = np.where(keep, offsets, -1)
        kept = int(np.count_nonzero(keep))
    return GmBlock(ptr.dtype.element_ty, ptr.gm, offsets, fill, kept, loc)


def _workspace_operand(value: tensor, m: mix.Mix, loc) -> GmBlock:
    """A tile of the AIV's (or index arithmetic) handed to the cube through a workspace slot:
    the AIV writes it (MTE3) and the AIC reads it after the flag."""
    from ascsim.triton import semantic

    prog = _program.current()
    tile = semantic.as_tile(value, loc)
    if tile.index is not None and not np.array_equal(tile.index.reshape(-1),
                                                      vector._iota(tile.numel)):
        tile = vector.elementwise("copy", tile.dtype, tile.shape, (tile,), loc=loc)
    size = tile.dtype.np_dtype.itemsize
    nbytes = tile.numel * size
    slot = m.slot("to_cube", nbytes)
    slot.before_write(prog.core, "MTE3", loc)
    dst = slot.region(tile.dtype.np_dtype, tile.numel)
    rec = Copy(vector.region(prog, tile), dst, Bursts.contiguous(nbytes), loc, "dot_to_cube")
    instr = prog.order.issue("MTE3", rec, (tile.alloc,), (slot.gm.access(prog.core.core_id),),
                             loc)
    slot.wrote(prog.core, "MTE3", instr)
    offsets = np.arange(tile.numel, dtype=np.int64).reshape(tile.shape)
    block = GmBlock(tile.dtype, _TypedSlot(slot, tile.dtype), offsets, 0, tile.numel, loc)
    return block


class _TypedSlot:
    """A workspace slot seen as a tensor of one type (what a :class:`GmBlock` reads)."""

    __slots__ = ("slot", "region")

    def __init__(self, slot: mix.Slot, dtype):
        self.slot = slot
        self.region = slot.region(dtype.np_dtype, slot.nbytes // dtype.np_dtype.itemsize)

    def access(self, core_id: int):
        return self.slot.gm.access(core_id)


def _operand(value, m: mix.Mix, loc) -> GmBlock:
    if isinstance(value, GmBlock):
        return value
    if is_cube(value):  # a result fed back to the cube goes out through the workspace, too
        value = to_ub(value, loc)
    from ascsim.triton import semantic

    value = semantic.operand(value)
    if len(value.shape) != 2:
        _fail(loc, f"tl.dot takes 2-D blocks, got one of shape {list(value.shape)}")
    return _workspace_operand(value, m, loc)


def _to_l1(m: mix.Mix, block: GmBlock, role: str, loc):
    """MTE2: the block from GM into L1 as NZ fractals (ND -> NZ on the way)."""
    aic = m.aic
    np_dtype = block.dtype.np_dtype
    c0 = fractal.c0_of(np_dtype)
    index = _l1_index(block.offsets, c0)
    alloc = m.planners["L1"].allocate(index.size * np_dtype.itemsize, loc)
    dst = Region(aic.mem["L1"], alloc.lo, index.size, np_dtype, alloc.lo + alloc.size)
    kept = block.offsets >= 0
    rows_with_data = int(np.count_nonzero(kept.any(axis=1)))
    runs = rows_with_data + int(np.count_nonzero(
        (np.diff(block.offsets, axis=1) != 1) & kept[:, 1:]))
    slot = block.gm.slot if isinstance(block.gm, _TypedSlot) else None
    if slot is not None:
        slot.before_read(aic, "MTE2", loc)
    with np.errstate(all="ignore"):
        fill = np.asarray(block.fill).astype(np_dtype)[()]
    rec = IndexedCopy(block.gm.region, dst, index, None, block.kept * np_dtype.itemsize,
                      max(runs, 1), loc, f"dot_load_{role.lower()}", fill=fill,
                      gm_rows=_gm_rows(block.offsets, kept))
    instr = m.order.issue("MTE2", rec, (block.gm.access(aic.core_id),), (alloc,), loc)
    if slot is not None:
        slot.read(aic, "MTE2", instr)
    return alloc


def _gm_rows(offsets: np.ndarray, kept: np.ndarray):
    """(first GM element of each row with data, the longest row's length) when every row's
    kept elements are consecutive in GM -- the lines the L2 model looks up (a shorter tail row
    is taken at the longest's length) -- else None (the copy is then costed as misses)."""
    counts = kept.sum(axis=1)
    rows = np.flatnonzero(counts)
    if not rows.size:
        return None
    sub_offsets, sub_kept = offsets[rows], kept[rows]
    first = sub_offsets[np.arange(rows.size), sub_kept.argmax(axis=1)]
    rank = np.cumsum(sub_kept, axis=1) - 1  # each kept element's place among its row's
    if (np.where(sub_kept, sub_offsets - first[:, None] - rank, 0) != 0).any():
        return None
    return first, int(counts.max())


def _to_l0(m: mix.Mix, l1, block: GmBlock, role: str, loc):
    """MTE1: L1 NZ -> L0A (the SoC's layout) or L0B (ZN)."""
    aic = m.aic
    np_dtype = block.dtype.np_dtype
    c0 = fractal.c0_of(np_dtype)
    rows, cols = block.shape
    index = _l0_index(role, rows, cols, c0, aic.soc.l0a_layout)
    space = "L0A" if role == "A" else "L0B"
    alloc = m.planners[space].allocate(index.size * np_dtype.itemsize, loc)
    src = Region(aic.mem["L1"], l1.lo, l1.size // np_dtype.itemsize, np_dtype, l1.lo + l1.size)
    dst = Region(aic.mem[space], alloc.lo, index.size, np_dtype, alloc.lo + alloc.size)
    rec = IndexedCopy(src, dst, index, None, index.size * np_dtype.itemsize, 1, loc,
                      f"dot_load_{space.lower()}")
    m.order.issue("MTE1", rec, (l1,), (alloc,), loc)
    return alloc, dst


# ---------------------------------------------------------------------- tl.dot
def dot(a, b, acc=None, out_dtype=None, loc=None) -> CubeTensor:
    from ascsim.triton import semantic

    loc = loc or user_location()
    a, b, acc, out_dtype = (semantic.unwrap(v) for v in (a, b, acc, out_dtype))
    m = mix.current(loc)
    if not isinstance(a, GmBlock) and not is_cube(a):
        a = semantic.operand(a)
    if not isinstance(b, GmBlock) and not is_cube(b):
        b = semantic.operand(b)
    if len(a.shape) != 2 or len(b.shape) != 2:
        _fail(loc, f"tl.dot takes 2-D blocks, got {list(a.shape)} and {list(b.shape)} "
                   "(batched 3-D dots are not supported yet)")
    (rows, depth), (depth_b, cols) = a.shape, b.shape
    if depth != depth_b:
        _fail(loc, f"tl.dot: the inner dimensions differ: {list(a.shape)} @ {list(b.shape)}")
    if a.dtype != b.dtype:
        _fail(loc, f"tl.dot: both operands must have one type, got {a.dtype} and {b.dtype}")
    acc_dtype = ACCUMULATORS.get(a.dtype.name)
    if acc_dtype is None:
        _fail(loc, f"tl.dot of {a.dtype} is not supported by the cube (fp16, bf16, fp32, "
                   "int8 are)")
    if acc_dtype.is_int() or out_dtype == acc_dtype:
        out_dtype = None  # (Triton's integer dot is int32 whatever out_dtype says)
    elif out_dtype is not None and out_dtype.name not in FIXPIPE_OUT["fp32"]:
        _fail(loc, f"tl.dot: out_dtype={out_dtype} is not supported (float32, float16, "
                   "bfloat16 are)")
    ga, gb = _operand(a, m, loc), _operand(b, m, loc)
    l1a, l1b = _to_l1(m, ga, "A", loc), _to_l1(m, gb, "B", loc)
    (l0a, ra), (l0b, rb) = _to_l0(m, l1a, ga, "A", loc), _to_l0(m, l1b, gb, "B", loc)
    held, m.held = m.held, (l1a, l1b, l0a, l0b)
    del held  # the dot before last: its buffers go back now (two in flight)
    pending = (ra, rb, (l0a, l0b), rows, cols, depth, a.dtype.np_dtype.name, loc)
    result = CubeTensor(acc_dtype, (rows, cols), pending=pending)
    if acc is not None:
        accumulated = add(acc, result, loc)
        result = _vector_sum(acc, result, loc) if accumulated is None else accumulated
    if out_dtype is not None:  # fp16 / bf16 out: the cube sums in fp32, FixPipe converts
        return cast(result, out_dtype, loc) if is_cube(result) else semantic.cast(
            result, out_dtype, loc=loc)
    return result


def _vector_sum(acc, result: CubeTensor, loc):
    from ascsim.triton import semantic

    return semantic.binary("add", to_ub(result, loc), acc)


def _is_zero(value) -> bool:
    from ascsim.triton import semantic

    if not isinstance(value, tensor) or value.known is None or is_cube(value):
        return False
    return semantic.scalar_of(value) == 0


def settle(value: CubeTensor, into: CubeTensor | None, loc) -> CubeTensor:
    """Issue the pending Mmad of ``value``: into ``into``'s L0C accumulating, or a fresh one."""
    if value.pending is None:
        return value
    m = mix.current()
    ra, rb, _, rows, cols, depth, dtype, where = value.pending
    acc_np = value.acc_dtype.np_dtype
    frame = _up(rows, ROWS) * _up(cols, ROWS)
    if into is None:
        l0c = m.planners["L0C"].allocate(frame * acc_np.itemsize, loc)
    else:
        l0c = into.l0c
    dst = Region(m.aic.mem["L0C"], l0c.lo, frame, acc_np, l0c.lo + l0c.size)
    rec = Mmad(rows, cols, depth, dtype, where, dst=dst, a=ra, b=rb,
               accumulate=into is not None)
    reads = value.pending[2] + ((l0c,) if into is not None else ())
    m.order.issue("M", rec, reads, (l0c,), where)
    value.l0c, value.pending = l0c, None
    return value


def add(a, b, loc=None):
    """``acc + tl.dot(x, y)`` (either order) accumulated in L0C; None where it is not one."""
    loc = loc or user_location()
    if is_cube(b) and b.pending is not None:
        acc, new = a, b
    elif is_cube(a) and a.pending is not None:
        acc, new = b, a
    else:
        return None
    if tuple(getattr(acc, "shape", ())) != new.shape and not _is_zero(acc):
        return None
    if _is_zero(acc):
        return settle(new, None, loc)
    if (is_cube(acc) and acc.dtype == acc.acc_dtype == new.acc_dtype and acc.shape == new.shape
            and acc.ub is None):
        settle(acc, None, loc)
        out = settle(new, acc, loc)
        return CubeTensor(out.acc_dtype, out.shape, l0c=out.l0c)
    return None


# ---------------------------------------------------------------------- leaving L0C
def cast(value: CubeTensor, dtype, loc):
    """``result.to(dtype)``: FixPipe's conversion when the result leaves L0C, where FixPipe
    converts to ``dtype``; else None (the vector unit casts)."""
    if dtype.name not in FIXPIPE_OUT[value.acc_dtype.name]:
        return None
    settle(value, None, loc)
    return CubeTensor(dtype, value.shape, l0c=value.l0c, acc_dtype=value.acc_dtype)


def _fixpipe(value: CubeTensor, dst: Region, rows: int, cols: int, pitch: int, gm_access, loc):
    m = mix.current()
    settle(value, None, loc)
    acc_np = value.acc_dtype.np_dtype
    frame_rows = _up(value.shape[0], ROWS)
    l0c = value.l0c
    src = Region(m.aic.mem["L0C"], l0c.lo, frame_rows * _up(value.shape[1], ROWS), acc_np,
                 l0c.lo + l0c.size)
    rec = FixPipe(dst, rows, cols, loc, src=src, src_stride=frame_rows, dst_stride=pitch,
                  convert=dst.dtype != acc_np)
    return m.order.issue("FIX", rec, (l0c,), (gm_access,), loc)


def to_ub(value: CubeTensor, loc=None) -> tensor:
    """The result as a UB tile of the AIV: FixPipe into a workspace slot, the flag FIX ->
    MTE2, the AIV's copy in. Made once per value."""
    if value.ub is not None:
        return value.ub
    loc = loc or user_location()
    m = mix.current()
    prog = _program.current()
    rows, cols = value.shape
    np_dtype = value.dtype.np_dtype
    nbytes = rows * cols * np_dtype.itemsize
    slot = m.slot("to_vector", nbytes)
    slot.before_write(m.aic, "FIX", loc)
    dst = slot.region(np_dtype, rows * cols)
    fix = _fixpipe(value, dst, rows, cols, cols, slot.gm.access(m.aic.core_id), loc)
    slot.wrote(m.aic, "FIX", fix)
    slot.before_read(prog.core, "MTE2", loc)
    out = vector.new_tile(prog, value.dtype, value.shape, loc)
    rec = Copy(dst, vector.region(prog, out), Bursts.contiguous(nbytes), loc, "dot_to_vector")
    instr = prog.order.issue("MTE2", rec, (slot.gm.access(prog.core.core_id),), (out.alloc,),
                             loc)
    slot.read(prog.core, "MTE2", instr)
    value.ub = out
    return out


def _rectangle(keep: np.ndarray | None, shape) -> tuple[int, int] | None:
    """(rows, cols) when the mask keeps exactly a leading rectangle, else None."""
    if keep is None:
        return shape
    rows = int(np.count_nonzero(keep[:, 0])) if shape[1] else 0
    cols = int(np.count_nonzero(keep[0, :])) if shape[0] else 0
    if np.count_nonzero(keep) != rows * cols or not keep[:rows, :cols].all():
        return None
    return rows, cols


def store_from_l0c(ptr, value: CubeTensor, mask, loc) -> bool:
    """``tl.store`` of a result as one FixPipe L0C -> GM when its pointers are rows of
    consecutive elements at one pitch and its mask a leading rectangle; False otherwise (the
    caller stores it from UB)."""
    from ascsim.triton import memory

    if not isinstance(ptr, tensor) or ptr.gm is None or ptr.known is None:
        return False
    keep = memory._mask(mask, ptr.shape, "tl.store", loc)
    elem = ptr.dtype.element_ty
    if value.shape != ptr.shape or len(ptr.shape) != 2:
        return False
    if elem != value.dtype:
        cast_value = cast(value, elem, loc)
        if cast_value is None:
            return False
        value = cast_value
    rect = _rectangle(keep, ptr.shape)
    if rect is None or 0 in rect:
        return rect is not None and 0 in rect  # nothing to store
    rows, cols = rect
    offsets = np.broadcast_to(ptr.known, ptr.shape)[:rows, :cols].astype(np.int64)
    base = int(offsets[0, 0])
    pitch = int(offsets[1, 0] - base) if rows > 1 else cols
    expect = base + np.arange(rows)[:, None] * pitch + np.arange(cols)[None, :]
    if base < 0 or (rows > 1 and pitch < cols) or not np.array_equal(offsets, expect):
        return False
    gm = ptr.gm
    size = elem.np_dtype.itemsize
    count = (rows - 1) * pitch + cols
    dst = gm.region._replace(offset=gm.region.offset + base * size, count=count)
    m = mix.current()
    _fixpipe(value, dst, rows, cols, pitch, gm.access(m.aic.core_id), loc)
    return True

