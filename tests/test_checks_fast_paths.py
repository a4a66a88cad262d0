"""The checks' fast paths find exactly what their general paths find.

The race check handles a plain range inside one map segment inline (``RaceCheck.check_instr``);
everything else goes through ``_access_range`` / ``_access_strided``. The written-bytes check
rewrites state bytes with a fill when a range is in the common states and with ``translate``
otherwise.
Each fast path is compared here with its general path on random access sequences.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ascsim.sim.access import strided
from ascsim.sim.checks.clocks import CoreClocks
from ascsim.sim.checks.races import AccessMap, RaceCheck
from ascsim.sim.checks.uninit import MARK_WRITTEN, TAKE, _mark_written, _take
from ascsim.sim.core import PIPES

SPACE = ("GM", 0)


class _Findings:
    def __init__(self):
        self.seen = []

    def report(self, category, message, locs, **details):
        self.seen.append((category, message, locs, tuple(sorted(details.items()))))


class _Launch:
    def __init__(self):
        self.findings = _Findings()

    def hint(self, kind, **fields):
        return kind


class _Atomic:
    atomic = "add"


class _Instr:
    def __init__(self, n, pipe, reads, writes, atomic):
        self.op, self.pipe, self.loc = f"op{n}", PIPES[pipe], ("k.py", n)
        self.reads, self.writes = reads, writes
        self.record = _Atomic() if atomic else None


class _Core:
    def __init__(self, core_id):
        self.core_id = core_id


class _GeneralOnly(RaceCheck):
    """Every access through the general path (what ``check_instr`` did before it had an
    inline case)."""

    def check_instr(self, instr, clocks, pipe, count, vc):
        epoch = (clocks.base + pipe, count, instr)
        atomic = bool(getattr(instr.record, "atomic", None))
        for records, write in ((instr.reads, False), (instr.writes, True)):
            for record in records:
                if record[2] <= record[1]:
                    continue
                amap = self.maps.get(record[0])
                if amap is None:
                    amap = self.maps[record[0]] = AccessMap()
                access = self._access_range if len(record) == 3 else self._access_strided
                access(amap, record, write, write and atomic, epoch, clocks, pipe, vc)


def _replay(steps, check_type):
    launch = _Launch()
    clocks: dict = {}

    def clocks_of(core_id):
        return clocks.setdefault(core_id, CoreClocks(core_id))

    check = check_type(launch, clocks_of, str)
    for n, (kind, core, pipe, record, write, atomic, other) in enumerate(steps):
        if kind == "sync":  # another core's pipe clock joins into this pipe
            clocks_of(core).join_into(pipe, clocks_of(other[0]).snapshot(other[1]))
            continue
        instr = _Instr(n, pipe, () if write else (record,), (record,) if write else (), atomic)
        count = clocks_of(core).tick(pipe)
        check.on_instr(_Core(core), instr, pipe, count)
    maps = {space: (amap.starts, [_plain(s) for s in amap.states])
            for space, amap in check.maps.items()}
    return launch.findings.seen, maps


def _plain(state):
    """A summary with instruction records replaced by their names (comparable across runs)."""
    if type(state) is not tuple:
        return (state.pitch, state.base, state.cols, [_plain(s) for s in state.states])
    last_write, reads = state
    name = None if last_write is None else (last_write[0], last_write[1], last_write[2].op,
                                            last_write[3])
    return name, tuple((r[0], r[1], r[2].op) for r in reads)


@st.composite
def _record(draw):
    lo = draw(st.sampled_from([0, 16, 32, 48, 64, 96]))
    if draw(st.integers(0, 4)):  # mostly plain ranges, often repeating a tile
        return (SPACE, lo, lo + draw(st.sampled_from([8, 16, 32, 48])))
    pitch = draw(st.sampled_from([16, 32]))
    return strided(SPACE, lo, draw(st.integers(1, pitch - 1)), pitch, draw(st.integers(1, 4)))


_step = st.one_of(
    st.tuples(st.just("access"), st.integers(0, 1), st.sampled_from([0, 1, 4, 5]), _record(),
              st.booleans(), st.booleans(), st.just(None)),
    st.tuples(st.just("sync"), st.integers(0, 1), st.sampled_from([0, 1, 4, 5]), st.just(None),
              st.just(False), st.just(False),
              st.tuples(st.integers(0, 1), st.sampled_from([0, 1, 4, 5]))),
)


@settings(max_examples=400)
@given(st.lists(_step, min_size=1, max_size=16))
def test_inline_race_path_finds_and_records_what_the_general_path_does(steps):
    assert _replay(steps, RaceCheck) == _replay(steps, _GeneralOnly)


@settings(max_examples=400)
@given(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=1, max_size=48),
       st.integers(0, 47), st.integers(0, 48), st.sampled_from(["take", "mark"]),
       st.booleans())
def test_state_rewrite_matches_translate(states, lo, length, which, uniform):
    if uniform:  # the common case: a whole buffer in one state
        states = [states[0]] * len(states)
    mask = bytearray(states)
    lo = min(lo, len(mask))
    hi = min(lo + length, len(mask))
    table, rewrite = (TAKE, _take) if which == "take" else (MARK_WRITTEN, _mark_written)
    want = bytearray(mask)
    want[lo:hi] = want[lo:hi].translate(table)
    rewrite(mask, lo, hi)
    assert mask == want
