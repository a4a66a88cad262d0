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

from ascsim.sim.checks.clocks import S, join

#: Gate action -> (a wait rather than a publish?, on the producer's side?).
GATE_ACTIONS = {"acquire_write": (True, True), "release_write": (False, True),
                "acquire_read": (True, False), "release_read": (False, False)}


class QueueCheck:
    """Turns gate operations into clock edges; reports buffers still held at the end.

    A gate's happens-before state lives in its :class:`~.slots.Slot`. A wait joins the gate's
    clock into the waiting pipe once per gate version: joining the same clock again changes
    nothing (clocks only grow), and every publish bumps the version.
    """

    def __init__(self, launch, clocks_of, slots):
        self.launch = launch
        self.clocks_of = clocks_of
        self.slots = slots  # the launch's SlotIndex (shared with the written-bytes check)

    def on_gate_op(self, clocks, sync, action: str) -> None:
        """A gate operation of the core whose clocks are ``clocks`` on the gate whose
        :class:`~.slots.Slot` is ``sync``. A wait (``acquire_write`` by the producer,
        ``acquire_read`` by the consumer) joins the gate's clock into the waiting pipe; a
        publish (``release_write``, ``release_read``) joins the clocks of the pipes that touched
        the gate's bytes since the last publish (by default the producer's or the consumer's)
        into the gate's clock and bumps its version."""
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
        hits, touching = self.slots.hits, self.slots.touching
        for accesses in (reads, writes):
            for record in accesses:
                for sync in (hits.get(record) or touching(record))[0]:
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

