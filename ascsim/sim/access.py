"""Access records: which bytes an instruction reads or writes (``Instr.reads`` / ``writes``).

A record is either

* ``(space, lo, hi)``: the bytes ``[lo, hi)`` of ``space``, or
* ``(space, lo, hi, row_bytes, pitch)``: rows of ``row_bytes`` bytes every ``pitch`` bytes,
  the first at ``lo`` and the last ending at ``hi`` (so ``[lo, hi)`` is the hull and
  ``row_bytes < pitch``). A strided copy or FixPipe write records one of these instead of one
  range per row: neighbouring cores' column blocks of one matrix interleave their rows without
  overlapping, and the checks handle a whole block at once (:mod:`ascsim.sim.checks.races`).

``space`` is ``mem.key == (core_id, "UB")`` for local memory and ``("GM", buffer id)`` for GM.
Consumers that only need a conservative answer may use the hull ``record[:3]``.
"""

from __future__ import annotations

import numpy as np


class ByteRows:
    """``count`` rows of ``width`` bytes, each ``pitch`` bytes after the previous, the first at
    byte ``first`` (``pitch >= 0``): the GM side of a constant-pitch copy as the L2 model takes
    it, in O(1) whatever the number of rows (the alternative form is one (start, end) pair per
    row, see :mod:`ascsim.sim.cost`)."""

    __slots__ = ("first", "width", "pitch", "count")

    def __init__(self, first: int, width: int, pitch: int, count: int):
        self.first = first
        self.width = width
        self.pitch = pitch
        self.count = count

    @property
    def nbytes(self) -> int:
        return self.width * self.count

    @property
    def end(self) -> int:
        """One past the last byte of the last row."""
        return self.first + (self.count - 1) * self.pitch + self.width

    def __repr__(self) -> str:
        return f"ByteRows({self.count} x {self.width} B every {self.pitch} B from {self.first})"


def strided(space, lo: int, row_bytes: int, pitch: int, rows: int) -> tuple:
    """The record of ``rows`` rows of ``row_bytes`` bytes every ``pitch`` bytes from ``lo``;
    a plain range when the rows touch or overlap each other (or there is one)."""
    if rows <= 0 or row_bytes <= 0:
        return (space, lo, lo)
    hi = lo + (rows - 1) * max(pitch, 0) + row_bytes
    if rows == 1 or pitch <= row_bytes:
        return (space, lo, hi)
    return (space, lo, hi, row_bytes, pitch)


def rows_of(record) -> int:
    """How many rows the record covers (1 for a plain range)."""
    if len(record) == 3:
        return 1
    _, lo, hi, row, pitch = record
    return (hi - lo - row) // pitch + 1


def nbytes(record) -> int:
    """Bytes the record touches (not counting the gaps between rows)."""
    if len(record) == 3:
        return max(record[2] - record[1], 0)
    return rows_of(record) * record[3]


def ranges(record) -> list[tuple[int, int]]:
    """The record as ``(lo, hi)`` row ranges (for consumers that need them one by one)."""
    if len(record) == 3:
        return [(record[1], record[2])]
    _, lo, _, row, pitch = record
    return [(lo + r * pitch, lo + r * pitch + row) for r in range(rows_of(record))]


def overlaps(record, a: int, b: int) -> bool:
    """Whether the record touches any byte of ``[a, b)`` (O(1))."""
    lo, hi = record[1], record[2]
    if hi <= a or lo >= b or hi <= lo:
        return False
    if len(record) == 3:
        return True
    row, pitch = record[3], record[4]
    # The first row ending after a; it overlaps [a, b) iff it starts before b.
    r = max(0, (a - lo - row) // pitch + 1)
    start = lo + r * pitch
    return start < hi and start < b


MAX_RUN_RECORDS = 256


def from_indices(space, base: int, elem_bytes: int, idx) -> tuple:
    """The records of a gather that touches elements ``idx`` (from byte ``base``): one strided
    record when the touched runs are equal and evenly spaced, else one record per run (up to
    MAX_RUN_RECORDS, then the hull), so that gaps the gather skips are not counted as read."""
    u = np.unique(np.asarray(idx, dtype=np.int64))
    if not u.size:
        return ()
    cut = np.flatnonzero(np.diff(u) != 1)
    starts = np.concatenate(([u[0]], u[cut + 1])) * elem_bytes + base
    ends = (np.concatenate((u[cut], [u[-1]])) + 1) * elem_bytes + base
    if starts.size == 1:
        return ((space, int(starts[0]), int(ends[0])),)
    lengths = ends - starts
    pitches = np.diff(starts)
    if (lengths == lengths[0]).all() and (pitches == pitches[0]).all():
        return (strided(space, int(starts[0]), int(lengths[0]), int(pitches[0]),
                        int(starts.size)),)
    if starts.size > MAX_RUN_RECORDS:
        return ((space, int(starts[0]), int(ends[-1])),)
    return tuple((space, int(a), int(b)) for a, b in zip(starts.tolist(), ends.tolist()))


__all__ = ["ByteRows", "from_indices", "nbytes", "overlaps", "ranges", "rows_of", "strided"]
