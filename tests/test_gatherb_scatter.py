"""gatherb (32-byte blocks by byte offsets) and scatter (elements to byte offsets) against
numpy loops written from Ascend C's Gatherb pseudo-code and Scatter page."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.isa import KernelError
from ascsim.session import SESSION

RNG = np.random.default_rng(11)


@pytest.fixture
def soc():
    before = SESSION.soc.name
    yield SESSION.set_soc
    SESSION.set_soc(before)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.uint16])
@pytest.mark.parametrize("strides", [(1, 8), (2, 16), (0, 8)])
def test_gatherb_moves_whole_blocks(dtype, strides):
    per_block = 32 // np.dtype(dtype).itemsize
    src = (RNG.uniform(-9, 9, 64 * per_block)).astype(dtype)
    repeats = 2
    offsets = (RNG.permutation(64)[: 8 * repeats] * 32).astype(np.uint32)
    blk, rep = strides
    out = np.full(40 * per_block, 3, dtype)

    def body(d, s, o):
        asc.gatherb(d, s, o, repeats, asc.GatherRepeatParams(blk, rep))

    got, _ = run_vector(body, out, src, offsets)
    expected = out.copy()
    for i in range(repeats):
        for j in range(8):
            first = offsets[i * 8 + j] // np.dtype(dtype).itemsize
            d = (i * rep + j * (blk or 1)) * per_block
            expected[d:d + per_block] = src[first:first + per_block]
    np.testing.assert_array_equal(got, expected)


def test_gatherb_rejects_an_unaligned_block_offset():
    src = np.zeros(256, np.float32)
    offsets = np.full(8, 4, np.uint32)
    with pytest.raises(KernelError, match="not a multiple of 32 bytes"):
        run_vector(lambda d, s, o: asc.gatherb(d, s, o, 1, asc.GatherRepeatParams()),
                   np.zeros(64, np.float32), src, offsets)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
def test_scatter_count_form(soc, dtype):
    soc("Ascend950PR_9579")
    n, size = 100, np.dtype(dtype).itemsize
    src = RNG.uniform(-9, 9, n).astype(dtype)
    targets = RNG.permutation(160)[:n]
    base = 64
    offsets = (targets * size).astype(np.uint32)
    out = np.full(200, 7, dtype)
    got, _ = run_vector(lambda d, s, o: asc.scatter(d, s, o, base, n), out, src, offsets)
    expected = out.copy()
    expected[base // size + targets] = src
    np.testing.assert_array_equal(got, expected)


def test_scatter_mask_repeat_form(soc):
    soc("Ascend950PR_9579")
    per = 64  # fp32
    src = RNG.uniform(-9, 9, 4 * per).astype(np.float32)
    targets = RNG.permutation(256)[: 2 * per]
    offsets = (targets * 4).astype(np.uint32)
    out = np.full(256, -1, np.float32)
    mask = 40

    got, _ = run_vector(lambda d, s, o: asc.scatter(d, s, o, 0, mask, 2, 16), out, src, offsets)
    expected = out.copy()
    for r in range(2):
        for p in range(mask):
            expected[targets[r * per + p]] = src[r * 16 * 8 + p]
    np.testing.assert_array_equal(got, expected)


def test_scatter_is_not_on_the_910b(soc):
    soc("Ascend910B1")
    with pytest.raises(KernelError, match="has no scatter instruction"):
        run_vector(lambda d, s, o: asc.scatter(d, s, o, 0, 8), np.zeros(8, np.float32),
                   np.zeros(8, np.float32), np.zeros(8, np.uint32))
