"""``tl.reduce`` with a combine function, ``tl.associative_scan``, ``tl.cumsum`` /
``tl.cumprod``, ``tl.xor_sum``: operations defined by a ``@triton.jit`` combine function.

The combine function runs on the tiles themselves (it is kernel code: its ``+``, ``tl.maximum``
or ``tl.where`` become vector records), applied to whole slices of the block at once:

* a **reduction** is a tree over the axis: neighbouring elements ``(0, 1), (2, 3), ...`` are
  combined in one call per level (``log2`` of the axis length calls), an odd last element
  carried to the next level. Neighbours keep the order of the operands, so a combine function
  that is associative but not commutative (an arg-max with its tie-break) gets the result of
  a left-to-right fold;
* a **scan** is the doubling scan (Hillis and Steele): at distance ``d = 1, 2, 4, ...`` every
  element from ``d`` on is combined with the one ``d`` before it (one call per level), the
  first ``d`` elements kept; ``log2`` of the axis length levels, each a call and two copies
  into the next level's tile.

Both accept a tuple of blocks (a combine function of ``2 * k`` arguments returning ``k``
values), as Triton's do. Operations on known values (index arithmetic) run the same steps in
numpy.
"""

from __future__ import annotations

import numpy as np

from ascsim.sim.source import user_location
from ascsim.triton import dtypes, semantic, vector
from ascsim.triton import program as _program
from ascsim.triton.errors import CompilationError
from ascsim.triton.tensor import known, tensor


def _inputs(inputs) -> tuple[list[tensor], bool]:
    inputs = semantic.unwrap(inputs)
    single = not isinstance(inputs, (tuple, list))
    values = [semantic.operand(x) for x in ((inputs,) if single else inputs)]
    loc = user_location()
    out = []
    for x in values:
        if x.packed:  # a mask from a compare: its values as bytes 0/1
            x = semantic.cast(semantic.cast(x, dtypes.int8, loc=loc), dtypes.int8, loc=loc)
        out.append(x)
    shapes = {x.shape for x in out}
    if len(shapes) != 1:
        raise CompilationError(f"{loc[0]}:{loc[1]}: the blocks combined together must have "
                               f"one shape, got {[list(s) for s in shapes]}")
    return out, single


def _axis(axis, ndim: int) -> int:
    axis = int(semantic.unwrap(axis))
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for a {ndim}-D block")
    return axis % ndim


def _take(x: tensor, sl: slice) -> tensor:
    """The elements ``sl`` of the last axis of ``x``: a view."""
    if x.known is not None:
        values = x.known[..., sl]
        return tensor(x.dtype, values.shape, known=values)
    index = x.lanes()[..., sl]
    return tensor(x.dtype, index.shape, alloc=x.alloc, index=index)


def _call(combine_fn, left: list, right: list, loc) -> list[tensor]:
    result = combine_fn(*left, *right)
    result = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(result) != len(left):
        raise CompilationError(f"{loc[0]}:{loc[1]}: the combine function returns "
                               f"{len(result)} values for {len(left)} blocks")
    out = []
    for r, like in zip(result, left):
        r = semantic.operand(r)
        if r.packed:
            r = semantic.cast(r, dtypes.int8 if like.dtype.kind == "bool" else like.dtype,
                              loc=loc)
        if r.shape != like.shape:
            r = semantic.broadcast_to(r, like.shape)
        out.append(r)
    return out


def _concat_last(parts: list[tensor], dtype, loc) -> tensor:
    """``parts`` one after another along their last axis, as one new block of ``dtype``."""
    if all(p.known is not None for p in parts):
        values = np.concatenate([p.known.astype(dtype.np_dtype) for p in parts], axis=-1)
        return known(values, dtype)
    lead = parts[0].shape[:-1]
    width = sum(p.shape[-1] for p in parts)
    prog = _program.current()
    out = vector.new_tile(prog, dtype, (*lead, width), loc)
    lanes = out.lanes()
    at = 0
    for p in parts:
        w = p.shape[-1]
        p = semantic.as_tile(semantic.cast(p, dtype, loc=loc) if p.dtype != dtype else p, loc)
        p = semantic.broadcast_to(p, (*lead, w))
        vector.copy_lanes(out, lanes[..., at:at + w].reshape(-1), p, p.lanes().reshape(-1), loc)
        at += w
    return out


def _to_last(xs: list[tensor], axis: int) -> list[tensor]:
    ndim = len(xs[0].shape)
    if axis == ndim - 1:
        return xs
    dims = [d for d in range(ndim) if d != axis] + [axis]
    return [semantic.permute(x, dims) for x in xs]


def _from_last(xs: list[tensor], axis: int) -> list[tensor]:
    ndim = len(xs[0].shape)
    if axis == ndim - 1:
        return xs
    dims = list(range(ndim - 1))
    dims.insert(axis, ndim - 1)
    return [semantic.permute(x, dims) for x in xs]


def reduce(inputs, axis, combine_fn, keep_dims=False):
    """``tl.reduce(input, axis, combine_fn, keep_dims=False)``."""
    xs, single = _inputs(inputs)
    loc = user_location()
    axis = semantic.unwrap(axis)
    shape = xs[0].shape
    whole = axis is None
    if whole:
        xs = [semantic.reshape(x, (x.numel,)) for x in xs]
        axis = 0
    elif not shape:
        raise ValueError("tl.reduce of a 0-d value needs axis=None")
    axis = _axis(axis, len(xs[0].shape))
    xs = _to_last(xs, axis)
    length = xs[0].shape[-1]
    while length > 1:
        pairs = 2 * (length // 2)
        merged = _call(combine_fn, [_take(x, slice(0, pairs, 2)) for x in xs],
                       [_take(x, slice(1, pairs, 2)) for x in xs], loc)
        if length % 2:  # the odd last element joins the next level at its end
            merged = [_concat_last([m, _take(x, slice(length - 1, length))], m.dtype, loc)
                      for m, x in zip(merged, xs)]
        xs = merged
        length = xs[0].shape[-1]
    if whole:
        result_shape = (1,) * len(shape) if keep_dims else ()
    elif keep_dims:
        result_shape = shape[:axis] + (1,) + shape[axis + 1:]
    else:
        result_shape = shape[:axis] + shape[axis + 1:]
    out = [semantic.reshape(x, result_shape) for x in xs]
    return out[0] if single else tuple(out)


def scan(inputs, axis, combine_fn, reverse=False):
    """``tl.associative_scan(input, axis, combine_fn, reverse=False)``: inclusive."""
    xs, single = _inputs(inputs)
    loc = user_location()
    ndim = len(xs[0].shape)
    if not ndim:
        raise ValueError("tl.associative_scan of a 0-d value")
    axis = _axis(axis, ndim)
    xs = _to_last(xs, axis)
    if reverse:
        xs = [flip_last(x) for x in xs]
    length = xs[0].shape[-1]
    step = 1
    while step < length:
        combined = _call(combine_fn, [_take(x, slice(0, length - step)) for x in xs],
                         [_take(x, slice(step, length)) for x in xs], loc)
        xs = [_concat_last([_take(x, slice(0, step)), c], c.dtype, loc)
              for x, c in zip(xs, combined)]
        step *= 2
    if reverse:
        xs = [flip_last(x) for x in xs]
    xs = _from_last(xs, axis)
    return xs[0] if single else tuple(xs)


def flip_last(x: tensor) -> tensor:
    """``x`` reversed along its last axis: a view."""
    return _take(x, slice(None, None, -1))


# ---------------------------------------------------------------------- the named scans
def _add(a, b):
    return semantic.binary("add", a, b)


def _mul(a, b):
    return semantic.binary("mul", a, b)


def _xor(a, b):
    return semantic.binary("xor", a, b)


def _widened(x: tensor, loc) -> tensor:
    """bf16 scans in fp32 and stays fp32 (Triton promotes it); fp16 also accumulates in fp32
    (the device's scan keeps fp32 partial results: its fp16 cumsums match an fp32 reference
    to 1e-3) and is rounded back to fp16 once."""
    if x.dtype.name in ("bf16", "fp16"):
        return semantic.cast(x, dtypes.float32, loc=loc)
    return x


def _named_scan(x, axis, fn, reverse, dtype=None):
    loc = user_location()
    x = semantic.operand(x)
    start = x.dtype
    x = _widened(x, loc)
    if dtype is not None:
        x = semantic.cast(x, dtype, loc=loc)
    out = scan(x, axis, fn, reverse)
    if start.name == "fp16" and dtype is None:
        out = semantic.cast(out, start, loc=loc)
    return out


def cumsum(x, axis=0, reverse=False, dtype=None):
    """``tl.cumsum``: integers narrower than 32 bits sum in 32 bits (Triton's rule)."""
    x = semantic.operand(x)
    dtype = semantic.unwrap(dtype)
    if dtype is None and x.dtype.is_int() and x.dtype.bits < 32 and x.dtype.kind != "bool":
        dtype = dtypes.from_numpy("uint32" if x.dtype.np_dtype.kind == "u" else "int32")
    return _named_scan(x, axis, _add, reverse, dtype)


def cumprod(x, axis=0, reverse=False):
    """``tl.cumprod``."""
    return _named_scan(x, axis, _mul, reverse)


def xor_sum(x, axis=None, keep_dims=False):
    """``tl.xor_sum``: integers only."""
    x = semantic.operand(x)
    if not x.dtype.is_int():
        raise CompilationError(f"{_where()}: xor_sum only supported for integers, "
                               f"got {x.dtype}")
    return reduce(x, axis, _xor, keep_dims)


def _where() -> str:
    loc = user_location()
    return f"{loc[0]}:{loc[1]}"
