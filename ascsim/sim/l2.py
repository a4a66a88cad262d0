"""The L2 cache in front of HBM, as seen by one launch.

What it models (ascend-hw §1.4): every MTE transfer to or from GM goes through L2 [S1]. A GM line
that some core of the launch has already read or written is an L2 *hit*: it is served at the L2
latency. A line touched for the first time is a *miss*: it comes from HBM, costs the HBM latency
and counts towards the launch's HBM traffic, which the chip's HBM bandwidth bounds as a whole
(:meth:`L2Cache.hbm_bound_cycles`). Writes are write-back: they land in L2 (the line becomes
resident) and reach HBM only when evicted.

Bookkeeping: one float array per GM buffer, one entry per 512-byte line [S14 pypto L2 line 512 B]
holding the time (cycles) from which the line is in L2 (``inf``: not in L2). A read of a line
another core requested earlier but whose fill has not arrived yet waits for that fill, so two
cores streaming the same tile at once pay one HBM fetch and one latency, not two. Every access
is a handful of numpy operations on the line array, never a Python loop over lines.

Simplifications (stated in docs/cost-model.md): the launch starts with a cold L2 (inputs are
first-touch reads); there is no replacement policy: once the launch has touched ``l2_bytes`` of
distinct lines, further new lines are not kept (reads of them miss again, writes of them go to
HBM), which is what an LRU would do for a streaming kernel larger than L2; the chip-level L2
bandwidth is not a limit (only the per-core L2 port rates, in the transfer cost).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ascsim.sim.access import ByteRows

#: L2 line size in bytes: pypto's L2 model uses 512 B lines [S14]; GM requests are split into
#: 128/256/512 B pieces and 512 B is the best-aligned size [S10, S17].
LINE_BYTES = 512
INF = float("inf")  # the ready time of a line not in L2
# ufunc reductions called directly: ``ndarray.min()`` goes through a Python wrapper first.
_min, _max = np.minimum.reduce, np.maximum.reduce
#: Up to this many lines a read or write works on a list of their ready times (a 2 KiB tile
#: is four lines): numpy's fixed cost per call is then most of the work.
FEW_LINES = 64


def _line_union(first: np.ndarray, last: np.ndarray, n_lines: int):
    """Index of the lines covered by the line intervals ``[first, last)`` (clipped to
    ``n_lines``): a slice for one interval, else a sorted index array."""
    lo, hi = int(first.min()), min(int(last.max()), n_lines)
    if first.size == 1 or lo >= hi:
        return slice(lo, hi)
    # Union of the per-range line intervals: +1 at each start, -1 past each end (bincount
    # sums repeated positions, as np.add.at would, at a fraction of its cost).
    size = hi - lo + 1
    marks = (np.bincount(np.minimum(first - lo, hi - lo), minlength=size)
             - np.bincount(np.minimum(last - lo, hi - lo), minlength=size))
    return np.flatnonzero(np.cumsum(marks[:-1]) > 0) + lo


@functools.lru_cache(maxsize=4096)
def _row_lines(first: int, width: int, pitch: int, count: int, n_lines: int):
    """Index of the lines touched by ``count`` rows of ``width`` bytes every ``pitch`` bytes
    from byte ``first``, of a buffer of ``n_lines`` lines: a slice when they are every line
    of the hull or one line every ``pitch`` bytes, else a (read-only) index array.

    Cached: kernels read the same tiles' geometry over and over (every block of a Matmul
    loads slabs of the same shape), and the general case costs several numpy calls.
    """
    lo = first // LINE_BYTES
    per_row = (first + width - 1) // LINE_BYTES + 1 - lo
    hi = min((first + (count - 1) * pitch + width - 1) // LINE_BYTES + 1, n_lines)
    if count == 1 or pitch - width < LINE_BYTES:
        # No gap between rows can hold a whole line: every line of the hull is touched.
        return slice(lo, hi)
    if pitch % LINE_BYTES:
        # Rows start at different offsets within their lines: take the general union.
        starts = first + pitch * np.arange(count, dtype=np.int64)
        idx = _line_union(starts // LINE_BYTES, (starts + width - 1) // LINE_BYTES + 1,
                          n_lines)
    elif per_row == 1:  # every row touches the same lines of its own stretch
        return slice(lo, hi, pitch // LINE_BYTES)
    else:
        idx = ((lo + pitch // LINE_BYTES * np.arange(count))[:, None]
               + np.arange(per_row)).reshape(-1)
        idx = idx[idx < hi] if idx[-1] >= hi else idx
    if isinstance(idx, np.ndarray):
        idx.flags.writeable = False  # shared by every later read of the same geometry
    return idx


class L2Cache:
    """Which GM lines are in L2 during one launch, and how much traffic went to HBM."""

    def __init__(self, l2_bytes: int, buffer_bytes):
        """``buffer_bytes(buffer_id) -> int`` gives the size of a GM buffer (lazily sized)."""
        if l2_bytes <= 0:
            raise ValueError(f"L2 size must be positive, got {l2_bytes}")
        self.capacity_lines = l2_bytes // LINE_BYTES
        self._buffer_bytes = buffer_bytes
        self._ready: dict[int, np.ndarray] = {}
        self.resident_lines = 0
        self.hit_bytes = 0.0
        self.miss_bytes = 0.0        # read from HBM (first touches, or after L2 is full)
        self.write_bytes = 0.0       # written into L2
        self.spill_bytes = 0.0       # written but not kept (L2 full): goes on to HBM

    # ------------------------------------------------------------------ line selection
    def _lines(self, buffer_id: int) -> np.ndarray:
        lines = self._ready.get(buffer_id)
        if lines is None:
            n = max(1, math.ceil(self._buffer_bytes(buffer_id) / LINE_BYTES))
            lines = self._ready[buffer_id] = np.full(n, np.inf)
        return lines

    def _select(self, buffer_id: int, starts: np.ndarray, ends: np.ndarray):
        """(line array, index of the touched lines) for byte ranges [starts, ends)."""
        lines = self._lines(buffer_id)
        return lines, _line_union(starts // LINE_BYTES, (ends - 1) // LINE_BYTES + 1,
                                  lines.size)

    def _select_rows(self, buffer_id: int, rows: ByteRows):
        """(line array, index of the touched lines) for constant-pitch rows: the same lines
        :meth:`_select` finds, worked out from the row geometry (see :func:`_row_lines`)."""
        lines = self._lines(buffer_id)
        first, width, pitch, count = rows.first, rows.width, rows.pitch, rows.count
        if count == 1 or pitch - width < LINE_BYTES:
            # Every line of the hull (what _row_lines returns first): cheaper to compute than
            # to look up, and it would fill the cache with one-off tiles of a streaming copy.
            return lines, slice(first // LINE_BYTES,
                                min((first + (count - 1) * pitch + width - 1) // LINE_BYTES + 1,
                                    lines.size))
        return lines, _row_lines(first, width, pitch, count, lines.size)

    def _admit(self, new_lines: int) -> bool:
        """Whether ``new_lines`` more lines fit in L2 (no replacement: see the module doc)."""
        if self.resident_lines + new_lines > self.capacity_lines:
            return False
        self.resident_lines += new_lines
        return True

    # ------------------------------------------------------------------ accesses
    def read(self, buffer_id: int, starts, ends, t: float, hit_latency: float,
             miss_latency: float) -> tuple[float, float]:
        """A read of byte ranges [starts, ends) of a GM buffer issued at cycle ``t``.

        Returns ``(latency, hit fraction)``: the latency is the L2 hit latency when every line
        is in L2 by ``t``, the HBM latency when some line misses, and in between when a line is
        still being filled for an earlier request.
        """
        starts, ends = np.asarray(starts), np.asarray(ends)
        nbytes = float((ends - starts).sum())
        lines, idx = self._select(buffer_id, starts, ends)
        return self._read_lines(lines, idx, nbytes, t, hit_latency, miss_latency)

    def read_rows(self, buffer_id: int, rows: ByteRows, t: float, hit_latency: float,
                  miss_latency: float) -> tuple[float, float]:
        """:meth:`read` of constant-pitch rows (one range per row)."""
        lines, idx = self._select_rows(buffer_id, rows)
        return self._read_lines(lines, idx, float(rows.nbytes), t, hit_latency, miss_latency)

    def _read_lines(self, lines, idx, nbytes: float, t: float, hit_latency: float,
                    miss_latency: float) -> tuple[float, float]:
        ready = lines[idx]
        if ready.size == 0:
            return float(hit_latency), 1.0
        if ready.size <= FEW_LINES:
            return self._read_few(lines, idx, ready.tolist(), nbytes, t, hit_latency,
                                  miss_latency)
        # All lines new (a streaming read) or all present are told apart by one C-level
        # reduction each; only a mix needs the mask.
        if _min(ready) == INF:
            missing = None
            misses = ready.size
        elif _max(ready) < INF:
            misses = 0
        else:
            missing = np.isinf(ready)
            misses = int(np.count_nonzero(missing))
        hit_fraction = 1.0 - misses / ready.size
        self.hit_bytes += nbytes * hit_fraction
        self.miss_bytes += nbytes - nbytes * hit_fraction
        if misses:
            if self._admit(misses):
                if misses == ready.size:  # all new (streaming input): no mask needed
                    ready.fill(t + miss_latency)
                else:
                    ready[missing] = t + miss_latency
                if type(idx) is not slice:  # an index array gave a copy (a slice, a view)
                    lines[idx] = ready
            return float(miss_latency), hit_fraction
        # Every line is in L2 or on its way for an earlier request: wait for the last one.
        # Cores run one after the other, so a core run earlier may have requested a line at a
        # later simulated time than this read: the read then fetches the line itself and
        # waits at most the HBM latency (waiting for the later fill would chain such waits
        # from core to core).
        wait = float(_max(ready)) - t
        if wait > miss_latency:
            np.minimum(ready, t + miss_latency, out=ready)
            if type(idx) is not slice:
                lines[idx] = ready
            wait = float(miss_latency)
        return float(max(hit_latency, wait)), 1.0

    def _read_few(self, lines, idx, ready: list, nbytes: float, t: float, hit_latency: float,
                  miss_latency: float) -> tuple[float, float]:
        """:meth:`_read_lines` of a few lines (most tiles), with their ready times as a list:
        the same arithmetic, without numpy's per-call overhead."""
        misses = ready.count(INF)
        hit_fraction = 1.0 - misses / len(ready)
        self.hit_bytes += nbytes * hit_fraction
        self.miss_bytes += nbytes - nbytes * hit_fraction
        if misses:
            if self._admit(misses):
                arrival = t + miss_latency
                lines[idx] = arrival if misses == len(ready) else \
                    [arrival if r == INF else r for r in ready]
            return float(miss_latency), hit_fraction
        wait = max(ready) - t
        if wait > miss_latency:  # a later request's fill: fetch it now (see _read_lines)
            latest = t + miss_latency
            lines[idx] = [min(r, latest) for r in ready]
            wait = miss_latency
        return float(max(hit_latency, wait)), 1.0

    def write(self, buffer_id: int, starts, ends, t: float) -> None:
        """A write of byte ranges [starts, ends) finishing at about cycle ``t`` (write-back)."""
        starts, ends = np.asarray(starts), np.asarray(ends)
        nbytes = float((ends - starts).sum())
        lines, idx = self._select(buffer_id, starts, ends)
        self._write_lines(lines, idx, nbytes, t)

    def write_rows(self, buffer_id: int, rows: ByteRows, t: float) -> None:
        """:meth:`write` of constant-pitch rows (one range per row)."""
        lines, idx = self._select_rows(buffer_id, rows)
        self._write_lines(lines, idx, float(rows.nbytes), t)

    def _write_lines(self, lines, idx, nbytes: float, t: float) -> None:
        ready = lines[idx]
        if 0 < ready.size <= FEW_LINES:
            self._write_few(lines, idx, ready.tolist(), nbytes, t)
            return
        if not ready.size or _max(ready) < INF:
            new = 0
        elif _min(ready) == INF:
            new = ready.size
        else:
            new = int(np.count_nonzero(np.isinf(ready)))
        if new and not self._admit(new):
            self.spill_bytes += nbytes * new / ready.size
            return
        self.write_bytes += nbytes
        if type(idx) is slice:  # ``ready`` is a view of the lines: update it in place
            np.minimum(ready, t, out=ready)
        else:
            lines[idx] = np.minimum(ready, t)

    def _write_few(self, lines, idx, ready: list, nbytes: float, t: float) -> None:
        """:meth:`_write_lines` of a few lines, with their ready times as a list."""
        new = ready.count(INF)
        if new and not self._admit(new):
            self.spill_bytes += nbytes * new / len(ready)
            return
        self.write_bytes += nbytes
        if new == len(ready):  # all new: each becomes ``t``
            lines[idx] = t
        elif max(ready) > t:
            lines[idx] = [r if r < t else t for r in ready]

    def unknown_read(self, nbytes: float) -> None:
        """A read whose GM addresses the caller did not give: counted as HBM traffic."""
        self.miss_bytes += nbytes

    # ------------------------------------------------------------------ chip-level bound
    def hbm_bytes(self) -> float:
        """Bytes the launch moved between L2 and HBM: read misses plus writes L2 could not keep."""
        return self.miss_bytes + self.spill_bytes

    def hbm_bound_cycles(self, chip_bytes_per_cycle: float) -> float:
        """The least time (cycles) the launch's HBM traffic takes at the chip's HBM bandwidth."""
        return self.hbm_bytes() / chip_bytes_per_cycle
