"""HiFloat8 (HiF8), the 950's 8-bit float with tapered precision, stored as raw bytes.

A code is a sign bit and seven bits whose leading "dot" field says how the rest splits between
exponent and mantissa: the more exponent bits a value needs, the fewer mantissa bits it keeps
(Huawei's HiFloat8 format; the layout below is the one PyPTO Pro's HiF8 tests decode by).
Bits 6..0 of a code:

=============  ===========================  ===============================  ==========
dot field      exponent (sign, magnitude)   value                            mantissa
=============  ===========================  ===============================  ==========
``11``         bit 4, bits 3..1             ``(1 + m/2) * 2^±(8..15)``       bit 0
``10``         bit 4, bits 3..2             ``(1 + m/4) * 2^±(4..7)``        bits 1..0
``01``         bit 4, bit 3                 ``(1 + m/8) * 2^±(2..3)``        bits 2..0
``001``        bit 3                        ``(1 + m/8) * 2^±1``             bits 2..0
``0001``       none                         ``(1 + m/8)``                    bits 2..0
``0000``       none                         ``2^(m - 23)`` for m = 1..7      bits 2..0
=============  ===========================  ===============================  ==========

``0000`` with m = 0 is zero (sign 0) or the one NaN code (sign 1, ``0x80``): there is no
negative zero. Dot ``11`` with exponent +15 and mantissa 1 is infinity; the largest finite
magnitude is 2^15. Every HiF8 value is exact in fp32.

fp32 -> HiF8 (the FixPipe's conversion) rounds to the nearest value, ties away from zero, and
saturates: magnitudes beyond 2^15 (infinities included) become ±2^15; NaN becomes ``0x80``.
"""

from __future__ import annotations

import numpy as np

NAN_CODE = 0x80
#: (dot bits, dot width, exponent magnitude bits, mantissa bits, exponent bias) per dot field,
#: most exponent first; a code's field is the first whose dot bits match its bits 6.. down.
_FIELDS = ((0b11, 2, 3, 1, 8), (0b10, 2, 2, 2, 4), (0b01, 2, 1, 3, 2), (0b001, 3, 0, 3, 1))


def _decode_one(code: int) -> float:
    sign = -1.0 if code & 0x80 else 1.0
    body = code & 0x7F
    for dot, width, exp_bits, man_bits, bias in _FIELDS:
        if body >> (7 - width) != dot:
            continue
        rest = body & ((1 << (7 - width)) - 1)  # exponent sign, magnitude bits, mantissa
        mantissa = rest & ((1 << man_bits) - 1)
        magnitude = bias + ((rest >> man_bits) & ((1 << exp_bits) - 1))
        negative_exp = rest >> (man_bits + exp_bits) & 1
        if dot == 0b11 and not negative_exp and magnitude == 15 and mantissa == 1:
            return sign * np.inf
        return sign * (1 + mantissa / (1 << man_bits)) * 2.0 ** (-magnitude if negative_exp
                                                                 else magnitude)
    mantissa = body & 0b111
    if body >> 3 == 0b0001:
        return sign * (1 + mantissa / 8)
    if mantissa == 0:  # dot 0000
        return np.nan if sign < 0 else 0.0
    return sign * 2.0 ** (mantissa - 23)


#: The value of every code (index = code), as fp32.
VALUES = np.array([_decode_one(c) for c in range(256)], dtype=np.float32)
VALUES.setflags(write=False)
MAX_FINITE = float(np.nanmax(np.where(np.isinf(VALUES), np.nan, VALUES)))

_finite = np.flatnonzero(np.isfinite(VALUES))
_order = np.argsort(VALUES[_finite], kind="stable")
#: The finite values in ascending order, and their codes (the rounding targets).
_TARGETS = VALUES[_finite][_order].astype(np.float64)
_TARGET_CODES = _finite[_order].astype(np.uint8)


def decode(codes: np.ndarray) -> np.ndarray:
    """The fp32 values of HiF8 ``codes`` (any integer array of bytes)."""
    return VALUES[np.asarray(codes).astype(np.uint8, copy=False)]


def encode(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to HiF8 codes (nearest, ties away from zero, saturating; NaN ->
    ``0x80``), as uint8."""
    x = np.asarray(values, dtype=np.float64)
    clipped = np.clip(x, -MAX_FINITE, MAX_FINITE)
    above = np.clip(np.searchsorted(_TARGETS, clipped), 1, _TARGETS.size - 1)
    low, high = _TARGETS[above - 1], _TARGETS[above]
    down, up = clipped - low, high - clipped
    # Nearer target; on a tie the one farther from zero (high for positive, low for negative).
    take_high = (up < down) | ((up == down) & (clipped > 0))
    codes = np.where(take_high, _TARGET_CODES[above], _TARGET_CODES[above - 1])
    return np.where(np.isnan(x), np.uint8(NAN_CODE), codes).astype(np.uint8)
