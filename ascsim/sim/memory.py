"""Device memory: global memory (GM) allocations and the per-core local buffers.

GM allocations behave like the runtime allocator: each is padded (+512 B, rounded up to 512 B)
so that small over-reads do not fault, but the true size is remembered so the checks can report
an access past it. Local buffers start filled with 0xFF bytes, which read as NaN in every float
type: an uninitialised read shows in the results instead of passing as zeros.
"""

from __future__ import annotations

import sys

import numpy as np

GM_ALIGN = 512
FILL_BYTE = 0xFF
#: Bytes of finished launches' GM allocations kept for later launches (see :class:`BytePool`).
POOL_BYTES = 256 << 20


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


class BytePool:
    """GM byte arrays of finished launches, handed to later allocations of the same size.

    A fresh array of a few megabytes costs a page fault per 4 KiB page on its first write, and
    a launch writes every GM allocation it touches in full (the copy-in); on this simulator's
    host that was about a tenth of a small Matmul kernel's simulation. A launch run again with
    the same shapes gets its arrays back instead. At most ``limit`` bytes are kept.
    """

    def __init__(self, limit: int = POOL_BYTES):
        self.limit = limit
        self._free: dict[int, list[np.ndarray]] = {}
        self._bytes = 0

    def take(self, nbytes: int) -> np.ndarray:
        """An array of ``nbytes`` uint8 (contents undefined)."""
        spare = self._free.get(nbytes)
        if spare:
            self._bytes -= nbytes
            return spare.pop()
        return np.empty(nbytes, dtype=np.uint8)

    def give(self, array: np.ndarray) -> None:
        """Keep ``array`` for a later :meth:`take` (nothing else may refer to it)."""
        if self._bytes + array.nbytes <= self.limit:
            self._free.setdefault(array.nbytes, []).append(array)
            self._bytes += array.nbytes


#: The process's pool: launches run one at a time, so one is enough.
POOL = BytePool()


class GmBuffer:
    """One GM allocation (a kernel argument, a workspace).

    The bytes are made on first use: a 16 MB workspace that a kernel never touches costs
    nothing, and is not copied back either. Host data is copied in at that first use, which is
    the same as copying it at the launch because launches are synchronous.
    """

    __slots__ = ("id", "name", "nbytes", "address", "_data", "_initial", "_padded", "_released",
                 "key", "writers")

    #: The memory space name operands and data paths use (``"GM->UB"``).
    space = "GM"

    def __init__(self, buffer_id: int, name: str, nbytes: int, address: int,
                 initial: np.ndarray | None = None):
        self.id = buffer_id
        self.key = ("GM", buffer_id)
        self.name = name
        self.nbytes = nbytes
        self.address = address
        self._padded = round_up(nbytes + GM_ALIGN, GM_ALIGN)
        self._initial = initial
        self._data = None
        self._released = False
        # Who wrote which bytes in the launch (ascsim.sim.provenance.BufferWriters), when the
        # launch kept a writer log.
        self.writers = None

    @property
    def data(self) -> np.ndarray:
        """The allocation's bytes (true size plus allocator padding)."""
        if self._data is None:
            if self._released:
                raise RuntimeError(f"{self!r} was released when its launch ended")
            initial = self._initial
            data = POOL.take(self._padded)
            if initial is None:
                data.fill(FILL_BYTE)
            else:  # host data: only the padding needs the fill byte
                data[:initial.size] = initial
                data[initial.size:] = FILL_BYTE
                self._initial = None
            self._data = data
        return self._data

    def release(self) -> None:
        """The launch is over and its results copied back: give the bytes to the pool, unless
        something still refers to them (a view kept somewhere), and refuse later use."""
        data, self._data, self._initial = self._data, None, None
        self._released = True
        # Two references: ``data`` here and getrefcount's argument. A numpy view anywhere
        # (or a tensor made from one) holds its base array, so it would count.
        if data is not None and sys.getrefcount(data) == 2:
            POOL.give(data)

    @property
    def touched(self) -> bool:
        """Whether anything has looked at the bytes (if not, they are still the host's)."""
        return self._data is not None

    @property
    def capacity(self) -> int:
        """Bytes addressable without faulting (true size plus allocator padding)."""
        return self._padded

    def __repr__(self) -> str:
        return f"GmBuffer({self.name!r}, {self.nbytes} B @0x{self.address:x})"


class DeviceMemory:
    """The GM of one simulated device; hands out allocations with fake, aligned addresses."""

    BASE_ADDRESS = 0x1_0000_0000

    def __init__(self):
        self.buffers: list[GmBuffer] = []
        self._next_address = self.BASE_ADDRESS
        # Buffer id -> (host address, bytes) of the host memory it holds (ascsim/sim/host.py):
        # how consecutive launches recognise the same memory in L2 (ascsim/sim/l2_carry.py).
        self.host_keys: dict[int, tuple[int, int]] = {}

    def alloc(self, nbytes: int, name: str, initial: np.ndarray | None = None) -> GmBuffer:
        """A fresh allocation (filled with the fill byte, or starting with ``initial`` bytes)."""
        if nbytes < 0:
            raise ValueError(f"cannot allocate {nbytes} bytes")
        buf = GmBuffer(len(self.buffers), name, int(nbytes), self._next_address, initial)
        self._next_address += round_up(buf.capacity, GM_ALIGN)
        self.buffers.append(buf)
        return buf

    def read_span(self, address: int, nbytes: int) -> np.ndarray:
        """A copy of ``nbytes`` of GM from ``address``, across allocations: the bytes of
        whatever allocation (padding included) holds each address, the fill byte where none
        does. What the device reads when a kernel reads past its tensor's allocation."""
        out = np.full(nbytes, FILL_BYTE, dtype=np.uint8)
        end = address + nbytes
        for buf in self.buffers:
            lo, hi = max(address, buf.address), min(end, buf.address + buf.capacity)
            if lo < hi:
                out[lo - address:hi - address] = buf.data[lo - buf.address:hi - buf.address]
        return out

    def from_array(self, array: np.ndarray, name: str) -> GmBuffer:
        """Allocate and copy a host array in (host-to-device copy)."""
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        return self.alloc(raw.size, name, initial=raw)

    def checkpoint(self) -> GmCheckpoint:
        """What GM holds now, to run a launch again from the same inputs (see
        :class:`GmCheckpoint`)."""
        return GmCheckpoint(self)

    def release(self) -> None:
        """Hand every allocation's bytes back (see :meth:`GmBuffer.release`)."""
        for buf in self.buffers:
            buf.release()


class GmCheckpoint:
    """GM as it was before a launch ran, so that the launch can run a second time from the
    same inputs while the first run's results are kept (``Launch.run``'s timing pass).

    Nothing is copied for an allocation no one has touched yet (its bytes are still the host's,
    made on first use); one that was touched is copied.
    """

    def __init__(self, memory: DeviceMemory):
        self.memory = memory
        self.count = len(memory.buffers)
        self.address = memory._next_address
        self.saved = [(buf, buf._initial, None if buf._data is None else buf._data.copy())
                      for buf in memory.buffers]
        self.results: list | None = None

    def rewind(self) -> None:
        """Put GM back as it was at the checkpoint, keeping what the run since wrote aside
        (:meth:`keep_results` brings it back); allocations made since are dropped."""
        memory = self.memory
        self.results = [(buf, buf._data, buf._initial) for buf, _, _ in self.saved]
        for buf, initial, data in self.saved:
            buf._initial = initial
            buf._data = None if data is None else data.copy()
        for buf in memory.buffers[self.count:]:
            memory.host_keys.pop(buf.id, None)
        del memory.buffers[self.count:]
        memory._next_address = self.address

    def keep_results(self) -> None:
        """Bring back what the run before :meth:`rewind` wrote: the launch's results are that
        run's (the run since, if any, only timed)."""
        for buf, data, initial in self.results or ():
            buf._data, buf._initial = data, initial


class LocalMemory:
    """One on-chip buffer of a core (UB, L1, L0A, L0B, L0C, BT, FB).

    The bytes are allocated on first use: a core touches only some of its buffers (an AIC of a
    Matmul kernel may never read L0A's data), and filling a megabyte per core per launch would
    cost more than many kernels' whole simulation. They come from the pool of finished
    launches' arrays (:class:`BytePool`) when it has one of the size, filled with the fill byte
    either way: a fresh array page-faults on every 4 KiB of that fill (about 55 µs for a 910B
    UB, which a launch of eight AIVs pays eight times).
    """

    __slots__ = ("name", "space", "_data", "capacity", "core_id", "key", "_typed", "_released")

    def __init__(self, name: str, capacity: int, core_id: int):
        self.name = name
        self.space = name
        self.capacity = capacity
        self.core_id = core_id
        self._data = None
        self._typed: dict = {}
        self._released = False
        # Identifies this buffer in access records: (core, buffer name).
        self.key = (core_id, name)

    @property
    def data(self) -> np.ndarray:
        data = self._data
        if data is None:
            if self._released:
                raise RuntimeError(f"{self!r} was released when its launch ended")
            data = POOL.take(self.capacity)
            data.fill(FILL_BYTE)
            self._data = data
        return data

    def release(self) -> None:
        """The launch is over: give the bytes to the pool, unless something still refers to
        them (a view kept somewhere), and refuse later use."""
        data, self._data = self._data, None
        self._typed = {}  # (its views hold the bytes)
        self._released = True
        # Two references: ``data`` here and getrefcount's argument (see GmBuffer.release).
        if data is not None and sys.getrefcount(data) == 2:
            POOL.give(data)

    def typed(self, np_dtype: np.dtype) -> np.ndarray | None:
        """All of the buffer's bytes viewed as ``np_dtype`` (None when the capacity is not a whole
        number of elements): an element view is then one slice of it, where slicing the bytes
        and retyping them costs about three times as much on the hot path."""
        typed = self._typed.get(np_dtype)
        if typed is None:
            data = self.data
            if data.size % np_dtype.itemsize:
                return None
            typed = self._typed[np_dtype] = data.view(np_dtype)
        return typed

    def __repr__(self) -> str:
        return f"LocalMemory({self.name}, core {self.core_id}, {self.capacity} B)"
