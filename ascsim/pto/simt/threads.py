"""The threads of one SIMT launch, run together: thread values are numpy arrays.

A launch of ``T`` threads runs its function body once (vectorised mode): the thread ids are
arrays of ``T`` values, every expression computes for all threads at once, and a statement
that reads or writes a tile or tensor element becomes one :class:`~ascsim.isa.SimtAccess`
record for all the threads that execute it. Control flow on thread values is masked: both
sides of a divergent ``if`` run, each under the mask of its threads (a warp executes both
paths on the device too); a loop on thread values iterates while any thread is still in it.
Names assigned under a mask keep the old value in the other threads.

A function with control flow that masking cannot express (``break``, ``continue``, a
``return`` inside a branch or loop) runs once per thread instead (per-thread mode): its
thread values are plain scalars and every access is a record of one thread.

The helpers here are what :mod:`ascsim.pto.simt.rewrite` turns a SIMT function's syntax into;
they act on the innermost running launch (:data:`RUNS`).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ascsim.isa import SimtAccess
from ascsim.pto.layout import OFFSETS
from ascsim.pto.ops.common import KernelError, user_location
from ascsim.pto.tensor import GmTensor
from ascsim.pto.tile import Tile


class Dim3(NamedTuple):
    """A thread, block or grid coordinate: ``.x``, ``.y``, ``.z``."""

    x: object
    y: object
    z: object


@dataclass
class SimtRun:
    """The state of one running launch (or of one thread of a per-thread launch).

    ``lanes``: the linear ids of the threads this run executes; ``thread``: their
    ``thread_idx`` (arrays in vectorised mode, ints in per-thread mode); ``masks``: the stack
    of active-thread masks (boolean arrays over ``lanes``; empty: all active); ``ops``: the
    warp instructions of arithmetic counted so far (priced at the end of the launch).
    """

    core: object
    lanes: np.ndarray
    thread: Dim3
    linear: object
    block_dim: Dim3
    block_idx: Dim3
    grid_dim: Dim3
    warp_size: int
    scalar: bool
    masks: list
    ops: int = 0

    @property
    def mask(self):
        return self.masks[-1] if self.masks else None


#: The running launches, innermost last (a launch is never nested, but a callee runs in its
#: caller's launch).
RUNS: list[SimtRun] = []


def run() -> SimtRun:
    if not RUNS:
        raise KernelError("SIMT context queries (pl.simt.thread_idx(), ...) can only be used "
                          "inside a SIMT function", user_location())
    return RUNS[-1]


def is_varying(value) -> bool:
    """Whether ``value`` differs between threads (an array of one value per thread)."""
    return isinstance(value, np.ndarray) and value.ndim > 0


# ------------------------------------------------------------------ element access
def _indices(obj, index, loc):
    """Element offsets (from the operand region's start) of ``obj[index]``: one per thread
    (an array) or one for all (an int)."""
    parts = index if isinstance(index, tuple) else (index,)
    if isinstance(obj, Tile):
        if len(parts) == 2:
            r, c = parts
        elif len(parts) == 1:
            r, c = np.divmod(parts[0], obj.shape[1])
        else:
            raise KernelError(f"a tile subscript takes [row, col], got {len(parts)} indices", loc)
        return OFFSETS[obj.frame.layout](obj.frame, np.add(r, obj.origin[0]),
                                         np.add(c, obj.origin[1]))
    if len(parts) == 1 and obj.ndim != 1:
        return parts[0]  # a linear offset
    if len(parts) != obj.ndim:
        raise KernelError(f"tensor subscript has {len(parts)} indices, the tensor has "
                          f"{obj.ndim} dimensions", loc)
    total = 0
    for i, stride in zip(parts, obj.strides):
        total = total + np.multiply(i, stride)
    return total


def _region(obj):
    return obj.region()


def _active(state: SimtRun, value):
    """``value`` (per thread or uniform) for each active thread, and the active lanes."""
    mask = state.mask
    n = state.lanes.size
    full = np.broadcast_to(np.asarray(value).astype(np.int64, copy=False), (n,))
    if mask is None:
        return full, state.lanes
    return full[mask], state.lanes[mask]


def load(obj, index):
    """``obj[index]`` in a SIMT body: a tile or tensor element per thread, else Python's."""
    if not isinstance(obj, (Tile, GmTensor)) or isinstance(index, slice) or (
            isinstance(index, tuple) and builtins.any(isinstance(i, slice) for i in index)):
        return obj[index]
    state = run()
    loc = user_location()
    elements, lanes = _active(state, _indices(obj, index, loc))
    region = _region(obj)
    values = state.core.execute(SimtAccess(region, elements, lanes, None, loc))
    if state.scalar:
        return values[0] if values.size else region.dtype.type(0)
    mask = state.mask
    if mask is None:
        return values
    out = np.zeros(state.lanes.size, dtype=region.dtype)
    out[mask] = values
    return out


def store(obj, index, value) -> None:
    """``obj[index] = value`` in a SIMT body."""
    if not isinstance(obj, (Tile, GmTensor)):
        obj[index] = value
        return
    state = run()
    loc = user_location()
    elements, lanes = _active(state, _indices(obj, index, loc))
    if not elements.size:
        return
    mask = state.mask
    data = np.broadcast_to(np.asarray(value), (state.lanes.size,))
    if mask is not None:
        data = data[mask]
    region = _region(obj)
    state.core.execute(SimtAccess(region, elements, lanes, data.astype(region.dtype), loc))


# ------------------------------------------------------------------ masked control flow
def merge(new, old):
    """An assignment under a mask: the new value in the active threads, the old one (``old()``,
    NameError when the name has none yet) elsewhere."""
    mask = run().mask if RUNS else None
    if mask is None:
        return new
    try:
        previous = old()
    except NameError:
        return new
    return np.where(mask, new, previous)


class Branch:
    """One ``if``: uniform (a plain condition) or divergent (a mask for each side)."""

    __slots__ = ("state", "sides", "pushed")

    def __init__(self, cond):
        self.pushed = False
        if not is_varying(cond):
            self.state = None
            self.sides = (bool(cond), not bool(cond))
            return
        state = self.state = run()
        taken = np.broadcast_to(np.asarray(cond, dtype=bool), state.lanes.shape)
        outer = state.mask
        if outer is None:
            self.sides = (taken, ~taken)
        else:
            self.sides = (taken & outer, ~taken & outer)

    def _enter(self, side) -> bool:
        if self.state is None:
            return side
        if not side.any():
            return False
        self.state.masks.append(side)
        self.pushed = True
        return True

    def then(self) -> bool:
        return self._enter(self.sides[0])

    def orelse(self) -> bool:
        return self._enter(self.sides[1])

    def leave(self) -> None:
        if self.pushed:
            self.state.masks.pop()
            self.pushed = False


class Loop:
    """One ``for`` or ``while`` loop of a SIMT body.

    Each iteration runs under the mask of the threads still in the loop: a ``while`` drops the
    threads whose condition failed, a ``for ... in pl.range`` with bounds that differ between
    threads runs each value for the threads whose range holds it, and a ``break`` or
    ``continue`` under a divergent branch takes the threads that reach it out of the loop or
    out of the rest of the iteration (the others go on). Where the threads agree, these are
    Python's own loop, ``break`` and ``continue``.
    """

    __slots__ = ("state", "base", "alive", "pushed")

    def __init__(self):
        self.state = run()
        self.base = len(self.state.masks)  # the mask stack's depth at the loop
        self.alive = None  # the threads that have not left by a break (None: all of them)
        self.pushed = False  # an iteration mask is on the stack

    def _outer(self):
        masks = self.state.masks
        return masks[self.base - 1] if self.base else None

    def _begin(self, extra) -> bool:
        """Open an iteration for the threads in the loop (and in ``extra``); False: none."""
        mask = self._outer()
        for part in (self.alive, extra):
            if part is not None:
                mask = part if mask is None else mask & part
        if mask is None:
            return True
        self.state.masks.append(mask)
        self.pushed = True
        return bool(mask.any())

    def _end(self) -> None:
        if self.pushed:
            del self.state.masks[self.base:]
            self.pushed = False

    def range(self, *args):
        """``pl.range(...)`` in a SIMT body (bounds may differ between threads; the step not)."""
        if not 1 <= len(args) <= 3:
            raise TypeError(f"pl.range takes 1 to 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        if is_varying(step):
            raise KernelError("pl.range: the step of a SIMT loop must be the same in every "
                              "thread", user_location())
        step = int(step)
        if step == 0:
            raise ValueError("pl.range step must not be zero")
        if not is_varying(start) and not is_varying(stop):
            return self._uniform(builtins.range(int(start), int(stop), step))
        return self._masked(start, stop, step)

    def _uniform(self, values):
        for v in values:
            if self._begin(None):
                yield v
            self._end()

    def _masked(self, start, stop, step):
        n = self.state.lanes.size
        lo = np.broadcast_to(np.asarray(start, dtype=np.int64), (n,))
        hi = np.broadcast_to(np.asarray(stop, dtype=np.int64), (n,))
        outer = self._outer()
        live = np.ones(n, dtype=bool) if outer is None else outer
        if not live.any():
            return
        first = int(lo[live].min()) if step > 0 else int(lo[live].max())
        last = int(hi[live].max()) if step > 0 else int(hi[live].min())
        for v in builtins.range(first, last, step):
            inside = (lo <= v) & (v < hi) if step > 0 else (lo >= v) & (v > hi)
            inside &= (v - lo) % step == 0
            if self._begin(inside):
                yield v
            self._end()

    def test(self, cond) -> bool:
        """A ``while`` condition, evaluated in the threads of the iteration that ends."""
        self._end()
        if not is_varying(cond):
            return bool(cond) and self._begin(None)
        going = np.broadcast_to(np.asarray(cond, dtype=bool), self.state.lanes.shape)
        if self.alive is not None:
            going = going & self.alive
        self.alive = going
        return self._begin(None)

    def stop(self, leaving: bool) -> bool:
        """A ``break`` (``leaving``) or ``continue`` reached: True when every thread of the
        iteration reaches it (Python's own statement then runs); else those threads leave."""
        masks = self.state.masks
        if len(masks) == self.base + self.pushed:
            return True
        reached = masks[-1]
        first = self.base
        if not self.pushed:
            # The iteration ran unmasked so far: from here on it runs without those threads.
            outer = self._outer()
            rest = ~reached if outer is None else outer & ~reached
            masks.insert(self.base, rest if self.alive is None else rest & self.alive)
            self.pushed = True
            first += 1
        for i in builtins.range(first, len(masks)):
            masks[i] = masks[i] & ~reached
        if leaving:
            outer = self._outer()
            still = ~reached if outer is None else outer & ~reached
            self.alive = still if self.alive is None else self.alive & still
        return False

    def leave(self) -> None:
        self._end()


def select(cond, then, orelse):
    """``a if cond else b``."""
    if not is_varying(cond):
        return then() if cond else orelse()
    return np.where(cond, then(), orelse())


def logical_and(first, rest):
    if not is_varying(first):
        return rest() if first else first
    return np.logical_and(first, rest())


def logical_or(first, rest):
    if not is_varying(first):
        return first if first else rest()
    return np.logical_or(first, rest())


def logical_not(value):
    return np.logical_not(value) if is_varying(value) else not value


def minimum(a, b):
    if is_varying(a) or is_varying(b):
        return np.minimum(a, b)
    return a if a <= b else b


def maximum(a, b):
    if is_varying(a) or is_varying(b):
        return np.maximum(a, b)
    return a if a >= b else b


#: ``int(x)`` / ``float(x)`` / ``bool(x)`` on a per-thread value: a C conversion.
CASTS = {int: np.int64, float: np.float32, bool: np.bool_}


def cast(kind, value):
    if is_varying(value):
        return value.astype(CASTS[kind])
    return kind(value)


def count_ops(n: int) -> None:
    """``n`` warp instructions of the statement about to run."""
    RUNS[-1].ops += n
