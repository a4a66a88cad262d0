"""One simulated core (AIV or AIC): its local memories and its per-pipe in-order timelines.

Timing follows the DaVinci issue model: the scalar unit walks the program and hands each
instruction to its pipe's queue; every pipe runs its queue in order; an instruction starts at
``max(pipe free, scalar issued it, its sync dependencies are met)``. An instruction occupies its
pipe for ``busy`` cycles and its result is ready ``latency`` cycles later, so back-to-back
independent instructions overlap their latencies as on the hardware.
"""

from __future__ import annotations

from collections import deque

from ascsim.hw import SocSpec
from ascsim.sim.cost import cost_table
from ascsim.sim.memory import LocalMemory
from ascsim.sim.source import Location
from ascsim.sim.work import CoreWork

PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")

#: How many of its latest bank-conflicted vector instructions a core keeps for pricing the UB
#: transfers beside them: a transfer overlaps the few around it, a queue's depth at most.
UB_CONFLICT_WINDOWS = 8

# Which local buffers each kind of core owns (name -> SocSpec attribute with its size).
CORE_BUFFERS = {
    "AIV": {"UB": "ub_bytes"},
    "AIC": {"L1": "l1_bytes", "L0A": "l0a_bytes", "L0B": "l0b_bytes", "L0C": "l0c_bytes",
            "BT": "bt_bytes", "FB": "fixpipe_buffer_bytes", "L0AMX": "l0a_mx_bytes",
            "L0BMX": "l0b_mx_bytes"},
}


class Instr:
    """An instruction's place on a pipe's timeline: when it ran, what it touched, and the
    instruction record (:mod:`ascsim.isa.instr`) it executed."""

    __slots__ = ("core", "pipe", "op", "start", "end", "done", "loc", "reads", "writes",
                 "record")

    def __init__(self, core, pipe, op, start, end, done, loc, reads, writes, record):
        self.core = core
        self.pipe = pipe
        self.op = op
        self.start = start
        self.end = end
        self.done = done
        self.loc = loc
        self.reads = reads
        self.writes = writes
        self.record = record  # the instruction record it executed (ascsim.isa.instr)

    def __repr__(self) -> str:
        return f"Instr({self.op} on {self.pipe} @{self.start:.0f}-{self.done:.0f})"


class Core:
    """State of one core during a launch."""

    def __init__(self, launch, core_id: int, kind: str, block_idx: int, sub_block_idx: int,
                 start_time: float = 0.0):
        soc: SocSpec = launch.soc
        self.launch = launch
        self.soc = soc
        self.core_id = core_id
        self.kind = kind
        self.block_idx = block_idx
        self.sub_block_idx = sub_block_idx
        self.start_time = start_time
        self.mem = {name: LocalMemory(name, getattr(soc, attr), core_id)
                    for name, attr in CORE_BUFFERS[kind].items()}
        t = start_time
        self.scalar = t
        # The GM->L1 copy floor over a run of back-to-back copies (cost.copy_floor_wait): when
        # the run's floors allow the latest copy to end, and when that copy ends.
        self.copy_floor_clock = t
        self.copy_run_end = t
        self.pipe_free = dict.fromkeys(PIPES, t)
        self.pipe_done = dict.fromkeys(PIPES, t)
        self.busy = dict.fromkeys(PIPES, 0.0)
        self._busy_end = dict.fromkeys(PIPES, t)
        self.flags: dict[tuple[str, int], deque] = {}
        self.mutexes: dict = {}  # buffer token id -> sync.MutexState
        self.instrs: list[Instr] = []
        # The cube FLOPs and vector bytes of those instructions, for the profile.
        self.work = CoreWork()
        self.flag_edges: list[tuple] = []  # (src pipe, t_set, dst pipe, t_wait, loc)
        self.bytes_moved: dict[str, int] = {}
        self.timing = soc.timing
        self.costs = cost_table(soc)
        self.finished = False
        # Records executed so far, and the vector function being built (see
        # ascsim.sim.exec_vector.execute_vector): a run of fusible vector records only.
        self.executed = 0
        self.vf_group = None
        # The latest vector instructions that lost cycles to UB bank conflicts, as (start,
        # end, extra cycles, bit mask of the banks they read): UB transfers beside them wait
        # for the ports (cost.ub_port_stall).
        self.ub_conflicts: deque = deque(maxlen=UB_CONFLICT_WINDOWS)
        # Per pipe, the starts of its last pipe_queue_depth instructions: an instruction
        # leaves the pipe's issue queue when it starts, and the scalar unit cannot issue
        # into a full queue.
        self._queued = {pipe: deque(maxlen=self.timing.pipe_queue_depth) for pipe in PIPES}

    # ----------------------------------------------------------------- scalar work
    def scalar_work(self, cycles: float) -> None:
        """Time the scalar unit spends on address arithmetic, loop control and API bookkeeping."""
        self.scalar += cycles
        self.busy["S"] += cycles

    def loop_iteration(self) -> None:
        """The scalar unit's loop control for one iteration of a kernel loop."""
        cycles = self.timing.scalar_cycles_per_loop_iter
        self.scalar += cycles
        self.busy["S"] += cycles

    def call_overhead(self) -> None:
        """The scalar cost of issuing one API call (argument set-up, address computation)."""
        cycles = self.timing.scalar_cycles_per_call
        self.scalar += cycles
        self.busy["S"] += cycles

    # ----------------------------------------------------------------- instructions
    def execute(self, record):
        """Execute one instruction record (:mod:`ascsim.isa.instr`): its effect on memory, its
        cost at its true start, its place on the pipe's timeline, and the observers. Returns
        the timeline entry (:class:`Instr`) for pipe instructions, the value for a scalar load,
        and None for synchronisation records."""
        self.executed += 1
        return EXECUTORS[type(record)](self, record)

    def begin(self, pipe: str, ready: float) -> float:
        """Issue an instruction to ``pipe`` from the scalar unit (which spends its per-call
        cycles on it); returns its start: ``max(pipe free, issued, ready)``."""
        cycles = self.timing.scalar_cycles_per_call
        queued = self._queued[pipe]
        scalar = self.scalar
        if len(queued) == queued.maxlen and queued[0] > scalar:
            scalar = queued[0]  # the queue is full until its oldest instruction starts
        scalar = self.scalar = scalar + cycles
        self.busy["S"] += cycles
        start = self.pipe_free[pipe]
        if scalar > start:
            start = scalar
        if ready > start:
            start = ready
        queued.append(start)
        return start

    def place(self, pipe: str, op: str, start: float, busy: float, latency: float,
              loc: Location, reads=(), writes=(), record=None) -> Instr:
        """Put an instruction that starts at ``start`` (see :meth:`begin`) on ``pipe``'s
        timeline: it occupies the pipe ``busy`` cycles, its result is ready ``latency`` later."""
        end = start + busy
        done = end + latency
        self.pipe_free[pipe] = end
        if done > self.pipe_done[pipe]:
            self.pipe_done[pipe] = done
        busy_end = self._busy_end[pipe]
        lo = start if start > busy_end else busy_end
        if done > lo:
            self.busy[pipe] += done - lo
            self._busy_end[pipe] = done
        instr = Instr(self.core_id, pipe, op, start, end, done, loc, reads, writes, record)
        self.instrs.append(instr)
        if pipe == "M" or pipe == "V":
            self.work.add(instr)
        for observer in self.launch.observers:
            observer.on_instr(self, instr)
        return instr

    def issue(self, pipe: str, op: str, busy: float, latency: float, loc: Location,
              reads=(), writes=(), ready: float = 0.0, record=None) -> Instr:
        """:meth:`begin` and :meth:`place` for an instruction whose cost does not depend on
        its start."""
        return self.place(pipe, op, self.begin(pipe, ready), busy, latency, loc, reads, writes,
                          record)

    def release_memories(self) -> None:
        """Give the local buffers' bytes back once the launch is over (LocalMemory.release)."""
        for mem in self.mem.values():
            mem.release()

    def count_bytes(self, path: str, nbytes: int) -> None:
        self.bytes_moved[path] = self.bytes_moved.get(path, 0) + nbytes

    # ----------------------------------------------------------------- synchronisation
    def pipe_ready(self, pipe: str) -> float:
        """When everything already queued on ``pipe`` has completed."""
        if pipe == "S":
            return self.scalar
        return max(self.pipe_done[pipe], self.pipe_free[pipe], self.scalar)

    def block_pipe(self, pipe: str, until: float, source=None) -> None:
        """Nothing more on ``pipe`` starts before ``until``. ``source``: what the pipe waits
        for, as (core id, pipe, cycle) -- the signal's origin, which this machine ignores and a
        recording core (:mod:`ascsim.sim.causes`) keeps for the critical path."""
        if pipe == "S":
            if until > self.scalar:
                self.scalar = until
        elif until > self.pipe_free[pipe]:
            self.pipe_free[pipe] = until

    # ----------------------------------------------------------------- results
    def end_time(self) -> float:
        return max(self.scalar, *self.pipe_done.values(), *self.pipe_free.values())


# Record type -> executor(core, record). Filled by :mod:`ascsim.sim.execute`, which imports the
# executor modules (they in turn need nothing from this module but the Core they are handed).
EXECUTORS: dict = {}
