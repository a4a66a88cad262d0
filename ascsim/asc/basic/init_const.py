"""``init_const_value(dst, InitConstValueParams)``: fill L1 / L0A / L0B with one value
(Ascend C's Fill).

``repeat_times`` rows of ``block_num`` blocks, ``dst_gap`` blocks between rows; a block is
32 bytes in L1 and 512 bytes (a fractal) in L0A/L0B. One value-carrying
:class:`~ascsim.isa.instr.Copy` without a source, on the pipe the instruction occupies:
MTE2 for L1 (priced as a GM->L1 transfer of those bytes -- the cost model has no fill path, so
the DMA's read latency is included) and MTE1 for L0A/L0B (an L1->L0 transfer). The 950 fills
L1 only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.asc.basic import cube as _cube
from ascsim.asc.context import current_core, user_location
from ascsim.asc.params import _check_ranges, coerce_fields
from ascsim.isa import Bursts, Copy, KernelError

#: Destination buffer -> (block bytes, the path it is priced as).
FILL_TARGETS = {"L1": (32, "GM->L1"), "L0A": (512, "L1->L0A"), "L0B": (512, "L1->L0B")}
FIELD = (0, 32767)


@dataclass(frozen=True)
class InitConstValueParams:
    """``InitConstValueParams(repeat_times=0, block_num=0, dst_gap=0, init_value=0)``; a zero
    ``repeat_times`` or ``block_num`` makes the call a no-op."""

    repeat_times: int = 0
    block_num: int = 0
    dst_gap: int = 0
    init_value: float = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"repeat_times": FIELD, "block_num": FIELD, "dst_gap": FIELD})


def init_const_value(dst, init_const_value_params: InitConstValueParams) -> None:
    """Fill ``repeat_times`` rows of ``block_num`` blocks of ``dst`` with ``init_value``."""
    loc = user_location()
    p = init_const_value_params
    name = _cube._name(dst)
    core = current_core()
    if name not in FILL_TARGETS or (core.soc.fill_l1_only and name != "L1"):
        allowed = ("L1",) if core.soc.fill_l1_only else tuple(FILL_TARGETS)
        raise KernelError(f"init_const_value: {core.soc.name} fills {' / '.join(allowed)} "
                          f"only, got a tensor in {name}", loc)
    block, path = FILL_TARGETS[name]
    if p.repeat_times == 0 or p.block_num == 0:  # documented NOP
        core.call_overhead()
        return
    width = p.block_num * block
    bursts = Bursts(0, 0, width, width, width + p.dst_gap * block, p.repeat_times)
    values = np.full((p.repeat_times, width // dst.dtype.sizeof()),
                     np.asarray(p.init_value).astype(dst.dtype.np_dtype))
    core.execute(Copy(None, dst.region(), bursts, loc, "init_const_value", path=path,
                      gm=(), values=values))


__all__ = ["InitConstValueParams", "init_const_value"]
