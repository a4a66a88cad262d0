"""Device memory: global memory (GM) allocations and the per-core local buffers.

GM allocations behave like the runtime allocator: each is padded (+512 B, rounded up to 512 B)
so that small over-reads do not fault, but the true size is remembered so the checks can report
an access past it. Local buffers start filled with 0xFF bytes, which read as NaN in every float
type: an uninitialised read shows in the results instead of passing as zeros.
"""

from __future__ import annotations

import numpy as np

GM_ALIGN = 512
FILL_BYTE = 0xFF


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


class GmBuffer:
    """One GM allocation (a kernel argument, a workspace)."""

    __slots__ = ("id", "name", "data", "nbytes", "address")

    def __init__(self, buffer_id: int, name: str, nbytes: int, address: int):
        self.id = buffer_id
        self.name = name
        self.nbytes = nbytes
        self.address = address
        padded = round_up(nbytes + GM_ALIGN, GM_ALIGN)
        self.data = np.full(padded, FILL_BYTE, dtype=np.uint8)

    @property
    def capacity(self) -> int:
        """Bytes addressable without faulting (true size plus allocator padding)."""
        return self.data.size

    def __repr__(self) -> str:
        return f"GmBuffer({self.name!r}, {self.nbytes} B @0x{self.address:x})"


class DeviceMemory:
    """The GM of one simulated device; hands out allocations with fake, aligned addresses."""

    BASE_ADDRESS = 0x1_0000_0000

    def __init__(self):
        self.buffers: list[GmBuffer] = []
        self._next_address = self.BASE_ADDRESS

    def alloc(self, nbytes: int, name: str) -> GmBuffer:
        if nbytes < 0:
            raise ValueError(f"cannot allocate {nbytes} bytes")
        buf = GmBuffer(len(self.buffers), name, int(nbytes), self._next_address)
        self._next_address += round_up(buf.capacity, GM_ALIGN)
        self.buffers.append(buf)
        return buf

    def from_array(self, array: np.ndarray, name: str) -> GmBuffer:
        """Allocate and copy a host array in (host-to-device copy)."""
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        buf = self.alloc(raw.size, name)
        buf.data[: raw.size] = raw
        return buf


class LocalMemory:
    """One on-chip buffer of a core (UB, L1, L0A, L0B, L0C, BT, FB)."""

    __slots__ = ("name", "data", "capacity", "core_id", "key")

    def __init__(self, name: str, capacity: int, core_id: int):
        self.name = name
        self.capacity = capacity
        self.core_id = core_id
        self.data = np.full(capacity, FILL_BYTE, dtype=np.uint8)
        # Identifies this buffer in access records: (core, buffer name).
        self.key = (core_id, name)

    def __repr__(self) -> str:
        return f"LocalMemory({self.name}, core {self.core_id}, {self.capacity} B)"
