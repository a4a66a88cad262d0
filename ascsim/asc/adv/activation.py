"""``asc.adv.swiglu``: dst = src0 · swish(src1) = src0 · src1 / (1 + exp(-β·src1))."""

from __future__ import annotations

import numpy as np

from ascsim.asc.adv.composite import sequence
from ascsim.asc.context import user_location
from ascsim.asc.errors import CallFormError
from ascsim.isa import count_repeats
from ascsim.sim.numerics import compute_dtype

# muls(-β), exp, adds(1), div (src1 / denominator), mul (by src0).
SWIGLU_STEPS = ("muls", "exp", "adds", "div", "mul")


def swiglu(dst, src0, src1, scalar_value: float = 1.0, shared_tmp_buffer=None,
           cal_count: int | None = None, **kwargs) -> None:
    """``swiglu(dst, src0, src1, scalar_value=1.0, shared_tmp_buffer=None, cal_count=None)``."""
    loc = user_location()
    count = kwargs.pop("count", cal_count)
    if kwargs:
        raise CallFormError(f"swiglu: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    if count is None:
        count = min(dst.length, src0.length, src1.length)
    count = int(count)
    beta = np.float32(scalar_value)

    def swish_gate(a, g):
        a, g = compute_dtype(a), compute_dtype(g)
        return a * g / (np.float32(1) + np.exp(-beta * g))

    scratch = () if shared_tmp_buffer is None else (shared_tmp_buffer.region(),)
    sequence("swiglu", dst.region(count), (src0.region(count), src1.region(count)), swish_gate,
             SWIGLU_STEPS, count_repeats(count, dst.dtype.sizeof()), dst.dtype.np_name,
             loc, scratch=scratch)
