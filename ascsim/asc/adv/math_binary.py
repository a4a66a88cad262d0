"""Two-operand element-wise math of the high-level API: ``asc.adv.power``, ``xor``, ``axpy``.

As for the one-operand functions (:mod:`ascsim.asc.adv.math`), the result is computed at once
(floats in fp32, rounded once to the destination type; integers exactly) and the cost is the
instruction chain the library runs.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.adv.composite import sequence
from ascsim.asc.context import user_location
from ascsim.isa import count_repeats
from ascsim.sim.errors import KernelError
from ascsim.sim.numerics import compute_dtype


def _power(base, exponent):
    base, exponent = compute_dtype(base), compute_dtype(exponent)
    if base.dtype.kind in "iu":  # integer powers: exact, wrapping like the integer multiplies
        return np.power(base, np.maximum(exponent, 0).astype(base.dtype))
    with np.errstate(all="ignore"):
        return np.power(base, exponent)


def _xor(a, b):
    return np.bitwise_xor(a, b)


# name -> (function of the two sources, whether it takes float tensors, instruction chain)
BINARY_MATH = {
    # |a|^b = exp(b ln|a|), with the sign of a restored for odd integral b.
    "power": (_power, True, ("abs", "ln", "mul", "exp", "compare", "select", "mul")),
    # a ^ b = (a | b) & ~(a & b)
    "xor": (_xor, False, ("or", "and", "not", "and")),
}


def _count(name: str, count, tensors, loc) -> int:
    if count is None:
        count = min(t.length for t in tensors)
    count = int(count)
    if count < 0:
        raise KernelError(f"{name}: count {count} is negative", loc)
    return count


def _make(name, fn, takes_floats, steps):
    def op(dst, src0, src1, count=None, temp_buffer=None, is_reuse_source=False):
        loc = user_location()
        if dst.dtype.is_float() and not takes_floats:
            raise KernelError(f"{name}: {dst.dtype.name} tensors are not supported (integer "
                              "tensors only)", loc)
        if not dst.dtype == src0.dtype == src1.dtype:
            raise KernelError(f"{name}: dst, src0 and src1 must have one type, got "
                              f"{dst.dtype.name}, {src0.dtype.name}, {src1.dtype.name}", loc)
        n = _count(name, count, (dst, src0, src1), loc)
        scratch = () if temp_buffer is None else (temp_buffer.region(),)
        sequence(name, dst.region(n), (src0.region(n), src1.region(n)), fn, steps,
                 count_repeats(n, dst.dtype.sizeof()), dst.dtype.np_name, loc,
                 scratch=scratch)

    op.__name__ = name
    op.__doc__ = (f"``asc.adv.{name}(dst, src0, src1, count=None, temp_buffer=None, "
                  "is_reuse_source=False)``.")
    return op


def axpy(dst, src, scalar, count=None, temp_buffer=None, is_reuse_source=False) -> None:
    """``asc.adv.axpy(dst, src, scalar, count=None, temp_buffer=None)``: ``dst += src * scalar``
    (an fp16 source with an fp32 destination is widened first, as the library does)."""
    loc = user_location()
    n = _count("axpy", count, (dst, src), loc)
    alpha = np.float32(scalar)
    stored = dst.dtype.np_dtype

    def fn(x, acc):
        # muls, then add: the product is rounded to the destination type before the sum
        product = (compute_dtype(x) * alpha).astype(stored)
        return compute_dtype(product) + compute_dtype(acc)

    scratch = () if temp_buffer is None else (temp_buffer.region(),)
    steps = ("muls", "add") if dst.dtype == src.dtype else ("cast", "muls", "add")
    sequence("axpy", dst.region(n), (src.region(n), dst.region(n)), fn, steps,
             count_repeats(n, dst.dtype.sizeof()), dst.dtype.np_name, loc,
             scratch=scratch)


BINARY = {name: _make(name, fn, floats, steps)
          for name, (fn, floats, steps) in BINARY_MATH.items()}
BINARY["axpy"] = axpy

__all__ = ["BINARY", "axpy"]
