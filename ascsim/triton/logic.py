"""``not``, ``and`` and ``or`` in a Triton kernel (the loop rewrite of
:mod:`ascsim.triton.liveness` turns them into these calls): element-wise logical operations
when a block is involved, as Triton's code generator makes them, Python's own otherwise
(short circuit included: the right operand arrives as a function)."""

from __future__ import annotations

import numpy as np

from ascsim.sim.source import user_location
from ascsim.triton import dtypes, semantic
from ascsim.triton.tensor import known, tensor


def _block(value) -> bool:
    return isinstance(semantic.unwrap(value), tensor)


def _as_bool(x: tensor) -> tensor:
    return x if x.dtype.kind == "bool" else semantic.cast(x, dtypes.int1)


def logical_not(value):
    """``not x``: Triton's ``__not__`` of a block is its bitwise inversion (a logical not
    for masks); floats are refused, as Triton's front end refuses them."""
    value = semantic.unwrap(value)
    if not isinstance(value, tensor):
        return not value
    if value.dtype.is_floating():
        raise TypeError(f"`not` of a block of {value.dtype}: unexpected type")
    if value.known is not None:
        return known(np.invert(value.known), value.dtype)
    if value.packed or value.dtype.kind == "bool":
        return semantic.unary("not", semantic.as_mask(value, user_location()))
    return semantic.unary("not", value)


def logical_and(left, right):
    if not _block(left):
        left = semantic.unwrap(left)
        return left and right()
    other = right()
    return semantic.binary("and", _as_bool(semantic.unwrap(left)),
                           _as_bool(semantic.operand(other)))


def logical_or(left, right):
    if not _block(left):
        left = semantic.unwrap(left)
        return left or right()
    other = right()
    return semantic.binary("or", _as_bool(semantic.unwrap(left)),
                           _as_bool(semantic.operand(other)))
