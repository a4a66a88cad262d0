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
from ascsim.sim.checks.clocks import PIPE_INDEX, S, join


class SlotSync:
    """Happens-before state of one gate."""

    __slots__ = ("gate", "clock", "version", "seen", "touched", "producer", "consumer")

    def __init__(self, gate):
        self.gate = gate
        self.clock: dict = {}
        self.version = 0
        # Per pipe index, the gate version that pipe last joined (-1: none). ``seen`` is per
        # pipe, not per core: only the slot's own core uses the pipes of its position (the one
        # foreign writer, a 950 AIC's FixPipe into UB, is on FIX, which no UB gate uses).
        self.seen = [-1] * len(PIPE_INDEX)
        self.touched: set[int] = set()
        self.producer = PIPE_INDEX[gate.producer]
        self.consumer = PIPE_INDEX[gate.consumer]


#: Gate action -> (a wait rather than a publish?, on the producer's side?).
GATE_ACTIONS = {"acquire_write": (True, True), "release_write": (False, True),
                "acquire_read": (True, False), "release_read": (False, False)}

#: Entries the per-record cache of gates (``QueueCheck.hits``) holds before it starts over.
HIT_CACHE_LIMIT = 4096


class QueueCheck:
    """Turns gate operations into clock edges; reports buffers still held at the end.

    A wait joins the gate's clock into the waiting pipe once per gate version: joining the
    same clock again changes nothing (clocks only grow), and every publish bumps the version.
    """

    def __init__(self, launch, clocks_of):
        self.launch = launch
        self.clocks_of = clocks_of
        self.syncs: dict = {}  # gate -> its SlotSync
        self.index: dict = {}  # space key -> (sorted gate addresses, [(end, SlotSync)])
        self.registered = 0  # how many of launch.gates are in the index
        # access record -> the SlotSyncs whose bytes it touches: a kernel's loop touches the
        # same few tiles with the same records, so the index is searched once per record.
        self.hits: dict = {}

    def _register_new(self) -> None:
        self.register(len(self.launch.gates))

    def register(self, upto: int) -> None:
        """Put the launch's first ``upto`` gates into the index (the ones not there yet)."""
        gates = self.launch.gates
        if upto <= self.registered:
            return
        for gate in gates[self.registered:upto]:
            sync = self.syncs[gate] = SlotSync(gate)
            addrs, entries = self.index.setdefault(gate.key, ([], []))
            k = bisect_right(addrs, gate.lo)
            addrs.insert(k, gate.lo)
            entries.insert(k, (gate.hi, sync))
        self.registered = upto
        self.hits.clear()  # a record may touch the new gates too

    def forget_touches(self, core_id: int, since: int) -> None:
        """Start the states of core ``core_id``'s gates from ``launch.gates[since:]`` afresh:
        a replay (:mod:`.mirror`) of events that came before those gates existed may have
        marked them touched."""
        for gate in self.launch.gates[since:self.registered]:
            if gate.core_id == core_id:
                self.syncs[gate].__init__(gate)

    def _sync_of(self, gate) -> SlotSync | None:
        sync = self.syncs.get(gate)
        if sync is None:
            self._register_new()
            sync = self.syncs.get(gate)
        return sync

    def on_gate_op(self, clocks, gate, action: str) -> None:
        """A gate operation of the core whose clocks are ``clocks``. A wait (``acquire_write``
        by the producer, ``acquire_read`` by the consumer) joins the gate's clock into the
        waiting pipe; a publish (``release_write``, ``release_read``) joins the clocks of the
        pipes that touched the gate's bytes since the last publish (by default the producer's
        or the consumer's) into the gate's clock and bumps its version."""
        sync = self.syncs.get(gate) or self._sync_of(gate)
        if sync is None:
            return
        waits, producer = GATE_ACTIONS[action]
        pipe = sync.producer if producer else sync.consumer
        if waits:
            if sync.seen[pipe] != sync.version:
                sync.seen[pipe] = sync.version
                if join(clocks.current(pipe), sync.clock) and pipe == S:
                    clocks.s_version += 1
            return
        # Joined in place: a gate's clock is only ever read (joined into pipe clocks). A pipe
        # that joined this version of the gate already holds all of the gate's clock, so the
        # first pipe's clock is then copied rather than joined entry by entry.
        touched = sync.touched
        version, seen = sync.version, sync.seen
        clock = sync.clock
        first = True
        for p in (touched or (pipe,)):
            if first and seen[p] == version:
                clock = sync.clock = dict(clocks.current(p))
            else:
                join(clock, clocks.current(p))
            first = False
        touched.clear()
        sync.version = version + 1

    def check_instr(self, clocks, reads, writes, pipe: int) -> None:
        """Instructions touching a queue slot wait for its gate (and mark the slot touched)."""
        index, hits = self.index, self.hits
        for accesses in (reads, writes):
            for record in accesses:
                found = index.get(record[0])
                if found is None:
                    continue  # no gate in that space (GM, scratch-only memories)
                syncs = hits.get(record)
                if syncs is None:
                    syncs = _touching(found, record)
                    if len(hits) >= HIT_CACHE_LIMIT:
                        hits.clear()
                    hits[record] = syncs
                for sync in syncs:
                    sync.touched.add(pipe)
                    if sync.seen[pipe] != sync.version:
                        sync.seen[pipe] = sync.version
                        clocks.join_into(pipe, sync.clock)

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


def _touching(found, record) -> tuple:
    """The SlotSyncs of the gates (``found``: the space's index entry) whose bytes ``record``
    touches, in address order."""
    lo, hi = record[1], record[2]
    addrs, entries = found
    n = len(addrs)
    k = max(bisect_right(addrs, lo) - 1, 0)
    out = []
    while k < n and addrs[k] < hi:
        end, sync = entries[k]
        if end > lo and (len(record) == 3 or overlaps(record, addrs[k], end)):
            out.append(sync)
        k += 1
    return tuple(out)
