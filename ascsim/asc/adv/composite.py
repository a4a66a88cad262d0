"""High-level vector APIs are sequences of basic vector instructions on the device.

The functional result is computed at once with numpy (in fp32, rounded once to the destination
type); the cost is that of the instruction sequence the library issues, each step waiting for
the previous one (the library separates them with PIPE_V barriers).
"""

from __future__ import annotations

from ascsim.asc.context import current_core
from ascsim.isa import KernelError, VectorSequence, count_repeats
from ascsim.sim.numerics import compute_dtype


def sequence(op: str, dst, srcs, fn, steps, repeats: int, dtype: str, loc, extra=(),
             scratch=()):
    """Execute a library routine: ``fn`` over the source regions, costed as ``steps``."""
    return current_core().execute(VectorSequence(op, dst, tuple(srcs), fn, tuple(steps), repeats,
                                                 dtype, loc, tuple(extra), tuple(scratch)))


def unary_composite(name: str, steps, fn, dst, src, count, loc, extra_reads=()) -> None:
    """Run ``dst[:count] = fn(src[:count])`` (computed in fp32) costed as ``steps``."""
    if count is None:
        count = min(dst.length, src.length)
    count = int(count)
    if count < 0:
        raise KernelError(f"{name}: count {count} is negative", loc)
    repeats = count_repeats(count, max(dst.dtype.sizeof(), src.dtype.sizeof()))
    sequence(name, dst.region(count), (src.region(count),), lambda x: fn(compute_dtype(x)),
             steps, repeats, src.dtype.np_name, loc,
             extra=tuple(t.region(n) for t, n in extra_reads))
