"""TQue synchronisation as happens-before edges, and tensors still held when the kernel ends.

The framework's queue calls are hardware flags (ascend-hw §4.4): ``enque`` is a set by the pipes
that filled the buffer, ``deque`` a wait by the consumer, ``free_tensor`` a set by the pipes that
read it, ``alloc_tensor`` a wait by the next producer. Each queue slot keeps the clock its last
set published (its *gate*) and which pipes touched it since. A wait joins the gate into the pipe
the position implies (VECIN: MTE2 -> V, VECOUT: V -> MTE3, ...); any instruction touching the
slot's bytes also joins it, as the simulator's timing makes every such instruction wait for the
slot.
"""

from __future__ import annotations

from bisect import bisect_right

from ascsim.sim.access import overlaps
from ascsim.sim.checks.clocks import PIPE_INDEX, join

# TPosition name -> (pipe that fills a buffer of that position, pipe that consumes it).
POSITION_PIPES = {
    "VECIN": ("MTE2", "V"), "VECOUT": ("V", "MTE3"), "VECCALC": ("V", "V"),
    "A1": ("MTE2", "MTE1"), "B1": ("MTE2", "MTE1"), "C1": ("MTE2", "MTE1"),
    "A2": ("MTE1", "M"), "B2": ("MTE1", "M"), "C2": ("MTE1", "M"), "CO1": ("M", "FIX"),
}


class SlotSync:
    """Happens-before state of one queue slot."""

    __slots__ = ("slot", "gate", "version", "seen", "touched", "producer", "consumer")

    def __init__(self, slot, position: str):
        self.slot = slot
        self.gate: dict = {}
        self.version = 0
        self.seen: dict[int, int] = {}
        self.touched: set[int] = set()
        producer, consumer = POSITION_PIPES.get(position, ("V", "V"))
        self.producer = PIPE_INDEX[producer]
        self.consumer = PIPE_INDEX[consumer]


def _wait_gate(clocks, sync: SlotSync, pipe: int) -> None:
    """Pipe ``pipe`` waits for the slot's gate. Once per gate version: joining the same clock
    again changes nothing (clocks only grow), and every publish bumps the version. ``seen`` is
    per pipe, not per core: only the slot's own core uses the pipes of its position (the one
    foreign writer, a 950 AIC's FixPipe into UB, is on FIX, which no UB position uses)."""
    if sync.seen.get(pipe) != sync.version:
        sync.seen[pipe] = sync.version
        clocks.join_into(pipe, sync.gate)


class QueueCheck:
    """Turns queue actions into clock edges; reports tensors still held at the end."""

    def __init__(self, launch, clocks_of):
        self.launch = launch
        self.clocks_of = clocks_of
        self.syncs: dict[int, SlotSync] = {}  # id(queue slot) -> its state
        self.index: dict = {}  # space key -> (sorted slot addresses, [(end, SlotSync)])
        self.registered: set[int] = set()

    def _register(self, queue) -> None:
        if id(queue) in self.registered or queue.mem is None:
            return
        self.registered.add(id(queue))
        position = getattr(queue.position, "name", str(queue.position))
        addrs, entries = self.index.setdefault(queue.mem.key, ([], []))
        for slot in queue.slots:
            sync = self.syncs[id(slot)] = SlotSync(slot, position)
            k = bisect_right(addrs, slot.addr)
            addrs.insert(k, slot.addr)
            entries.insert(k, (slot.addr + slot.nbytes, sync))

    def _publish(self, clocks, sync: SlotSync, default: int) -> None:
        # Joined in place: a gate is only ever read (joined into pipe clocks), never kept.
        gate = sync.gate
        touched = sync.touched
        for p in touched or (default,):
            join(gate, clocks.current(p))
        sync.version += 1
        touched.clear()

    def on_queue(self, core, action: str, queue, slot, loc) -> None:
        sync = self.syncs.get(id(slot))
        if sync is None:
            self._register(queue)
            sync = self.syncs.get(id(slot))
        if sync is None:
            return
        clocks = self.clocks_of(core.core_id)
        if action == "enque":
            self._publish(clocks, sync, sync.producer)
        elif action == "free":
            self._publish(clocks, sync, sync.consumer)
        elif action == "alloc":
            _wait_gate(clocks, sync, sync.producer)
        elif action == "deque":
            _wait_gate(clocks, sync, sync.consumer)

    def on_instr(self, core, instr, pipe: int) -> None:
        """Instructions touching a queue slot wait for its gate (and mark the slot touched)."""
        index = self.index
        for accesses in (instr.reads, instr.writes):
            for record in accesses:
                found = index.get(record[0])
                if found is None:
                    continue
                lo, hi = record[1], record[2]
                addrs, entries = found
                n = len(addrs)
                k = bisect_right(addrs, lo) - 1
                if k < 0:
                    k = 0
                while k < n and addrs[k] < hi:
                    end, sync = entries[k]
                    if end > lo and (len(record) == 3 or overlaps(record, addrs[k], end)):
                        sync.touched.add(pipe)
                        if sync.seen.get(pipe) != sync.version:
                            _wait_gate(self.clocks_of(core.core_id), sync, pipe)
                    k += 1

    def on_launch_end(self, launch) -> None:
        for core_id, pipes in launch.shared.get("pipes", {}).items():
            for tpipe in pipes:
                for queue in tpipe.queues:
                    for slot in queue.slots:
                        if slot.state != "free":
                            self._held(launch, core_id, queue, slot)

    @staticmethod
    def _held(launch, core_id, queue, slot) -> None:
        position = getattr(queue.position, "name", str(queue.position))
        launch.findings.report(
            "queue-misuse",
            f"a tensor of TQue({position}) allocated here is still {slot.state} when the kernel "
            f"ends ({queue.mem.name} bytes [{slot.addr}, {slot.addr + slot.nbytes}))",
            slot.alloc_loc or ("<unknown>", 0),
            hint="deque and free_tensor every allocated tensor before the kernel returns",
            core=core_id, buffer=queue.mem.name, start=slot.addr, stop=slot.addr + slot.nbytes)
