"""Scalar access to tiles and tensors (``getval``/``setval``, ``tile[r, c]``) and scalar maths."""

from __future__ import annotations

from ascsim.isa import ScalarLoad, ScalarStore
from ascsim.pto.ops.common import KernelError, current_core, user_location
from ascsim.pto.tensor import GmTensor
from ascsim.pto.tile import Tile


def _tile_element(tile: Tile, index, loc) -> int:
    """Element offset (from the tile's address) of ``tile[r, c]`` or linear ``tile[i]``."""
    if isinstance(index, tuple):
        if len(index) != 2:
            raise KernelError(f"a tile subscript takes [row, col], got {len(index)} indices",
                              loc)
        r, c = int(index[0]), int(index[1])
    else:
        i = int(index)
        r, c = divmod(i, tile.shape[1])
    if not (0 <= r < tile.shape[0] and 0 <= c < tile.shape[1]):
        raise KernelError(f"element [{r}, {c}] is outside the {tile.shape[0]}x{tile.shape[1]} "
                          "tile", loc)
    return int(tile.offsets(1, 1, r, c)[0, 0])


def tile_getval(tile: Tile, index):
    loc = user_location()
    region = tile.region().at(_tile_element(tile, index, loc), 1)
    return current_core().execute(ScalarLoad(region, loc))


def tile_setval(tile: Tile, index, value) -> None:
    loc = user_location()
    region = tile.region().at(_tile_element(tile, index, loc), 1)
    current_core().execute(ScalarStore(region, tile.np_dtype.type(value), loc))


def getval(target, offset):
    """``pl.getval(tile_or_tensor, linear_offset)`` (scalar unit)."""
    if isinstance(target, Tile):
        return tile_getval(target, int(offset))
    if isinstance(target, GmTensor):
        return target[int(offset)] if target.ndim == 1 else _gm_linear_get(target, offset)
    raise KernelError(f"getval expects a tile or tensor, got {type(target).__name__}",
                      user_location())


def setval(target, offset, value) -> None:
    """``pl.setval(tile_or_tensor, linear_offset, value)`` (scalar unit)."""
    if isinstance(target, Tile):
        tile_setval(target, int(offset), value)
    elif isinstance(target, GmTensor):
        loc = user_location()
        region = target.region().at(int(offset), 1)
        current_core().execute(ScalarStore(region, target.dtype.np_dtype.type(value), loc))
    else:
        raise KernelError(f"setval expects a tile or tensor, got {type(target).__name__}",
                          user_location())


def _gm_linear_get(tensor: GmTensor, offset):
    loc = user_location()
    return current_core().execute(ScalarLoad(tensor.region().at(int(offset), 1), loc))


def scalar_min(a, b):
    """``pl.min(a, b)`` of two scalars."""
    return a if a <= b else b


def scalar_max(a, b):
    """``pl.max(a, b)`` of two scalars."""
    return a if a >= b else b


def const(value, dtype):
    """``pl.const(value, dtype)``: a typed scalar constant."""
    return dtype.np_dtype.type(value).item() if dtype.kind != "bool" else bool(value)

OPS = {"getval": getval, "setval": setval}
