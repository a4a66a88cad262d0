"""Operations that reorder, select or regroup the elements of a block: ``tl.sort``,
``tl.topk``, ``tl.flip``, ``tl.gather``, ``tl.histogram``, ``tl.cat``, ``tl.join``,
``tl.split``, ``tl.interleave``, ``tl.ravel``, and the extension's slices and
``get_element``.

What needs no data movement is a view (an element index array over the same UB bytes, as the
other views of :mod:`ascsim.triton.semantic`): ``flip``, ``split``, ``ravel``,
``extract_slice``. What builds a new block is vector records: copies for ``cat``, ``join``,
``interleave`` and ``insert_slice``; one :class:`~ascsim.isa.VectorSequence` for ``sort``,
``topk``, ``gather`` and ``histogram``, priced as the instructions the compiler uses:

* **sort**: the vector unit sorts 32 elements per instruction (VBITSORT, "sort" in the cost
  table) and merges up to four sorted lists per pass (VMRGSORT4, "merge_sort"); a row of
  ``n`` elements is one sort pass and ``ceil(log4(n / 32))`` merge passes (Ascend C's Sort
  API documents the same two steps: Sort32 then MrgSort);
* **gather**: the vector unit's gather of UB elements by index; the cost table has no row of
  its own for it, so it is priced as a copy pass;
* **histogram**: no instruction counts bins; priced as one compare and one reduction pass per
  bin (what a lowering by masks does).
"""

from __future__ import annotations

import math

import numpy as np

from ascsim.sim.source import user_location
from ascsim.triton import dtypes, semantic, vector
from ascsim.triton import program as _program
from ascsim.triton.errors import CompilationError
from ascsim.triton.tensor import known, tensor

#: Element types the vector unit's sort takes (triton-ascend's extension.sort list, A2/A3;
#: its own tests also sort bool blocks, as bytes).
SORTABLE = {"int8", "int16", "int32", "int64", "fp16", "bf16", "fp32", "int1"}
SORT_GROUP = 32  # elements one VBITSORT sorts
MERGE_WAYS = 4  # sorted lists one VMRGSORT4 merges


def _fail(loc, text: str):
    raise CompilationError(f"{loc[0]}:{loc[1]}: {text}")


def _static(value, what: str, loc) -> int:
    value = semantic.unwrap(value)
    if isinstance(value, tensor):
        value = value.__index__()
    if not isinstance(value, (int, np.integer)):
        _fail(loc, f"{what} must be a compile-time integer, got {value!r}")
    return int(value)


def _view(x: tensor, index: np.ndarray) -> tensor:
    return tensor(x.dtype, index.shape, alloc=x.alloc, index=index)


def _last_dim(x: tensor, dim, what: str, loc) -> None:
    ndim = len(x.shape)
    if not ndim:
        _fail(loc, f"{what} needs a block of rank >= 1")
    dim = semantic.unwrap(dim)
    if dim is not None and int(dim) % ndim != ndim - 1:
        _fail(loc, f"{what} sorts along the last dimension only (dim={ndim - 1} or -1), "
                   f"got dim={dim} for shape {list(x.shape)}")


def _sort_steps(n: int) -> tuple:
    merges = math.ceil(math.log(max(n, 1) / SORT_GROUP, MERGE_WAYS)) if n > SORT_GROUP else 0
    return ("sort",) + ("merge_sort",) * merges


def sort(x, dim=None, descending=False, k=None):
    """The block sorted along its last axis (``k``: only the first ``k`` of each row)."""
    loc = user_location()
    x = semantic.operand(x)
    what = "tl.topk" if k is not None else "sort"
    _last_dim(x, dim, what, loc)
    if x.dtype.name not in SORTABLE:
        _fail(loc, f"{what}: the vector unit sorts {sorted(SORTABLE)}, got {x.dtype}")
    descending = bool(semantic.unwrap(descending))
    n = x.shape[-1]
    k = n if k is None else _static(k, "topk's k", loc)
    if not 1 <= k <= n:
        _fail(loc, f"{what}: k={k} must be between 1 and the row length {n}")

    def order(values):
        out = np.sort(values, axis=-1, kind="stable")
        if descending:
            out = out[..., ::-1]
        return out[..., :k]

    if x.known is not None:
        return known(np.ascontiguousarray(order(x.known)), x.dtype)
    src = vector.plain(x, loc)
    return vector.routine("sort", x.dtype, (*x.shape[:-1], k), (src,), order, _sort_steps(n),
                          loc)


def topk(x, k, dim=None):
    """``tl.topk``: the ``k`` largest of each row, largest first."""
    return sort(x, dim, True, k)


def flip(x, dim=None):
    """``x`` reversed along ``dim`` (default: the last): a view."""
    x = semantic.operand(x)
    ndim = len(x.shape)
    if not ndim:
        raise ValueError("flip needs a block of rank >= 1")
    dim = semantic.unwrap(dim)
    dim = ndim - 1 if dim is None else int(dim) % ndim
    if x.known is not None:
        return known(np.flip(x.known, dim).copy(), x.dtype)
    return _view(x, np.flip(x.lanes(), dim))


def gather(src, index, axis):
    """``tl.gather(src, index, axis)``: ``out[..i..] = src[.. index[..i..] ..]`` along
    ``axis``."""
    loc = user_location()
    src, index = semantic.operand(src), semantic.operand(index)
    ndim = len(src.shape)
    if len(index.shape) != ndim:
        _fail(loc, f"tl.gather: the index has rank {len(index.shape)}, the source {ndim}")
    axis = int(semantic.unwrap(axis)) % ndim
    if not index.dtype.is_int():
        _fail(loc, f"tl.gather: the index must be integers, got {index.dtype}")
    for d, (a, b) in enumerate(zip(src.shape, index.shape)):
        if d != axis and a != b:
            _fail(loc, f"tl.gather: the index's shape {list(index.shape)} and the source's "
                       f"{list(src.shape)} differ outside axis {axis}")
    length = src.shape[axis]

    def pick(values, where):
        where = where.astype(np.int64)
        if where.size and (where.min() < 0 or where.max() >= length):
            raise IndexError(f"tl.gather index out of range [0, {length})")
        return np.take_along_axis(values, where, axis)

    if src.known is not None and index.known is not None:
        return known(pick(src.known, index.known), src.dtype)
    tiles = [vector.plain(semantic.as_tile(t, loc), loc) for t in (src, index)]
    return vector.routine("gather", src.dtype, index.shape, tuple(tiles), pick, ("copy",), loc)


def histogram(x, num_bins, mask=None):
    """``tl.histogram(x, num_bins)``: int32 counts of the values ``0 .. num_bins - 1``
    (other values are not counted)."""
    loc = user_location()
    x = semantic.operand(x)
    bins = _static(num_bins, "histogram's num_bins", loc)
    if mask is not None:
        _fail(loc, "tl.histogram with a mask is not supported")

    def count(values):
        flat = values.reshape(-1).astype(np.int64)
        flat = flat[(flat >= 0) & (flat < bins)]
        return np.bincount(flat, minlength=bins).astype(np.int32)

    if x.known is not None:
        return known(count(x.known), dtypes.int32)
    if not x.dtype.is_int():
        _fail(loc, f"tl.histogram counts integers, got {x.dtype}")
    steps = (("compare", "reduce") * bins)
    return vector.routine("histogram", dtypes.int32, (bins,), (vector.plain(x, loc),), count,
                          steps, loc)


# ---------------------------------------------------------------------- regrouping
def _joined(parts: list[tensor], shape: tuple, place, loc) -> tensor:
    """A new block of ``shape`` holding ``parts``; ``place(lanes, i)`` selects the elements
    of the result that part ``i`` fills."""
    dtype = parts[0].dtype
    for p in parts[1:]:
        dtype = dtypes.promote(dtype, p.dtype)
    if all(p.known is not None for p in parts):
        out = np.empty(shape, dtype=dtype.np_dtype)
        for i, p in enumerate(parts):
            out[place(slice(None), i)] = p.known
        return known(out, dtype)
    prog = _program.current()
    out = vector.new_tile(prog, dtype, shape, loc)
    lanes = out.lanes()
    for i, p in enumerate(parts):
        p = semantic.as_tile(semantic.cast(p, dtype, loc=loc), loc)
        vector.copy_lanes(out, lanes[place(slice(None), i)].reshape(-1), p,
                          p.lanes().reshape(-1), loc)
    return out


def cat(input, other, can_reorder=False, dim=0):
    """``tl.cat``: the two blocks one after the other along ``dim`` (0)."""
    loc = user_location()
    a, b = semantic.operands(input, other)
    dim = int(semantic.unwrap(dim) or 0) % max(len(a.shape), 1)
    if len(a.shape) != len(b.shape) or any(
            x != y for d, (x, y) in enumerate(zip(a.shape, b.shape)) if d != dim):
        _fail(loc, f"tl.cat: shapes {list(a.shape)} and {list(b.shape)} do not match "
                   f"outside dimension {dim}")
    shape = list(a.shape)
    shape[dim] += b.shape[dim]
    cut = a.shape[dim]

    def place(_, i):
        key = [slice(None)] * len(shape)
        key[dim] = slice(0, cut) if i == 0 else slice(cut, None)
        return tuple(key)
    return _joined([a, b], tuple(shape), place, loc)


def join(a, b):
    """``tl.join``: a new last dimension of 2 holding ``a`` then ``b``."""
    loc = user_location()
    a, b = semantic.operands(a, b)
    shape = semantic.broadcast_shape(a.shape, b.shape)
    a, b = semantic.broadcast_to(a, shape), semantic.broadcast_to(b, shape)
    return _joined([a, b], (*shape, 2), lambda _, i: (..., i), loc)


def interleave(a, b):
    """``tl.interleave``: the last dimensions' elements alternating (``join`` then
    ``reshape``)."""
    joined = join(a, b)
    return semantic.reshape(joined, (*joined.shape[:-2], 2 * joined.shape[-2]))


def split(a):
    """``tl.split``: the two halves of a last dimension of 2, as views."""
    a = semantic.operand(a)
    if not a.shape or a.shape[-1] != 2:
        _fail(user_location(), f"tl.split needs a last dimension of 2, got {list(a.shape)}")
    if a.known is not None:
        return known(a.known[..., 0].copy(), a.dtype), known(a.known[..., 1].copy(), a.dtype)
    lanes = a.lanes()
    return _view(a, lanes[..., 0]), _view(a, lanes[..., 1])


def ravel(x, can_reorder=False):
    x = semantic.operand(x)
    return semantic.reshape(x, (x.numel,))


# ---------------------------------------------------------------------- slices
def _slice_key(x: tensor, offsets, sizes, strides, what: str, loc) -> tuple:
    offsets, sizes, strides = (list(semantic.unwrap(v)) for v in (offsets, sizes, strides))
    ndim = len(x.shape)
    if not (len(offsets) == len(sizes) == len(strides) == ndim):
        _fail(loc, f"{what}: offsets, sizes and strides need one entry per dimension of "
                   f"the {ndim}-D block")
    key = []
    for d, (o, s, st) in enumerate(zip(offsets, sizes, strides)):
        o = _static(o, f"{what}'s offset", loc)
        s = _static(s, f"{what}'s size", loc)
        st = _static(st, f"{what}'s stride", loc)
        if s < 1 or st < 1:
            _fail(loc, f"{what}: sizes and strides must be positive, got {s} and {st}")
        end = o + (s - 1) * st
        if o < 0 or end >= x.shape[d]:
            _fail(loc, f"{what}: elements {o}..{end} of dimension {d} are outside the "
                       f"block's {x.shape[d]}")
        key.append(slice(o, end + 1, st))
    return tuple(key)


def extract_slice(ful, offsets, sizes, strides):
    """The extension's ``extract_slice``: a strided part of a block, as a view."""
    loc = user_location()
    x = semantic.operand(ful)
    key = _slice_key(x, offsets, sizes, strides, "extract_slice", loc)
    if x.known is not None:
        return known(x.known[key].copy(), x.dtype)
    return _view(x, x.lanes()[key])


def insert_slice(ful, sub, offsets, sizes, strides):
    """The extension's ``insert_slice``: a new block, ``ful`` with ``sub`` written over the
    strided part (a copy of ``ful`` and a copy of ``sub`` into it)."""
    loc = user_location()
    x, part = semantic.operand(ful), semantic.operand(sub)
    key = _slice_key(x, offsets, sizes, strides, "insert_slice", loc)
    target = np.empty(x.shape, dtype=np.int8)[key].shape
    if len(part.shape) != len(x.shape):
        _fail(loc, f"insert_slice: the inserted block has rank {len(part.shape)}, the "
                   f"block {len(x.shape)}")
    part = semantic.broadcast_to(part, target)
    if x.known is not None and part.known is not None:
        values = x.known.copy()
        values[key] = part.known.astype(x.dtype.np_dtype)
        return known(values, x.dtype)
    if x.known is None:
        out = vector.elementwise("copy", x.dtype, x.shape, (x,), loc=loc)
    else:  # a constant block (tl.zeros, tl.full) or index arithmetic: a fill or an index pass
        out = semantic.as_tile(x, loc)
    part = semantic.as_tile(semantic.cast(part, x.dtype, loc=loc), loc)
    vector.copy_lanes(out, out.lanes()[key].reshape(-1), part, part.lanes().reshape(-1), loc)
    return out


def get_element(src, indices):
    """The extension's ``get_element``: one element, read by the scalar unit (a known value
    afterwards, as a scalar register's)."""
    loc = user_location()
    x = semantic.operand(src)
    indices = list(semantic.unwrap(indices))
    if len(indices) != len(x.shape):
        _fail(loc, f"get_element: {len(indices)} indices for a {len(x.shape)}-D block")
    at = []
    for d, i in enumerate(indices):
        i = _static(i, "get_element's index", loc)
        if not 0 <= i < x.shape[d]:
            _fail(loc, f"get_element: index {i} is outside dimension {d} of size {x.shape[d]}")
        at.append(i)
    at = tuple(at)
    if x.known is not None:
        return known(np.asarray(x.known[at]), x.dtype)
    if x.packed:
        x = semantic.cast(x, dtypes.int8, loc=loc)
    one = tensor(x.dtype, (), alloc=x.alloc, index=np.asarray(x.lanes()[at]))
    return known(np.asarray(vector.scalar_read(one)), x.dtype)
