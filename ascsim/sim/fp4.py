"""The 950's 4-bit floats (the MXFP4 element types), stored two to a byte.

A byte holds two consecutive elements of the packed axis: the first in its low four bits, the
second in its high four bits (PyPTO Pro matmul_mx.md, "MXFP4示例"). A code is a sign bit (bit
3) and three bits of exponent and mantissa, with no infinities or NaN:

=========  ==============  ====  ==========================================  ===============
format     exponent bits   bias  value of (e, m)                             magnitudes
=========  ==============  ====  ==========================================  ===============
E2M1       2 (bits 2..1)   1     ``m/2`` at e = 0, else ``(1 + m/2) 2^(e-1)``  0 .. 6
E1M2       1 (bit 2)       1     ``m/4`` at e = 0, else ``1 + m/4``           0 .. 1.75
=========  ==============  ====  ==========================================  ===============

(E2M1 is OCP Microscaling Formats v1.0's FP4, ml_dtypes' ``float4_e2m1fn``; E1M2 is the
950's second MXFP4 type, which ml_dtypes does not have.) Every value is exact in fp32.
"""

from __future__ import annotations

import numpy as np

#: format -> (exponent bits, mantissa bits, bias).
FORMATS = {"float4_e2m1": (2, 1, 1), "float4_e1m2": (1, 2, 1)}


def _value(code: int, exp_bits: int, man_bits: int, bias: int) -> float:
    sign = -1.0 if code & 0b1000 else 1.0
    e = code >> man_bits & ((1 << exp_bits) - 1)
    m = code & ((1 << man_bits) - 1)
    if e == 0:
        return sign * m / (1 << man_bits) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)


#: format -> the value of each of its 16 codes (index = code), fp32.
VALUES = {name: np.array([_value(c, *spec) for c in range(16)], dtype=np.float32)
          for name, spec in FORMATS.items()}
for _table in VALUES.values():
    _table.setflags(write=False)


def decode(codes: np.ndarray, fmt: str) -> np.ndarray:
    """The fp32 values of 4-bit ``codes`` (one code per array element) of format ``fmt``."""
    return VALUES[fmt][np.asarray(codes, dtype=np.uint8) & 0xF]


def unpack(packed: np.ndarray) -> np.ndarray:
    """Bytes -> their codes, twice as many: byte ``i`` gives codes ``2i`` (low four bits) and
    ``2i + 1`` (high four bits)."""
    packed = np.asarray(packed).view(np.uint8).reshape(-1)
    out = np.empty(packed.size * 2, dtype=np.uint8)
    out[0::2] = packed & 0xF
    out[1::2] = packed >> 4
    return out


def pack(codes: np.ndarray) -> np.ndarray:
    """Codes (an even count) -> bytes, the inverse of :func:`unpack`."""
    codes = np.asarray(codes, dtype=np.uint8).reshape(-1)
    return (codes[0::2] & 0xF) | ((codes[1::2] & 0xF) << 4)


#: Rounding of :func:`encode` (the vector unit's cast modes, ascsim.sim.numerics): which of
#: the two magnitudes around a value it takes, by the value's sign.
ROUND_MODES = ("none", "rint", "round", "trunc", "floor", "ceil")


def encode(values: np.ndarray, fmt: str, mode: str = "rint") -> np.ndarray:
    """``values`` as codes of ``fmt`` (uint8, one code per element): the nearest magnitude,
    ties to the even code (``rint``, ``none``) or away from zero (``round``); toward zero
    (``trunc``), -inf (``floor``) or +inf (``ceil``). There are no infinities: magnitudes past
    the largest saturate to it. There is no NaN code either; NaN becomes +0 (no rule is
    published for it)."""
    if mode not in ROUND_MODES:
        raise ValueError(f"round mode {mode!r} does not apply to a cast to {fmt}; known: "
                         f"{ROUND_MODES}")
    x = np.asarray(values, dtype=np.float64)
    mags = VALUES[fmt][:8].astype(np.float64)  # codes 0..7, ascending
    negative = np.signbit(x) & ~np.isnan(x)
    a = np.nan_to_num(np.abs(x), nan=0.0, posinf=mags[-1])
    a = np.minimum(a, mags[-1])
    high = np.clip(np.searchsorted(mags, a), 0, 7)  # first magnitude >= a
    low = np.where(mags[high] == a, high, np.maximum(high - 1, 0))
    down, up = a - mags[low], mags[high] - a
    if mode in ("none", "rint"):
        pick = np.where(up < down, high, np.where(down < up, low,
                                                  np.where(low % 2 == 0, low, high)))
    elif mode == "round":
        pick = np.where(down < up, low, high)
    elif mode == "trunc":
        pick = low
    else:  # floor / ceil: toward -inf / +inf, i.e. away from zero for one sign
        away = negative if mode == "floor" else ~negative
        pick = np.where(away, high, low)
    return (pick.astype(np.uint8) | np.where(negative, 0b1000, 0).astype(np.uint8))
