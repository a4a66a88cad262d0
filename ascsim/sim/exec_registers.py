"""The vector unit's special registers (the mask mode and words, gather_mask's kept count,
mrg_sort's per-queue counts): their state per core and the executor that sets them.

A core starts in normal mode with every mask bit set (the state ``reset_mask`` restores).
Vector instructions issued with ``is_set_mask=False`` read :func:`vector_registers` at issue.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ascsim.isa.instr import SetVectorRegisters

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


def vector_registers(core) -> VectorRegisters:
    """The core's current special registers."""
    return getattr(core, "vector_registers", None) or VectorRegisters()


def execute_set_registers(core, rec: SetVectorRegisters) -> None:
    if rec.mode is not None and rec.mode not in MASK_MODES:
        raise ValueError(f"mask mode {rec.mode!r} is not one of {MASK_MODES}")
    changes = {name: value for name, value in (("mode", rec.mode), ("low", rec.low),
                                                ("high", rec.high), ("remain", rec.remain),
                                                ("mrg_sort", rec.mrg_sort))
               if value is not None}
    core.vector_registers = replace(vector_registers(core), **changes)
    if {"mode", "low", "high"} & changes.keys() and not rec.side_effect:  # a set-up instruction
        core.scalar_work(core.timing.scalar_cycles_per_call)


EXECUTORS = {SetVectorRegisters: execute_set_registers}
