"""The TPipe/TQue/TBuf framework: buffer carving and the synchronisation it implies.

``TPipe.init_buffer`` carves queue slots out of a local buffer (each rounded up to 32 B).
A queue slot goes free → allocated → enqueued → dequeued → free. On the device these steps are
hardware flags between the producer and consumer pipes (alloc waits for the last reader, deque
waits for the writer); here each slot owns a buffer gate of the machine
(:class:`ascsim.sim.sync.Gate`), each step is a gate record (alloc = ``acquire_write``, enque =
``release_write``, deque = ``acquire_read``, free = ``release_read``), and the instructions that
touch a tensor of that slot are ordered by the gate.
"""

from __future__ import annotations

from collections import deque

from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import DataType, as_dtype
from ascsim.asc.enums import HardEvent, TPosition
from ascsim.asc.tensor import POSITION_MEMORY, LocalTensor, memory_for
from ascsim.isa import BLOCK_BYTES as BLOCK
from ascsim.isa import KernelError, gate_op
from ascsim.sim.memory import round_up
from ascsim.sim.source import site_key
from ascsim.sim.sync import Gate

#: TPosition -> (pipe that fills a buffer of that position, pipe that consumes it): the two
#: sides of its slots' gates.
POSITION_PIPES = {
    TPosition.VECIN: ("MTE2", "V"), TPosition.VECOUT: ("V", "MTE3"),
    TPosition.VECCALC: ("V", "V"), TPosition.A1: ("MTE2", "MTE1"),
    TPosition.B1: ("MTE2", "MTE1"), TPosition.C1: ("MTE2", "MTE1"),
    TPosition.A2: ("MTE1", "M"), TPosition.B2: ("MTE1", "M"), TPosition.C2: ("MTE1", "M"),
    TPosition.CO1: ("M", "FIX"),
}


class QueueSlot:
    """One buffer of a queue: where it is, its state in the queue protocol, and its gate."""

    __slots__ = ("queue", "index", "addr", "nbytes", "state", "gate", "alloc_loc")
    auto = False  # not a LocalTensorAuto's buffer (see ascsim.asc.auto_tensor)

    def __init__(self, queue, index: int, addr: int, nbytes: int, gate: Gate):
        self.queue = queue
        self.index = index
        self.addr = addr
        self.nbytes = nbytes
        self.state = "free"
        self.gate = gate
        self.alloc_loc = None


def _init_buffer(owner, que, num, nbytes, buf, loc) -> None:
    """``init_buffer`` of a TPipe or a TBufPool (``owner``): carve a queue's or a TBuf's bytes."""
    owner.core.call_overhead()
    target = que if que is not None else buf
    if (owner.core.kind == "AIC" and owner.core.launch.kind == "MIX" and target is not None
            and POSITION_MEMORY.get(target.position) == "UB"):
        return  # the AIC half of a MIX kernel has no UB: vector-side buffers compile out
    if buf is not None:
        size = nbytes if nbytes is not None else num
        if size is None:
            raise KernelError("init_buffer(buf=...) needs the size in bytes (len= or num=)", loc)
        buf._init(owner, int(size), loc)
        return
    if que is None:
        raise KernelError("init_buffer needs que= (with num= and len=) or buf=", loc)
    if num is None or nbytes is None:
        raise KernelError("init_buffer(que=...) needs num= (buffer count) and len= (bytes)", loc)
    # The what-if of more buffers for this queue (ascsim run --what-if buffers=FILE:LINE).
    scales = owner.core.launch.options.buffer_scale
    scale = scales.get(site_key(loc), 1) if scales else 1
    que._init(owner, int(num) * scale, int(nbytes), loc)


def _carve(pipe, mem, nbytes: int, loc, what: str) -> int:
    """Take ``nbytes`` from the pipe's bump allocator for ``mem``; fail past capacity. The carve
    is registered as the pipe's placement (a static tensor over it is then reported)."""
    start = pipe.used.get(mem.name, 0)
    end = start + nbytes
    limit = pipe.carve_limit(mem, loc)
    if end > limit:
        if limit == mem.capacity:
            raise KernelError(
                f"{what} requests {nbytes} B of {mem.name} at offset {start}, but {mem.name} "
                f"holds {mem.capacity} B on {current_core().soc.name} ({start} B already in use)",
                loc)
        raise KernelError(f"{what} requests {nbytes} B at {mem.name} offset {start}, past the "
                          f"end of its TBufPool (bytes up to {limit})", loc)
    pipe.used[mem.name] = end
    pipe.core.launch.placements.place(pipe.core, mem, start, end, pipe, "carve",
                                      f"the buffers of {what}", loc)
    return start


class TPipe:
    """The per-kernel resource manager (``asc.TPipe``)."""

    def __init__(self):
        self.core = current_core()
        self.used: dict[str, int] = {}
        self.queues: list[TQue] = []
        self.core.launch.shared.setdefault("pipes", {}).setdefault(self.core.core_id, []).append(
            self)

    def init_buffer(self, que=None, num=None, len=None, buf=None):  # noqa: A002 - pyasc names
        """``init_buffer(que=, num=, len=)`` for queues; ``init_buffer(buf=, num=|len=)``."""
        _init_buffer(self, que, num, len, buf, user_location())

    def init_buf_pool(self, buf_pool, len, share_buf=None):  # noqa: A002 - pyasc names
        """``init_buf_pool(buf_pool, len, share_buf=None)``: give ``buf_pool`` ``len`` bytes of
        this pipe's memory (or ``share_buf``'s bytes, reused)."""
        buf_pool._init_pool(self, int(len), share_buf, user_location())

    def carve_limit(self, mem, loc) -> int:
        """Where this allocator's bytes of ``mem`` end."""
        return mem.capacity

    def get_base_addr(self, pos) -> int:
        return 0

    def init(self) -> None:
        """Accepted for compatibility: the pipe is ready when constructed."""

    def reset(self) -> None:
        self.used.clear()
        self.core.launch.placements.release(self)

    def destroy(self) -> None:
        """Release everything; tensors still held are reported by the checks."""
        self.core.launch.placements.release(self)

    # Event ids: each HardEvent has 8 ids; hand them out in order.
    def alloc_event_id(self, event: HardEvent = HardEvent.V_S) -> int:
        pool = self.__dict__.setdefault("_events", {})
        ids = pool.setdefault(HardEvent(event), [])
        nid = next(i for i in range(8) if i not in ids) if len(ids) < 8 else 0
        ids.append(nid)
        return nid

    fetch_event_id = alloc_event_id

    def release_event_id(self, id: int, event: HardEvent = HardEvent.V_S) -> None:  # noqa: A002
        """Give event id ``id`` of ``event`` back (pyasc's keyword names: ``id=``, ``event=``)."""
        ids = self.__dict__.setdefault("_events", {}).setdefault(HardEvent(event), [])
        if int(id) in ids:
            ids.remove(int(id))


class TQue:
    """A queue of local buffers between two pipes (``asc.TQue(pos, depth)``)."""

    def __init__(self, pos: TPosition = TPosition.VECIN, depth: int = 1):
        self.position = TPosition(pos)
        self.depth = int(depth)
        self.slots: list[QueueSlot] = []
        self.fifo: deque = deque()
        self.mem = None
        self._next = 0

    def _init(self, pipe: TPipe, num: int, nbytes: int, loc) -> None:
        core = pipe.core
        if num <= 0 or nbytes <= 0:
            raise KernelError(f"init_buffer: num ({num}) and len ({nbytes}) must be positive",
                              loc)
        self.mem = memory_for(core, self.position, loc)
        size = round_up(nbytes, BLOCK)
        base = _carve(pipe, self.mem, num * size, loc,
                      f"init_buffer(que=TQue({self.position.name}), num={num}, len={nbytes})")
        producer, consumer = POSITION_PIPES.get(self.position, ("V", "V"))
        label = f"tensor of TQue({self.position.name})"
        self.slots = []
        for i in range(num):
            gate = Gate(self.mem, base + i * size, base + (i + 1) * size, producer, consumer,
                        label)
            core.launch.gates.append(gate)
            self.slots.append(QueueSlot(self, i, base + i * size, size, gate))
        pipe.queues.append(self)
        self.core = core

    def _require_init(self, loc):
        """The error of a queue used before ``init_buffer`` (the queue calls test ``slots``
        inline before calling this: they run as often as instructions)."""
        if not self.slots:
            raise KernelError("queue used before pipe.init_buffer(que=...)", loc)

    def alloc_tensor(self, dtype=None) -> LocalTensor:
        loc = user_location()
        if not self.slots:
            self._require_init(loc)
        core = self.core
        if dtype is not None and type(dtype) is not DataType:
            dtype = as_dtype(dtype)
        slot = self._free_slot(loc)
        slot.state = "allocated"
        slot.alloc_loc = loc
        core.execute(gate_op((slot.gate, "acquire_write", loc)))
        if dtype is None:
            raise KernelError("alloc_tensor needs the element type, e.g. alloc_tensor(asc.float32)",
                              loc)
        return LocalTensor.bound(self.mem, self.position, slot.addr,
                                 slot.nbytes // dtype.np_dtype.itemsize, dtype, slot,
                                 lease=slot.gate.generation)

    def _free_slot(self, loc) -> QueueSlot:
        slots = self.slots
        n = len(slots)
        slot = slots[self._next % n]
        if slot.state == "free":  # the usual case: slots are taken round-robin
            self._next = (slot.index + 1) % n
            return slot
        for step in range(1, n):
            slot = slots[(self._next + step) % n]
            if slot.state == "free":
                self._next = (slot.index + 1) % n
                return slot
        self.core.launch.findings.report(
            "queue-misuse",
            f"alloc_tensor on a TQue({self.position.name}) whose {n} buffer(s) are all in use: "
            "on the device this waits forever", loc,
            hint="free_tensor each tensor before allocating more than init_buffer's num",
            core=self.core.core_id)
        raise KernelError(f"alloc_tensor: all {n} buffers of the queue are in use", loc)

    def enque(self, tensor: LocalTensor, *args) -> bool:
        loc = user_location()
        if not self.slots:
            self._require_init(loc)
        core = self.core
        slot = tensor.slot
        if slot is None or slot.queue is not self:
            core.call_overhead()
            core.launch.findings.report(
                "queue-misuse", "enque of a tensor that was not allocated from this queue", loc,
                hint="enque the tensor returned by this queue's alloc_tensor",
                core=core.core_id)
            return False
        depth = self.depth
        if len(self.fifo) >= (depth if depth > 1 else 1):  # (depth 0 holds one, as depth 1)
            core.launch.findings.report(
                "queue-misuse",
                f"enque beyond the queue depth ({self.depth}): deque before enqueuing again",
                loc, hint="raise the TQue depth or deque between enques", core=core.core_id)
        slot.state = "enqueued"
        self.fifo.append((slot, tensor))
        core.execute(gate_op((slot.gate, "release_write", loc)))
        return True

    def deque(self, dtype=None) -> LocalTensor:
        loc = user_location()
        if not self.slots:
            self._require_init(loc)
        core = self.core
        if not self.fifo:
            core.call_overhead()
            core.launch.findings.report(
                "queue-misuse", "deque from an empty queue: on the device this waits forever",
                loc, hint="enque a tensor before dequeuing it", core=core.core_id)
            raise KernelError("deque from an empty queue", loc)
        slot, tensor = self.fifo.popleft()
        slot.state = "dequeued"
        if dtype is not None and dtype is not tensor.dtype:  # (types are singletons)
            dtype = as_dtype(dtype)
            if dtype != tensor.dtype:
                tensor = tensor.reinterpret_cast(dtype)
        core.execute(gate_op((slot.gate, "acquire_read", loc)))
        return tensor

    def free_tensor(self, tensor: LocalTensor) -> None:
        loc = user_location()
        if not self.slots:
            self._require_init(loc)
        core = self.core
        slot = tensor.slot
        if slot is None or slot.queue is not self:
            core.call_overhead()
            core.launch.findings.report(
                "queue-misuse", "free_tensor of a tensor that belongs to another queue (or to "
                "none)", loc, hint="free a tensor into the queue it was allocated from",
                core=core.core_id)
            return
        if slot.state == "free":
            core.call_overhead()
            core.launch.findings.report(
                "queue-misuse", "free_tensor of a tensor that is already free", loc,
                hint="free each allocated tensor exactly once", core=core.core_id)
            return
        if slot.state == "enqueued":
            self.fifo = deque(item for item in self.fifo if item[0] is not slot)
        slot.state = "free"
        core.execute(gate_op((slot.gate, "release_read", loc)))

    # -- queries
    def has_tensor_in_que(self) -> bool:
        return bool(self.fifo)

    def get_tensor_count_in_que(self) -> int:
        return len(self.fifo)

    def has_idle_buffer(self) -> bool:
        return any(s.state == "free" for s in self.slots)

    def vacant_in_que(self) -> bool:
        return len(self.fifo) < max(self.depth, 1)

    def free_all_event(self) -> None:
        """Accepted for compatibility: slot readiness is tracked per slot."""


class TQueBind(TQue):
    """``asc.TQueBind(src, dst, depth)``: a queue between two explicit positions."""

    def __init__(self, src: TPosition = TPosition.VECIN, dst: TPosition = TPosition.VECIN,
                 depth: int = 1, mask: int = 0):
        super().__init__(src if TPosition(src) != TPosition.GM else dst, depth)
        self.src = TPosition(src)
        self.dst = TPosition(dst)


class TBufSlot:
    """What the views of a TBuf carry in place of a queue slot: the TBuf's gate, whose
    generation counts the TBuf's initialisations, so a view of an earlier one (its bytes
    carved again since, after ``pipe.reset()``) is reported where it is used. A TBuf belongs
    to no queue and is never handed over: its gate never orders anything."""

    __slots__ = ("gate",)
    auto = False
    queue = None
    state = "allocated"

    def __init__(self, gate: Gate):
        self.gate = gate


class TBuf:
    """Scratch space without queue semantics (``asc.TBuf(pos)``), usually VECCALC."""

    def __init__(self, pos: TPosition = TPosition.VECCALC):
        self.position = TPosition(pos)
        self.mem = None
        self.addr = 0
        self.nbytes = 0
        self.slot = None

    def _init(self, pipe: TPipe, nbytes: int, loc) -> None:
        self.mem = memory_for(pipe.core, self.position, loc)
        size = round_up(nbytes, BLOCK)
        self.addr = _carve(pipe, self.mem, size, loc, f"init_buffer(buf=TBuf, len={nbytes})")
        self.nbytes = size
        if self.slot is None:
            gate = Gate(self.mem, self.addr, self.addr + size, "V", "V",
                        f"view of a TBuf({self.position.name})")
            gate.state = "writing"  # held by its owner for good
            self.slot = TBufSlot(gate)
        gate = self.slot.gate
        gate.lo, gate.hi = self.addr, self.addr + size
        gate.generation += 1
        gate.taken_at = loc

    def get(self, dtype, len=None, shape=None) -> LocalTensor:  # noqa: A002 - pyasc name
        loc = user_location()
        if self.mem is None:
            raise KernelError("TBuf.get before pipe.init_buffer(buf=...)", loc)
        dtype = as_dtype(dtype)
        count = self.nbytes // dtype.sizeof() if len is None else int(len)
        if count * dtype.sizeof() > self.nbytes:
            current_core().launch.findings.report(
                "local-overflow",
                f"TBuf.get(len={count}) asks for {count * dtype.sizeof()} B of a "
                f"{self.nbytes} B buffer", loc,
                hint="give init_buffer(buf=...) enough bytes, or get fewer elements",
                core=current_core().core_id)
        # A view asked for by length ends there (to the next 32-byte block, the granularity of
        # the buffer's views), so an instruction running past it into a neighbouring view of the
        # same TBuf is a local-overflow; without a length it is the whole buffer.
        end = self.addr + (self.nbytes if len is None else
                           min(self.nbytes, round_up(count * dtype.sizeof(), BLOCK)))
        return LocalTensor.bound(self.mem, self.position, self.addr, count, dtype, self.slot,
                                 max(end, self.addr + count * dtype.sizeof()),
                                 self.slot.gate.generation)

    def get_with_offset(self, size: int, buf_offset: int, dtype) -> LocalTensor:
        loc = user_location()
        if self.mem is None:
            raise KernelError("TBuf.get_with_offset before pipe.init_buffer(buf=...)", loc)
        dtype = as_dtype(dtype)
        if buf_offset % BLOCK:
            current_core().launch.findings.report(
                "alignment", f"TBuf.get_with_offset offset {buf_offset} is not 32-byte aligned",
                loc, hint="offsets into local buffers must be multiples of 32 B",
                core=current_core().core_id)
        start = self.addr + int(buf_offset)
        # The view ends where its size does (see get), not at the end of the whole buffer.
        end = min(self.addr + self.nbytes, start + round_up(int(size) * dtype.sizeof(), BLOCK))
        t = LocalTensor.bound(self.mem, self.position, start, int(size), dtype, self.slot,
                              max(end, start + int(size) * dtype.sizeof()),
                              self.slot.gate.generation)
        if t.addr + int(size) * dtype.sizeof() > self.addr + self.nbytes:
            current_core().launch.findings.report(
                "local-overflow", "TBuf.get_with_offset runs past the end of the buffer", loc,
                hint="reduce size or offset", core=current_core().core_id)
        return t


    # A TBuf is also a queue of depth 0 (Ascend C's TBuf derives from TQueBind<pos, pos, 0, 0>):
    # allocating hands out the whole buffer, and its producer and consumer are the same pipe,
    # whose program order already orders them, so enque/deque/free hand nothing over.
    def alloc_tensor(self, dtype=None) -> LocalTensor:
        """``TBuf.alloc_tensor(dtype)``: the whole buffer as a tensor (as ``get``)."""
        return self.get(dtype if dtype is not None else "uint8")

    def enque(self, tensor) -> None:
        self._require_own(tensor, "enque")

    def deque(self, dtype=None) -> LocalTensor:
        return self.get(dtype if dtype is not None else "uint8")

    def free_tensor(self, tensor) -> None:
        self._require_own(tensor, "free_tensor")

    def _require_own(self, tensor, what: str) -> None:
        loc = user_location()
        if self.mem is None:
            raise KernelError(f"TBuf.{what} before pipe.init_buffer(buf=...)", loc)
        if getattr(tensor, "slot", None) is not self.slot:
            raise KernelError(f"TBuf.{what}: the tensor is not a view of this TBuf", loc)


class TBufPool:
    """``asc.TBufPool(pos, buf_id_size=4)``: a part of a TPipe's memory that queues and TBufs are
    carved from like from the pipe (``init_buffer``), that can hold pools of its own
    (``init_buf_pool``), and whose carves ``reset`` gives back at once, so a later phase of the
    kernel can carve the same bytes again. ``share_buf`` makes a pool over another pool's bytes.
    """

    def __init__(self, pos: TPosition = TPosition.VECCALC, buf_id_size: int = 4):
        self.position = TPosition(pos)
        self.buf_id_size = int(buf_id_size)
        if self.buf_id_size <= 0:
            raise KernelError(f"TBufPool: buf_id_size {self.buf_id_size} must be positive",
                              user_location())
        self.core = current_core()
        self.mem = None
        self.base = 0
        self.size = 0
        self.used: dict[str, int] = {}
        self.queues: list[TQue] = []

    def _init_pool(self, parent, nbytes: int, share, loc) -> None:
        if nbytes <= 0:
            raise KernelError(f"init_buf_pool: len {nbytes} must be positive", loc)
        mem = memory_for(parent.core, self.position, loc)
        size = round_up(nbytes, BLOCK)
        if share is not None:
            if share.mem is not mem:
                raise KernelError("init_buf_pool: share_buf must be an initialised pool of the "
                                  "same memory", loc)
            if size > share.size:
                raise KernelError(f"init_buf_pool: {size} B exceed the {share.size} B of the "
                                  "shared pool", loc)
            base = share.base
        else:
            base = _carve(parent, mem, size, loc,
                          f"init_buf_pool(TBufPool({self.position.name}), len={nbytes})")
        self.mem, self.base, self.size = mem, base, size
        self.used = {mem.name: base}

    def carve_limit(self, mem, loc) -> int:
        if self.mem is None:
            raise KernelError("TBufPool used before pipe.init_buf_pool(buf_pool=...)", loc)
        if mem is not self.mem:
            raise KernelError(f"a TBufPool({self.position.name}) holds {self.mem.name} bytes "
                              f"only, not {mem.name}", loc)
        return self.base + self.size

    def init_buffer(self, que=None, num=None, len=None, buf=None):  # noqa: A002 - pyasc names
        """Carve a queue's or a TBuf's bytes from this pool."""
        _init_buffer(self, que, num, len, buf, user_location())

    def init_buf_pool(self, buf_pool, len, share_buf=None):  # noqa: A002 - pyasc names
        """Give ``buf_pool`` ``len`` bytes of this pool (or ``share_buf``'s bytes)."""
        buf_pool._init_pool(self, int(len), share_buf, user_location())

    def reset(self) -> None:
        """Give back every carve made from this pool."""
        loc = user_location()
        self.core.call_overhead()
        if self.mem is None:
            raise KernelError("TBufPool.reset before pipe.init_buf_pool(buf_pool=...)", loc)
        self.used = {self.mem.name: self.base}
        self.core.launch.placements.release(self)


def get_tpipe_ptr():
    pipes = current_core().launch.shared.get("pipes", {}).get(current_core().core_id)
    return pipes[-1] if pipes else None
