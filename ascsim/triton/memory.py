"""``tl.load`` / ``tl.store`` as copies between GM and UB.

The pointers and the mask of a Triton memory operation are known index arithmetic (see
:mod:`ascsim.triton.tensor`), so the lowering sees which elements move where, as the compiler's
analysis of the pointer expression does:

* the elements the mask keeps form **runs** -- consecutive in GM and in the tile. When every
  run has the same length at constant pitches on both sides (a block, a row block, a strided
  column) the operation is one :class:`~ascsim.isa.Copy` of bursts (the DMA's burst mode: one
  burst per run); a load with masked-off elements first fills the tile with ``other`` (one
  vector duplicate), as the compiler's lowering of a masked load does;
* any other pattern (a gather/scatter through computed offsets, ragged runs) is one
  :class:`~ascsim.isa.IndexedCopy`, priced per run: the discrete path.

A load whose mask is ``None`` reads every element its pointers name: pointers past the end of
the tensor read what lies there and the machine reports a ``gm-out-of-bounds`` finding at the
kernel's line. ``other=None`` fills masked-off elements with zero (Triton leaves them
undefined; its interpreter also gives zero). A load of a single element (a 0-d pointer) is the
scalar unit's read of GM: its value is known to the kernel afterwards, as a scalar register's.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa import Bursts, Copy, IndexedCopy, ScalarLoad
from ascsim.triton import program as _program
from ascsim.triton import vector
from ascsim.triton.errors import CompilationError
from ascsim.triton.tensor import known, tensor


def _runs(src: np.ndarray, dst: np.ndarray):
    """Starts (indices into ``src``/``dst``) and lengths of the runs consecutive on both sides."""
    if src.size == 1:
        return np.zeros(1, np.int64), np.ones(1, np.int64)
    step = (np.diff(src) != 1) | (np.diff(dst) != 1)
    starts = np.concatenate(([0], np.flatnonzero(step) + 1))
    lengths = np.diff(np.concatenate((starts, [src.size])))
    return starts, lengths


def _bursts(src: np.ndarray, dst: np.ndarray, size: int) -> Bursts | None:
    """The runs as one burst pattern (equal runs at constant, forward pitches), or None."""
    starts, lengths = _runs(src, dst)
    width = int(lengths[0])
    if (lengths != width).any():
        return None
    s0, d0 = int(src[0]), int(dst[0])
    if s0 < 0:
        return None
    count = starts.size
    if count == 1:
        return Bursts(s0 * size, d0 * size, width * size, width * size, width * size, 1)
    s_pitch = np.diff(src[starts])
    d_pitch = np.diff(dst[starts])
    sp, dp = int(s_pitch[0]), int(d_pitch[0])
    if (s_pitch != sp).any() or (d_pitch != dp).any() or min(sp, dp) < width:
        return None
    return Bursts(s0 * size, d0 * size, width * size, sp * size, dp * size, count)


def _pointer(ptr, op: str, loc) -> tensor:
    if not isinstance(ptr, tensor) or ptr.gm is None:
        raise CompilationError(f"{loc[0]}:{loc[1]}: {op}: the pointer must be a kernel "
                               f"tensor argument plus offsets, got {ptr!r}")
    return ptr


def _mask(mask, shape: tuple, op: str, loc) -> np.ndarray | None:
    """The mask as known booleans over ``shape`` (None: every element)."""
    if mask is None:
        return None
    if isinstance(mask, tensor):
        if mask.known is None:
            # A mask computed from loaded data: each element's flag is read by the scalar
            # unit, as the compiler's scalar loop over such an access does.
            from ascsim.triton import dtypes, semantic

            flags = semantic.cast(mask, dtypes.int8, loc=loc) if mask.packed or \
                mask.dtype.kind == "bool" else mask
            values = vector.read_block(vector.plain(flags, loc)) != 0
        else:
            values = mask.known
    else:
        values = np.asarray(bool(mask))
    return np.broadcast_to(values.astype(bool), shape)


def load(ptr, mask, other, loc) -> tensor:
    ptr = _pointer(ptr, "tl.load", loc)
    prog = _program.current()
    elem = ptr.dtype.element_ty
    shape = ptr.shape
    offsets = np.broadcast_to(ptr.known, shape).reshape(-1)
    keep = _mask(mask, shape, "tl.load", loc)
    fill_value = 0
    if other is not None:
        if isinstance(other, tensor):
            if other.known is None or np.unique(other.known).size > 1:
                raise CompilationError(f"{loc[0]}:{loc[1]}: tl.load: other= must be a scalar "
                                       "(or a block of one value)")
            fill_value = other.known.reshape(-1)[0].item()
        else:
            fill_value = other
    if not shape and (keep is None or bool(keep)):
        # One element: the scalar unit reads it from GM (it stalls for the read); the value is
        # then known to the kernel's scalar code (it may branch on it or address with it).
        value = prog.core.execute(ScalarLoad(ptr.gm.region.at(int(ptr.known)), loc))
        return known(np.asarray(value), elem)
    out = vector.new_tile(prog, elem, shape, loc)
    n = out.numel
    dst_region = vector.region(prog, out)
    gm = ptr.gm
    size = elem.np_dtype.itemsize
    positions = vector._iota(n) if keep is None else np.flatnonzero(keep.reshape(-1))
    if not positions.size:
        return vector.fill(elem, shape, fill_value, loc)
    src = offsets[positions]
    bursts = _bursts(src, positions, size)
    with np.errstate(all="ignore"):  # (other=-inf into integers: Triton casts it, too)
        fill = np.asarray(fill_value).astype(elem.np_dtype)[()]
    if bursts is not None:
        if positions.size < n:  # the masked-off elements: the tile is filled first
            vector.fill_tile(out, fill, loc)
        rec = Copy(gm.region, dst_region, bursts, loc, "load")
    else:
        index = np.full(n, -1, dtype=np.int64)
        index[positions] = src
        runs = _runs(src, positions)[0].size
        rec = IndexedCopy(gm.region, dst_region, index, None, int(positions.size) * size,
                          runs, loc, "load", fill=fill)
    prog.order.issue("MTE2", rec, (gm.access(prog.core.core_id),), (out.alloc,), loc)
    return out


def store(ptr, value, mask, loc) -> None:
    ptr = _pointer(ptr, "tl.store", loc)
    prog = _program.current()
    elem = ptr.dtype.element_ty
    shape = ptr.shape
    from ascsim.triton import dtypes, semantic

    if elem.kind == "bool":  # Triton stores value != 0, as bytes 0/1
        value = semantic.cast(semantic.cast(value, dtypes.int1, loc=loc), dtypes.int8, loc=loc)
    else:
        value = semantic.cast(value, elem, loc=loc)
    value = semantic.as_tile(semantic.broadcast_to(value, shape), loc)
    if value.index is not None and not np.array_equal(value.index.reshape(-1),
                                                       vector._iota(value.numel)):
        value = vector.elementwise("copy", value.dtype, shape, (value,), loc=loc)
    offsets = np.broadcast_to(ptr.known, shape).reshape(-1)
    keep = _mask(mask, shape, "tl.store", loc)
    n = value.numel
    positions = vector._iota(n) if keep is None else np.flatnonzero(keep.reshape(-1))
    if not positions.size:
        return
    dst = offsets[positions]
    size = elem.np_dtype.itemsize
    bursts = _bursts(positions, dst, size)
    src_region = vector.region(prog, value)
    gm = ptr.gm
    if bursts is not None:
        rec = Copy(src_region, gm.region, bursts, loc, "store")
    else:
        runs = _runs(positions, dst)[0].size
        rec = IndexedCopy(src_region, gm.region, positions, dst, int(positions.size) * size,
                          runs, loc, "store")
    prog.order.issue("MTE3", rec, (value.alloc,), (gm.access(prog.core.core_id),), loc)


class OldValues:
    """What an atomic whose result the kernel drops returns (nothing was read): a use of it
    is refused at the kernel's line."""

    def __init__(self, op: str, loc):
        self.op, self.loc = op, loc

    def refuse(self):
        raise CompilationError(f"{self.loc[0]}:{self.loc[1]}: the result of "
                               f"tl.atomic_{self.op} was dropped here and cannot be used")


#: Triton atomic -> the atomic combine on the way into GM (``Copy.atomic``): add, max and min
#: are the copy-out's own modes; and, or, xor and xchg are triton-ascend's scalar atomic loop,
#: priced here as the copy-out (no instruction count of that loop is published).
ATOMICS = {"add": "add", "max": "max", "min": "min", "and": "and", "or": "or", "xor": "xor",
           "xchg": "xchg"}
#: Atomics on integers only (Triton's rule).
INTEGER_ATOMICS = {"and", "or", "xor"}


def atomic(op: str, ptr, value, mask, loc, discarded: bool = False) -> tensor:
    """``tl.atomic_<op>(ptr, val, mask)``: ``val`` is combined into GM by the copy-out's
    atomic mode (MTE3). The old values it returns are read before the update (a load; the
    scalar unit's read for one element): exact while no other program updates the same
    elements meanwhile (where programs overlap, the checks report the read as a cross-core
    race: the device's read-modify-write is atomic, this model's read is not). A call whose
    result the kernel drops (``discarded``) reads nothing."""
    from ascsim.triton import semantic

    if op not in ATOMICS:
        raise CompilationError(f"{loc[0]}:{loc[1]}: tl.atomic_{op} is not supported yet")
    ptr = _pointer(ptr, f"tl.atomic_{op}", loc)
    prog = _program.current()
    elem = ptr.dtype.element_ty
    if op in INTEGER_ATOMICS and not elem.is_int():
        raise CompilationError(f"{loc[0]}:{loc[1]}: tl.atomic_{op} needs integers, got "
                               f"{elem}")
    shape = ptr.shape
    old = OldValues(op, loc) if discarded else load(ptr, mask, None, loc)
    value = semantic.as_tile(semantic.broadcast_to(semantic.cast(value, elem, loc=loc),
                                                   shape), loc)
    if value.index is not None:
        value = vector.elementwise("copy", elem, shape, (value,), loc=loc)
    offsets = np.broadcast_to(ptr.known, shape).reshape(-1)
    keep = _mask(mask, shape, f"tl.atomic_{op}", loc)
    positions = vector._iota(value.numel) if keep is None else np.flatnonzero(keep.reshape(-1))
    if not positions.size:
        return old
    size = elem.np_dtype.itemsize
    dst = offsets[positions]
    bursts = _bursts(positions, dst, size)
    gm = ptr.gm.access(prog.core.core_id)
    src_region = vector.region(prog, value)
    if bursts is not None:
        patterns = (bursts,)
    else:
        # Computed offsets (a scatter, elements that may hit one address twice): the
        # discrete path, one atomic copy per run of consecutive elements, in order, so that
        # repeated addresses accumulate.
        starts, lengths = _runs(positions, dst)
        patterns = tuple(
            Bursts(int(positions[a]) * size, int(dst[a]) * size, int(w) * size,
                   int(w) * size, int(w) * size, 1)
            for a, w in zip(starts.tolist(), lengths.tolist()))
    for pattern in patterns:
        rec = Copy(src_region, ptr.gm.region, pattern, loc, f"atomic_{op}",
                   atomic=ATOMICS[op])
        prog.order.issue("MTE3", rec, (value.alloc, gm), (gm,), loc)
    return old


def atomic_cas(ptr, cmp, value, loc) -> tensor:
    """``tl.atomic_cas(ptr, cmp, val)``: where GM holds ``cmp``, it becomes ``val``; returns
    the old values. The old values are read (MTE2), the new ones chosen by the vector unit
    (a compare and a select) and written back as one indivisible update per element (the
    scalar atomic loop of triton-ascend's lowering, see :data:`ATOMICS`)."""
    from ascsim.triton import semantic

    ptr = _pointer(ptr, "tl.atomic_cas", loc)
    elem = ptr.dtype.element_ty
    shape = ptr.shape
    old = load(ptr, None, None, loc)
    if not shape:  # one element: the scalar unit compares and swaps
        want = semantic.operand(cmp)
        want = want.known if want.known is not None else float(want)
        if np.asarray(want).astype(elem.np_dtype) == old.known:
            atomic("xchg", ptr, value, None, loc, True)
        return old
    cmp = semantic.broadcast_to(semantic.cast(semantic.operand(cmp), elem, loc=loc), shape)
    value = semantic.broadcast_to(semantic.cast(semantic.operand(value), elem, loc=loc), shape)
    chosen = semantic.where(semantic.compare("eq", old, cmp), value, old)
    atomic("xchg", ptr, chosen, None, loc, True)
    return old
