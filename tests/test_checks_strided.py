"""Strided access records (rows every pitch bytes) in the checks: the race check handles a
whole strided record over periodic patterns and must find exactly what the same accesses
recorded row by row find; kernels writing interleaved rows of one matrix."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import ascsim.asc as asc
from ascsim.session import SESSION
from ascsim.sim.access import nbytes, overlaps, ranges, rows_of, strided
from ascsim.sim.checks.clocks import CoreClocks
from ascsim.sim.checks.periodic import byte_hull
from ascsim.sim.checks.races import RaceCheck
from ascsim.sim.core import PIPES

SPACE = ("GM", 0)


class _Findings:
    def __init__(self):
        self.seen = []

    def report(self, category, message, locs, **details):
        self.seen.append((category, message, locs))


class _Launch:
    def __init__(self):
        self.findings = _Findings()

    def hint(self, kind, **fields):
        return kind


class _Atomic:
    """A record that combines its writes atomically."""

    atomic = "add"


class _Instr:
    def __init__(self, n, pipe, reads, writes, atomic):
        self.op, self.pipe, self.loc = f"op{n}", PIPES[pipe], ("k.py", n)
        self.reads, self.writes = reads, writes
        self.record = _Atomic() if atomic else None


class _Core:
    def __init__(self, core_id):
        self.core_id = core_id


def _replay(steps, expand: bool):
    """Run ``steps`` through a RaceCheck; with ``expand`` every strided record is given as
    its rows (the reference). Returns the findings."""
    launch = _Launch()
    clocks: dict = {}

    def clocks_of(core_id):
        return clocks.setdefault(core_id, CoreClocks(core_id))

    check = RaceCheck(launch, clocks_of, str)
    for n, (kind, core, pipe, record, write, atomic, other) in enumerate(steps):
        if kind == "sync":  # other core's pipe clock joins into this pipe
            clocks_of(core).join_into(pipe, clocks_of(other[0]).snapshot(other[1]))
            continue
        records = tuple((SPACE, a, b) for a, b in ranges(record)) if expand else (record,)
        instr = _Instr(n, pipe, () if write else records, records if write else (), atomic)
        count = clocks_of(core).tick(pipe)
        check.on_instr(_Core(core), instr, pipe, count)
    return launch.findings.seen


@st.composite
def _record(draw):
    lo = draw(st.integers(0, 96))
    if draw(st.booleans()):
        return (SPACE, lo, lo + draw(st.integers(1, 64)))
    pitch = draw(st.sampled_from([16, 24, 32, 48]))
    row = draw(st.integers(1, pitch - 1))
    return strided(SPACE, lo, row, pitch, draw(st.integers(1, 6)))


_step = st.one_of(
    st.tuples(st.just("access"), st.integers(0, 2), st.sampled_from([1, 4, 5, 6]), _record(),
              st.booleans(), st.booleans(), st.just(None)),
    st.tuples(st.just("sync"), st.integers(0, 2), st.sampled_from([1, 4, 5, 6]), st.just(None),
              st.just(False), st.just(False),
              st.tuples(st.integers(0, 2), st.sampled_from([1, 4, 5, 6]))),
)


@settings(max_examples=300)
@given(st.lists(_step, min_size=1, max_size=14))
# A write whose column frame starts before byte 0, over a pattern of another pitch: it must go
# row by row (it once took the other pattern's columns, and a later read raced with byte 64).
@example(steps=[("access", 0, 1, (SPACE, 1, 26, 1, 24), False, False, None),
                ("access", 0, 1, (SPACE, 64, 81, 1, 16), False, False, None),
                ("access", 0, 1, (SPACE, 0, 73, 1, 24), True, False, None),
                ("access", 0, 4, (SPACE, 60, 65), False, False, None)])
def test_strided_records_find_what_their_rows_find(steps):
    assert _merged(_replay(steps, expand=False)) == _merged(_replay(steps, expand=True))


def _merged(seen) -> dict:
    """Findings per (category, message without the byte range, lines) -> byte hull: the rows
    of one record are one finding (reported once with their hull) rather than one per row."""
    out: dict = {}
    for category, message, locs in seen:
        head, rest = message.split(" bytes [", 1)
        span, tail = rest.split(")", 1)
        lo, hi = (int(v) for v in span.split(", "))
        key = (category, head + tail, locs)
        old = out.get(key, (lo, hi))
        out[key] = (min(old[0], lo), max(old[1], hi))
    return out


@settings(max_examples=200)
@given(st.integers(0, 200), st.integers(1, 120), st.integers(0, 47), st.integers(1, 48),
       st.integers(2, 48), st.integers(0, 200), st.integers(1, 60))
def test_byte_hull_and_overlaps_match_brute_force(x, length, base, width, pitch, a, span):
    y = x + length
    c0 = min(base % pitch, pitch - 1)
    c1 = min(c0 + width, pitch)
    inside = [p for p in range(x, y) if c0 <= (p - base) % pitch < c1]
    want = (inside[0], inside[-1] + 1) if inside else None
    assert byte_hull(x, y, base, pitch, c0, c1) == want
    record = strided(SPACE, x, min(width, pitch - 1), pitch, 1 + length % 5)
    touched = {p for lo, hi in ranges(record) for p in range(lo, hi)}
    assert overlaps(record, a, a + span) == any(a <= p < a + span for p in touched)
    assert nbytes(record) == len(touched)
    assert rows_of(record) == len(ranges(record))


# ------------------------------------------------------------------------------------------
# Kernels: cores writing interleaved rows of one matrix with strided copies.
HERE = os.path.abspath(__file__)
with open(HERE) as _fh:
    _LINES = _fh.read().splitlines()
ROWS, COLS = 4, 16  # C is ROWS x COLS fp32 (64-byte rows); each core writes 8 columns


def mark(name: str) -> int:
    tag = f"# mark: {name}"
    hits = [i + 1 for i, text in enumerate(_LINES) if text.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {name!r} found {len(hits)} times"
    return hits[0]


@pytest.fixture(autouse=True)
def _session():
    saved = (SESSION.strict, SESSION.checks)
    SESSION.strict, SESSION.checks = False, True
    yield
    SESSION.strict, SESSION.checks = saved


@asc.jit
def column_blocks(x: asc.GlobalAddress, c: asc.GlobalAddress, overlap: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * ROWS * 8)
    t = buf.get(asc.float32)
    gx, gc = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gc.set_global_buffer(c)
    asc.data_copy(t, gx, ROWS * 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    if asc.get_block_idx() == 0:
        # rows 0..3, columns 0..7: four 32-byte rows, one 32-byte block of gap between them
        asc.data_copy(gc, t, asc.DataCopyParams(ROWS, 1, 0, 1))  # mark: block-0
    else:
        # columns 8..15 of the same rows, or (overlap) columns 0..7 of rows 3..6: row 3
        # is core 0's too
        at = 3 * COLS if overlap else 8
        asc.data_copy(gc[at:], t, asc.DataCopyParams(ROWS, 1, 0, 1))  # mark: block-1


def test_cores_writing_interleaved_rows_do_not_race():
    x, c = np.arange(ROWS * 8, dtype=np.float32), np.zeros(2 * ROWS * COLS, np.float32)
    assert column_blocks[2](x, c, False).findings == []
    left = c[:ROWS * COLS].reshape(ROWS, COLS)
    np.testing.assert_array_equal(left[:, :8], x.reshape(ROWS, 8))
    np.testing.assert_array_equal(left[:, 8:], x.reshape(ROWS, 8))


def test_one_overlapping_row_is_a_cross_core_race():
    x, c = np.arange(ROWS * 8, dtype=np.float32), np.zeros(2 * ROWS * COLS, np.float32)
    report = column_blocks[2](x, c, True)
    assert [f.category for f in report.findings] == ["cross-core-race"]
    finding = report.findings[0]
    assert [line for _, line in finding.locations] == [mark("block-0"), mark("block-1")]
    assert "bytes [192, 224)" in finding.message  # row 3, columns 0..7
    assert "both write without atomics" in finding.message


@asc.jit
def gapped_tile(x: asc.GlobalAddress, y: asc.GlobalAddress, whole: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * ROWS * COLS)
    t = buf.get(asc.float32)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    # four 32-byte rows into UB with a 32-byte gap after each: the gaps are never written
    asc.data_copy(t, gx, asc.DataCopyParams(ROWS, 1, 0, 1))
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    if whole:
        asc.data_copy(gy, t, ROWS * COLS // 2)  # mark: gap-read
    else:
        asc.data_copy(gy, t, asc.DataCopyParams(ROWS, 1, 1, 0))  # the rows only


def test_gap_of_a_strided_write_is_not_read_unless_read():
    x, y = np.arange(ROWS * 8, dtype=np.float32), np.zeros(ROWS * 8, np.float32)
    assert gapped_tile[1](x, y, False).findings == []
    np.testing.assert_array_equal(y, x)
    report = gapped_tile[1](x, y, True)
    assert [f.category for f in report.findings] == ["uninitialized-read"]
    finding = report.findings[0]
    assert [line for _, line in finding.locations] == [mark("gap-read")]
    assert "of which 64 B (first at byte 32)" in finding.message
