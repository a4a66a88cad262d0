"""``asc.adv.swiglu``: dst = src0 · swish(src1) = src0 · src1 / (1 + exp(-β·src1))."""

from __future__ import annotations

import numpy as np

from ascsim.asc.adv.composite import sequence_cycles
from ascsim.asc.basic._exec import count_repeats, execute
from ascsim.asc.basic.vector import compute_dtype
from ascsim.asc.context import user_location
from ascsim.sim.errors import KernelError

# muls(-β), exp, adds(1), div (src1 / denominator), mul (by src0).
SWIGLU_STEPS = ("muls", "exp", "adds", "div", "mul")


def swiglu(dst, src0, src1, scalar_value: float = 1.0, shared_tmp_buffer=None,
           cal_count: int | None = None, **kwargs) -> None:
    """``swiglu(dst, src0, src1, scalar_value=1.0, shared_tmp_buffer=None, cal_count=None)``."""
    loc = user_location()
    count = kwargs.pop("count", cal_count)
    if kwargs:
        raise KernelError(f"swiglu: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    if count is None:
        count = min(dst.length, src0.length, src1.length)
    count = int(count)
    a = compute_dtype(src0.elements(0, count, loc))
    g = compute_dtype(src1.elements(0, count, loc))
    beta = np.float32(scalar_value)
    with np.errstate(all="ignore"):
        y = a * g / (np.float32(1) + np.exp(-beta * g))
    dst.elements(0, count, loc)[:] = y.astype(dst.dtype.np_dtype)
    repeats = count_repeats(count, dst.dtype.sizeof())
    busy, latency = sequence_cycles(SWIGLU_STEPS, dst.dtype.name, repeats)
    tensors = (dst, src0, src1) + ((shared_tmp_buffer,) if shared_tmp_buffer is not None else ())
    execute("V", "swiglu", busy, latency, loc, tensors,
            (src0.access(0, count), src1.access(0, count)), (dst.access(0, count),))
