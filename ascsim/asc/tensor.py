"""GlobalTensor and LocalTensor: typed views of GM and of a core's local buffers.

A tensor is a (memory, byte address, element count, dtype) view; slicing ``t[i:]`` makes a view
starting ``i`` elements further on. Local tensors handed out by a queue also carry the queue slot
they live in, which is how the framework's implicit synchronisation reaches the timing model.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import DataType, as_dtype
from ascsim.asc.enums import CacheMode, TPosition
from ascsim.asc.values import GlobalAddress
from ascsim.isa import KernelError, Region, ScalarLoad, ScalarStore, region_of
from ascsim.sim.lanes import Lanes
from ascsim.sim.views import view

# Logical position -> physical buffer on the split architectures (910B/910_93/950).
POSITION_MEMORY = {
    TPosition.VECIN: "UB", TPosition.VECOUT: "UB", TPosition.VECCALC: "UB",
    TPosition.A1: "L1", TPosition.B1: "L1", TPosition.C1: "L1",
    TPosition.A2: "L0A", TPosition.B2: "L0B", TPosition.CO1: "L0C", TPosition.C2: "BT",
}


def _slice_start(index, what: str) -> int:
    """The start of ``t[start:]`` or ``t[i]``; a lane value (a wave's per-core offset,
    :mod:`ascsim.sim.lanes`) stays one."""
    if isinstance(index, slice):
        if index.stop is not None or index.step is not None:
            raise IndexError(f"{what}[start:stop] is not supported; use {what}[start:]")
        index = index.start if index.start is not None else 0
    return index if type(index) is Lanes else int(index)


# ---------------------------------------------------------------------------- global tensors
class GlobalTensor:
    """A typed view of GM (``asc.GlobalTensor``); bind it with :meth:`set_global_buffer`."""

    __slots__ = ("buffer", "offset", "dtype", "size", "shape_info")

    def __init__(self, dtype: DataType | None = None):
        self.buffer = None
        self.offset = 0
        self.dtype = as_dtype(dtype) if dtype is not None else None
        self.size: int | None = None
        self.shape_info = None

    def set_global_buffer(self, buffer: GlobalAddress, buffer_size: int | None = None) -> None:
        if not isinstance(buffer, GlobalAddress):
            raise TypeError("set_global_buffer expects a GlobalAddress (a pointer kernel "
                            f"argument), got {type(buffer).__name__}")
        self.buffer = buffer.buffer
        self.offset = buffer.offset
        self.dtype = buffer.dtype
        self.size = None if buffer_size is None else int(buffer_size)

    def _view_from(self, start: int) -> GlobalTensor:
        self._require_bound()
        out = GlobalTensor.__new__(GlobalTensor)
        out.buffer = self.buffer
        out.offset = self.offset + start
        out.dtype = self.dtype
        out.size = None if self.size is None else self.size - start
        out.shape_info = None
        return out

    def __getitem__(self, index) -> GlobalTensor:
        return self._view_from(_slice_start(index, "GlobalTensor"))

    def __call__(self, index) -> GlobalTensor:
        return self._view_from(_slice_start(index, "GlobalTensor"))

    def _require_bound(self):
        if self.buffer is None:
            raise KernelError("GlobalTensor used before set_global_buffer()", user_location())

    @property
    def byte_offset(self) -> int:
        return self.offset * self.dtype.sizeof()

    def get_size(self) -> int:
        return self.size if self.size is not None else (
            (self.buffer.nbytes - self.byte_offset) // self.dtype.sizeof())

    def get_phy_addr(self, offset: int = 0) -> int:
        self._require_bound()
        return self.buffer.address + (self.offset + offset) * self.dtype.sizeof()

    def get_value(self, index: int):
        return current_core().execute(ScalarLoad(self.region().at(int(index), 1), user_location()))

    def set_value(self, index: int, value) -> None:
        current_core().execute(ScalarStore(self.region().at(int(index), 1), value,
                                           user_location()))

    def set_l2_cache_hint(self, mode=CacheMode.CACHE_MODE_NORMAL, *args, **kwargs) -> None:
        """``CACHE_MODE_DISABLE`` keeps the tensor's GM buffer out of L2 (the L2 model reads and
        writes it straight to HBM); any other mode keeps it cached."""
        self._require_bound()
        current_core().launch.l2.set_bypass(
            self.buffer.id, int(mode) == int(CacheMode.CACHE_MODE_DISABLE))

    def set_shape_info(self, info) -> None:
        self.shape_info = info

    def get_shape_info(self):
        return self.shape_info

    def region(self, count: int | None = None) -> Region:
        """This view (its first ``count`` elements) as an instruction operand."""
        if self.buffer is None:
            self._require_bound()
        return Region(self.buffer, self.offset * self.dtype.sizeof(),
                      self.get_size() if count is None else count, self.dtype.np_dtype)

    def elements(self, start: int, count: int, loc) -> np.ndarray:
        """A numpy view of ``count`` elements from element ``start`` (the operand rules apply)."""
        return view(current_core(), self.region(), start, count, loc)

    def __repr__(self) -> str:
        if self.buffer is None:
            return "GlobalTensor(<unbound>)"
        return f"GlobalTensor({self.buffer.name}+{self.offset}, {self.dtype!r})"


# ---------------------------------------------------------------------------- local tensors
class LocalTensor:
    """A typed view of a core's local buffer (UB, L1, L0A/B/C, BT).

    ``LocalTensor(dtype, pos, addr, tile_size)`` places a tensor statically at byte ``addr`` of
    the buffer behind ``pos`` with ``tile_size`` elements; tensors from ``TQue.alloc_tensor`` and
    ``TBuf.get`` are made by the framework.
    """

    __slots__ = ("mem", "position", "addr", "length", "dtype", "slot", "alloc_end", "tag",
                 "lease", "shape_info")

    def __init__(self, dtype=None, pos: TPosition = TPosition.VECIN, addr: int = 0,
                 tile_size: int = 0):
        self.dtype = as_dtype(dtype) if dtype is not None else None
        self.position = TPosition(pos)
        self.addr = int(addr)
        self.length = int(tile_size)
        self.slot = None
        self.lease = None
        self.tag = 0
        self.mem = None
        self.alloc_end = None
        self.shape_info = None
        if dtype is not None and (tile_size or addr):
            core = current_core()
            loc = user_location()
            self.mem = memory_for(core, self.position, loc)
            self.alloc_end = self.addr + self.length * self.dtype.sizeof()
            # Registered with the machine: a placement over a pipe's buffers, or past the
            # buffer's end, is reported here, at the line to change. Declaring a whole-buffer
            # handle (from byte 0, larger than the buffer) is legal (pyasc's linear example
            # does); touching bytes past the physical buffer is not, and ``elements`` raises.
            core.launch.placements.place(
                core, self.mem, self.addr, self.alloc_end, None, "fixed",
                f"a LocalTensor({self.position.name}) placed at byte {self.addr}", loc)

    @classmethod
    def bound(cls, mem, position, addr, length, dtype, slot=None, alloc_end=None, lease=None):
        """A tensor over bytes the framework owns; ``slot`` and ``lease`` (the generation of the
        slot's gate when it was allocated) for a queue's tensors."""
        t = cls.__new__(cls)
        t.lease = lease
        t.mem = mem
        t.position = position
        t.addr = addr
        t.length = length
        t.dtype = dtype
        t.slot = slot
        t.tag = 0
        t.shape_info = None
        t.alloc_end = alloc_end if alloc_end is not None else addr + length * dtype.sizeof()
        return t

    def _require_bound(self):
        if self.mem is None:
            raise KernelError("LocalTensor used before it was allocated or placed",
                              user_location())

    def _view_from(self, start: int) -> LocalTensor:
        self._require_bound()
        size = self.dtype.sizeof()
        return LocalTensor.bound(self.mem, self.position, self.addr + start * size,
                                 self.length - start, self.dtype, self.slot, self.alloc_end,
                                 self.lease)

    def __getitem__(self, index) -> LocalTensor:
        return self._view_from(_slice_start(index, "LocalTensor"))

    def __call__(self, index) -> LocalTensor:
        return self._view_from(int(index))

    # -- pyasc accessors
    def get_size(self) -> int:
        return self.length

    def get_length(self) -> int:
        return self.length * self.dtype.sizeof()

    def get_phy_addr(self, offset: int = 0) -> int:
        address = self.addr + int(offset) * self.dtype.sizeof()
        # Instructions that take bare addresses (TransDataTo5HD's address lists) type them by
        # the tensor they came from, as pyasc's code generator does.
        core = current_core()
        core.launch.shared.setdefault("phy_addr_types", {}).setdefault(
            core.core_id, {})[address] = self.dtype
        return address

    def get_position(self) -> TPosition:
        return self.position

    def set_size(self, size: int) -> None:
        self.length = int(size)

    def set_buffer_len(self, length: int) -> None:
        self.length = int(length) // self.dtype.sizeof()

    def set_user_tag(self, tag: int) -> None:
        self.tag = int(tag)

    def set_shape_info(self, info) -> None:
        """Attach an ``asc.ShapeInfo`` (the logical shape library calls read)."""
        self.shape_info = info

    def get_shape_info(self):
        return self.shape_info

    def get_user_tag(self) -> int:
        return self.tag

    def set_addr_with_offset(self, src: LocalTensor, offset: int) -> None:
        view = src._view_from(int(offset))
        self.mem, self.position, self.addr = view.mem, view.position, view.addr
        self.length, self.slot, self.alloc_end = view.length, view.slot, view.alloc_end
        self.lease = view.lease
        if self.dtype is None:
            self.dtype = view.dtype

    def reinterpret_cast(self, dtype) -> LocalTensor:
        self._require_bound()
        dtype = as_dtype(dtype)
        length = self.length * self.dtype.sizeof() // dtype.sizeof()
        return LocalTensor.bound(self.mem, self.position, self.addr, length, dtype, self.slot,
                                 self.alloc_end, self.lease)

    def get_value(self, index: int):
        return current_core().execute(ScalarLoad(self.region().at(int(index), 1), user_location(),
                                                 "get_value"))

    def set_value(self, index: int, value) -> None:
        current_core().execute(ScalarStore(self.region().at(int(index), 1), value,
                                           user_location(), "set_value"))

    def __setitem__(self, index, value) -> None:
        self.set_value(index, value)

    def print(self, n: int | None = None) -> None:
        self._require_bound()
        values = self.elements(0, self.length if n is None else int(n), user_location())
        current_core().launch.say(f"{values}\n")

    def to_file(self, path: str) -> None:
        self._require_bound()
        self.elements(0, self.length, user_location()).tofile(path)

    # -- simulator helpers
    def region(self, count: int | None = None) -> Region:
        """This tensor (its first ``count`` elements) as an instruction operand, gated by its
        queue slot if it has one."""
        if self.mem is None:
            self._require_bound()
        slot = self.slot
        if slot is not None and slot.auto:
            slot.before_use()  # a LocalTensorAuto: ordered after its previous use
        return region_of((self.mem, self.addr, self.length if count is None else count,
                          self.dtype.np_dtype, self.alloc_end,
                          None if slot is None else slot.gate,
                          None if slot is None else self.lease))

    def elements(self, start: int, count: int, loc) -> np.ndarray:
        """A numpy view of ``count`` elements from element ``start`` (the operand rules apply)."""
        return view(current_core(), self.region(), start, count, loc)

    def __repr__(self) -> str:
        if self.mem is None:
            return f"LocalTensor({self.dtype!r}, <unallocated>)"
        return (f"LocalTensor({self.dtype!r}, {self.position.name}@{self.addr}, "
                f"{self.length} elems)")


_WHERE_BUFFERS_LIVE = {True: "vector code runs on the AIV", False: "cube buffers are on the AIC"}


def memory_for(core, position: TPosition, loc):
    name = POSITION_MEMORY.get(TPosition(position))
    if name is None:
        raise KernelError(f"TPosition.{TPosition(position).name} is not a local buffer", loc)
    mem = core.mem.get(name)
    if mem is None and name == "UB":
        mem = _aiv_ub_of(core)
    if mem is None:
        raise KernelError(
            f"{name} (TPosition.{TPosition(position).name}) does not exist on an {core.kind} "
            f"core; {_WHERE_BUFFERS_LIVE[name == 'UB']}",
            loc)
    return mem


def _aiv_ub_of(core):
    """On a MIX kernel's AIC with a FixPipe L0C->UB path (3510), a UB tensor names an address
    in its AIVs' UB (ascend-hw §2.4): the UB of sub-block 0, which FixPipe re-targets by its
    ``sub_block_id``. None where the AIC cannot reach UB."""
    if core.kind != "AIC" or not core.soc.has_path("L0C->UB") or core.launch.kind != "MIX":
        return None
    for other in core.launch.cores:
        if other.kind == "AIV" and other.group == core.group and other.sub_block_idx == 0:
            return other.mem["UB"]
    return None
