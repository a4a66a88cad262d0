"""``asc.adv.quant``: per-tensor quantisation to int8, ``dst = int8(src * scale + offset)``.

The library (CANN's AscendQuant) works in fp16 whatever the source type: an fp32 source is
first cast to fp16, then ``muls`` by the scale and ``adds`` the offset (both taken as fp16),
each step rounding to fp16, and the result is cast to int8 with CAST_NONE, which rounds half to
even and saturates to [-128, 127]. The model computes exactly that; the cost is that chain of
instructions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.asc.adv.composite import sequence
from ascsim.asc.context import user_location
from ascsim.asc.errors import CallFormError
from ascsim.isa import count_repeats
from ascsim.sim.errors import KernelError
from ascsim.sim.numerics import convert

#: The instruction chain per source type.
QUANT_STEPS = {"float16": ("muls", "adds", "cast"), "float32": ("cast", "muls", "adds", "cast")}


@dataclass(frozen=True)
class QuantConfig:
    """pyasc's ``asc.adv.QuantConfig`` (Ascend C's AscendQuantConfig): compile-time sizes.

    ``calc_count``: elements to quantise when the call gives no count (0: not fixed);
    ``offset_count`` / ``scale_count``: lengths of per-channel offset/scale tensors (0 for the
    per-tensor form); ``work_local_size``: bytes of temporary buffer the kernel provides.
    """

    calc_count: int = 0
    offset_count: int = 0
    scale_count: int = 0
    work_local_size: int = 0

    def __post_init__(self):
        for name in ("calc_count", "offset_count", "scale_count", "work_local_size"):
            if int(getattr(self, name)) < 0:
                raise ValueError(f"QuantConfig.{name} must not be negative, got "
                                 f"{getattr(self, name)}")


def quantize(src: np.ndarray, scale: float, offset: float) -> np.ndarray:
    """The library's arithmetic: fp16 steps, then a saturating round-half-even cast to int8."""
    half = src.astype(np.float16)
    scaled = (half.astype(np.float32) * np.float32(np.float16(scale))).astype(np.float16)
    shifted = (scaled.astype(np.float32) + np.float32(np.float16(offset))).astype(np.float16)
    return convert(shifted, np.int8, "none")


def quant(dst, src, scale, offset, count=None, temp_buffer=None, reuse_source: bool = False,
          config: QuantConfig | None = None, **kwargs) -> None:
    """``asc.adv.quant(dst, src, scale, offset, count=None, temp_buffer=None,
    reuse_source=False, config=None)``: int8 ``dst`` from fp16/fp32 ``src``."""
    loc = user_location()
    count = kwargs.pop("cal_count", count)
    if kwargs:
        raise CallFormError(f"quant: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    if dst.dtype.name != "int8":
        raise KernelError(f"quant: dst must be int8, got {dst.dtype.name}", loc)
    steps = QUANT_STEPS.get(src.dtype.name)
    if steps is None:
        raise KernelError(f"quant: src must be float16 or float32, got {src.dtype.name}", loc)
    if count is None and config is not None and config.calc_count:
        count = config.calc_count
    if count is None:
        count = min(dst.length, src.length)
    count = int(count)
    if count < 0:
        raise KernelError(f"quant: count {count} is negative", loc)
    scale, offset = float(scale), float(offset)
    scratch = () if temp_buffer is None else (temp_buffer.region(),)
    sequence("quant", dst.region(count), (src.region(count),),
             lambda x: quantize(x, scale, offset), steps,
             count_repeats(count, src.dtype.sizeof()), "float16", loc, scratch=scratch)


__all__ = ["QuantConfig", "quant"]
