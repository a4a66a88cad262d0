"""The vector mask registers (and gather_mask's kept-element count): their state per core and
the executor that sets them.

A core starts in normal mode with every mask bit set (the state ``reset_mask`` restores).
Vector instructions issued with ``is_set_mask=False`` read :func:`mask_register` at issue.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ascsim.isa.instr import SetMaskRegister

ALL_ONES = 2**64 - 1
MASK_MODES = ("normal", "counter")


@dataclass(frozen=True)
class MaskRegister:
    """The mask mode and the two 64-bit mask words of one core's vector unit."""

    mode: str = "normal"
    low: int = ALL_ONES
    high: int = ALL_ONES
    remain: int = 0  # elements the last gather_mask kept


def mask_register(core) -> MaskRegister:
    """The core's current mask registers."""
    return getattr(core, "mask_register", None) or MaskRegister()


def execute_set_mask(core, rec: SetMaskRegister) -> None:
    if rec.mode is not None and rec.mode not in MASK_MODES:
        raise ValueError(f"mask mode {rec.mode!r} is not one of {MASK_MODES}")
    changes = {name: value for name, value in (("mode", rec.mode), ("low", rec.low),
                                                ("high", rec.high), ("remain", rec.remain))
               if value is not None}
    core.mask_register = replace(mask_register(core), **changes)
    if len(changes) > ("remain" in changes):  # a set-up instruction, not a side output
        core.scalar_work(core.timing.scalar_cycles_per_call)


EXECUTORS = {SetMaskRegister: execute_set_mask}
