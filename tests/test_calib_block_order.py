"""The CATLASS block schedulers of the calibration matmuls: every element of C in exactly one
block, the published sample's orders, and the ASWT tail split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascsim.calib.block_order import (
    SCHEDULERS,
    aswt_blocks,
    l1_full_load_blocks,
    swizzle_blocks,
    swizzle_coord,
)


def _coverage(per_core, m: int, n: int) -> np.ndarray:
    hits = np.zeros((m, n), dtype=np.int32)
    for blocks in per_core:
        for b in blocks:
            assert b.rows > 0 and b.cols > 0
            hits[b.m0:b.m0 + b.rows, b.n0:b.n0 + b.cols] += 1
    return hits


@settings(max_examples=60)
@given(m=st.integers(1, 700), n=st.integers(1, 700), tile=st.sampled_from([64, 128, 256]),
       cores=st.integers(1, 40), name=st.sampled_from(sorted(SCHEDULERS)))
def test_every_element_of_c_lies_in_exactly_one_block(m, n, tile, cores, name):
    per_core = SCHEDULERS[name](m, n, tile, tile, cores)
    assert len(per_core) == cores
    assert (_coverage(per_core, m, n) == 1).all()


def test_the_swizzle_walks_bands_of_three_block_rows_as_an_s():
    # 6 x 4 blocks, bands of 3 rows: the first band column by column downwards, the second
    # from the last column back.
    order = [swizzle_coord(t, 6, 4, 3, 0) for t in range(24)]
    assert order[:6] == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
    assert order[12:15] == [(3, 3), (4, 3), (5, 3)]
    assert sorted(order) == [(i, j) for i in range(6) for j in range(4)]
    # Direction 1 is the same walk on the transposed grid.
    assert swizzle_coord(4, 4, 6, 3, 1) == (1, 1)


def test_aswt_splits_a_last_round_that_would_leave_half_of_the_cores_idle():
    # 1024 x 1024 in 256 x 256 blocks on 32 cores: 16 blocks, each cut in two along N.
    per_core = aswt_blocks(1024, 1024, 256, 256, 32)
    assert all(len(blocks) == 1 for blocks in per_core)
    assert {(b.rows, b.cols) for blocks in per_core for b in blocks} == {(256, 128)}
    # The swizzle leaves 16 cores idle.
    assert sum(1 for blocks in swizzle_blocks(1024, 1024, 256, 256, 32) if blocks) == 16


def test_aswt_keeps_whole_blocks_when_the_last_round_fills_more_than_half():
    per_core = aswt_blocks(2048, 2048, 256, 256, 20)  # 64 blocks: 3 rounds of 20, then 4
    sizes = {(b.rows, b.cols) for blocks in per_core for b in blocks}
    assert (256, 256) in sizes and len(sizes) > 1  # the last 4 blocks are split
    per_core = aswt_blocks(2048, 2048, 256, 256, 24)  # 64 = 2 x 24 + 16: 16 > 12, no split
    assert {(b.rows, b.cols) for blocks in per_core for b in blocks} == {(256, 256)}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_bad_sizes_are_refused(name):
    with pytest.raises(ValueError, match="positive"):
        SCHEDULERS[name](0, 16, 16, 16, 4)


@settings(max_examples=40)
@given(m=st.integers(1, 700), n=st.integers(1, 700), tile=st.sampled_from([64, 128, 256]),
       cores=st.integers(1, 40))
def test_the_l1_full_load_order_gives_each_core_one_run_of_the_s_walk(m, n, tile, cores):
    per_core = l1_full_load_blocks(m, n, tile, tile, cores)
    assert len(per_core) == cores
    assert (_coverage(per_core, m, n) == 1).all()
    # Concatenated core by core, the runs are the swizzle<1, 0> walk itself.
    m_tiles, n_tiles = -(-m // tile), -(-n // tile)
    walk = [swizzle_coord(t, m_tiles, n_tiles, 1, 0) for t in range(m_tiles * n_tiles)]
    assert [(b.m0 // tile, b.n0 // tile) for blocks in per_core for b in blocks] == walk
    counts = [len(blocks) for blocks in per_core]
    assert max(counts) - min(counts) <= 1 and counts == sorted(counts, reverse=True)


def test_the_l1_full_load_order_keeps_a_cores_blocks_on_few_block_rows():
    # 4 x 16 blocks on 24 cores (the 512 x 4096 quant matmul): runs of 3 or 2 blocks along a
    # row, so no core needs more than two block rows of A.
    per_core = l1_full_load_blocks(512, 4096, 128, 256, 24)
    assert [len(b) for b in per_core] == [3] * 16 + [2] * 8
    assert max(len({b.m0 for b in blocks}) for blocks in per_core) == 2
    assert [(b.m0, b.n0) for b in per_core[0]] == [(0, 0), (0, 256), (0, 512)]
    # Core 5 turns the corner: the second block row is walked backwards (the S).
    assert [(b.m0, b.n0) for b in per_core[5]] == [(0, 3840), (128, 3840), (128, 3584)]
