"""gather_mask against numpy: built-in and tensor patterns, strides, the kept count and the
register get_gather_mask_remain_count reads."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

KEEP = {1: lambda p: p % 2 == 0, 2: lambda p: p % 2 == 1, 3: lambda p: p % 4 == 0,
        4: lambda p: p % 4 == 1, 5: lambda p: p % 4 == 2, 6: lambda p: p % 4 == 3,
        7: lambda p: True}


def _strided(x, repeats, blk, rep):
    """Per repeat, the element index of every position (plain loops, on purpose)."""
    per = 256 // x.dtype.itemsize
    per_block = 32 // x.dtype.itemsize
    return [[(r * rep + (p // per_block) * blk) * per_block + p % per_block for p in range(per)]
            for r in range(repeats)]


@pytest.mark.parametrize("pattern", range(1, 8))
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_built_in_patterns(pattern, dtype):
    x = np.arange(2048).astype(dtype)
    out = np.full(1024, -1, dtype)
    counts = np.zeros(2, np.int64)

    def body(d, s):
        params = asc.GatherMaskParams(src0_block_stride=2, repeat_times=3, src0_repeat_stride=17,
                                      src1_repeat_stride=0)
        counts[0] = asc.gather_mask(d, s, pattern, False, 0, params)
        counts[1] = asc.get_gather_mask_remain_count()

    got, _ = run_vector(body, out, x)
    kept = [x[i] for row in _strided(x, 3, 2, 17) for p, i in enumerate(row) if KEEP[pattern](p)]
    assert counts[0] == counts[1] == len(kept)
    np.testing.assert_array_equal(got[:len(kept)], kept)
    np.testing.assert_array_equal(got[len(kept):], -1)


@pytest.mark.parametrize("dtype, pattern_type", [(np.float16, np.uint16), (np.float32, np.uint32)])
def test_a_tensor_pattern(dtype, pattern_type):
    per = 256 // np.dtype(dtype).itemsize
    x = np.random.default_rng(0).uniform(-1, 1, 512).astype(dtype)
    bits = np.random.default_rng(1).integers(0, 2, per).astype(np.uint8)
    pattern = np.packbits(bits, bitorder="little").view(pattern_type)
    out = np.zeros(512, dtype)
    count = np.zeros(1, np.int64)

    def body(d, s, p):
        params = asc.GatherMaskParams(1, 2, 8, 0)
        count[0] = asc.gather_mask(d, s, p, False, 0, params, asc.GatherMaskMode.DEFAULT)

    got, _ = run_vector(body, out, x, pattern)
    keep = np.tile(bits.astype(bool), 2)
    expected = x[:2 * per][keep]
    assert count[0] == expected.size
    np.testing.assert_array_equal(got[:expected.size], expected)


def test_counter_mode_and_a_moving_pattern_are_refused():
    x = np.zeros(256, np.float32)
    with pytest.raises(KernelError, match="counter mode"):
        run_vector(lambda d, s: asc.gather_mask(d, s, 1, True, 64, asc.GatherMaskParams(1, 1)),
                   x, x)
    pattern = np.zeros(8, np.uint32)
    with pytest.raises(KernelError, match="src1_repeat_stride"):
        run_vector(lambda d, s, p: asc.gather_mask(d, s, p, False, 0,
                                                   asc.GatherMaskParams(1, 2, 8, 1)),
                   x, x, pattern)
