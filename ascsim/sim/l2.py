"""The L2 cache in front of HBM, as seen by one launch.

What it models (ascend-hw §1.4): every MTE transfer to or from GM goes through L2 [S1]. A GM line
that is in L2 is a *hit*: it is served at the L2 latency and the core's L2 port rate. A line that
is not is a *miss*: the whole 512-byte line comes from HBM, costs the HBM latency and its bytes
count towards the launch's HBM traffic, which the chip's HBM bandwidth bounds as a whole
(:meth:`L2Cache.hbm_bound_cycles`); the transfer's cost model streams those bytes at the core's
share of HBM (``ascsim/sim/cost.py``). Writes are write-back: they land in L2 (the line becomes
resident and dirty) and reach HBM only when the line is evicted; dirty lines still in L2 when
the launch ends are not the launch's traffic. A buffer marked *bypass*
(``set_l2_cache_hint(CACHE_MODE_DISABLE)``) is read from and written to HBM directly and takes
no room in L2.

Replacement is least-recently-used, approximated by counting insertions: every line records the
launch's insertion count when it was last touched, and a line is resident while fewer than the
L2's line capacity new lines have been inserted since. (Exact LRU would also count hits on
older lines; for streaming kernels and for blocked matmuls, whose re-used operands are touched
again before L2 turns over, the two agree.)

Bookkeeping: per GM buffer four numpy arrays, one entry per 512-byte line [S14 pypto L2 line
512 B]: the time (cycles) from which the line is in L2 (``inf``: never filled), the insertion
count at its last touch, whether it is dirty, and which core read it last (for
:meth:`L2Cache.sharing`). A read of a line another core requested
earlier but whose fill has not arrived yet waits for that fill, so two cores streaming the same
tile at once pay one HBM fetch and one latency, not two. Every access is a handful of numpy
operations on the line arrays, never a Python loop over lines. A contiguous access to lines no
access of the launch has touched yet (a streaming kernel's every tile) needs none of the
comparisons: per buffer, the touched lines are kept as a few merged intervals, and such an
access only writes its lines' new state.

Simplifications (stated in docs/cost-model.md): the launch starts with a cold L2 (inputs are
first-touch reads), except inside an operator call that carries L2 from launch to launch
(``ascsim/sim/l2_carry.py``); the chip-level L2 bandwidth is not a limit (only the per-core L2
port rates, in the transfer cost).
"""

from __future__ import annotations

import bisect
import functools
import math

import numpy as np

from ascsim.sim.access import ByteRows

#: L2 line size in bytes: pypto's L2 model uses 512 B lines [S14]; GM requests are split into
#: 128/256/512 B pieces and 512 B is the best-aligned size [S10, S17].
LINE_BYTES = 512


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


def _untouched(starts: list, ends: list, lo: int, hi: int) -> bool:
    """Whether lines ``[lo, hi)`` miss every interval of the sorted, disjoint intervals
    ``[starts[i], ends[i])``."""
    i = bisect.bisect_right(starts, lo)
    if i and ends[i - 1] > lo:
        return False
    return i == len(starts) or starts[i] >= hi


def _touch(starts: list, ends: list, lo: int, hi: int) -> None:
    """Add lines ``[lo, hi)`` to the sorted, disjoint intervals, merging the ones they
    overlap or adjoin (a stream of tiles keeps one interval per run of them)."""
    i = bisect.bisect_left(starts, lo)
    if i and ends[i - 1] >= lo:
        i -= 1
        if ends[i] >= hi:
            return  # already inside one interval (a tile touched again)
        lo = starts[i]
    elif i < len(starts) and starts[i] == lo and ends[i] >= hi:
        return
    j = i
    n = len(starts)
    while j < n and starts[j] <= hi:
        if ends[j] > hi:
            hi = ends[j]
        j += 1
    starts[i:j] = (lo,)
    ends[i:j] = (hi,)


def _fresh(touched: tuple, idx) -> bool:
    """Whether the line index ``idx`` is a non-empty run of lines (a slice, step 1) outside
    the ``touched`` intervals: the short paths of :meth:`L2Cache._read_lines` and
    :meth:`L2Cache._write_lines`."""
    return (type(idx) is slice and idx.step is None and idx.stop > idx.start
            and _untouched(*touched, idx.start, idx.stop))


def _hull(idx) -> tuple[int, int]:
    """The first line and one past the last of a line index: a slice, or an index array in
    ascending order (as :func:`_line_union` and :func:`_row_lines` make them: a row's lines
    end no later than the next row's begin, since rows never overlap)."""
    if type(idx) is slice:
        return idx.start, idx.stop
    return int(idx[0]), int(idx[-1]) + 1


class L2Cache:
    """Which GM lines are in L2 during one launch, and how much traffic went to HBM."""

    #: Insertion stamp of a line never touched: always "long ago".
    NEVER = -(1 << 62)
    #: Reader of a line no core of the launch has read (:attr:`wave_first` is never below 0),
    #: and of a line a core wrote: a later read of it is not a fill another core shared.
    NO_READER = -1

    def __init__(self, l2_bytes: int, buffer_bytes, prior=None):
        """``buffer_bytes(buffer_id) -> int`` gives the size of a GM buffer (lazily sized);
        ``prior(buffer_id, n_lines) -> (stamps, dirty) | None`` what an earlier launch left in
        L2 of that buffer's memory (``ascsim/sim/l2_carry.py``; None: the buffer starts cold)."""
        if l2_bytes <= 0:
            raise ValueError(f"L2 size must be positive, got {l2_bytes}")
        self.capacity_lines = l2_bytes // LINE_BYTES
        self._buffer_bytes = buffer_bytes
        self._prior = prior
        self._ready: dict[int, np.ndarray] = {}
        self._stamp: dict[int, np.ndarray] = {}
        self._dirty: dict[int, np.ndarray] = {}
        self._bypass: set[int] = set()
        self.inserted = 0            # lines brought into L2 so far (the LRU clock)
        self.hit_bytes = 0.0
        self.miss_bytes = 0.0        # read from HBM: whole lines of misses, bypassed reads
        self.write_bytes = 0.0       # written into L2
        self.spill_bytes = 0.0       # dirty lines evicted during the launch, bypassed writes
        # Lines inserted, lines made dirty and bytes written through since take_changes.
        self._changes: list = [0, 0, 0.0]
        # Who read each line last (a core id, NO_READER), the id of the first core of the wave
        # running now, and per reading core [lines it filled from HBM, lines it found in L2
        # that another core of its wave had read there first]: how much of its reads' HBM
        # traffic the wave shares (:meth:`sharing`).
        self._reader: dict[int, np.ndarray] = {}
        # Per buffer, the lines any access has touched, as sorted disjoint intervals
        # ([starts], [ends]): a superset, so lines outside them are in their first state
        # (never filled, not dirty, no reader) and a read or write of them alone takes the
        # short path of :meth:`_read_lines` / :meth:`_write_lines`.
        self._touched: dict[int, tuple[list, list]] = {}
        self.wave_first = 0
        self.reads_by_core: dict[int, list] = {}

    @property
    def resident_lines(self) -> int:
        """Lines in L2 now (it fills up, then stays full)."""
        return min(self.inserted, self.capacity_lines)

    def set_bypass(self, buffer_id: int, bypass: bool = True) -> None:
        """Keep buffer ``buffer_id`` out of L2 (reads and writes go to HBM), or stop doing so."""
        if bypass:
            self._bypass.add(buffer_id)
        else:
            self._bypass.discard(buffer_id)

    # ------------------------------------------------------------------ line selection
    def _lines(self, buffer_id: int) -> np.ndarray:
        lines = self._ready.get(buffer_id)
        if lines is None:
            n = max(1, math.ceil(self._buffer_bytes(buffer_id) / LINE_BYTES))
            lines = self._ready[buffer_id] = np.full(n, np.inf)
            self._stamp[buffer_id] = np.full(n, self.NEVER, dtype=np.int64)
            self._dirty[buffer_id] = np.zeros(n, dtype=bool)
            self._reader[buffer_id] = np.full(n, self.NO_READER, dtype=np.int32)
            self._touched[buffer_id] = ([], [])
            carried = self._prior(buffer_id, n) if self._prior is not None else None
            if carried is not None:  # left by an earlier launch: there from the start
                self._touched[buffer_id] = ([0], [n])
                stamps, dirty = carried
                self._stamp[buffer_id][:] = stamps
                self._dirty[buffer_id][:] = dirty
                lines[stamps != self.NEVER] = 0.0
        return lines

    def carry_out(self, buffer_id: int):
        """(stamps relative to now, dirty) of the buffer's lines still in L2 (others
        ``NEVER`` and clean), for the next launch; None if the launch never touched it."""
        stamp = self._stamp.get(buffer_id)
        if stamp is None:
            return None
        resident = (self.inserted - stamp) < self.capacity_lines
        stamps = np.where(resident, stamp - self.inserted, self.NEVER)
        return stamps, self._dirty[buffer_id] & resident

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

    def _resident(self, buffer_id: int, idx) -> tuple[np.ndarray, np.ndarray]:
        """(stamps of the touched lines, which of them are in L2 now)."""
        stamp = self._stamp[buffer_id][idx]
        return stamp, (self.inserted - stamp) < self.capacity_lines

    def _evict_dirty(self, buffer_id: int, idx, resident: np.ndarray) -> None:
        """Touched lines that are dirty but no longer resident were written back to HBM when
        they were evicted: count them (once) before the lines are reused."""
        dirty = self._dirty[buffer_id]
        gone = dirty[idx] & ~resident
        n = int(np.count_nonzero(gone))
        if n:
            self.spill_bytes += n * LINE_BYTES
            if type(idx) is slice:
                dirty[idx] &= resident
            else:
                dirty[np.asarray(idx)[gone]] = False

    # ------------------------------------------------------------------ accesses
    def read(self, buffer_id: int, starts, ends, t: float, hit_latency: float,
             miss_latency: float, reader: int = NO_READER) -> tuple[float, float]:
        """A read of byte ranges [starts, ends) of a GM buffer issued at cycle ``t`` by core
        ``reader`` (for :meth:`sharing`; NO_READER: not counted).

        Returns ``(latency, hit fraction)``: the latency is the L2 hit latency when every line
        is in L2 by ``t``, the HBM latency when some line misses, and in between when a line is
        still being filled for an earlier request.
        """
        return self.read_cost(buffer_id, starts, ends, t, hit_latency, miss_latency,
                              reader)[:2]

    def read_rows(self, buffer_id: int, rows: ByteRows, t: float, hit_latency: float,
                  miss_latency: float, reader: int = NO_READER) -> tuple[float, float]:
        """:meth:`read` of constant-pitch rows (one range per row)."""
        return self.read_rows_cost(buffer_id, rows, t, hit_latency, miss_latency, reader)[:2]

    def read_cost(self, buffer_id: int, starts, ends, t: float, hit_latency: float,
                  miss_latency: float, reader: int = NO_READER) -> tuple[float, float, float]:
        """:meth:`read`, plus the bytes the read brought from HBM (whole lines)."""
        starts, ends = np.asarray(starts), np.asarray(ends)
        nbytes = float((ends - starts).sum())
        lines, idx = self._select(buffer_id, starts, ends)
        return self._read_lines(buffer_id, lines, idx, nbytes, t, hit_latency, miss_latency,
                                reader)

    def read_rows_cost(self, buffer_id: int, rows: ByteRows, t: float, hit_latency: float,
                       miss_latency: float, reader: int = NO_READER
                       ) -> tuple[float, float, float]:
        """:meth:`read_rows`, plus the bytes the read brought from HBM (whole lines)."""
        lines, idx = self._select_rows(buffer_id, rows)
        return self._read_lines(buffer_id, lines, idx, float(rows.nbytes), t, hit_latency,
                                miss_latency, reader)

    def _read_lines(self, buffer_id: int, lines, idx, nbytes: float, t: float,
                    hit_latency: float, miss_latency: float,
                    reader: int) -> tuple[float, float, float]:
        touched = self._touched[buffer_id]
        if _fresh(touched, idx) and buffer_id not in self._bypass:
            # Every line misses and none is dirty: what the general path below does to such
            # lines, without its comparisons.
            lo, hi = idx.start, idx.stop
            misses = hi - lo
            if reader != self.NO_READER:
                counts = self.reads_by_core.get(reader)
                if counts is None:
                    counts = self.reads_by_core[reader] = [0, 0]
                counts[0] += misses
                self._reader[buffer_id][lo:hi] = reader
            hbm = float(misses * LINE_BYTES)
            self.miss_bytes += hbm
            lines[lo:hi] = t + miss_latency
            self._stamp[buffer_id][lo:hi] = self.inserted
            self._insert(misses)
            _touch(*touched, lo, hi)
            return float(miss_latency), 0.0, hbm
        ready = lines[idx]
        if ready.size == 0:
            return float(hit_latency), 1.0, 0.0
        _touch(*touched, *_hull(idx))
        _, resident = self._resident(buffer_id, idx)
        misses = ready.size - int(np.count_nonzero(resident))
        if reader != self.NO_READER:
            self._count_reader(buffer_id, idx, resident, misses, reader)
        hit_fraction = 1.0 - misses / ready.size
        self.hit_bytes += nbytes * hit_fraction
        if not misses:
            self._stamp[buffer_id][idx] = self.inserted  # LRU: touched now
            # Every line is in L2 or on its way for an earlier request: wait for the last one.
            # Cores run one after the other, so a core run earlier may have requested a line at
            # a later simulated time than this read: the read then fetches the line itself and
            # waits at most the HBM latency (waiting for the later fill would chain such waits
            # from core to core).
            wait = float(ready.max()) - t
            if wait > miss_latency:
                np.minimum(ready, t + miss_latency, out=ready)
                if type(idx) is not slice:
                    lines[idx] = ready
                wait = float(miss_latency)
            return float(max(hit_latency, wait)), 1.0, 0.0
        if buffer_id in self._bypass:
            # Straight from HBM, at the requested size; nothing is kept.
            hbm = nbytes * (1.0 - hit_fraction)
            self.miss_bytes += hbm
            return float(miss_latency), hit_fraction, hbm
        self._evict_dirty(buffer_id, idx, resident)
        hbm = float(misses * LINE_BYTES)  # HBM fills L2 in whole lines
        self.miss_bytes += hbm
        if misses == ready.size:  # all new (streaming input): no mask needed
            ready.fill(t + miss_latency)
        else:
            ready[~resident] = t + miss_latency
        if type(idx) is not slice:  # an index array gave a copy (a slice, a view)
            lines[idx] = ready
        self._stamp[buffer_id][idx] = self.inserted
        self._insert(misses)
        return float(miss_latency), hit_fraction, hbm

    def _count_reader(self, buffer_id: int, idx, resident: np.ndarray, misses: int,
                      reader: int) -> None:
        """Count a read by core ``reader`` for :meth:`sharing`: the lines it fills, and the
        resident lines another core of its wave read first; it is their last reader now."""
        counts = self.reads_by_core.get(reader)
        if counts is None:
            counts = self.reads_by_core[reader] = [0, 0]
        readers = self._reader[buffer_id]
        if misses < resident.size:  # some lines are in L2: whose read brought them?
            last = readers[idx]
            counts[1] += int(np.count_nonzero((last >= self.wave_first) & (last != reader)
                                              & resident))
        counts[0] += misses
        readers[idx] = reader

    def sharing(self, cores) -> float:
        """How many of ``cores`` (ids of one wave's cores of one kind) read each line they
        brought from HBM, on average: the lines they would have filled each on their own
        (their fills plus their reads of lines another of them read first) over the lines
        filled. 1 when no line is read by two of them (or none was filled)."""
        filled = alone = 0
        for core in cores:
            counts = self.reads_by_core.get(core)
            if counts is not None:
                filled += counts[0]
                alone += counts[0] + counts[1]
        return alone / filled if filled else 1.0

    def write(self, buffer_id: int, starts, ends, t: float) -> None:
        """A write of byte ranges [starts, ends) finishing at about cycle ``t`` (write-back)."""
        starts, ends = np.asarray(starts), np.asarray(ends)
        nbytes = float((ends - starts).sum())
        lines, idx = self._select(buffer_id, starts, ends)
        self._write_lines(buffer_id, lines, idx, nbytes, t)

    def write_rows(self, buffer_id: int, rows: ByteRows, t: float) -> None:
        """:meth:`write` of constant-pitch rows (one range per row)."""
        lines, idx = self._select_rows(buffer_id, rows)
        self._write_lines(buffer_id, lines, idx, float(rows.nbytes), t)

    def _write_lines(self, buffer_id: int, lines, idx, nbytes: float, t: float) -> None:
        if buffer_id in self._bypass:
            self.spill_bytes += nbytes  # written through to HBM, not kept
            self._changes[2] += nbytes
            return
        touched = self._touched[buffer_id]
        if _fresh(touched, idx):
            # Every line is new, clean and unread: the general path below, short.
            lo, hi = idx.start, idx.stop
            new = hi - lo
            self.write_bytes += nbytes
            lines[lo:hi] = t
            self._stamp[buffer_id][lo:hi] = self.inserted
            self._dirty[buffer_id][lo:hi] = True
            self._changes[1] += new
            self._insert(new)
            _touch(*touched, lo, hi)
            return
        ready = lines[idx]
        if ready.size:
            _touch(*touched, *_hull(idx))
        _, resident = self._resident(buffer_id, idx)
        new = ready.size - int(np.count_nonzero(resident))
        if new:
            self._evict_dirty(buffer_id, idx, resident)
        self.write_bytes += nbytes
        ready = np.where(resident, np.minimum(ready, t), t)
        lines[idx] = ready
        self._stamp[buffer_id][idx] = self.inserted
        self._reader[buffer_id][idx] = self.NO_READER  # a later read shares no fill
        dirty = self._dirty[buffer_id]
        self._changes[1] += ready.size - int(np.count_nonzero(dirty[idx]))
        dirty[idx] = True
        self._insert(new)

    def _insert(self, lines: int) -> None:
        """Advance the LRU clock by ``lines`` new lines (and note them for
        :meth:`take_changes`)."""
        self.inserted += lines
        self._changes[0] += lines

    def take_changes(self) -> tuple[int, int, float]:
        """(lines inserted, lines made dirty, bytes written through to HBM) by the accesses
        since the last call. The cost model turns them into the write-back traffic each core
        causes (``ascsim/sim/cost.py``)."""
        changes, self._changes = self._changes, [0, 0, 0.0]
        return changes[0], changes[1], changes[2]

    def unknown_read(self, nbytes: float) -> None:
        """A read whose GM addresses the caller did not give: counted as HBM traffic."""
        self.miss_bytes += nbytes

    # ------------------------------------------------------------------ chip-level bound
    def evicted_dirty_bytes(self) -> float:
        """Dirty lines evicted by now whose write-back has not been counted yet."""
        total = 0
        for buffer_id, dirty in self._dirty.items():
            stale = (self.inserted - self._stamp[buffer_id]) >= self.capacity_lines
            total += int(np.count_nonzero(dirty & stale))
        return float(total * LINE_BYTES)

    def hbm_bytes(self) -> float:
        """Bytes the launch moved between L2 and HBM: read misses, bypassed writes and the
        write-back of dirty lines evicted before the launch ended."""
        return self.miss_bytes + self.spill_bytes + self.evicted_dirty_bytes()

    def hbm_bound_cycles(self, chip_bytes_per_cycle: float) -> float:
        """The least time (cycles) the launch's HBM traffic takes at the chip's HBM bandwidth."""
        return self.hbm_bytes() / chip_bytes_per_cycle
