"""The L2 model's short path for lines no access has touched gives the very latencies, traffic,
reader counts and line states that its general path gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ascsim.sim import l2
from ascsim.sim.access import ByteRows
from ascsim.sim.l2 import LINE_BYTES, L2Cache, _touch, _untouched

BUFFER_BYTES = 96 * LINE_BYTES


def _state(cache: L2Cache) -> tuple:
    per_buffer = tuple((cache._ready[b].tolist(), cache._stamp[b].tolist(),
                        cache._dirty[b].tolist(), cache._reader[b].tolist())
                       for b in sorted(cache._ready))
    return (per_buffer, cache.inserted, cache.hit_bytes, cache.miss_bytes, cache.write_bytes,
            cache.spill_bytes, {k: list(v) for k, v in cache.reads_by_core.items()},
            cache.take_changes())


def _run(seq, l2_lines: int, bypass: bool) -> tuple:
    cache = L2Cache(l2_lines * LINE_BYTES, lambda bid: BUFFER_BYTES)
    if bypass:
        cache.set_bypass(1)
    out = []
    for kind, buffer_id, first, width, extra, count, t, reader in seq:
        rows = ByteRows(first, width, width + extra, count)
        if kind == "read":
            out.append(cache.read_rows_cost(buffer_id, rows, t, 20.0, 300.0, reader))
        elif kind == "ranges":
            out.append(cache.read_cost(buffer_id, [first, first + 4 * width],
                                       [first + width, first + 5 * width], t, 20.0, 300.0,
                                       reader))
        else:
            cache.write_rows(buffer_id, rows, t)
        out.append(cache.take_changes())
    return out, _state(cache)


offsets = st.one_of(st.integers(0, 80).map(lambda k: LINE_BYTES * k), st.integers(0, 40000))
widths = st.one_of(st.integers(1, 8).map(lambda k: LINE_BYTES * k), st.integers(1, 3000))
accesses = st.tuples(st.sampled_from(["read", "read", "write", "ranges"]), st.integers(0, 1),
                     offsets, widths, st.sampled_from([0, 0, LINE_BYTES, 3 * LINE_BYTES, 100]),
                     st.integers(1, 4), st.floats(0, 1000), st.sampled_from([-1, 0, 1, 2]))


@settings(max_examples=200)
@given(st.lists(accesses, min_size=1, max_size=12), st.integers(2, 120), st.booleans())
def test_short_path_matches_the_general_path(seq, l2_lines, bypass):
    fast = _run(seq, l2_lines, bypass)
    saved = l2._untouched
    l2._untouched = lambda *args: False  # every access through the general path
    try:
        general = _run(seq, l2_lines, bypass)
    finally:
        l2._untouched = saved
    assert fast == general


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 8)), max_size=15),
       st.integers(0, 60), st.integers(1, 8))
def test_touched_intervals_are_the_union_of_the_touches(touches, lo, size):
    starts, ends = [], []
    marked = np.zeros(80, dtype=bool)
    for first, n in touches:
        _touch(starts, ends, first, first + n)
        marked[first:first + n] = True
    assert starts == sorted(starts)
    assert all(e < s for e, s in zip(ends, starts[1:]))  # disjoint and not adjoining
    union = np.zeros(80, dtype=bool)
    for s, e in zip(starts, ends):
        union[s:e] = True
    assert (union == marked).all()
    assert _untouched(starts, ends, lo, lo + size) == (not marked[lo:lo + size].any())
