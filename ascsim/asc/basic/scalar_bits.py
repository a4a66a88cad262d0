"""Bit counting on the scalar unit (Ascend C's scalar compute API), one scalar instruction each.

- ``scalar_get_count_of_value(x, v)``: bits of the uint64 ``x`` equal to ``v`` (0 or 1);
- ``scalar_count_leading_zero(x)``: zeros above the highest 1 of the uint64 ``x`` (64 for 0);
- ``scalar_get_sff_value(x, v)``: position of the lowest bit of ``x`` equal to ``v``, -1 if none;
- ``count_bits_cnt_same_as_sign_bit(x)``: bits below the sign bit of the int64 ``x`` that
  repeat it before the first that differs (-1 when all 63 do: 0 and -1).
"""

from __future__ import annotations

from ascsim.asc.context import current_core, user_location
from ascsim.isa import KernelError, ScalarOps

MASK64 = (1 << 64) - 1


def _issue() -> None:
    current_core().execute(ScalarOps(1, user_location()))


def _bit_value(count_value, name: str) -> int:
    value = int(count_value)
    if value not in (0, 1):
        raise KernelError(f"{name}: count_value must be 0 or 1, got {value}", user_location())
    return value


def scalar_get_count_of_value(value_in, count_value) -> int:
    wanted = _bit_value(count_value, "scalar_get_count_of_value")
    _issue()
    ones = bin(int(value_in) & MASK64).count("1")
    return ones if wanted else 64 - ones


def scalar_count_leading_zero(value_in) -> int:
    _issue()
    return 64 - (int(value_in) & MASK64).bit_length()


def scalar_get_sff_value(value_in, count_value) -> int:
    wanted = _bit_value(count_value, "scalar_get_sff_value")
    _issue()
    bits = int(value_in) & MASK64
    if not wanted:
        bits = ~bits & MASK64  # the lowest 0 is the lowest 1 of the complement
    return (bits & -bits).bit_length() - 1 if bits else -1


def count_bits_cnt_same_as_sign_bit(value_in) -> int:
    _issue()
    bits = int(value_in) & MASK64
    if bits >> 63:
        bits = ~bits & MASK64  # a negative number: count the ones as a positive counts zeros
    return 62 - (bits.bit_length() - 1) if bits else -1


__all__ = ["count_bits_cnt_same_as_sign_bit", "scalar_count_leading_zero",
           "scalar_get_count_of_value", "scalar_get_sff_value"]
