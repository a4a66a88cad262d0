"""A core that records why each instruction started when it did, and how long each wait held.

:class:`CausalCore` is :class:`~ascsim.sim.core.Core` with the same timing, plus a record of the
term that set every start -- ``max(pipe free, scalar issued, ready)`` of
:meth:`Core.begin <ascsim.sim.core.Core.begin>` -- and of every wait that held a pipe or the
scalar unit (:meth:`Core.block_pipe`, told by the synchronisation executors what the pipe
waited for). :mod:`ascsim.sim.critical_path` walks these records back from the launch's end.
A launch uses it when ``LaunchOptions.record_causes`` is set; the ordinary core pays nothing.

It also leaves out the synchronisation records at ``LaunchOptions.dropped_syncs`` (file, line)
-- the what-if of removing a wait from the source (:mod:`ascsim.what_if`).

How long a wait *blocked* (its stall) is measured where it matters: at the next instruction
on the pipe it held, as that instruction's start minus the start it would have had without the
wait (``max(the pipe's previous time, issued, ready)``); on the scalar unit, the cycles it
jumped. A wait that another wait or the pipe's own work already covered stalls 0.
"""

from __future__ import annotations

from bisect import bisect_right

from ascsim.isa.instr import (
    CoreBarrier,
    CrossCoreSet,
    CrossCoreWait,
    GmFlagWait,
    Handoff,
    Mutex,
    PipeBarrier,
    SetFlag,
    WaitFlag,
)
from ascsim.sim.core import Core
from ascsim.sim.source import site_key

#: Record types that hold a pipe until something else happened, by the word the tables use.
WAIT_KINDS = {WaitFlag: "wait_flag", PipeBarrier: "pipe_barrier", CrossCoreWait: "cross-core wait",
              CoreBarrier: "core barrier", GmFlagWait: "GM flag wait", Mutex: "mutex lock",
              Handoff: "hand-off"}
#: Record types a what-if may leave out of the run (a user can delete their line).
DROPPABLE = (WaitFlag, SetFlag, PipeBarrier, CrossCoreWait, CrossCoreSet, CoreBarrier)


class Block:
    """One execution of a wait: it held ``pipe`` of its core until ``until`` (cycles), where
    the pipe (the scalar unit for ``S``) was at ``before``; ``source`` is what it waited for,
    (core id, pipe, cycle) -- pipe ``ALL``: that core's latest completion. ``stall``: the
    cycles it delayed the next instruction on the pipe (see the module docstring)."""

    __slots__ = ("core_id", "pipe", "until", "before", "record", "source", "stall", "set_loc")

    def __init__(self, core_id, pipe, until, before, record, source, set_loc=None):
        self.core_id = core_id
        self.pipe = pipe
        self.until = until
        self.before = before
        self.record = record
        self.source = source
        self.stall = 0.0
        self.set_loc = set_loc  # the set_flag that met a wait_flag

    @property
    def loc(self):
        return getattr(self.record, "loc", None)

    def __repr__(self) -> str:
        return f"Block({self.pipe} {self.before:.0f}->{self.until:.0f} by {self.source})"


class CausalCore(Core):
    """A core that keeps, beside each instruction, the cause of its start.

    ``causes[i]`` goes with ``instrs[i]``: ``("pipe", prev)`` -- the previous instruction on
    the pipe left it (an :class:`~ascsim.sim.core.Instr`), ``("block", Block)`` -- a wait
    released the pipe, ``("scalar", cycle)`` -- the scalar unit issued it then, ``("ready",
    cycle)`` -- its operands became ready then (a buffer gate, a data dependency the front-end
    named). ``blocks``: every wait, in program order; ``scalar_jumps``: (from, to, cause) each
    time the scalar unit jumped ahead instead of working (a wait on S, a full issue queue).
    """

    def __init__(self, launch, core_id, kind, block_idx, sub_block_idx, start_time=0.0):
        super().__init__(launch, core_id, kind, block_idx, sub_block_idx, start_time)
        self.causes: list[tuple] = []
        self.blocks: list[Block] = []
        self.scalar_jumps: list[tuple] = []
        self._jump_ends: list[float] = []  # the jumps' "to", ascending (the scalar is monotone)
        self._pipe_cause: dict = {}
        self._pending = None
        self._record = None
        self._set_loc = None
        self._dropped = launch.options.dropped_syncs

    # ------------------------------------------------------------------ records
    def execute(self, record):
        if self._dropped and isinstance(record, DROPPABLE) and \
                site_key(record.loc) in self._dropped:
            self.executed += 1
            return None
        outer, self._record = self._record, record
        if type(record) is WaitFlag:  # the set it will consume, for the tables
            pending = self.flags.get((f"{record.src}_{record.dst}", record.event_id))
            self._set_loc = pending[0][1] if pending else None
        try:
            return super().execute(record)
        finally:
            self._record = outer

    # ------------------------------------------------------------------ timing hooks
    def begin(self, pipe: str, ready: float) -> float:
        queued = self._queued[pipe]
        if len(queued) == queued.maxlen and queued[0] > self.scalar:
            self._jump(self.scalar, queued[0], ("queue", pipe, queued[0]))
        free = self.pipe_free[pipe]
        start = super().begin(pipe, ready)
        issued = self.scalar
        cause = self._pipe_cause.get(pipe)
        if start == free and cause is not None:
            self._pending = cause
            if cause[0] == "block":
                block = cause[1]
                without = max(block.before, issued, ready)
                if start - without > block.stall:
                    block.stall = start - without
        elif start == ready and ready > issued:
            self._pending = ("ready", ready)
        else:
            self._pending = ("scalar", issued)
        return start

    def place(self, pipe, op, start, busy, latency, loc, reads=(), writes=(), record=None):
        pending, self._pending = self._pending, None
        if pending is None:  # started without begin (vector functions, SIMT)
            cause = self._pipe_cause.get(pipe)
            pending = cause if cause is not None and start == self.pipe_free[pipe] else \
                ("ready", start)
        instr = super().place(pipe, op, start, busy, latency, loc, reads, writes, record)
        self.causes.append(pending)
        self._pipe_cause[pipe] = ("pipe", instr)
        return instr

    def block_pipe(self, pipe: str, until: float, source=None) -> None:
        before = self.scalar if pipe == "S" else self.pipe_free[pipe]
        super().block_pipe(pipe, until, source)
        record = self._record
        set_loc = self._set_loc if type(record) is WaitFlag else None
        block = Block(self.core_id, pipe, until, before, record, source, set_loc)
        self.blocks.append(block)
        if until > before:
            if pipe == "S":
                self._jump(before, until, ("block", block))
                block.stall = until - before
            else:
                self._pipe_cause[pipe] = ("block", block)

    def _jump(self, before: float, until: float, cause: tuple) -> None:
        self.scalar_jumps.append((before, until, cause))
        self._jump_ends.append(until)

    # ------------------------------------------------------------------ queries
    def scalar_jump_before(self, t: float):
        """The latest scalar jump that ended at or before cycle ``t`` (None: none)."""
        i = bisect_right(self._jump_ends, t)
        return self.scalar_jumps[i - 1] if i else None
