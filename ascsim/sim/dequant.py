"""The vector unit's dequantising and fused-cast arithmetic (rows of the vector op table).

Sources: Ascend C's CastDequant, AddDeqRelu, SetDeqScale, AddReluCast, SubReluCast and
MulCast pages (asc-devkit's API docs).

- **DEQSCALE word** (64 bits; the register, and each of the 16 words of a vector-dequant table
  in UB): bits 0-31 an fp32 scale, of which the hardware uses the sign, the 8 exponent bits and
  the top 10 mantissa bits (the 13 bits below are ignored: the scale is truncated to that
  (1, 8, 10) format); bits 37-45 a 9-bit two's-complement offset; bit 46 the sign mode (1: the
  8-bit result is signed, int8; 0: unsigned, uint8).
- **int16 -> 8 bit**: ``sat(rint(src * scale + offset))``, computed in fp32, rounded to nearest
  even (the pages do not name the rounding; nearest-even is the unit's default) and saturated
  to the 8-bit range the sign mode says. The byte is stored as it is in the destination's
  type (an int8 destination with an unsigned sign mode holds the uint8 bit pattern, as on the
  device). With the vector table, lane ``p`` of a 32-byte source block uses word ``p``.
- **int32 -> fp16** (CastDequant, AddDeqRelu): ``fp16(fp32(x) * scale)`` with the fp16 scale
  of the register, rounded to nearest even (RINT, as the AddDeqRelu page says); AddDeqRelu
  adds first (in 64-bit, no wrap) and takes the ReLU of the scaled value.
- **Fused casts** (``add_relu_cast``, ``sub_relu_cast``, ``mul_cast``): the add/sub/mul result
  in the sources' type (as the plain instruction would leave it), its ReLU, then converted:
  to a float type to nearest even, to an integer type rounded to nearest even and saturated.
"""

from __future__ import annotations

import numpy as np

from ascsim.sim.numerics import convert

SCALE_MASK = 0xFFFF_E000  # the (1, 8, 10) part of an fp32 scale
OFFSET_SHIFT, OFFSET_BITS = 37, 9
SIGN_SHIFT = 46
B8_RANGE = {True: (-128, 127), False: (0, 255)}  # by sign mode
#: Words of a vector-dequant table: one per lane of a 32-byte block of int16.
TABLE_WORDS = 16


def scale_1_8_10(scale) -> np.ndarray:
    """An fp32 scale as the hardware uses it: its mantissa cut to 10 bits."""
    bits = np.asarray(scale, dtype=np.float32).view(np.uint32) & np.uint32(SCALE_MASK)
    return bits.view(np.float32)


def pack_deq_word(scale: float, offset: int, signed: bool) -> int:
    """The 64-bit DEQSCALE word of an int16 -> 8-bit dequantisation."""
    scale_bits = int(np.asarray(scale, dtype=np.float32).view(np.uint32))
    offset_bits = int(offset) & ((1 << OFFSET_BITS) - 1)
    return scale_bits | (offset_bits << OFFSET_SHIFT) | (int(bool(signed)) << SIGN_SHIFT)


def unpack_deq_words(words: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fp32 scales in (1, 8, 10), int offsets, signed flags) of DEQSCALE words."""
    words = np.asarray(words, dtype=np.uint64)
    scale = scale_1_8_10((words & np.uint64(0xFFFF_FFFF)).astype(np.uint32).view(np.float32))
    raw = ((words >> np.uint64(OFFSET_SHIFT)) & np.uint64((1 << OFFSET_BITS) - 1)).astype(
        np.int64)
    offset = np.where(raw >= 1 << (OFFSET_BITS - 1), raw - (1 << OFFSET_BITS), raw)
    signed = ((words >> np.uint64(SIGN_SHIFT)) & np.uint64(1)).astype(bool)
    return scale, offset, signed


def dequant_b8(src: np.ndarray, scale, offset, signed) -> np.ndarray:
    """int16 -> the 8-bit values (as int64, in the sign mode's range); the parameters are
    scalars or per-element arrays."""
    with np.errstate(all="ignore"):
        value = (src.astype(np.float32) * scale_1_8_10(scale)
                 + np.asarray(offset).astype(np.float32))
    value = np.rint(value.astype(np.float64))
    signed = np.asarray(signed, dtype=bool)
    lo = np.where(signed, B8_RANGE[True][0], B8_RANGE[False][0])
    hi = np.where(signed, B8_RANGE[True][1], B8_RANGE[False][1])
    return np.clip(np.nan_to_num(value, nan=0.0), lo, hi).astype(np.int64)


def dequant_table(src: np.ndarray, words: np.ndarray) -> np.ndarray:
    """int16 -> 8 bit with one table word per element (the words of each element's lane)."""
    scale, offset, signed = unpack_deq_words(words)
    return dequant_b8(src, scale, offset, signed)


def dequant_fp16(x: np.ndarray, scale: float, relu: bool) -> np.ndarray:
    """int -> fp16: ``fp16(fp32(x) * scale)`` (then its ReLU), to nearest even."""
    with np.errstate(all="ignore"):
        value = x.astype(np.float32) * np.float32(np.float16(scale))
    if relu:
        value = np.maximum(value, np.float32(0))
    return value.astype(np.float16)


def store_bytes(dst_view, index, result, source, rec) -> None:
    """Store 8-bit results (int64 in [-128, 255]) as their bytes in the destination's type."""
    dst_view[index] = np.asarray(result, dtype=np.int64).astype(np.uint8).view(dst_view.dtype)


def store_dequant(dst_view, index, result, source, rec) -> None:
    """Store with the DEQSCALE register ``rec.attrs`` (see :mod:`ascsim.sim.exec_registers`)
    and, for ``add_deq_relu``, a ReLU: ``attrs = (register, relu)``."""
    register, relu = rec.attrs
    if register[0] == "half":
        dst_view[index] = dequant_fp16(np.asarray(result), register[1], relu)
    else:  # ("b8", scale, offset, signed)
        store_bytes(dst_view, index, dequant_b8(np.asarray(result), *register[1:]), source, rec)


def saturate(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """``x`` converted to ``target``: floats to nearest even, integers rounded to nearest even
    and saturated to the target's range."""
    target = np.dtype(target)
    if target.kind in "iu":
        info = np.iinfo(target)
        wide = x.astype(np.float64) if x.dtype.kind not in "iub" else x.astype(np.int64)
        wide = np.nan_to_num(np.rint(wide), nan=0.0) if wide.dtype.kind == "f" else wide
        return np.clip(wide, info.min, info.max).astype(target)
    return convert(x, target, "rint")


def store_fused_cast(dst_view, index, result, source, rec) -> None:
    """A fused cast's store: the result in the sources' type first, then :func:`saturate`."""
    with np.errstate(all="ignore"):
        in_source = np.asarray(result).astype(source)
    dst_view[index] = saturate(in_source, dst_view.dtype)


def relu(x):
    return np.maximum(x, 0)


def add_wide(a, b):
    """An integer sum without wrapping (the dequantising add)."""
    return a.astype(np.int64) + b
