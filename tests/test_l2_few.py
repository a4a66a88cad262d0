"""The L2 model's path for a few contiguous lines (Python lists, ``FEW_LINES``) gives the very
latencies, traffic and line states that its general numpy path gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ascsim.sim.l2 as l2
from ascsim.sim.access import ByteRows
from ascsim.sim.l2 import LINE_BYTES, L2Cache

BUFFER_BYTES = 48 * LINE_BYTES


def _cache(l2_lines: int) -> L2Cache:
    return L2Cache(l2_lines * LINE_BYTES, lambda bid: BUFFER_BYTES)


def _state(cache: L2Cache) -> tuple:
    arrays = tuple(tuple(table[b].tolist()) for table in (cache._ready, cache._stamp,
                                                         cache._dirty) for b in sorted(table))
    return (arrays, cache.inserted, cache.hit_bytes, cache.miss_bytes, cache.write_bytes,
            cache.spill_bytes)


def _run(seq, l2_lines: int, few: int) -> list:
    """Every result and the final state of ``seq`` with ``FEW_LINES = few``."""
    saved = l2.FEW_LINES
    l2.FEW_LINES = few
    try:
        cache = _cache(l2_lines)
        cache.set_bypass(2)
        out = []
        for write, buffer_id, first, width, t in seq:
            rows = ByteRows(first, width, width, 1)
            if write:
                cache.write_rows(buffer_id, rows, t)
            else:
                out.append(cache.read_rows_cost(buffer_id, rows, t, 40.0, 400.0))
        return [out, _state(cache)]
    finally:
        l2.FEW_LINES = saved


# Tiles of up to a few lines anywhere in a small buffer, issued at times that make reads hit,
# miss, wait for an earlier fill, and evict dirty lines of a small L2.
accesses = st.tuples(st.booleans(), st.integers(0, 2), st.integers(0, 40 * LINE_BYTES),
                     st.integers(1, 6 * LINE_BYTES), st.floats(0, 3000))


@settings(max_examples=300, deadline=None)
@given(st.lists(accesses, min_size=1, max_size=24), st.integers(2, 24))
def test_few_lines_path_matches_the_numpy_path(seq, l2_lines):
    assert _run(seq, l2_lines, l2.FEW_LINES) == _run(seq, l2_lines, 0)


def test_few_lines_path_is_taken_for_a_tile(monkeypatch):
    calls = []
    cache = _cache(16)
    monkeypatch.setattr(L2Cache, "_read_few",
                        lambda self, *a: calls.append(a) or (0.0, 1.0, 0.0))
    cache.read_rows_cost(0, ByteRows(0, 2048, 2048, 1), 0.0, 40.0, 400.0)
    assert len(calls) == 1 and np.isinf(cache._ready[0]).all()
