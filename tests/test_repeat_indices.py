"""The element index sets of mask/repeat-form vector instructions: values, and sharing."""

import numpy as np
import pytest

from ascsim.isa import KernelError
from ascsim.isa.operands import BLOCK_BYTES, mask_positions, repeat_indices


def _reference(positions, repeats, elem_bytes, blk_stride, rep_stride):
    per_block = BLOCK_BYTES // elem_bytes
    return np.array([(r * rep_stride + p // per_block * blk_stride) * per_block + p % per_block
                     for r in range(repeats) for p in positions])


@pytest.mark.parametrize("mask, per_repeat, repeats, elem_bytes, strides", [
    (64, 64, 3, 4, (1, 8)),
    (40, 128, 2, 2, (1, 8)),
    ([0xF0F0, 0x1], 128, 4, 2, (2, 16)),
    ([2**64 - 1], 64, 1, 4, (1, 0)),
    (500, 64, 2, 4, (1, 4)),
])
def test_indices_match_the_definition(mask, per_repeat, repeats, elem_bytes, strides):
    positions = mask_positions(mask, per_repeat, None)
    got = repeat_indices(positions, repeats, elem_bytes, *strides)
    np.testing.assert_array_equal(got, _reference(positions.tolist(), repeats, elem_bytes,
                                                  *strides))


def test_equal_calls_share_one_read_only_array():
    """A record keeps its index sets until the launch ends: a loop's records share them."""
    first = repeat_indices(mask_positions(64, 64, None), 8, 4, 1, 8)
    again = repeat_indices(mask_positions(64, 64, None), 8, 4, 1, 8)
    assert again is first
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0] = 1
    other = repeat_indices(mask_positions(64, 64, None), 8, 4, 1, 16)
    assert other is not first and other[-1] != first[-1]


def test_bad_masks_still_name_the_problem():
    with pytest.raises(KernelError, match="one or two uint64 words"):
        mask_positions([1, 2, 3], 64, None)
    with pytest.raises(KernelError, match="outside"):
        mask_positions(-1, 64, None)
