"""The kernel checks that run inside every simulation, as one launch observer.

A launch runs them when its ``LaunchOptions.checks`` is set (:mod:`ascsim.sim.launch`); the
options turn them off where benchmarks measure their cost.
Checks done where the state lives (GM bounds, local overflow, copy alignment, queue misuse,
flag misuse, deadlock) report through ``launch.findings`` directly; this package adds the ones
that need the whole instruction stream: races within and across cores (:mod:`.races` over the
vector clocks of :mod:`.clocks`, with edges from :mod:`.queues` and :mod:`.crosscore`),
uninitialised and stale reads (:mod:`.uninit`), use after free (:mod:`.leases`), operand
alignment (:mod:`.alignment`) and tensors still held at kernel end (:mod:`.queues`).
Cores whose events repeat the first core's take its local verdicts and have only their GM
accesses checked (:mod:`.mirror`).
The catalogue with example messages is docs/checks.md.
"""

from __future__ import annotations

from ascsim.sim.checks.alignment import AlignmentCheck
from ascsim.sim.checks.clocks import PIPE_INDEX, CoreClocks
from ascsim.sim.checks.crosscore import CrossCoreSync
from ascsim.sim.checks.leases import LeaseCheck
from ascsim.sim.checks.mirror import UNMATCHABLE, CoreMirrors
from ascsim.sim.checks.queues import QueueCheck
from ascsim.sim.checks.races import RaceCheck
from ascsim.sim.checks.uninit import UninitCheck

V = PIPE_INDEX["V"]
#: Routes of a core's events (``KernelChecks.routes``) besides a :class:`Mirrored` core: the
#: reference core while its stream is recorded; the full checks are ``None``.
REFERENCE = "reference"


class KernelChecks:
    """One observer running every dynamic check of a launch."""

    def __init__(self, launch):
        self.launch = launch
        self.clocks: dict[int, CoreClocks] = {}
        self.races = RaceCheck(launch, self.clocks_of, self.describe_space)
        self.queues = QueueCheck(launch, self.clocks_of)
        self.uninit = UninitCheck(launch, self.describe_space)
        self.alignment = AlignmentCheck(launch)
        self.leases = LeaseCheck(launch, self.describe_space)
        self.cross = CrossCoreSync(self.clocks_of)
        self.races.wrong_pipe_set = self.cross.wrong_pipe_set
        self.mirrors = CoreMirrors(self, launch)
        # core id -> where its events go: None (the full checks), REFERENCE (the full checks,
        # recorded for the cores after it), or the core's Mirrored state (see .mirror). The
        # hooks look the route up only when the core changes (cores run one at a time).
        self.routes: dict = {}
        self.current = None  # the core id of the latest event
        self.route = None  # its route

    # Cross-core hooks: the cores they link are no longer independent, so no core mirrors
    # another from here on (a mirrored core's clocks are made real first).
    def on_cross_core_set(self, *args) -> None:
        self._stop_mirroring()
        self.cross.on_cross_core_set(*args)

    def on_cross_core_release(self, *args) -> None:
        self._stop_mirroring()
        self.cross.on_cross_core_release(*args)

    def on_cross_core_wait(self, *args) -> None:
        self._stop_mirroring()
        self.cross.on_cross_core_wait(*args)

    def on_cross_core_edge(self, *args) -> None:
        self._stop_mirroring()
        self.cross.on_cross_core_edge(*args)

    def _stop_mirroring(self) -> None:
        if self.mirrors.enabled:
            self.mirrors.disable()
            for cid in self.routes:
                self.routes[cid] = None
            self.route = None

    def _switch(self, core) -> None:
        """An event of another core than the latest one's: find its route. A core that had
        events before comes back after another core ran (it waited): the cores interleave,
        and no core mirrors another from here on."""
        cid = core.core_id
        mirrors = self.mirrors
        if cid in self.routes:
            self._stop_mirroring()
        else:
            if mirrors.ref_id is not None:
                self.routes[mirrors.ref_id] = None  # its recording ends here
            m = mirrors.admit(core)
            self.routes[cid] = REFERENCE if mirrors.ref_id == cid else m
        self.current = cid
        self.route = self.routes[cid]

    def _leave(self, cid: int) -> None:
        """A mirrored core's event does not match the reference: its local state is made
        real and it takes the full path from here."""
        self.mirrors.materialise(cid)
        self.routes[cid] = self.route = None

    def release(self) -> None:
        """Drop every check's state once the launch is over: the checks refer to each other
        through bound methods (cycles), and their maps to the launch's instruction records,
        which are then freed by reference counting instead of by a collection."""
        self.mirrors.release()
        vars(self).clear()

    def forget_core(self, core_id: int) -> None:
        """Core ``core_id`` has finished (a front-end that releases a finished block's local
        buffers early says so): the state kept per byte of its buffers goes."""
        self.uninit.forget_core(core_id)

    def clocks_of(self, core_id: int) -> CoreClocks:
        clocks = self.clocks.get(core_id)
        if clocks is None:
            clocks = self.clocks[core_id] = CoreClocks(core_id)
        return clocks

    def describe_space(self, space) -> str:
        if space[0] == "GM":
            buffers = self.launch.memory.buffers
            name = buffers[space[1]].name if space[1] < len(buffers) else space[1]
            return f"GM '{name}'"
        return f"{space[1]} of core {space[0]}"

    # ------------------------------------------------------------------ observer protocol
    # Both hooks run once per gate operation or instruction: the sub-checks' methods are
    # called directly with the core's clocks, in one frame each.
    def on_gate(self, core, gate, action: str, loc) -> None:
        if core.core_id != self.current:
            self._switch(core)
        route = self.route
        if route is not None:
            if route is REFERENCE:
                self.mirrors.record_gate(gate, action, loc)
            else:
                # A slot seen before, at the reference's position: matched inline (only a
                # gate operation's entry has a gate this core's gates map to).
                try:
                    entry = route.template[route.pos]
                except IndexError:
                    entry = UNMATCHABLE
                if entry.gate is route.gates.get(gate) and entry.action == action and \
                        entry.loc == loc and entry.lo == gate.lo and entry.hi == gate.hi:
                    route.pos += 1
                    return
                if self.mirrors.gate(route, gate, action, loc):
                    return
                self._leave(core.core_id)
        clocks = self.clocks.get(core.core_id) or self.clocks_of(core.core_id)
        self.queues.on_gate_op(clocks, gate, action)
        if action == "acquire_write":  # a new allocation: fresh bytes, a new generation
            self.uninit.on_acquire(gate)
            self.leases.on_acquire(gate, loc)
        elif action == "release_read":  # given back
            self.leases.on_release(gate, loc)

    def on_instr(self, core, instr) -> None:
        reads, writes = instr.reads, instr.writes
        if not reads and not writes:
            # Nothing to check, and nothing for an epoch to name: the clocks count only the
            # instructions that access memory (most of a Matmul's internal steps do not).
            return
        if core.core_id != self.current:
            self._switch(core)
        route = self.route
        if route is not None and route is not REFERENCE:
            if self.mirrors.instr(route, core, instr):
                return
            self._leave(core.core_id)
        pipe = PIPE_INDEX[instr.pipe]
        clocks = self.clocks.get(core.core_id) or self.clocks_of(core.core_id)
        count = clocks.tick(pipe)
        self.queues.check_instr(clocks, reads, writes, pipe)
        # (The pipe's clock is current after the tick, and only the race check's scalar
        # auto-sync joins anything into it before the next instruction.)
        self.races.check_instr(instr, clocks, pipe, count, clocks.vc[pipe])
        self.uninit.on_instr(core, instr)
        if pipe == V:
            self.alignment.on_instr(core, instr)
        self.leases.on_instr(core, instr)
        if route is REFERENCE:
            self.mirrors.record_instr(clocks, instr, pipe, count)

    def _clock_step(self, core, hook: str, args: tuple) -> bool:
        """Route a flag, mutex or barrier step: True when a mirrored core kept it."""
        if core.core_id != self.current:
            self._switch(core)
        route = self.route
        if route is None:
            return False
        if route is REFERENCE:
            self.mirrors.record_clock(hook, args)
        elif route is not None:
            if self.mirrors.clock(route, hook, args):
                return True
            self._leave(core.core_id)
        return False

    def on_set_flag(self, core, src, dst, event_id, loc) -> None:
        if not self._clock_step(core, "on_set_flag", (src, dst, event_id)):
            self.clocks_of(core.core_id).set_flag(src, dst, event_id)

    def on_wait_flag(self, core, src, dst, event_id, loc, set_loc=None) -> None:
        if not self._clock_step(core, "on_wait_flag", (src, dst, event_id)):
            self.clocks_of(core.core_id).wait_flag(src, dst, event_id)

    def on_mutex(self, core, action: str, pipe: str, mutex_id: int) -> None:
        if not self._clock_step(core, "on_mutex", (action, pipe, mutex_id)):
            self.clocks_of(core.core_id).mutex(action, pipe, mutex_id)

    def on_barrier(self, core, pipe, loc) -> None:
        if not self._clock_step(core, "on_barrier", (pipe,)):
            self.clocks_of(core.core_id).barrier(pipe)

    def on_wave_start(self, launch, cores) -> None:
        """Blocks of later waves are not ordered after earlier ones: the hardware may run them
        on any core, so nothing carries over."""

    def on_launch_end(self, launch) -> None:
        self.queues.on_launch_end(launch)


__all__ = ["KernelChecks"]
