"""The vector unit's special registers (the mask mode and words, gather_mask's kept count,
mrg_sort's per-queue counts, the DEQSCALE register, the compare-mask register): their state per
core and the executors that set them.

A core starts in normal mode with every mask bit set (the state ``reset_mask`` restores).
Vector instructions issued with ``is_set_mask=False`` read :func:`vector_registers` at issue.

DEQSCALE (``deq``), as the dequantising ops read it: ``("half", scale)`` -- one fp16 scale
(int32 -> fp16); ``("b8", scale, offset, signed)`` -- one fp32 scale, a 9-bit signed offset
and the sign of the 8-bit result (int16 -> int8/uint8); ``("table", region)`` -- the UB
region of 16 64-bit words, one (scale, offset, sign) per lane of a 32-byte block. None until
set. The compare-mask register (``cmp_mask``, ``CMPMASK_BYTES`` bytes) starts all zero.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import CMPMASK_BYTES, CmpMaskMove, SetVectorRegisters
from ascsim.sim.views import check_accesses, gates_done, gates_ready, view

ALL_ONES = 2**64 - 1
MASK_MODES = ("normal", "counter")


@dataclass(frozen=True)
class VectorRegisters:
    """One core's vector-unit special registers (see the module docstring)."""

    mode: str = "normal"
    low: int = ALL_ONES
    high: int = ALL_ONES
    remain: int = 0  # elements the last gather_mask kept
    mrg_sort: tuple = (0, 0, 0, 0)  # entries the last mrg_sort took from each queue
    deq: tuple | None = None  # the DEQSCALE register (see the module docstring)
    cmp_mask: bytes = bytes(CMPMASK_BYTES)


def vector_registers(core) -> VectorRegisters:
    """The core's current special registers."""
    return getattr(core, "vector_registers", None) or VectorRegisters()


def execute_set_registers(core, rec: SetVectorRegisters) -> None:
    if rec.mode is not None and rec.mode not in MASK_MODES:
        raise ValueError(f"mask mode {rec.mode!r} is not one of {MASK_MODES}")
    changes = {name: value for name, value in (("mode", rec.mode), ("low", rec.low),
                                                ("high", rec.high), ("remain", rec.remain),
                                                ("mrg_sort", rec.mrg_sort), ("deq", rec.deq))
               if value is not None}
    core.vector_registers = replace(vector_registers(core), **changes)
    if {"mode", "low", "high", "deq"} & changes.keys() and not rec.side_effect:  # a set-up
        core.scalar_work(core.timing.scalar_cycles_per_call)


def set_cmp_mask_bits(core, bits, values) -> None:
    """Write bits ``bits`` of the compare-mask register (a compare without a destination)."""
    reg = vector_registers(core)
    unpacked = np.unpackbits(np.frombuffer(reg.cmp_mask, np.uint8), bitorder="little")
    unpacked[bits] = values
    core.vector_registers = replace(reg, cmp_mask=np.packbits(unpacked, bitorder="little")
                                    .tobytes())


def cmp_mask_bytes(core) -> np.ndarray:
    """The compare-mask register as a byte array."""
    return np.frombuffer(vector_registers(core).cmp_mask, np.uint8)


def execute_cmp_mask_move(core, rec: CmpMaskMove):
    region, loc = rec.region, rec.loc
    if region.mem.space != "UB":
        raise KernelError(f"{rec.op}: the compare mask moves to or from UB, got a tensor in "
                          f"{region.mem.space}", loc)
    as_bytes = region._replace(dtype=np.dtype(np.uint8))
    access = (region.mem.key, region.offset, region.offset + CMPMASK_BYTES)
    if core.launch.values:
        data = view(core, as_bytes, 0, CMPMASK_BYTES, loc)
        if rec.to_register:
            core.vector_registers = replace(vector_registers(core), cmp_mask=data.tobytes())
        else:
            data[:] = cmp_mask_bytes(core)
    else:
        check_accesses(core, ((as_bytes, access),), loc)
    reads, writes = ((access,), ()) if rec.to_register else ((), (access,))
    busy, latency = core.costs.vector("copy", np.dtype(np.uint16), 1)
    ready = gates_ready((region,))
    start = core.begin("V", max(ready, rec.after))
    instr = core.place("V", rec.op, start, busy, latency, loc, reads, writes, rec)
    gates_done((region,), instr.done)
    return instr


EXECUTORS = {SetVectorRegisters: execute_set_registers, CmpMaskMove: execute_cmp_mask_move}
