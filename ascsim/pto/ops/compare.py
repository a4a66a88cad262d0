"""Comparisons into bit masks and selections by them (``V`` pipe).

``pl.gt(mask, lhs, rhs)`` writes one bit per element of ``lhs``'s valid window into a UINT8
tile declared with ``lhs``'s shape: the bits of row ``r`` start at the first byte of the mask
tile's row ``r``, least significant bit first (so a row of ``cols`` elements uses
``ceil(cols / 8)`` of the row's bytes). ``pl.select(out, mask, lhs, rhs, tmp)`` reads the same
bits. A right operand that is not a tile makes the scalar form (``cmps`` / ``sels``). Each call
is one :class:`~ascsim.isa.VectorCompare` or :class:`~ascsim.isa.VectorSelect` record.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa import VectorCompare, VectorSelect
from ascsim.pto.enums import CmpMode
from ascsim.pto.ops.common import KernelError, current_core, user_location
from ascsim.pto.ops.routine import repeats_of, vec_tiles
from ascsim.pto.tile import Tile

#: pl.CmpMode -> the machine's comparison name
CMP_MODES = {CmpMode.EQ: "eq", CmpMode.NE: "ne", CmpMode.LT: "lt", CmpMode.GT: "gt",
             CmpMode.GE: "ge", CmpMode.LE: "le"}


def mask_bits(mask: Tile, rows: int, cols: int, op: str, loc) -> np.ndarray:
    """Bit numbers (from the mask tile's first byte) of a ``rows x cols`` window's elements."""
    if mask.np_dtype.itemsize != 1:
        raise KernelError(f"{op}: the mask must be a UINT8 tile, got {mask.dtype.name}", loc)
    row_bytes = mask.frame.cols
    if -(-cols // 8) > row_bytes or rows > mask.shape[0]:
        raise KernelError(f"{op}: a {mask.shape[0]}x{mask.shape[1]} mask tile cannot hold the "
                          f"bits of a {rows}x{cols} window", loc)
    starts = mask.offsets(rows, 1)[:, 0].astype(np.int64) * 8
    return (starts[:, None] + np.arange(cols, dtype=np.int64)[None, :]).reshape(-1)


def compare(cmp: str, out: Tile, lhs: Tile, rhs, name: str, loc) -> None:
    """``out`` bits = ``cmp(lhs, rhs)`` over ``lhs``'s valid window."""
    is_tile = isinstance(rhs, Tile)
    vec_tiles(name, loc, out, lhs, *((rhs,) if is_tile else ()))
    rows, cols = lhs.valid
    if rows <= 0 or cols <= 0:
        return
    bits = mask_bits(out, rows, cols, name, loc)
    srcs = (lhs, rhs) if is_tile else (lhs,)
    lanes = tuple(t.offsets(rows, cols).reshape(-1) for t in srcs)
    scalar = None if is_tile else lhs.np_dtype.type(rhs)
    repeats = repeats_of(rows, cols, lhs.np_dtype.itemsize)
    current_core().execute(VectorCompare(cmp, out.region(), tuple(t.region() for t in srcs),
                                         lanes, bits, repeats, loc, scalar, name))


def select(out: Tile, mask: Tile, lhs: Tile, rhs, tmp=None, *, name="select") -> None:
    """``pl.select(out, mask, lhs, rhs_tile_or_scalar, tmp)``: ``lhs`` where the mask bit is
    set, else ``rhs`` (``tmp`` is required by PyPTO Pro and unused by the instruction)."""
    loc = user_location()
    is_tile = isinstance(rhs, Tile)
    srcs = (lhs, rhs) if is_tile else (lhs,)
    vec_tiles(name, loc, out, mask, *srcs)
    rows, cols = out.valid
    if rows <= 0 or cols <= 0:
        return
    for t in srcs:
        if t.shape[0] < rows or t.shape[1] < cols:
            raise KernelError(f"{name}: a {t.shape[0]}x{t.shape[1]} operand is smaller than "
                              f"the {rows}x{cols} window", loc)
    bits = mask_bits(mask, rows, cols, name, loc)
    lanes = tuple(t.offsets(rows, cols).reshape(-1) for t in (out, *srcs))
    scalar = None if is_tile else out.np_dtype.type(rhs)
    repeats = repeats_of(rows, cols, out.np_dtype.itemsize)
    current_core().execute(VectorSelect(out.region(), mask.region(),
                                        tuple(t.region() for t in srcs), lanes, bits, repeats,
                                        loc, scalar, name))


def _make_compare(cmp: str):
    def op(out, lhs, rhs):
        compare(cmp, out, lhs, rhs, cmp, user_location())
    op.__name__ = cmp
    op.__doc__ = f"``pl.{cmp}(mask, lhs, rhs_tile_or_scalar)``: one bit per element"
    return op


def _cmp_name(cmp_mode, op: str, loc) -> str:
    try:
        return CMP_MODES[CmpMode(int(cmp_mode))]
    except ValueError:
        raise KernelError(f"{op}: cmp_mode {cmp_mode!r} is not a pl.CmpMode", loc) from None


def cmp(out, lhs, rhs, *, cmp_mode=CmpMode.EQ):
    """Backend ``cmp(mask, lhs, rhs_tile, *, cmp_mode)``."""
    loc = user_location()
    if not isinstance(rhs, Tile):
        raise KernelError("cmp: the right operand must be a tile (cmps takes a scalar)", loc)
    compare(_cmp_name(cmp_mode, "cmp", loc), out, lhs, rhs, "cmp", loc)


def cmps(out, lhs, rhs, *, cmp_mode=CmpMode.EQ):
    """Backend ``cmps(mask, lhs, scalar, *, cmp_mode)``."""
    loc = user_location()
    if isinstance(rhs, Tile):
        raise KernelError("cmps: the right operand must be a scalar (cmp takes a tile)", loc)
    compare(_cmp_name(cmp_mode, "cmps", loc), out, lhs, rhs, "cmps", loc)


def sel(out, mask, lhs, rhs, tmp=None):
    """Backend ``sel(out, mask, lhs, rhs, tmp)``."""
    select(out, mask, lhs, rhs, tmp, name="sel")


def sels(out, mask, src, tmp, scalar):
    """Backend ``sels(out, mask, src, tmp, scalar)``: the scalar where the bit is clear."""
    select(out, mask, src, scalar, tmp, name="sels")


OPS: dict = {c: _make_compare(c) for c in ("eq", "ne", "lt", "le", "gt", "ge")}
OPS["select"] = select
HIDDEN = {"cmp": cmp, "cmps": cmps, "sel": sel, "sels": sels}
