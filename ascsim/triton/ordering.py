"""The synchronisation triton-ascend's compiler inserts between the pipes of one core.

A Triton kernel names no pipes and no events: the compiler orders the copy-in (MTE2), the vector
unit (V) and the copy-out (MTE3) itself, with a set/wait of an event from the pipe that produced
a buffer to the pipe that next uses it. Here every record a Triton operation becomes passes
through :meth:`Ordering.issue` with the buffers it reads and writes (UB allocations and GM
tensors): before it runs, an event is raised and waited for from every other pipe whose last
write it reads (read after write) or whose last access it overwrites (write after read and
after write, including the readers of UB bytes a dead tile gave back, see
:mod:`ascsim.triton.ub`). An event covers everything its pipe had issued, so a pair of pipes
needs no new event while nothing later on the producer matters. Events are waited for right
after they are set, so one event id per pipe pair suffices.

The result is a race-free kernel with the overlap the program order allows: the copy-in of the
next block (into other bytes) runs while the vector unit works on this one.
"""

from __future__ import annotations

from ascsim.isa import SetFlag, WaitFlag

EVENT_ID = 0


class GmAccess:
    """The last write/access of each pipe of one core to one GM tensor."""

    __slots__ = ("write", "access")

    def __init__(self):
        self.write: dict = {}
        self.access: dict = {}


class Ordering:
    """The pipe order of one core: per pipe, how many records it has issued, and per pipe pair
    up to which record of the producer the consumer has waited."""

    def __init__(self, core):
        self.core = core
        self.seq = {"MTE2": 0, "V": 0, "MTE3": 0}
        self.synced: dict[tuple[str, str], int] = {}

    def issue(self, pipe: str, record, reads: tuple, writes: tuple, loc):
        """Order ``record`` (running on ``pipe``) after the accesses it depends on, run it,
        note its accesses, and return the machine's instruction."""
        needed: dict[str, int] = {}
        for buf in reads:
            for other, seq in buf.write.items():
                if other != pipe and seq > needed.get(other, 0):
                    needed[other] = seq
        for buf in writes:
            for other, seq in buf.access.items():
                if other != pipe and seq > needed.get(other, 0):
                    needed[other] = seq
        core = self.core
        for other, seq in needed.items():
            pair = (other, pipe)
            if seq > self.synced.get(pair, 0):
                core.execute(SetFlag(other, pipe, EVENT_ID, loc))
                core.execute(WaitFlag(other, pipe, EVENT_ID, loc))
                self.synced[pair] = self.seq[other]
        instr = core.execute(record)
        n = self.seq[pipe] = self.seq[pipe] + 1
        for buf in reads:
            buf.access[pipe] = n
        for buf in writes:
            buf.write[pipe] = n
            buf.access[pipe] = n
        return instr
