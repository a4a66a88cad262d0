"""Conversions between element types with the hardware's rounding modes.

numpy's ``astype`` always rounds to nearest-even. The vector unit's ``cast`` also rounds toward
-inf/+inf/zero, half away from zero, and to odd. For float targets we take numpy's nearest value
and step one unit in the last place where the mode asks for the other neighbour, working on the
target's bit pattern, so fp16 and bf16 (ml_dtypes) are handled alike.
"""

from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import ml_dtypes
import numpy as np
import torch

from ascsim.sim.threads import wide

ROUND_MODES = ("none", "rint", "floor", "ceil", "round", "trunc", "odd")

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: ml_dtypes' float types (numpy kind "V") with a sign bit: bf16 and the two FP8 types (the
#: one-ulp steps of the rounding modes below assume a sign-magnitude code).
_ML_FLOATS = frozenset(np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                             ml_dtypes.float8_e5m2))


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt in _ML_FLOATS


def _step(y: np.ndarray, where_up: np.ndarray, where_down: np.ndarray) -> np.ndarray:
    """Move elements of float array ``y`` one ulp toward +inf / -inf where asked."""
    bits = y.view(_UINT_OF_SIZE[y.dtype.itemsize]).copy()
    sign_bit = bits.dtype.type(1) << bits.dtype.type(8 * y.dtype.itemsize - 1)
    negative = (bits & sign_bit) != 0
    is_zero = (bits & ~sign_bit) == 0
    one = bits.dtype.type(1)
    # Away from zero is +1 on the magnitude bits, toward zero is -1 (sign-magnitude encoding).
    away = (where_up & ~negative) | (where_down & negative)
    toward = (where_up & negative) | (where_down & ~negative)
    bits = np.where(away & ~is_zero, bits + one, bits)
    bits = np.where(toward & ~is_zero, bits - one, bits)
    # From zero, the next value is the smallest subnormal of the requested sign.
    bits = np.where(is_zero & where_up, one, bits)
    bits = np.where(is_zero & where_down, sign_bit | one, bits)
    return bits.view(y.dtype)


def _to_float(x: np.ndarray, target: np.dtype, mode: str) -> np.ndarray:
    exact = x.astype(np.float64)
    y = exact.astype(target)
    if mode in ("none", "rint"):
        return y
    back = y.astype(np.float64)
    finite = np.isfinite(exact) & np.isfinite(back)
    above = finite & (back > exact)
    below = finite & (back < exact)
    if mode == "floor":
        return _step(y, np.zeros_like(above), above)
    if mode == "ceil":
        return _step(y, below, np.zeros_like(below))
    if mode == "trunc":
        return _step(y, below & (exact < 0), above & (exact > 0))
    if mode == "round":
        # Nearest, ties away from zero: differs from nearest-even only on exact ties that
        # nearest-even resolved toward zero.
        other = _step(y, below, above).astype(np.float64)
        tie = finite & (np.abs(other - exact) == np.abs(back - exact)) & (back != exact)
        toward_zero = np.abs(back) < np.abs(exact)
        fix = tie & toward_zero
        return _step(y, fix & (exact > 0), fix & (exact < 0))
    if mode == "odd":
        # Round to odd: truncate, then force the last mantissa bit to 1 if anything was lost.
        t = _step(y, below & (exact < 0), above & (exact > 0))
        inexact = finite & (t.astype(np.float64) != exact)
        bits = t.view(_UINT_OF_SIZE[t.dtype.itemsize]).copy()
        bits = np.where(inexact, bits | bits.dtype.type(1), bits)
        return bits.view(t.dtype)
    raise ValueError(f"unknown round mode {mode!r}; known: {ROUND_MODES}")


_INT_ROUNDERS = {
    "none": np.rint,
    "rint": np.rint,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
}


def _to_int(x: np.ndarray, target: np.dtype, mode: str) -> np.ndarray:
    if x.dtype.kind in "iub":
        return x.astype(target)
    rounder = _INT_ROUNDERS.get(mode)
    if rounder is None:
        raise ValueError(f"round mode {mode!r} does not apply to a float-to-int cast")
    v = rounder(x.astype(np.float64))
    info = np.iinfo(target)
    # The hardware saturates out-of-range values; NaN becomes 0.
    v = np.nan_to_num(v, nan=0.0, posinf=info.max, neginf=info.min)
    return np.clip(v, info.min, info.max).astype(target)


def _to_integral(x: np.ndarray, mode: str) -> np.ndarray:
    """A float cast to its own type rounds to an integral value (Ascend C's Cast table:
    float->float "rounds src with round_mode"); CAST_NONE loses nothing, so it copies."""
    if mode == "none":
        return x.copy()
    rounder = _INT_ROUNDERS.get(mode)
    if rounder is None:
        raise ValueError(f"round mode {mode!r} does not apply to a float-to-same-float cast")
    # Every value of this magnitude is exactly representable in fp64, and so is the result.
    return rounder(x.astype(np.float64)).astype(x.dtype)


def convert(x: np.ndarray, target, mode: str = "rint") -> np.ndarray:
    """Convert ``x`` to ``target`` dtype, rounding as ``mode`` says (see ROUND_MODES).

    Raises ValueError for a mode that does not apply to the conversion (e.g. ``odd`` to int).
    """
    target = np.dtype(target)
    if mode not in ROUND_MODES:
        raise ValueError(f"unknown round mode {mode!r}; known: {ROUND_MODES}")
    with np.errstate(all="ignore"):
        if _is_float(target):
            if x.dtype == target:
                return _to_integral(x, mode)
            return _to_float(x, target, mode)
        return _to_int(x, target, mode)


#: Elements from which :func:`widen_to_fp32` converts with PyTorch: its vectorised fp16/bf16
#: conversion is ~10x faster than numpy's per element, but costs a few microseconds to set up.
TORCH_WIDEN_MIN_ELEMENTS = 2048

#: The low-precision float types the datapath widens: numpy dtype -> the PyTorch type of the
#: same bits.
LOW_PRECISION = {np.dtype(np.float16): torch.float16, np.dtype(ml_dtypes.bfloat16): torch.bfloat16}


def widen_to_fp32(x: np.ndarray) -> np.ndarray:
    """``x`` as fp32 (a new array; ``x`` itself when it already is fp32). Exact for every
    fp16/bf16 value; a signalling fp16 NaN comes out quiet, as the hardware's converters do."""
    if x.dtype == np.float32:
        return x
    torch_type = LOW_PRECISION.get(x.dtype)
    # PyTorch takes neither negative strides nor read-only arrays (it warns) without a copy.
    if (torch_type is None or x.size < TORCH_WIDEN_MIN_ELEMENTS or not x.flags.writeable
            or any(s < 0 for s in x.strides)):
        return x.astype(np.float32)
    # torch.from_numpy does not know ml_dtypes' bf16: hand it the bits as int16.
    return torch.from_numpy(x.view(np.int16)).view(torch_type).float().numpy()


def compute_dtype(arr: np.ndarray) -> np.ndarray:
    """Operands as the vector datapath sees them: fp16/bf16 widened to fp32, others as they are."""
    return widen_to_fp32(arr) if arr.dtype in LOW_PRECISION else arr


def cube_matmul(a: np.ndarray, b: np.ndarray, initial: np.ndarray | None = None) -> np.ndarray:
    """A·B summed in fp32 as the Cube's L0C does, added to ``initial`` (bias or partial C).

    Products of fp16 and bf16 inputs are exact in fp32; they (and fp32 inputs' products) are
    summed in an fp32 accumulator. The Cube's summation order is not published, so the order of
    PyTorch's CPU single-precision matrix product stands in for it; ``initial`` — the bias row,
    the bias-table contents or the partial sums already in L0C — is added to the finished
    product in fp32. A consequence worth knowing: a Matmul of fp16/bf16 inputs reproduces
    ``torch.matmul`` of the same inputs cast to fp32 bit for bit, so comparing a kernel with
    that reference checks its data path (layouts, tiling, tails, bias), not device rounding.
    """
    with wide(a.shape[0] * a.shape[1] * b.shape[1]):
        return _fp32_product(widen_to_fp32(a), widen_to_fp32(b), initial)


def start_cube_matmul(a: np.ndarray, b: np.ndarray,
                      initial: np.ndarray | None = None) -> Future:
    """:func:`cube_matmul` on a worker thread: returns at once with a Future of its result.

    The operands are copied (and widened) here, in the caller's thread, so the result is
    what ``cube_matmul(a, b, initial)`` returns now, whatever happens to the arrays later.
    A Matmul starts its region's product when the region begins and takes the values when
    its first block leaves L0C: the product then runs on another host core while the
    simulator goes on with the timing, and the products of two regions run side by side.
    (Each uses one PyTorch thread; the bits do not depend on the thread count.)
    """
    a32 = widen_to_fp32(a)
    b32 = widen_to_fp32(b)
    private = (a32 if a32 is not a else a32.copy(), b32 if b32 is not b else b32.copy(),
               None if initial is None else np.array(initial, dtype=np.float32))
    return _workers().submit(_fp32_product, *private)


#: Worker threads for :func:`start_cube_matmul`: a MIX kernel's two AIVs start their regions'
#: products one right after the other, and the simulator's own thread needs a core too.
PRODUCT_WORKERS = 2
PRODUCT_THREAD_PREFIX = "ascsim-cube"


@functools.cache
def _workers() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=PRODUCT_WORKERS,
                              thread_name_prefix=PRODUCT_THREAD_PREFIX)


# A forked child has none of the parent's threads: the pool it inherited would take work and
# never run it. The child makes its own on first use.
os.register_at_fork(after_in_child=_workers.cache_clear)


def release_threads() -> bool:
    """End the product worker threads if this process runs nothing else (they are made again
    on the next use), so that it is a single thread again and may fork safely; True when the
    process is single-threaded afterwards. Does nothing while another thread may launch."""
    if _workers.cache_info().currsize:
        others = [t for t in threading.enumerate() if t is not threading.current_thread()
                  and not t.name.startswith(PRODUCT_THREAD_PREFIX)]
        if others:
            return False
        _workers().shutdown(wait=True)
        _workers.cache_clear()
    return threading.active_count() == 1


def _fp32_product(a32: np.ndarray, b32: np.ndarray, initial: np.ndarray | None) -> np.ndarray:
    """fp32 ``a32 @ b32`` in PyTorch's CPU order, plus ``initial`` in fp32."""
    out = torch.matmul(torch.from_numpy(np.ascontiguousarray(a32)),
                       torch.from_numpy(np.ascontiguousarray(b32))).numpy()
    if initial is not None:
        with np.errstate(all="ignore"):
            out += initial.astype(np.float32, copy=False)
    return out


#: Mantissa bits the Cube keeps of an fp32 input in HF32 mode (the HF32 page of Ascend C's
#: Mmad documentation states 10 for the 950; the 910B figure is not available as text and
#: the same width is assumed).
HF32_MANTISSA_BITS = 10
HF32_TIES = ("even", "away")


def to_hf32(x: np.ndarray, ties: str = "even") -> np.ndarray:
    """fp32 values rounded to HF32 (sign, 8 exponent bits, ``HF32_MANTISSA_BITS`` mantissa
    bits), kept as fp32: to nearest, ties to even (``"even"``) or away from zero
    (``"away"``). Infinities and NaNs pass unchanged; a carry into the exponent is the
    correctly rounded result (up to infinity past the largest finite value)."""
    if ties not in HF32_TIES:
        raise ValueError(f"HF32 ties rule {ties!r} is not one of {HF32_TIES}")
    drop = 23 - HF32_MANTISSA_BITS
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    half = np.uint64(1 << (drop - 1))
    if ties == "even":
        keep_lsb = (bits >> np.uint64(drop)) & np.uint64(1)
        rounded = bits + half - np.uint64(1) + keep_lsb
    else:
        rounded = bits + half
    rounded &= ~np.uint64((1 << drop) - 1)
    finite = np.isfinite(np.asarray(x, dtype=np.float32))
    out = np.where(finite, rounded, bits).astype(np.uint32).view(np.float32)
    return out.reshape(np.shape(x))
