"""Unsynchronised accesses: two instructions touching overlapping bytes, at least one writing,
with no happens-before between them (FastTrack-style epochs over :mod:`.clocks`).

Each memory space (a core's UB/L1/L0x, or one GM buffer) keeps an interval map of *access
summaries*: per byte range, the last write and the reads since it that are not yet ordered
with each other. A new access compares itself with the summaries it overlaps, reports what is
unordered, then replaces them: a write leaves just itself (everything it did not race with is
ordered before it, so later accesses ordered after it are ordered after those too), a read
drops the reads it is ordered after. Summaries therefore stay a handful per live tile and the
cost per instruction does not grow with the length of the kernel.

Scalar-pipe accesses are never reported within a core: the compiler's auto-sync orders the
scalar unit with the pipes whose data it touches (ascend-hw §4.3); here such an access joins the
clocks of the pipes it conflicts with, which is the ordering that auto-sync creates.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from ascsim.sim.checks.clocks import KEY_STRIDE, S, core_of

EMPTY = (None, ())  # (last write epoch, tuple of read epochs); an epoch is (key, count, instr)


class AccessMap:
    """Disjoint byte segments of one memory space, each with its access summary."""

    __slots__ = ("starts", "states")

    def __init__(self):
        self.starts = [0]  # segment i covers [starts[i], starts[i + 1]); the last is open-ended
        self.states = [EMPTY]

    def span(self, lo: int, hi: int) -> tuple[int, int]:
        """Split segments at ``lo`` and ``hi``; returns the index range covering [lo, hi)."""
        starts, states = self.starts, self.states
        i = bisect_right(starts, lo) - 1
        if starts[i] != lo:
            i += 1
            starts.insert(i, lo)
            states.insert(i, states[i - 1])
        j = bisect_left(starts, hi, i)
        if j == len(starts) or starts[j] != hi:
            starts.insert(j, hi)
            states.insert(j, states[j - 1])
        return i, j

    def coalesce(self, i: int, j: int) -> None:
        """Merge neighbours in [i - 1, j] that ended up with the very same summary."""
        starts, states = self.starts, self.states
        for k in range(min(j, len(starts) - 1), max(i, 1) - 1, -1):
            if states[k] is states[k - 1]:
                del starts[k]
                del states[k]

    def segment_end(self, k: int) -> int | None:
        return self.starts[k + 1] if k + 1 < len(self.starts) else None


class RaceCheck:
    """Feeds every access of every instruction through the access maps of its space."""

    def __init__(self, launch, clocks_of, describe_space):
        self.launch = launch
        self.clocks_of = clocks_of  # core id -> CoreClocks
        self.describe_space = describe_space  # space key -> human name
        self.maps: dict = {}

    def on_instr(self, core, instr, pipe: int, count: int) -> None:
        clocks = self.clocks_of(core.core_id)
        key = clocks.base + pipe
        epoch = (key, count, instr)
        atomic = bool(instr.info and isinstance(instr.info, dict) and instr.info.get("atomic"))
        for space, lo, hi in instr.reads:
            if hi > lo:
                self._access(space, lo, hi, False, False, epoch, clocks, pipe)
        for space, lo, hi in instr.writes:
            if hi > lo:
                self._access(space, lo, hi, True, atomic, epoch, clocks, pipe)

    def _access(self, space, lo, hi, write, atomic, epoch, clocks, pipe) -> None:
        amap = self.maps.get(space)
        if amap is None:
            amap = self.maps[space] = AccessMap()
        i, j = amap.span(lo, hi)
        states = amap.states
        vc = clocks.current(pipe)
        key = epoch[0]
        conflicts = None
        for k in range(i, j):
            last_write, reads = states[k]
            if last_write is not None and last_write[0] != key and \
                    vc.get(last_write[0], 0) < last_write[1] and \
                    not (atomic and last_write[3]):
                conflicts = self._note(conflicts, amap, k, lo, hi, last_write, "write")
            if write:
                for r in reads:
                    if r[0] != key and vc.get(r[0], 0) < r[1]:
                        conflicts = self._note(conflicts, amap, k, lo, hi, r, "read")
        if conflicts:
            self._resolve(conflicts, epoch, write, space, clocks, pipe)
        if write:
            new = ((key, epoch[1], epoch[2], atomic), ())
            del amap.starts[i + 1:j]
            states[i:j] = [new]
            amap.coalesce(i, i + 1)
            return
        fresh = (key, epoch[1], epoch[2])
        vc = clocks.current(pipe)
        done: dict = {}
        for k in range(i, j):
            old = states[k]
            new = done.get(id(old))
            if new is None:
                kept = tuple(r for r in old[1] if r[0] != key and vc.get(r[0], 0) < r[1])
                new = done[id(old)] = (old[0], kept + (fresh,))
            states[k] = new
        amap.coalesce(i, j)

    @staticmethod
    def _note(conflicts, amap, k, lo, hi, other, kind):
        """Collect the overlap with one earlier access (merged per earlier instruction)."""
        seg_lo = max(amap.starts[k], lo)
        end = amap.segment_end(k)
        seg_hi = hi if end is None else min(end, hi)
        if conflicts is None:
            conflicts = {}
        ident = id(other[2])
        seen = conflicts.get(ident)
        if seen is None:
            conflicts[ident] = [other, kind, seg_lo, seg_hi]
        else:
            seen[2] = min(seen[2], seg_lo)
            seen[3] = max(seen[3], seg_hi)
        return conflicts

    def _resolve(self, conflicts, epoch, write, space, clocks, pipe) -> None:
        key, _, instr = epoch
        me = core_of(key)
        for other, kind, lo, hi in conflicts.values():
            other_core = core_of(other[0])
            if pipe == S and other_core == me:
                # Auto-sync: the scalar unit waits for the pipe whose data it touches.
                clocks.join_into(S, clocks.snapshot(other[0] % KEY_STRIDE))
                continue
            self._report(instr, other[2], kind, write, space, lo, hi, me, other_core)

    def _report(self, instr, earlier, kind, write, space, lo, hi, me, other_core) -> None:
        what = f"{self.describe_space(space)} bytes [{lo}, {hi})"
        this = "writes" if write else "reads"
        if other_core == me:
            self.launch.findings.report(
                "race",
                f"{instr.op} on {instr.pipe} {this} {what} that {earlier.op} on {earlier.pipe} "
                f"{'wrote' if kind == 'write' else 'reads'}, with no synchronisation between "
                "the two pipes", (earlier.loc, instr.loc),
                hint=f"set_flag(HardEvent.{earlier.pipe}_{instr.pipe}) after the first and "
                f"wait_flag before the second (or pass the tensor through a TQue)",
                core=me, buffer=self.describe_space(space), start=lo, stop=hi,
                first=earlier.op, second=instr.op)
            return
        both_write = write and kind == "write"
        self.launch.findings.report(
            "cross-core-race",
            f"core {me} ({instr.op} on {instr.pipe}) {this} {what} that core {other_core} "
            f"({earlier.op} on {earlier.pipe}) {'wrote' if kind == 'write' else 'reads'}"
            + (" -- both write without atomics" if both_write else
               ", with no cross-core flag or sync_all between them"),
            (earlier.loc, instr.loc),
            hint="give each core its own GM range, or use set_atomic_add"
            if both_write else "cross_core_set_flag after the producer's copy-out and "
            "cross_core_wait_flag before the consumer reads (or sync_all)",
            core=me, buffer=self.describe_space(space), start=lo, stop=hi,
            other_core=other_core)


__all__ = ["AccessMap", "RaceCheck", "KEY_STRIDE"]
