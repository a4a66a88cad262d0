"""The vector mask registers: set_vector_mask / set_mask_count / set_mask_norm / reset_mask and
vector instructions issued with is_set_mask=False, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.asc.basic.mask import count_to_words, registers

RNG = np.random.default_rng(0)


def _params(src_rep=8):
    return asc.BinaryRepeatParams(1, 1, 1, 8, src_rep, src_rep)


def _inputs(dtype, n=1024):
    return (RNG.uniform(-4, 4, n).astype(dtype), RNG.uniform(-4, 4, n).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_normal_mode_bit_mask_from_the_registers(dtype):
    a, b = _inputs(dtype)
    out = np.full(512, 7, dtype)
    high, low = 0x8000_0000_0000_0001, 0x0F0F_0000_0000_00FF
    per = 256 // np.dtype(dtype).itemsize

    def body(d, s0, s1):
        asc.set_mask_norm()
        asc.set_vector_mask(high, low, dtype=asc.float16 if per == 128 else asc.float32,
                            mode=asc.MaskMode.NORMAL)
        # the mask passed here is ignored: the registers decide
        asc.add(d, s0, s1, asc.MASK_PLACEHOLDER, 2, _params(), is_set_mask=False)

    got, _ = run_vector(body, out, a, b)
    expected = out.copy()
    for r in range(2):
        for p in range(per):
            word = low if p < 64 else high
            if (word >> (p % 64)) & 1:
                i = r * per + p
                expected[i] = a[i] + b[i]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_counter_mode_counts_elements_over_repeats(dtype):
    a, b = _inputs(dtype, 2048)
    out = np.full(512, 7, dtype)
    per = 256 // np.dtype(dtype).itemsize
    count = 2 * per + 5  # two whole repeats and a partial one

    def body(d, s0, s1):
        asc.set_mask_count()
        asc.set_vector_mask(count, dtype=asc.float16 if per == 128 else asc.float32,
                            mode=asc.MaskMode.COUNTER)
        asc.mul(d, s0, s1, asc.MASK_PLACEHOLDER, 1, _params(src_rep=16), is_set_mask=False)
        asc.set_mask_norm()

    got, _ = run_vector(body, out, a, b)
    expected = out.copy()
    for i in range(count):
        r, p = divmod(i, per)
        expected[r * per + p] = a[2 * r * per + p] * b[2 * r * per + p]
    np.testing.assert_array_equal(got, expected)


def test_reset_mask_enables_every_lane():
    a, b = _inputs(np.float32)
    out = np.zeros(128, np.float32)

    def body(d, s0, s1):
        asc.set_vector_mask(0, 1, dtype=asc.float32, mode=asc.MaskMode.NORMAL)
        asc.reset_mask()
        asc.sub(d, s0, s1, 0, 2, _params(), is_set_mask=False)

    got, _ = run_vector(body, out, a, b)
    np.testing.assert_array_equal(got, a[:128] - b[:128])


def test_a_normal_mode_length_follows_the_count_rule():
    assert count_to_words(5, 128) == (0b11111, 0)
    assert count_to_words(70, 128) == (2**64 - 1, 0b111111)
    assert count_to_words(64, 64) == (2**64 - 1, 2**64 - 1)
    a, b = _inputs(np.float16)
    out = np.zeros(128, np.float16)

    def body(d, s0, s1):
        asc.set_vector_mask(70, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
        asc.add(d, s0, s1, 0, 1, _params(), is_set_mask=False)

    got, _ = run_vector(body, out, a, b)
    np.testing.assert_array_equal(got[:70], a[:70] + b[:70])
    np.testing.assert_array_equal(got[70:], 0)


def test_a_set_mask_argument_ignores_the_registers():
    a, b = _inputs(np.float32)
    out = np.zeros(64, np.float32)

    def body(d, s0, s1):
        asc.set_vector_mask(0, 1, dtype=asc.float32, mode=asc.MaskMode.NORMAL)
        asc.add(d, s0, s1, 64, 1, _params())

    got, _ = run_vector(body, out, a, b)
    np.testing.assert_array_equal(got, a[:64] + b[:64])


def test_counter_mode_compare_writes_count_bits():
    a, b = _inputs(np.float32, 256)
    out = np.zeros(32, np.uint8)

    def body(d, s0, s1):
        asc.set_mask_count()
        asc.set_vector_mask(100, dtype=asc.float32, mode=asc.MaskMode.COUNTER)
        asc.compare(d, s0, s1, asc.CMPMODE.LT, 0, 1, _params(), is_set_mask=False)

    got, _ = run_vector(body, out, a, b)
    bits = np.unpackbits(got, bitorder="little")
    np.testing.assert_array_equal(bits[:100], (a[:100] < b[:100]).astype(np.uint8))
    np.testing.assert_array_equal(bits[100:], 0)


def test_calls_leave_their_mask_in_the_registers():
    a, b = _inputs(np.float32)
    out = np.zeros(128, np.float32)
    seen = []

    def body(d, s0, s1):
        asc.set_vector_mask(0, 1, dtype=asc.float32, mode=asc.MaskMode.NORMAL)
        asc.add(d, s0, s1, 3, 1, _params())  # own mask: 3 lanes, left in the registers
        asc.mul(d[64:], s0, s1, 0, 1, _params(), is_set_mask=False)
        asc.set_mask_count()
        asc.set_vector_mask(8, dtype=asc.float32, mode=asc.MaskMode.COUNTER)
        asc.sub(d[96:], s0, s1, 16)  # a count-form call ends in normal mode, every bit set
        asc.mul(d[112:], s0[16:], s1[16:], 0, 1, _params(), is_set_mask=False)
        seen.append(registers())

    got, _ = run_vector(body, out, a, b)
    np.testing.assert_array_equal(got[:3], a[:3] + b[:3])
    np.testing.assert_array_equal(got[64:67], a[:3] * b[:3])
    np.testing.assert_array_equal(got[67:96], 0)
    np.testing.assert_array_equal(got[96:112], a[:16] - b[:16])
    np.testing.assert_array_equal(got[112:128], a[16:32] * b[16:32])  # a whole repeat's start
    assert (seen[0].mode, seen[0].low, seen[0].high) == ("normal", 2**64 - 1, 2**64 - 1)
