"""Unsynchronised accesses: two instructions touching overlapping bytes, at least one writing,
with no happens-before between them (FastTrack-style epochs over :mod:`.clocks`).

Each memory space (a core's UB/L1/L0x, or one GM buffer) keeps an interval map of *access
summaries*: per byte range, the last write and the reads since it that are not yet ordered
with each other. A new access compares itself with the summaries it overlaps, reports what is
unordered, then replaces them: a write leaves just itself (everything it did not race with is
ordered before it, so later accesses ordered after it are ordered after those too), a read
drops the reads it is ordered after. Summaries therefore stay a handful per live tile and the
cost per instruction does not grow with the length of the kernel.

A segment's summary may be a :class:`~.periodic.Periodic` pattern (summaries repeating every
``pitch`` bytes, per column). A strided record (rows every ``pitch`` bytes) is checked and
recorded over whole rows of such a pattern at once, so interleaved row blocks of several cores
stay one segment and an instruction costs one pattern update, not one map update per row.
Where a pattern of another pitch lies under the rows, they are done one by one (still one
finding per earlier instruction, with the byte hull of all rows).

Scalar-pipe accesses are never reported within a core: the compiler's auto-sync orders the
scalar unit with the pipes whose data it touches (ascend-hw §4.3); here such an access joins the
clocks of the pipes it conflicts with, which is the ordering that auto-sync creates.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from ascsim.sim.checks.clocks import KEY_STRIDE, S, core_of
from ascsim.sim.checks.periodic import Periodic, byte_hull, columns, intersect, uniform

EMPTY = (None, ())  # (last write epoch, tuple of read epochs); an epoch is (key, count, instr)

#: (the earlier access wrote, the later one writes) -> the hazard, as msSanitizer names it.
HAZARDS = {(True, False): "RAW", (False, True): "WAR", (True, True): "WAW"}


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

    def put(self, i: int, lo: int, hi: int, state) -> None:
        """Give ``[lo, hi)``, which lies inside segment ``i``, the summary ``state`` (what
        :meth:`span` and an assignment do, without the searches)."""
        starts, states = self.starts, self.states
        if i + 1 == len(starts) or starts[i + 1] != hi:
            starts.insert(i + 1, hi)
            states.insert(i + 1, states[i])
        if starts[i] == lo:
            states[i] = state
        else:
            starts.insert(i + 1, lo)
            states.insert(i + 1, state)

    def coalesce(self, i: int, j: int) -> None:
        """Merge neighbours in [i - 1, j] that ended up with the very same summary."""
        starts, states = self.starts, self.states
        for k in range(min(j, len(starts) - 1), max(i, 1) - 1, -1):
            if states[k] is states[k - 1]:
                del starts[k]
                del states[k]

    def frame(self, lo: int, hi: int, row: int, pitch: int) -> int | None:
        """The column frame (a ``base``) for rows of ``row`` bytes every ``pitch`` bytes
        spanning ``[lo, hi)``: that of a pattern of the same pitch already there (so its
        segment is not split), else one where the rows start at column 0. None when a pattern
        of another pitch lies under the rows' whole-row range (they are then done one by one).
        """
        starts, states = self.starts, self.states
        base = lo % pitch
        k = bisect_right(starts, lo) - 1
        while k < len(starts) and starts[k] < hi:
            state = states[k]
            if type(state) is Periodic:
                if state.pitch == pitch and (lo - state.base) % pitch + row <= pitch:
                    base = state.base
                break
            k += 1
        x0 = lo - (lo - base) % pitch
        x1 = x0 + ((hi - lo - row) // pitch + 1) * pitch
        # (A frame may start before the map's first byte: x0 < 0 when base > lo.)
        k = max(bisect_right(starts, x0) - 1, 0)
        while k < len(starts) and starts[k] < x1:
            state = states[k]
            if type(state) is Periodic and state.pitch != pitch:
                return None
            k += 1
        return base


class RaceCheck:
    """Feeds every access of every instruction through the access maps of its space.

    Each access is handled in three steps: find the earlier accesses it is not ordered after
    (:meth:`_check_range` / :meth:`_check_strided`), report them (or, for the scalar unit, join
    the clocks auto-sync would), then record it (:meth:`_record_range` / :meth:`_record_strided`).
    A plain range (:meth:`_access_range`) splits the map once for both the check and the record.
    A strided record (rows of ``row_bytes`` every ``pitch`` bytes, :mod:`ascsim.sim.access`) is
    handled whole over :class:`~.periodic.Periodic` patterns, not row by row.
    """

    def __init__(self, launch, clocks_of, describe_space):
        self.launch = launch
        self.clocks_of = clocks_of  # core id -> CoreClocks
        self.describe_space = describe_space  # space key -> human name
        self.maps: dict = {}
        # GM space -> its claims (sorted by start, disjoint): byte ranges whose accesses a
        # mirrored core has not entered into the map yet (see ascsim.sim.checks.mirror). Any
        # other access to a claimed byte has the claim's accesses entered first.
        self.claims: dict = {}

    def on_instr(self, core, instr, pipe: int, count: int) -> None:
        """Instruction ``count`` of ``pipe`` on ``core`` (it ticked its clock already)."""
        clocks = self.clocks_of(core.core_id)
        self.check_instr(instr, clocks, pipe, count, clocks.current(pipe))

    def check_instr(self, instr, clocks, pipe: int, count: int, vc: dict) -> None:
        """:meth:`on_instr` with the core's clocks and the pipe's current clock ``vc`` at
        hand.

        The common case is handled inline: a plain range inside one segment of the map (a tile
        accessed again, or fresh bytes), with a plain summary it is ordered after. Everything else
        goes through :meth:`_access_range` / :meth:`_access_strided`, which do the same."""
        self.check_records(instr, instr.reads, instr.writes, clocks.base + pipe, count, vc,
                           clocks, pipe)

    def check_records(self, instr, reads, writes, key: int, count: int, vc,
                      clocks=None, pipe: int = -1) -> None:
        """:meth:`check_instr` of the accesses ``reads`` and ``writes`` of ``instr``,
        instruction ``count`` of pipe ``key`` whose clock is ``vc`` (anything with the dict's
        ``get``). A mirrored core's GM accesses come here alone (:mod:`.mirror`), without
        ``clocks``: they are never on the scalar pipe, so no auto-sync joins a clock."""
        if self.claims:
            self._enter_claims(reads)
            self._enter_claims(writes)
        epoch = (key, count, instr)
        atomic = bool(getattr(instr.record, "atomic", None))
        # The pipe's clock is one dict for the whole launch (joins update it in place, and
        # only a scalar access's auto-sync joins anything meanwhile), so one lookup serves
        # every access of the instruction.
        get = vc.get
        maps = self.maps
        for record in reads:
            lo, hi = record[1], record[2]
            if hi <= lo:
                continue
            amap = maps.get(record[0])
            if amap is None:
                amap = maps[record[0]] = AccessMap()
            if len(record) != 3:
                self._access_strided(amap, record, False, False, epoch, clocks, pipe, vc)
                continue
            starts = amap.starts
            i = bisect_right(starts, lo) - 1
            if i >= 0 and (i + 1 == len(starts) or hi <= starts[i + 1]):
                state = amap.states[i]
                if type(state) is tuple:
                    last_write = state[0]
                    if last_write is None or last_write[0] == key or \
                            get(last_write[0], 0) >= last_write[1]:
                        amap.put(i, lo, hi, _with_read(state, key, epoch, vc) if state[1]
                                 else (last_write, (epoch,)))
                        continue
            self._access_range(amap, record, False, False, epoch, clocks, pipe, vc)
        for record in writes:
            lo, hi = record[1], record[2]
            if hi <= lo:
                continue
            amap = maps.get(record[0])
            if amap is None:
                amap = maps[record[0]] = AccessMap()
            if len(record) != 3:
                self._access_strided(amap, record, True, atomic, epoch, clocks, pipe, vc)
                continue
            starts = amap.starts
            i = bisect_right(starts, lo) - 1
            if i >= 0 and (i + 1 == len(starts) or hi <= starts[i + 1]):
                state = amap.states[i]
                if type(state) is tuple:
                    last_write, earlier_reads = state
                    ordered = last_write is None or last_write[0] == key or \
                        get(last_write[0], 0) >= last_write[1] or (atomic and last_write[3])
                    if ordered:
                        for r in earlier_reads:
                            if r[0] != key and get(r[0], 0) < r[1]:
                                ordered = False
                                break
                    if ordered:  # everything before is ordered before the write
                        amap.put(i, lo, hi, ((key, count, instr, atomic), ()))
                        continue
            self._access_range(amap, record, True, atomic, epoch, clocks, pipe, vc)

    # ------------------------------------------------------------------ claims
    def untouched(self, space, lo: int, hi: int) -> bool:
        """Whether no access is recorded or claimed in bytes ``[lo, hi)`` of ``space``."""
        held = self.claims.get(space)
        if held is not None:
            los, his, _ = held
            k = bisect_right(los, lo)
            if k and his[k - 1] > lo or k < len(los) and los[k] < hi:
                return False
        amap = self.maps.get(space)
        if amap is None:
            return True
        starts, states = amap.starts, amap.states
        k = max(bisect_right(starts, lo) - 1, 0)
        while k < len(starts) and starts[k] < hi:
            if states[k] is not EMPTY:
                return False
            k += 1
        return True

    def add_claim(self, space, lo: int, hi: int, claim) -> None:
        """Claim ``[lo, hi)`` of ``space`` for ``claim`` (:meth:`untouched` first): an access
        that overlaps it calls ``claim.enter()`` before it is checked."""
        los, his, owners = self.claims.setdefault(space, ([], [], []))
        k = bisect_right(los, lo)
        los.insert(k, lo)
        his.insert(k, hi)
        owners.insert(k, claim)

    def drop_claim(self, space, claim) -> None:
        """Forget every range of ``space`` that ``claim`` holds."""
        los, his, owners = self.claims[space]
        for k in range(len(owners) - 1, -1, -1):
            if owners[k] is claim:
                del los[k], his[k], owners[k]
        if not owners:
            del self.claims[space]

    def _enter_claims(self, records) -> None:
        """Before ``records`` are checked: the claims they overlap enter their accesses."""
        claims = self.claims
        for record in records:
            held = claims.get(record[0])
            if held is None:
                continue
            lo, hi = record[1], record[2]
            los, his, owners = held
            k = max(bisect_right(los, lo) - 1, 0)
            hit = [owners[j] for j in range(k, bisect_left(los, hi)) if his[j] > lo]
            for claim in hit:
                if claim.held:
                    claim.enter()
            if not claims:
                return

    def check_local(self, instr, clocks, pipe: int, count: int) -> None:
        """:meth:`check_instr` of ``instr``'s local accesses only, through the general path:
        a mirrored core's replay (its GM accesses were checked when it ran)."""
        vc = clocks.vc[pipe]
        epoch = (clocks.base + pipe, count, instr)
        for record in instr.reads:
            if record[0][0] != "GM":
                self._access(record, False, False, epoch, clocks, pipe, vc)
        atomic = bool(getattr(instr.record, "atomic", None))
        for record in instr.writes:
            if record[0][0] != "GM":
                self._access(record, True, atomic, epoch, clocks, pipe, vc)

    def _access(self, record, write, atomic, epoch, clocks, pipe, vc) -> None:
        """One access of either form through the general path."""
        if record[2] <= record[1]:
            return
        amap = self.maps.get(record[0])
        if amap is None:
            amap = self.maps[record[0]] = AccessMap()
        if len(record) != 3:
            self._access_strided(amap, record, write, atomic, epoch, clocks, pipe, vc)
        else:
            self._access_range(amap, record, write, atomic, epoch, clocks, pipe, vc)

    def _access_range(self, amap, record, write, atomic, epoch, clocks, pipe, vc) -> None:
        """A plain byte range: one split of the map serves both the check and the record
        (reporting and auto-sync joins do not touch the map)."""
        key = epoch[0]
        i, j = amap.span(record[1], record[2])
        conflicts = self._check_segments(amap, i, j, write, atomic, key, vc, None)
        if conflicts:
            self._resolve(conflicts, epoch, write, record[0], clocks, pipe)
        # The new summaries below are fresh objects, so no neighbour can be merged with them
        # (``coalesce`` would find nothing).
        states = amap.states
        if write:  # everything the write did not race with is ordered before it
            new = ((key, epoch[1], epoch[2], atomic), ())
            if j == i + 1:
                states[i] = new
            else:
                del amap.starts[i + 1:j]
                states[i:j] = [new]
        elif j == i + 1 and type(states[i]) is not Periodic:
            states[i] = _with_read(states[i], key, (key, epoch[1], epoch[2]), vc)
        else:
            self._record_segments(amap, i, j, _read_change(key, epoch, vc))

    def _access_strided(self, amap, record, write, atomic, epoch, clocks, pipe, vc) -> None:
        key = epoch[0]
        lo, hi, row, pitch = record[1], record[2], record[3], record[4]
        n = (hi - lo - row) // pitch + 1
        base = amap.frame(lo, hi, row, pitch)
        rows = None if base is not None else [(lo + r * pitch, lo + r * pitch + row)
                                              for r in range(n)]
        if rows is None:
            conflicts = self._check_strided(amap, lo, row, pitch, n, base, write, atomic,
                                            key, vc)
        else:  # under a pattern of another pitch: row by row
            conflicts = None
            for a, b in rows:
                conflicts = self._check_range(amap, a, b, write, atomic, key, vc, conflicts)
        if conflicts:
            self._resolve(conflicts, epoch, write, record[0], clocks, pipe)
        if write:
            new = ((key, epoch[1], epoch[2], atomic), ())

            def change(old):
                return new
        else:
            change = _read_change(key, epoch, vc)
        if rows is None:
            self._record_strided(amap, lo, row, pitch, n, base, change)
        else:
            for a, b in rows:
                self._record_range(amap, a, b, write, change)

    # ------------------------------------------------------------------ finding conflicts
    @staticmethod
    def _unordered(summary, write, atomic, key, vc):
        """The earlier accesses of ``summary`` this access is not ordered after."""
        last_write, reads = summary
        out = []
        if last_write is not None and last_write[0] != key and \
                vc.get(last_write[0], 0) < last_write[1] and not (atomic and last_write[3]):
            out.append((last_write, "write"))
        if write:
            out.extend((r, "read") for r in reads if r[0] != key and vc.get(r[0], 0) < r[1])
        return out

    def _check_range(self, amap, lo, hi, write, atomic, key, vc, conflicts):
        i, j = amap.span(lo, hi)
        return self._check_segments(amap, i, j, write, atomic, key, vc, conflicts)

    def _check_segments(self, amap, i, j, write, atomic, key, vc, conflicts):
        """The conflicts with the summaries of map segments ``[i, j)``."""
        starts, states = amap.starts, amap.states
        for k in range(i, j):
            state = states[k]
            x, y = starts[k], starts[k + 1]
            if type(state) is Periodic:
                spans = columns(x, y, state.base, state.pitch)
                for summary, c0, c1 in state.column_segments(spans):
                    found = self._unordered(summary, write, atomic, key, vc)
                    if found:
                        a, b = byte_hull(x, y, state.base, state.pitch, c0, c1)
                        for other, kind in found:
                            conflicts = _note(conflicts, other, kind, a, b)
                continue
            last_write, reads = state
            if last_write is not None and last_write[0] != key and \
                    vc.get(last_write[0], 0) < last_write[1] and \
                    not (atomic and last_write[3]):
                conflicts = _note(conflicts, last_write, "write", x, y)
            if write:
                for r in reads:
                    if r[0] != key and vc.get(r[0], 0) < r[1]:
                        conflicts = _note(conflicts, r, "read", x, y)
        return conflicts

    def _check_strided(self, amap, lo, row, pitch, n, base, write, atomic, key, vc):
        """Rows of ``row`` bytes every ``pitch`` from ``lo``, in the frame ``base``: the map
        range is whole frame rows, so the access is the columns ``[c, c + row)`` of it."""
        c = (lo - base) % pitch
        i, j = amap.span(lo - c, lo - c + n * pitch)
        starts, states = amap.starts, amap.states
        conflicts = None
        for k in range(i, j):
            state = states[k]
            x, y = starts[k], starts[k + 1]
            if type(state) is not Periodic:
                state = uniform(state, pitch, base)
            mine = columns(lo, lo + row, state.base, pitch)
            spans = intersect(columns(x, y, state.base, pitch), mine)
            for summary, c0, c1 in state.column_segments(spans):
                found = self._unordered(summary, write, atomic, key, vc)
                if found:
                    a, b = byte_hull(x, y, state.base, pitch, c0, c1)
                    for other, kind in found:
                        conflicts = _note(conflicts, other, kind, a, b)
        return conflicts

    # ------------------------------------------------------------------ recording
    @staticmethod
    def _record_range(amap, lo, hi, write, change) -> None:
        i, j = amap.span(lo, hi)
        if write:  # everything the write did not race with is ordered before it
            del amap.starts[i + 1:j]
            amap.states[i:j] = [change(None)]
            amap.coalesce(i, i + 1)
            return
        RaceCheck._record_segments(amap, i, j, change)

    @staticmethod
    def _record_segments(amap, i, j, change) -> None:
        """``change`` applied to the summaries of map segments ``[i, j)`` (a read)."""
        RaceCheck._rewrite(amap, i, j, lambda old: old.change_all(change)
                           if type(old) is Periodic else change(old))

    @staticmethod
    def _record_strided(amap, lo, row, pitch, n, base, change) -> None:
        c = (lo - base) % pitch
        i, j = amap.span(lo - c, lo - c + n * pitch)

        def update(old):
            pattern = old if type(old) is Periodic else uniform(old, pitch, base)
            return pattern.update(columns(lo, lo + row, pattern.base, pitch), change)

        RaceCheck._rewrite(amap, i, j, update)

    @staticmethod
    def _rewrite(amap, i, j, transform) -> None:
        """Segments ``[i, j)`` of ``amap`` replaced by ``transform(summary)``, computed once
        per distinct summary (segments often share one), then neighbours merged."""
        states = amap.states
        done: dict = {}
        for k in range(i, j):
            old = states[k]
            new = done.get(id(old))
            if new is None:
                new = done[id(old)] = transform(old)
            states[k] = new
        amap.coalesce(i, j)

    # ------------------------------------------------------------------ reporting
    def _resolve(self, conflicts, epoch, write, space, clocks, pipe) -> None:
        key, _, instr = epoch
        me = core_of(key)
        for other, kind, lo, hi in conflicts.values():
            other_core = core_of(other[0])
            if pipe == S and other_core == me:
                # Auto-sync: the scalar unit waits for the pipe whose data it touches.
                clocks.join_into(S, clocks.snapshot(other[0] % KEY_STRIDE))
                continue
            self._report(instr, other[2], kind, write, space, lo, hi, me, other_core, other)

    #: ``(reader core, writer pipe key, writer count) -> (setter core, pipe, loc) or None``:
    #: a cross-core flag set after the write on another pipe, which the reader waited for
    #: (set by the owner, see :meth:`CrossCoreSync.wrong_pipe_set`).
    wrong_pipe_set = staticmethod(lambda reader, key, count: None)

    def _report(self, instr, earlier, kind, write, space, lo, hi, me, other_core,
                other=None) -> None:
        what = f"{self.describe_space(space)} bytes [{lo}, {hi})"
        # What the two accesses are, in msSanitizer's words (ascsim/formats/mssanitizer.py):
        # the hazard (read after write, ...) and the pipes of the earlier and the later one.
        order = {"hazard": HAZARDS[(kind == "write", write)],
                 "pipes": (earlier.pipe, instr.pipe)}
        this = "writes" if write else "reads"
        if other_core == me:
            self.launch.findings.report(
                "race",
                f"{instr.op} on {instr.pipe} {this} {what} that {earlier.op} on {earlier.pipe} "
                f"{'wrote' if kind == 'write' else 'reads'}, with no synchronisation between "
                "the two pipes", (earlier.loc, instr.loc),
                hint=self.launch.hint("race-pipes", first=earlier.pipe, second=instr.pipe),
                core=me, buffer=self.describe_space(space), start=lo, stop=hi,
                first=earlier.op, second=instr.op, **order)
            return
        both_write = write and kind == "write"
        wrong = None if both_write or kind != "write" or other is None else \
            self.wrong_pipe_set(me, other[0], other[1])
        if wrong is not None:
            _, set_pipe, set_loc = wrong
            self.launch.findings.report(
                "cross-core-race",
                f"core {other_core} raises a cross-core flag on {set_pipe} after its "
                f"{earlier.op} on {earlier.pipe} writes {what}, and core {me} waits for that "
                f"flag before its {instr.op} on {instr.pipe} reads them -- but a flag set on "
                f"{set_pipe} does not wait for {earlier.pipe}, so the read may see the old "
                "bytes", (set_loc, earlier.loc, instr.loc),
                hint=self.launch.hint("cross-core-wrong-pipe", pipe=earlier.pipe),
                core=me, buffer=self.describe_space(space), start=lo, stop=hi,
                other_core=other_core, **order)
            return
        self.launch.findings.report(
            "cross-core-race",
            f"core {me} ({instr.op} on {instr.pipe}) {this} {what} that core {other_core} "
            f"({earlier.op} on {earlier.pipe}) {'wrote' if kind == 'write' else 'reads'}"
            + (" -- both write without atomics" if both_write else
               ", with no cross-core flag or sync_all between them"),
            (earlier.loc, instr.loc),
            hint=self.launch.hint("race-cores" if both_write else "race-cross-core"),
            core=me, buffer=self.describe_space(space), start=lo, stop=hi,
            other_core=other_core, **order)


def _with_read(old, key, fresh, vc):
    """Summary ``old`` after the read ``fresh`` of pipe ``key`` (whose clock is ``vc``): the
    reads it is not ordered after are kept, the others (and the pipe's own) dropped."""
    reads = old[1]
    if not reads:
        return (old[0], (fresh,))
    kept = tuple([r for r in reads if r[0] != key and vc.get(r[0], 0) < r[1]])
    return (old[0], kept + (fresh,))


def _read_change(key, epoch, vc):
    """:func:`_with_read` as a summary -> summary function, memoised per summary object (so
    segments sharing a summary still share one afterwards)."""
    fresh = (key, epoch[1], epoch[2])
    done: dict = {}

    def change(old):
        out = done.get(id(old))
        if out is None:
            out = done[id(old)] = _with_read(old, key, fresh, vc)
        return out

    return change


def _note(conflicts, other, kind, lo, hi):
    """Collect the overlap ``[lo, hi)`` with one earlier access (merged per instruction)."""
    if conflicts is None:
        conflicts = {}
    ident = id(other[2])
    seen = conflicts.get(ident)
    if seen is None:
        conflicts[ident] = [other, kind, lo, hi]
    else:
        seen[2] = min(seen[2], lo)
        seen[3] = max(seen[3], hi)
    return conflicts


__all__ = ["AccessMap", "RaceCheck", "KEY_STRIDE"]
