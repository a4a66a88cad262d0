"""The scalar unit's bit counting against Python integers (Ascend C's documented examples)."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

VALUES = [0, 1, 28, 0x0100000000000020, 0x1000000000000100, 0x000000000000FFFF,
          0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0xDEADBEEF00C0FFEE]


@asc.jit
def _bits(out: asc.GlobalAddress, values: asc.ConstExpr[tuple]):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    for i in range(len(values)):
        v = values[i]
        g.set_value(6 * i, asc.scalar_get_count_of_value(v, 1))
        g.set_value(6 * i + 1, asc.scalar_get_count_of_value(v, 0))
        g.set_value(6 * i + 2, asc.scalar_count_leading_zero(v))
        g.set_value(6 * i + 3, asc.scalar_get_sff_value(v, 1))
        g.set_value(6 * i + 4, asc.scalar_get_sff_value(v, 0))
        g.set_value(6 * i + 5, asc.count_bits_cnt_same_as_sign_bit(v))


def _reference(v: int) -> list[int]:
    bits = [(v >> i) & 1 for i in range(64)]  # bit i, lowest first
    ones = sum(bits)
    lead = next((63 - i for i in range(63, -1, -1) if bits[i]), 64)
    sff1 = bits.index(1) if 1 in bits else -1
    sff0 = bits.index(0) if 0 in bits else -1
    sign = bits[63]
    same = 0
    for i in range(62, -1, -1):
        if bits[i] != sign:
            break
        same += 1
    return [ones, 64 - ones, lead, sff1, sff0, -1 if same == 63 else same]


def test_bit_counts_match_the_definitions():
    out = np.zeros(6 * len(VALUES), np.int64)
    _bits[1](out, tuple(VALUES))
    assert out.reshape(-1, 6).tolist() == [_reference(v) for v in VALUES]
    # Ascend C's documented examples
    assert _reference(28)[3] == 2 and _reference(0x0100000000000020)[2] == 7
    assert _reference(0x0100000000000020)[5] == 6 and _reference(1)[5] == 62


@asc.jit
def _bad_bit(out: asc.GlobalAddress):
    asc.scalar_get_sff_value(5, 2)


def test_count_value_must_be_a_bit():
    with pytest.raises(KernelError, match="count_value must be 0 or 1, got 2"):
        _bad_bit[1](np.zeros(1, np.int64))
