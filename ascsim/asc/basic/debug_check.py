"""``check_local_memory_ia(CheckLocalMemoryIAParam)``: arm or disarm one of four exception
registers that watch a UB range for chosen access kinds (a debug feature of Ascend C).

The range is ``(start_addr, end_addr]`` in 32-byte units -- the blocks after ``start_addr`` up
to and including ``end_addr`` (Ascend C's CheckLocalMemoryIA page). While a register is armed,
each access of the core to those bytes with an armed kind is a ``local-memory-ia`` finding at
the accessing line (the device raises an exception there). One
:class:`~ascsim.isa.instr.WatchLocalMemory` record; the 950 has no such check.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascsim.asc.context import current_core, user_location
from ascsim.asc.params import U16, _check_ranges, coerce_fields
from ascsim.isa import KernelError, WatchLocalMemory

BLOCK = 32
KIND_FIELDS = {"is_scalar_read": "scalar_read", "is_scalar_write": "scalar_write",
               "is_vector_read": "vector_read", "is_vector_write": "vector_write",
               "is_mte_read": "mte_read", "is_mte_write": "mte_write"}


@dataclass(frozen=True)
class CheckLocalMemoryIAParam:
    """``CheckLocalMemoryIAParam(enable_bit=0, start_addr=0, end_addr=0, is_scalar_read=False,
    is_scalar_write=False, is_vector_read=False, is_vector_write=False, is_mte_read=False,
    is_mte_write=False, is_enable=False)``."""

    enable_bit: int = 0
    start_addr: int = 0
    end_addr: int = 0
    is_scalar_read: bool = False
    is_scalar_write: bool = False
    is_vector_read: bool = False
    is_vector_write: bool = False
    is_mte_read: bool = False
    is_mte_write: bool = False
    is_enable: bool = False

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"enable_bit": (0, 3), "start_addr": U16, "end_addr": U16})


def check_local_memory_ia(check_params: CheckLocalMemoryIAParam) -> None:
    """Arm (``is_enable``) or disarm register ``enable_bit``'s UB watch."""
    loc = user_location()
    core = current_core()
    if not core.soc.ub_access_watch:
        raise KernelError(f"check_local_memory_ia: {core.soc.name} has no UB access check "
                          "(the 910B / 910_93 generation has it)", loc)
    p = check_params
    if not isinstance(p, CheckLocalMemoryIAParam):
        raise KernelError("check_local_memory_ia takes a CheckLocalMemoryIAParam", loc)
    if p.is_enable and p.end_addr <= p.start_addr:
        raise KernelError(f"check_local_memory_ia: end_addr {p.end_addr} must be above "
                          f"start_addr {p.start_addr} (the range is (start, end] in 32-byte "
                          "units)", loc)
    kinds = frozenset(kind for name, kind in KIND_FIELDS.items() if getattr(p, name))
    core.execute(WatchLocalMemory(p.enable_bit, (p.start_addr + 1) * BLOCK,
                                  (p.end_addr + 1) * BLOCK, kinds, bool(p.is_enable), loc))


__all__ = ["CheckLocalMemoryIAParam", "check_local_memory_ia"]
