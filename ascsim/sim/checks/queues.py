"""Buffer gates as happens-before edges, and buffers still held when the kernel ends.

A gate's operations are hardware flags (ascend-hw §4.4): ``release_write`` (a queue's enque) is a
set by the pipes that filled the buffer, ``acquire_read`` (deque) a wait by the consumer,
``release_read`` (free) a set by the pipes that read it, ``acquire_write`` (alloc) a wait by the
next producer. Each gate keeps the clock its last set published and which pipes touched it
since. A wait joins the gate into the gate's producer or consumer pipe; any instruction touching
the gate's bytes also joins it, as the simulator's timing makes every such instruction wait for
the gate.
"""

from __future__ import annotations

from bisect import bisect_right

from ascsim.sim.access import overlaps
from ascsim.sim.checks.clocks import PIPE_INDEX, join


class SlotSync:
    """Happens-before state of one gate."""

    __slots__ = ("gate", "clock", "version", "seen", "touched", "producer", "consumer")

    def __init__(self, gate):
        self.gate = gate
        self.clock: dict = {}
        self.version = 0
        self.seen: dict[int, int] = {}
        self.touched: set[int] = set()
        self.producer = PIPE_INDEX[gate.producer]
        self.consumer = PIPE_INDEX[gate.consumer]


def _wait_gate(clocks, sync: SlotSync, pipe: int) -> None:
    """Pipe ``pipe`` waits for the slot's gate. Once per gate version: joining the same clock
    again changes nothing (clocks only grow), and every publish bumps the version. ``seen`` is
    per pipe, not per core: only the slot's own core uses the pipes of its position (the one
    foreign writer, a 950 AIC's FixPipe into UB, is on FIX, which no UB gate uses)."""
    if sync.seen.get(pipe) != sync.version:
        sync.seen[pipe] = sync.version
        clocks.join_into(pipe, sync.clock)


class QueueCheck:
    """Turns gate operations into clock edges; reports buffers still held at the end."""

    #: What each gate action is, for the clocks: a publish (set) or a wait, and on which side.
    ACTIONS = {"release_write": ("publish", "producer"), "release_read": ("publish", "consumer"),
               "acquire_write": ("wait", "producer"), "acquire_read": ("wait", "consumer")}

    def __init__(self, launch, clocks_of):
        self.launch = launch
        self.clocks_of = clocks_of
        self.syncs: dict[int, SlotSync] = {}  # id(gate) -> its state
        self.index: dict = {}  # space key -> (sorted gate addresses, [(end, SlotSync)])
        self.registered = 0  # how many of launch.gates are in the index

    def _register_new(self) -> None:
        gates = self.launch.gates
        for gate in gates[self.registered:]:
            sync = self.syncs[id(gate)] = SlotSync(gate)
            addrs, entries = self.index.setdefault(gate.key, ([], []))
            k = bisect_right(addrs, gate.lo)
            addrs.insert(k, gate.lo)
            entries.insert(k, (gate.hi, sync))
        self.registered = len(gates)

    def _publish(self, clocks, sync: SlotSync, default: int) -> None:
        # Joined in place: a gate's clock is only ever read (joined into pipe clocks).
        clock = sync.clock
        touched = sync.touched
        for p in touched or (default,):
            join(clock, clocks.current(p))
        sync.version += 1
        touched.clear()

    def on_gate(self, core, gate, action: str, loc) -> None:
        sync = self.syncs.get(id(gate))
        if sync is None:
            self._register_new()
            sync = self.syncs.get(id(gate))
            if sync is None:
                return
        clocks = self.clocks_of(core.core_id)
        kind, side = self.ACTIONS[action]
        pipe = sync.producer if side == "producer" else sync.consumer
        if kind == "publish":
            self._publish(clocks, sync, pipe)
        else:
            _wait_gate(clocks, sync, pipe)

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
        for gate in launch.gates:
            if gate.state != "free":
                self._held(launch, gate)

    #: How a held gate's state reads in the finding.
    STATE_WORDS = {"writing": "being written", "handed_over": "handed over but not taken",
                   "reading": "being read"}

    @staticmethod
    def _held(launch, gate) -> None:
        launch.findings.report(
            "queue-misuse",
            f"a {gate.label} taken here is still {QueueCheck.STATE_WORDS[gate.state]} when the "
            f"kernel ends ({gate.space} bytes [{gate.lo}, {gate.hi}))",
            gate.taken_at or ("<unknown>", 0), hint=launch.hint("gate-held"),
            core=gate.core_id, buffer=gate.space, start=gate.lo, stop=gate.hi)
