"""Access summaries that repeat every ``pitch`` bytes: how a strided access is checked whole.

Cores writing side-by-side column blocks of one matrix interleave their rows. Kept as plain
byte segments, every row of every block would be its own segment (one per row per core), and
each instruction would cost one map update per row. A :class:`Periodic` summary instead says
"byte ``a`` has the summary of column ``(a - base) % pitch``": the map keeps one segment for the
rows of the matrix, its pattern one column segment per block, and a strided access is one
column update per map segment it overlaps (:mod:`.races`).

Patterns are immutable (the map shares one between the pieces of a split segment); updates
return new ones. Columns are ``[0, pitch)``; ``cols[i]`` starts column segment ``i``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right


class Periodic:
    __slots__ = ("pitch", "base", "cols", "states")

    def __init__(self, pitch: int, base: int, cols: list, states: list):
        self.pitch = pitch
        self.base = base % pitch  # byte a is in column (a - base) % pitch
        self.cols = cols  # column segment starts, cols[0] == 0
        self.states = states  # the plain summary of each column segment

    def column_segments(self, spans):
        """``(summary, c0, c1)`` for each column segment part inside the column ``spans``."""
        cols, states, pitch = self.cols, self.states, self.pitch
        for a, b in spans:
            k = bisect_right(cols, a) - 1
            while k < len(cols) and cols[k] < b:
                end = cols[k + 1] if k + 1 < len(cols) else pitch
                yield states[k], max(cols[k], a), min(end, b)
                k += 1

    def update(self, spans, change):
        """A pattern with ``change(summary)`` applied inside the column ``spans`` (a plain
        summary when every column ends up the same). Costs a list copy plus Python work for
        the column segments inside the spans only."""
        cols, states = self.cols, self.states
        for a, b in spans:
            k0 = bisect_right(cols, a) - 1
            k1 = bisect_left(cols, b, k0 + 1)
            keep = k0 + 1 if cols[k0] < a else k0
            out_c, out_s = cols[:keep], states[:keep]
            for k in range(k0, k1):
                new = change(states[k])
                if out_s and out_s[-1] is new:
                    continue
                out_c.append(max(cols[k], a))
                out_s.append(new)
            if b < self.pitch and (k1 == len(cols) or cols[k1] != b) and \
                    states[k1 - 1] is not out_s[-1]:
                out_c.append(b)
                out_s.append(states[k1 - 1])
            if k1 < len(cols) and states[k1] is out_s[-1]:
                k1 += 1  # the next segment now continues the last one
            cols, states = out_c + cols[k1:], out_s + states[k1:]
        if len(states) == 1:
            return states[0]
        return Periodic(self.pitch, self.base, cols, states)

    def change_all(self, change):
        """``change`` applied to every column (a read over whole rows)."""
        return self.update(((0, self.pitch),), change)


def uniform(summary, pitch: int, base: int) -> Periodic:
    """A plain summary seen as a pattern (before a strided access splits its columns)."""
    return Periodic(pitch, base, [0], [summary])


def columns(x: int, y: int, base: int, pitch: int) -> list[tuple[int, int]]:
    """The column spans the bytes ``[x, y)`` fall in (two when they wrap past the pitch)."""
    if y - x >= pitch:
        return [(0, pitch)]
    c = (x - base) % pitch
    e = c + (y - x)
    return [(c, e)] if e <= pitch else [(c, pitch), (0, e - pitch)]


def intersect(spans_a, spans_b) -> list[tuple[int, int]]:
    out = []
    for a0, a1 in spans_a:
        for b0, b1 in spans_b:
            lo, hi = max(a0, b0), min(a1, b1)
            if lo < hi:
                out.append((lo, hi))
    return out


def byte_hull(x: int, y: int, base: int, pitch: int, a: int, b: int):
    """``(first, last + 1)`` of the bytes in ``[x, y)`` whose column is in ``[a, b)``, or None."""
    cx = (x - base) % pitch
    if cx < a:
        first = x + a - cx
    elif cx < b:
        first = x
    else:
        first = x + pitch - cx + a
    cy = (y - 1 - base) % pitch
    if cy >= b:
        last = y - 1 - (cy - b + 1)
    elif cy >= a:
        last = y - 1
    else:
        last = y - 1 - cy - pitch + b - 1
    return (first, last + 1) if first <= last else None


__all__ = ["Periodic", "byte_hull", "columns", "intersect", "uniform"]
