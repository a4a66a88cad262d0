"""High-level vector APIs are sequences of basic vector instructions on the device.

The functional result is computed at once with numpy (in fp32, rounded once to the destination
type); the cost is that of the instruction sequence the library issues, each step waiting for
the previous one (the library separates them with PIPE_V barriers).
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic._exec import count_repeats, execute, vector_cycles
from ascsim.asc.basic.vector import compute_dtype
from ascsim.asc.context import current_core
from ascsim.sim.errors import KernelError


def sequence_cycles(steps, dtype_name: str, repeats: int) -> tuple[float, float]:
    """(busy, latency) of dependent vector steps, each over ``repeats`` repeats.

    ``steps`` lists cost classes, or ``(cost class, repeats)`` pairs for steps over fewer
    elements; each step starts ``vector_step_cycles`` after the previous one's result is ready.
    """
    core = current_core()
    # Each step waits for the previous one's result (PIPE_V barrier) and then pays the
    # barrier's bubble before it issues: dependent steps expose latency + start-up.
    step_cycles = core.timing.vector_step_cycles
    busy = 0.0
    latency = 0.0
    for step in steps:
        op, n = (step, repeats) if isinstance(step, str) else step
        b, lat = vector_cycles(op, dtype_name, n)
        busy += latency + step_cycles + b
        latency = lat
    # The scalar unit issues every step of the sequence.
    core.scalar_work(core.timing.scalar_cycles_per_call * (len(steps) - 1))
    return busy, latency


def unary_composite(name: str, steps, fn, dst, src, count, loc, extra_reads=()) -> None:
    """Run ``dst[:count] = fn(src[:count])`` costed as ``steps``."""
    if count is None:
        count = min(dst.length, src.length)
    count = int(count)
    if count < 0:
        raise KernelError(f"{name}: count {count} is negative", loc)
    x = compute_dtype(src.elements(0, count, loc))
    with np.errstate(all="ignore"):
        y = fn(x)
    dst.elements(0, count, loc)[:] = np.asarray(y).astype(dst.dtype.np_dtype)
    repeats = count_repeats(count, max(dst.dtype.sizeof(), src.dtype.sizeof()))
    busy, latency = sequence_cycles(steps, src.dtype.name, repeats)
    tensors = (dst, src) + tuple(t for t, _ in extra_reads)
    reads = (src.access(0, count),) + tuple(t.access(0, n) for t, n in extra_reads)
    execute("V", name, busy, latency, loc, tensors, reads, (dst.access(0, count),))
