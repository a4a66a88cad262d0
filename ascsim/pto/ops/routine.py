"""Tile operations that the backend lowers to a short chain of vector instructions.

A reduction per row, a sort of 32 elements or a histogram is one PTO tile instruction that
the vector unit runs as a few dependent passes. Each becomes one
:class:`~ascsim.isa.VectorSequence` record: its numerical definition (a numpy function over
the tiles' windows) and the passes it costs, so the machine prices it with its own vector
table. The operands are the byte hulls of the windows the instruction touches, so the checks
see the bytes read and written and nothing around them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ascsim.isa import VectorSequence
from ascsim.pto.dtypes import CODED_FLOATS
from ascsim.pto.enums import MemorySpace
from ascsim.pto.errors import UnsupportedFeatureError
from ascsim.pto.layout import window_offsets
from ascsim.pto.ops.common import KernelError, current_core, expect_space
from ascsim.pto.tile import Tile

REPEAT_BYTES = 256


class Window(NamedTuple):
    """A window of a tile as an operand: the region covering it and the element offsets of
    the window (a ``rows x cols`` array) counted from that region's first element."""

    region: object
    offsets: np.ndarray


@lru_cache(maxsize=4096)
def _relative(frame, r0: int, c0: int, rows: int, cols: int) -> tuple:
    """(first element, element span, read-only offsets from the first element) of a window;
    cached, so an instruction issued again names the same arrays (the machine looks their
    runs up by identity)."""
    offs = window_offsets(frame, r0, c0, rows, cols)
    lo = int(offs.min())
    rel = offs - lo
    rel.setflags(write=False)
    return lo, int(offs.max()) + 1 - lo, rel


def window(tile: Tile, rows: int, cols: int, r0: int = 0, c0: int = 0) -> Window:
    """The ``rows x cols`` window of ``tile`` from ``(r0, c0)``."""
    lo, span, rel = _relative(tile.frame, tile.origin[0] + r0, tile.origin[1] + c0, rows, cols)
    return Window(tile.region().at(lo, span), rel)


def repeats_of(rows: int, cols: int, itemsize: int) -> int:
    """Repeats of one pass over ``rows`` rows of ``cols`` elements (each row starts a repeat)."""
    return max(1, rows * -(-cols * itemsize // REPEAT_BYTES))


def vec_tiles(op: str, loc, *tiles) -> None:
    """Fail unless every operand is a UB tile of a type the vector unit computes on."""
    for t in tiles:
        if not isinstance(t, Tile):
            raise KernelError(f"{op}: operands must be tiles, got {type(t).__name__}", loc)
        expect_space(t, (MemorySpace.Vec,), op, "every operand", loc)
        if t.dtype.name in CODED_FLOATS:
            raise UnsupportedFeatureError(
                f"{op}: a {t.dtype.name} tile holds encoded values (raw bytes) that ascsim's "
                "vector unit does not compute on; HF8 goes through the Cube and the FixPipe, "
                "and tiles of these types can be loaded, moved and stored", loc)


def _placed(offsets: np.ndarray, result) -> tuple:
    """``(element indices, values)`` of a routine's result for one output window."""
    if isinstance(result, tuple):
        positions, values = result
        return offsets.reshape(-1)[positions], np.asarray(values).reshape(-1)
    return offsets.reshape(-1), np.broadcast_to(np.asarray(result), offsets.shape).reshape(-1)


def run(op: str, outs: tuple, ins: tuple, fn, steps: tuple, dtype, loc, scratch=()) -> None:
    """Issue ``op``: ``fn`` takes the input windows' values (arrays shaped as the windows) and
    returns one array per output window (its shape), rounded once to the output's type -- or
    ``(positions, values)`` to write only those flat positions of the window; ``steps`` are
    the vector passes it costs (``(cost class, repeats)`` pairs) in ``dtype``."""
    in_offs = tuple(w.offsets for w in ins)
    out_offs = tuple(w.offsets for w in outs)

    def compute(*views):
        values = [v[o] for v, o in zip(views, in_offs)]
        results = fn(*values)
        return tuple(_placed(o, r) for o, r in zip(out_offs, results))

    repeats = max(n for _, n in steps)
    lanes = tuple(o.reshape(-1) for o in (*out_offs, *in_offs))
    current_core().execute(VectorSequence(
        op, tuple(w.region for w in outs), tuple(w.region for w in ins), compute, tuple(steps),
        repeats, np.dtype(dtype).name, loc, (), tuple(t.region() for t in scratch),
        lanes=lanes))
