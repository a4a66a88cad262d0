"""The L2 model's constant-pitch form (ByteRows) selects the very lines, and so gives the very
latencies and traffic, that one (start, end) range per row gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ascsim.sim.access import ByteRows
from ascsim.sim.l2 import LINE_BYTES, L2Cache

BUFFER_BYTES = 64 * LINE_BYTES


def _cache(l2_lines: int) -> L2Cache:
    return L2Cache(l2_lines * LINE_BYTES, lambda bid: BUFFER_BYTES)


def _state(cache: L2Cache) -> tuple:
    lines = tuple(tuple(cache._lines(b).tolist()) for b in (0, 1))
    return (lines, cache.resident_lines, cache.hit_bytes, cache.miss_bytes, cache.write_bytes,
            cache.spill_bytes)


# Offsets and widths on a 64-byte grid (plus odd ones) so that aligned rows, rows inside one
# line, rows straddling lines and gaps of exactly one line all come up.
offsets = st.one_of(st.integers(0, 40).map(lambda k: 64 * k), st.integers(0, 2600))
widths = st.one_of(st.integers(1, 24).map(lambda k: 64 * k), st.integers(1, 1600))
pitch_extra = st.one_of(st.integers(0, 12).map(lambda k: 256 * k), st.integers(0, 1600))
accesses = st.tuples(st.booleans(), st.integers(0, 1), offsets, widths, pitch_extra,
                     st.integers(1, 40), st.floats(0, 1000))


@settings(max_examples=150)
@given(st.lists(accesses, min_size=1, max_size=6), st.integers(4, 80))
def test_rows_select_the_same_lines_as_one_range_per_row(seq, l2_lines):
    by_rows, by_ranges = _cache(l2_lines), _cache(l2_lines)
    for write, buffer_id, first, width, extra, count, t in seq:
        pitch = width + extra
        # Rows may run past the buffer's lines: both forms drop the lines beyond it.
        rows = ByteRows(first, width, pitch, count)
        starts = first + pitch * np.arange(count, dtype=np.int64)
        if write:
            by_rows.write_rows(buffer_id, rows, t)
            by_ranges.write(buffer_id, starts, starts + width, t)
        else:
            got = by_rows.read_rows(buffer_id, rows, t, 50, 320)
            want = by_ranges.read(buffer_id, starts, starts + width, t, 50, 320)
            assert got == want
        assert _state(by_rows) == _state(by_ranges)


def test_aligned_rows_one_line_apart_are_a_stepped_slice():
    cache = _cache(64)
    lines, idx = cache._select_rows(0, ByteRows(2 * LINE_BYTES, LINE_BYTES, 5 * LINE_BYTES, 4))
    assert idx == slice(2, 18, 5)
    assert lines[idx].size == 4


def test_rows_with_gaps_shorter_than_a_line_cover_their_whole_hull():
    cache = _cache(64)
    _, idx = cache._select_rows(0, ByteRows(100, 600, 1000, 3))
    assert idx == slice(0, (100 + 2 * 1000 + 600 - 1) // LINE_BYTES + 1)
