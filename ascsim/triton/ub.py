"""The UB planner of a Triton kernel: where each live tile sits in the Unified Buffer.

triton-ascend's compiler (BiShengIR) gives every tensor value that lives in UB its own bytes
for as long as the value is live, and reuses the bytes of dead values; when the values live at
one point need more than the UB has, compilation fails with ``ub overflow, requires N bits
while M bits available!`` (triton-ascend docs, programming_guide.md "How Do I Avoid UB
Overflow"; 192 KB = 1 572 864 bits on the A2 series). Here a kernel runs eagerly, so a value's
life is its Python object's: a tile is placed when the operation that makes it runs and its
bytes come back when the last tensor viewing it is dropped (reference counting frees it the
moment a loop variable is rebound). A loop body that loads the next block before dropping the
last one therefore holds two buffers: the ping-pong a compiler's multi-buffering gives.

Placement is first fit from the bottom of UB at 32-byte alignment (the UB's block size,
ascend-hw §2.2). The planner also keeps, per 32-byte block, the last instruction of each pipe
that touched bytes since freed, so that the first writer of a reused block waits for their
readers (:mod:`ascsim.triton.ordering`).
"""

from __future__ import annotations

import bisect

import numpy as np

from ascsim.triton.errors import MLIRCompilationError

ALIGN = 32


class UbOverflow(MLIRCompilationError):
    """The tiles live at one point of the kernel need more UB than there is."""


class Allocation:
    """``size`` bytes of UB at ``lo`` held by one tile value (and the views of it).

    ``write`` / ``access``: per pipe, the sequence number of the last instruction of that pipe
    that wrote / touched the bytes (the ordering module reads and updates them)."""

    __slots__ = ("planner", "lo", "size", "write", "access", "__weakref__")

    def __init__(self, planner, lo: int, size: int, inherited: dict):
        self.planner = planner
        self.lo = lo
        self.size = size
        self.write: dict = {}
        self.access: dict = inherited

    def __del__(self):
        planner = self.planner
        if planner is not None and planner.open:
            planner.free(self)


class UbPlanner:
    """The UB of one core, as the kernel's tiles use it."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.open = True
        self.spans: list[tuple[int, int]] = [(0, capacity)]  # free (lo, hi), sorted
        self.live = 0
        self.peak = 0
        blocks = -(-capacity // ALIGN)
        # pipe -> per 32-byte block, the sequence number of its last access to freed bytes
        self.history: dict[str, np.ndarray] = {}
        self._blocks = blocks

    def allocate(self, nbytes: int, loc) -> Allocation:
        size = max(ALIGN, -(-nbytes // ALIGN) * ALIGN)
        for i, (lo, hi) in enumerate(self.spans):
            if hi - lo >= size:
                if hi - lo == size:
                    del self.spans[i]
                else:
                    self.spans[i] = (lo + size, hi)
                break
        else:
            needed = (self.live + size) * 8
            raise UbOverflow(
                f"{loc[0]}:{loc[1]}: error: ub overflow, requires {needed} bits while "
                f"{self.capacity * 8} bits available! (the tiles live at this line: "
                f"{self.live} bytes held, {size} more asked; make the blocks smaller or "
                "loop over the data in parts)")
        self.live += size
        if self.live > self.peak:
            self.peak = self.live
        inherited = {}
        first, last = lo // ALIGN, (lo + size) // ALIGN
        for pipe, seqs in self.history.items():
            seq = int(seqs[first:last].max())
            if seq:
                inherited[pipe] = seq
        return Allocation(self, lo, size, inherited)

    def free(self, alloc: Allocation) -> None:
        lo, size = alloc.lo, alloc.size
        alloc.planner = None
        self.live -= size
        first, last = lo // ALIGN, (lo + size) // ALIGN
        for pipe, seq in alloc.access.items():
            seqs = self.history.get(pipe)
            if seqs is None:
                seqs = self.history[pipe] = np.zeros(self._blocks, dtype=np.int64)
            seqs[first:last] = seq
        hi = lo + size
        spans = self.spans
        i = bisect.bisect_left(spans, (lo, hi))
        if i < len(spans) and spans[i][0] == hi:  # merge with the next free span
            hi = spans[i][1]
            del spans[i]
        if i > 0 and spans[i - 1][1] == lo:  # and with the previous one
            lo = spans[i - 1][0]
            spans[i - 1] = (lo, hi)
        else:
            spans.insert(i, (lo, hi))

    def close(self) -> None:
        """The kernel ended: tiles dropped later (a traceback's frames) give nothing back."""
        self.open = False
