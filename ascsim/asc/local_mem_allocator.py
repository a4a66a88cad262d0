"""``asc.LocalMemAllocator``: the static-tensor style's bump allocator over one local buffer.

``alloc(pos, dtype, tile_size)`` places a LocalTensor at the allocator's current address of
its buffer and moves the address on by the tensor's bytes, rounded up to 32-byte blocks;
``get_cur_addr()`` is that address. Each allocator starts at byte 0 of its buffer (as in Ascend
C, it is not meant to be mixed with a TPipe on the same buffer; an overlap is reported as a
placement overlap). Placing past the buffer's end is a kernel error.
"""

from __future__ import annotations

from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import as_dtype
from ascsim.asc.enums import Hardware, TPosition
from ascsim.asc.tensor import POSITION_MEMORY, LocalTensor, memory_for
from ascsim.isa import KernelError, ScalarOps

BLOCK = 32
#: Hardware buffer -> the memory name the positions map to.
HARDWARE_MEMORY = {Hardware.UB: "UB", Hardware.L1: "L1", Hardware.L0A: "L0A",
                   Hardware.L0B: "L0B", Hardware.L0C: "L0C", Hardware.BIAS: "BT"}


class LocalMemAllocator:
    """``asc.LocalMemAllocator(hard=Hardware.UB)``."""

    def __init__(self, hard: Hardware = Hardware.UB):
        loc = user_location()
        hard = Hardware(hard)
        if hard not in HARDWARE_MEMORY:
            raise KernelError(f"LocalMemAllocator: Hardware.{hard.name} is not a local buffer "
                              f"(one of {', '.join(h.name for h in HARDWARE_MEMORY)})", loc)
        self.hardware = hard
        self.addr = 0

    def get_cur_addr(self) -> int:
        """The byte address the next ``alloc`` places its tensor at."""
        current_core().execute(ScalarOps(1, user_location()))
        return self.addr

    def alloc(self, pos: TPosition, data_type, tile_size) -> LocalTensor:
        """A ``tile_size``-element tensor of ``data_type`` at ``pos``, at the current address."""
        loc = user_location()
        pos = TPosition(pos)
        wanted = HARDWARE_MEMORY[self.hardware]
        if POSITION_MEMORY.get(pos) != wanted:
            raise KernelError(f"LocalMemAllocator({self.hardware.name}).alloc: TPosition."
                              f"{pos.name} is not in {wanted}", loc)
        dtype = as_dtype(data_type)
        count = int(tile_size)
        if count <= 0:
            raise KernelError(f"LocalMemAllocator.alloc: tile_size {count} must be positive", loc)
        nbytes = -(-count * dtype.sizeof() // BLOCK) * BLOCK
        capacity = memory_for(current_core(), pos, loc).capacity
        if self.addr + nbytes > capacity:
            raise KernelError(f"LocalMemAllocator.alloc: {nbytes} B at byte {self.addr} run past "
                              f"{wanted}'s {capacity} B", loc)
        tensor = LocalTensor(dtype, pos, self.addr, count)
        self.addr += nbytes
        return tensor


__all__ = ["LocalMemAllocator"]
