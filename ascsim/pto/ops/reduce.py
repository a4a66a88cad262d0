"""Reductions along a tile's rows or columns and the broadcasts that expand their results.

``dim=0`` works along the last axis (one result per row: an ``[rows, 1]`` tile, DN in PyPTO
Pro's examples), ``dim=1`` along the first (one result per column: ``[1, cols]``). Both read
the source's valid window. A row reduction folds each row's repeats together element-wise and
then reduces one repeat per row (the ``reduce*`` cost classes); a column reduction combines
rows element-wise. The ``tmp`` tile PyPTO Pro requires is the instruction's scratch.

The broadcasts (``expand_sub`` ..., backend ``row_expand_*`` / ``col_expand_*``) are
element-wise vector instructions whose right operand repeats one value per row (``dim=0``) or
per column (``dim=1``): one :class:`~ascsim.isa.Vector` record with an index array per operand.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ascsim.isa import Vector
from ascsim.pto.layout import window_offsets
from ascsim.pto.ops import vector
from ascsim.pto.ops.common import KernelError, current_core, user_location
from ascsim.pto.ops.routine import repeats_of, run, vec_tiles, window
from ascsim.pto.tile import Tile
from ascsim.sim.numerics import compute_dtype


def _accumulate(values: np.ndarray) -> np.ndarray:
    """What the vector unit adds in: fp32 for fp16/bf16/fp32 (wrapping integers for ints)."""
    values = compute_dtype(values)
    return values.astype(np.int64) if values.dtype.kind in "iu" else values


def _sum(values, axis):
    return _accumulate(values).sum(axis=axis, keepdims=True)


def _prod(values, axis):
    return _accumulate(values).prod(axis=axis, keepdims=True)


def _max(values, axis):
    return compute_dtype(values).max(axis=axis, keepdims=True)


def _min(values, axis):
    return compute_dtype(values).min(axis=axis, keepdims=True)


def _argmax(values, axis):
    return values.argmax(axis=axis).reshape((-1, 1) if axis == 1 else (1, -1))


def _argmin(values, axis):
    return values.argmin(axis=axis).reshape((-1, 1) if axis == 1 else (1, -1))


#: reduction -> (numpy definition over an axis, element-wise combine class, final reduce class)
REDUCTIONS = {"sum": (_sum, "add", "reduce"), "max": (_max, "max", "reduce_max"),
              "min": (_min, "min", "reduce_min"), "prod": (_prod, "mul", None),
              "argmax": (_argmax, "max", "reduce_max"), "argmin": (_argmin, "min", "reduce_min")}


def _steps(how: str, per_row: bool, rows: int, cols: int, itemsize: int) -> tuple:
    """The vector passes of a reduction of ``rows x cols`` elements."""
    _, combine, final = REDUCTIONS[how]
    per_rep = 256 // itemsize
    reps = -(-cols // per_rep)
    arg = how.startswith("arg")
    if per_row:
        steps = []
        if reps > 1:  # fold each row's repeats into its first one
            steps.append((combine, rows * (reps - 1)))
            if arg:  # and keep track of where each lane's winner came from
                steps.append(("select", rows * (reps - 1)))
        if final is None:  # no reducing instruction: halve the repeat log2 times
            steps.extend((combine, rows) for _ in range(max(1, math.ceil(math.log2(per_rep)))))
        else:
            steps.append((final, rows))
        return tuple(steps)
    width = repeats_of(1, cols, itemsize)
    steps = [(combine, max(1, rows - 1) * width)]
    if arg:
        steps += [("compare", max(1, rows - 1) * width), ("select", max(1, rows - 1) * width)]
    return tuple(steps)


def reduce_tile(how: str, out: Tile, src: Tile, tmp, dim: int, name: str, loc) -> None:
    """``out`` = the ``how`` reduction of ``src``'s valid window along ``dim``."""
    vec_tiles(name, loc, out, src, *(() if tmp is None else (tmp,)))
    if dim not in (0, 1):
        raise KernelError(f"{name}: dim must be 0 (per row) or 1 (per column), got {dim!r}", loc)
    rows, cols = src.valid
    if rows <= 0 or cols <= 0:
        return
    per_row = dim == 0
    need = (rows, 1) if per_row else (1, cols)
    if out.shape[0] < need[0] or out.shape[1] < need[1]:
        raise KernelError(f"{name}: a {out.shape[0]}x{out.shape[1]} output cannot hold the "
                          f"{need[0]}x{need[1]} result of a {rows}x{cols} source", loc)
    if how.startswith("arg") and out.dtype.name not in ("INT32", "UINT32"):
        raise KernelError(f"{name}: the index output must be INT32 or UINT32, got "
                          f"{out.dtype.name}", loc)
    fn = REDUCTIONS[how][0]
    axis = 1 if per_row else 0
    steps = _steps(how, per_row, rows, cols, src.np_dtype.itemsize)
    scratch = () if tmp is None else (tmp,)
    run(name, (window(out, *need),), (window(src, rows, cols),),
        lambda v: (fn(v, axis),), steps, src.np_dtype, loc, scratch)


def _make_reduce(how: str, dim: int | None, name: str):
    def op(out, src, tmp=None, *, dim=dim):
        reduce_tile(how, out, src, tmp, int(dim), name, user_location())
    op.__name__ = name
    op.__doc__ = f"``pl.{name}(out, src, tmp)``: {how} along each {('row', 'column')[dim]}"
    return op


def _make_extremum(how: str, name: str):
    binary = vector.OPS[name]

    def op(out, lhs, rhs, *, dim=None):
        """Element-wise without ``dim``; a reduction of ``lhs`` (``rhs`` is its scratch) with."""
        if dim is None:
            return binary(out, lhs, rhs)
        return reduce_tile(how, out, lhs, rhs, int(dim), name, user_location())
    op.__name__ = name
    return op


# ------------------------------------------------------------------------------ broadcasts
#: expand op -> the vector unit's element-wise op
EXPANDS = {"sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min", "add": "add",
           "expdif": "expdif"}


@lru_cache(maxsize=1024)
def _broadcast_lanes(frame, r0: int, c0: int, dim: int, rows: int, cols: int) -> np.ndarray:
    """Element offsets of a ``[rows, 1]`` (dim 0) or ``[1, cols]`` (dim 1) operand repeated
    over ``rows x cols``, read-only and cached (the machine looks their runs up by identity)."""
    need = (rows, 1) if dim == 0 else (1, cols)
    lanes = np.broadcast_to(window_offsets(frame, r0, c0, *need), (rows, cols)).reshape(-1)
    lanes.setflags(write=False)
    return lanes


def expand_tile(unit_op: str, out: Tile, src, vec: Tile, dim: int, name: str, loc) -> None:
    """``out = f(src, vec)`` over ``out``'s valid window, ``vec`` repeated along ``dim``
    (``src`` None: ``out = vec`` repeated)."""
    srcs = (vec,) if src is None else (src, vec)
    vec_tiles(name, loc, out, *srcs)
    if dim not in (0, 1):
        raise KernelError(f"{name}: dim must be 0 (per row) or 1 (per column), got {dim!r}", loc)
    rows, cols = out.valid
    if rows <= 0 or cols <= 0:
        return
    if src is not None and (src.shape[0] < rows or src.shape[1] < cols):
        raise KernelError(f"{name}: a {src.shape[0]}x{src.shape[1]} source is smaller than the "
                          f"{rows}x{cols} output window", loc)
    need = (rows, 1) if dim == 0 else (1, cols)
    if vec.shape[0] < need[0] or vec.shape[1] < need[1]:
        raise KernelError(f"{name}: the broadcast operand must be at least {need[0]}x{need[1]}, "
                          f"got {vec.shape[0]}x{vec.shape[1]}", loc)
    lanes = [out.offsets(rows, cols).reshape(-1)]
    if src is not None:
        lanes.append(src.offsets(rows, cols).reshape(-1))
    lanes.append(_broadcast_lanes(vec.frame, *vec.origin, dim, rows, cols))
    widest = max(t.np_dtype.itemsize for t in (out, *srcs))
    rec = Vector(unit_op, out.region(), tuple(t.region() for t in srcs), loc, (), tuple(lanes),
                 repeats_of(rows, cols, widest))
    current_core().execute(rec)


def _make_expand(unit_op: str, dim: int | None, name: str):
    def op(out, src, vec, *, dim=dim):
        expand_tile(unit_op, out, src, vec, int(dim), name, user_location())
    op.__name__ = name
    op.__doc__ = f"``pl.{name}(out, src, vec)``: ``{unit_op}`` with ``vec`` repeated"
    return op


def _make_broadcast(dim: int, name: str):
    def op(out, vec):
        expand_tile("copy", out, None, vec, dim, name, user_location())
    op.__name__ = name
    op.__doc__ = f"``pl.{name}(out, vec)``: ``vec`` repeated over ``out``"
    return op


OPS: dict = {
    "sum": _make_reduce("sum", 0, "sum"),
    "argmax": _make_reduce("argmax", 0, "argmax"),
    "argmin": _make_reduce("argmin", 0, "argmin"),
    "maximum": _make_extremum("max", "maximum"),
    "minimum": _make_extremum("min", "minimum"),
}
OPS.update({f"expand_{k}": _make_expand(u, 0, f"expand_{k}")
            for k, u in EXPANDS.items() if k in ("sub", "mul", "div", "max", "min")})

#: Backend names PyPTO Pro's parser accepts (not in ``pl.__all__``).
HIDDEN: dict = {}
for _how in ("sum", "max", "min", "prod", "argmax", "argmin"):
    HIDDEN[f"row_{_how}"] = _make_reduce(_how, 0, f"row_{_how}")
    HIDDEN[f"col_{_how}"] = _make_reduce(_how, 1, f"col_{_how}")
for _k, _u in EXPANDS.items():
    HIDDEN[f"row_expand_{_k}"] = _make_expand(_u, 0, f"row_expand_{_k}")
    HIDDEN[f"col_expand_{_k}"] = _make_expand(_u, 1, f"col_expand_{_k}")
HIDDEN["row_expand"] = _make_broadcast(0, "row_expand")
HIDDEN["col_expand"] = _make_broadcast(1, "col_expand")
