"""The device memory of ``asc.lib.runtime``: ``malloc``/``free``/``memcpy`` on simulated GM.

A script that drives the runtime by hand allocates device memory, copies host bytes in, launches
a registered kernel with device addresses as arguments and copies the results out. Here every
allocation is a byte array of the host process, at a made-up device address (512-byte aligned,
as the runtime's allocator returns them, with unmapped gaps between allocations so that an
address past one allocation's end never lands in the next). Every device access is checked: an
address must lie in a live allocation, and the span must end inside it; the error names the
address, the allocation and by how many bytes the span overruns it.

Host memory is given either as an object whose size is known (numpy array, ``bytes``,
``bytearray``, torch CPU tensor: the span is checked against it) or, as with the C runtime, as
a raw pointer (``ctypes.c_void_p`` or an int), which is trusted like C trusts it.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ascsim.asc.lib.runtime.support import MallocPolicy, MemcpyKind, MemoryType
from ascsim.sim.host import is_torch_tensor
from ascsim.sim.memory import round_up

#: First device address handed out; nonzero so that a NULL handle is never a valid address.
BASE_ADDRESS = 0x12C0_0000_0000
#: Allocation granule of the runtime's allocator (addresses are multiples of it).
ALIGN = 512
#: Unmapped bytes left after every allocation, so that a span running past one allocation's end
#: reads as an error instead of as the next allocation's bytes.
GUARD = 4096


class DeviceMemoryError(RuntimeError):
    """A runtime memory call that the device would reject (bad handle, size or span)."""


@dataclass(frozen=True)
class Allocation:
    """One ``malloc``: its device address and the bytes that hold its contents."""

    address: int
    data: np.ndarray  # uint8, ``size`` bytes
    memory_type: int

    @property
    def size(self) -> int:
        return int(self.data.size)

    @property
    def end(self) -> int:
        return self.address + self.size

    def describe(self) -> str:
        return f"the {self.size}-byte allocation at {self.address:#x}"


def address_of(handle) -> int:
    """The integer address a handle stands for (``ctypes.c_void_p``, ``c_uint64`` or int)."""
    value = getattr(handle, "value", handle)
    if value is None:
        return 0
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise TypeError(f"expected a device address (ctypes.c_void_p or int), got "
                    f"{type(handle).__name__}")


class RuntimeMemory:
    """The simulated device's allocations, by address."""

    def __init__(self) -> None:
        self._allocations: dict[int, Allocation] = {}
        self._next = BASE_ADDRESS

    def malloc(self, size: int, memory_type=MemoryType.RT_MEMORY_DEFAULT,
               policy=MallocPolicy.RT_MEMORY_POLICY_NONE) -> ctypes.c_void_p:
        """A new zero-filled allocation of ``size`` bytes; its address as a handle."""
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool):
            raise TypeError(f"malloc: size must be an int, got {type(size).__name__}")
        if size <= 0:
            raise DeviceMemoryError(f"malloc: size must be greater than 0, got {size}")
        MemoryType(int(getattr(memory_type, "value", memory_type)))
        MallocPolicy(int(getattr(policy, "value", policy)))
        address = self._next
        self._allocations[address] = Allocation(address, np.zeros(int(size), np.uint8),
                                                int(getattr(memory_type, "value", memory_type)))
        self._next = address + round_up(int(size), ALIGN) + GUARD
        return ctypes.c_void_p(address)

    def free(self, handle) -> None:
        """Release the allocation that starts at ``handle``."""
        address = address_of(handle)
        if address not in self._allocations:
            inside = self._containing(address)
            where = (f"it lies inside {inside.describe()}, which only its start address frees"
                     if inside else "no live allocation starts there (never allocated or "
                     "already freed)")
            raise DeviceMemoryError(f"free: {address:#x} is not an allocation: {where}")
        del self._allocations[address]

    def free_all(self) -> None:
        self._allocations.clear()

    @property
    def allocations(self) -> tuple[Allocation, ...]:
        return tuple(self._allocations.values())

    def _containing(self, address: int) -> Allocation | None:
        for allocation in self._allocations.values():
            if allocation.address <= address < allocation.end:
                return allocation
        return None

    def locate(self, address: int, what: str) -> tuple[Allocation, int]:
        """The allocation holding ``address`` and the offset into it."""
        allocation = self._containing(address)
        if allocation is None:
            raise DeviceMemoryError(f"{what}: device address {address:#x} is not in any live "
                                    "allocation (never allocated, freed, or past an end)")
        return allocation, address - allocation.address

    def span(self, handle, nbytes: int, what: str) -> np.ndarray:
        """A writable view of ``nbytes`` of device memory from ``handle``, bounds-checked."""
        address = address_of(handle)
        allocation, offset = self.locate(address, what)
        if offset + nbytes > allocation.size:
            over = offset + nbytes - allocation.size
            raise DeviceMemoryError(
                f"{what}: {nbytes} bytes from {address:#x} run {over} bytes past the end of "
                f"{allocation.describe()}")
        return allocation.data[offset:offset + nbytes]

    def is_device_address(self, value: int) -> bool:
        return self._containing(value) is not None


def host_span(host, nbytes: int, what: str, *, writable: bool) -> np.ndarray:
    """``nbytes`` of host memory as a uint8 array (a view, so writes reach the host object).

    ``host``: numpy array, ``bytes``/``bytearray``, torch CPU tensor (checked against their
    size), or a raw pointer (``ctypes.c_void_p``/int: trusted, as the C runtime trusts it)."""
    if isinstance(host, np.ndarray):
        if not host.flags.c_contiguous:
            raise DeviceMemoryError(f"{what}: the host array is not contiguous")
        if writable and not host.flags.writeable:
            raise DeviceMemoryError(f"{what}: the host array is read-only")
        raw = host.reshape(-1).view(np.uint8)
    elif isinstance(host, bytes):
        if writable:
            raise DeviceMemoryError(f"{what}: cannot copy into bytes (immutable); pass a "
                                    "bytearray or a numpy array")
        raw = np.frombuffer(host, np.uint8)
    elif isinstance(host, bytearray):
        raw = np.frombuffer(host, np.uint8)
    elif is_torch_tensor(host):
        import torch

        if host.device.type != "cpu" or not host.is_contiguous():
            raise DeviceMemoryError(f"{what}: the host tensor must be a contiguous CPU tensor")
        raw = host.detach().reshape(-1).view(torch.uint8).numpy()
    else:
        address = address_of(host)
        if address == 0:
            raise DeviceMemoryError(f"{what}: the host pointer is NULL")
        return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))
    if nbytes > raw.size:
        raise DeviceMemoryError(f"{what}: {nbytes} bytes asked of a {raw.size}-byte host "
                                "buffer")
    return raw[:nbytes]


#: For each copy kind: whether the destination and the source are device memory.
_DEVICE_SIDES = {
    MemcpyKind.RT_MEMCPY_HOST_TO_HOST: (False, False),
    MemcpyKind.RT_MEMCPY_HOST_TO_DEVICE: (True, False),
    MemcpyKind.RT_MEMCPY_DEVICE_TO_HOST: (False, True),
    MemcpyKind.RT_MEMCPY_DEVICE_TO_DEVICE: (True, True),
    MemcpyKind.RT_MEMCPY_ADDR_DEVICE_TO_DEVICE: (True, True),
    MemcpyKind.RT_MEMCPY_HOST_TO_DEVICE_EX: (True, False),
    MemcpyKind.RT_MEMCPY_DEVICE_TO_HOST_EX: (False, True),
}


def memcpy(memory: RuntimeMemory, dst, dst_nbytes: int, src, src_nbytes: int, kind) -> None:
    """Copy ``src_nbytes`` from ``src`` to ``dst`` (which has room for ``dst_nbytes``)."""
    kind = MemcpyKind(int(getattr(kind, "value", kind)))
    sides = _DEVICE_SIDES.get(kind)
    if sides is None:
        raise DeviceMemoryError(f"memcpy: kind {kind.name} is not a copy between given "
                                f"addresses; use one of {[k.name for k in _DEVICE_SIDES]}")
    if dst_nbytes <= 0 or src_nbytes <= 0:
        raise DeviceMemoryError(f"memcpy: sizes must be greater than 0 (dst {dst_nbytes}, src "
                                f"{src_nbytes})")
    if src_nbytes > dst_nbytes:
        raise DeviceMemoryError(f"memcpy: {src_nbytes} bytes do not fit the destination's "
                                f"{dst_nbytes}")
    dst_device, src_device = sides
    what = f"memcpy {kind.name}"
    target = (memory.span(dst, src_nbytes, f"{what} destination") if dst_device
              else host_span(dst, src_nbytes, f"{what} destination", writable=True))
    source = (memory.span(src, src_nbytes, f"{what} source") if src_device
              else host_span(src, src_nbytes, f"{what} source", writable=False))
    np.copyto(target, source)  # numpy copies through a buffer when the spans overlap
