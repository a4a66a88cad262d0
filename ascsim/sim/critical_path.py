"""The critical path of a launch: the chain of instructions, waits and hand-offs, across pipes
and cores, that sets its device time; and how long every wait held its pipe.

The cores of a launch run with :class:`ascsim.sim.causes.CausalCore`, which records why each
instruction started when it did. The path is walked back from the launch's end: the core that
ends last, the instruction (or wait, or scalar work) that ends it, what that one waited for,
and so on, to the start of the launch. Every step covers the time from what it waited for to
what it released, so the segments tile the span without gap or overlap, and the launch
overhead plus their sum is the device time (``CriticalPath.total_us``).

A step is one of

* ``instruction``: an instruction on its pipe, from its start to the moment the next step could
  go on (its end when the next one on the same pipe went on, its result otherwise);
* ``wait``: a wait (``wait_flag``, a cross-core flag, a barrier, a hand-off, a mutex) from the
  signal it waited for to the moment it released its pipe -- the flag's latency, or the
  cross-core hand-off;
* ``hand-over``: a buffer gate (a queue slot) passed from one pipe to the next;
* ``scalar``: the scalar unit issuing the kernel's calls; ``start-up``: the work every core does
  before the first call; ``previous wave``: the core ran an earlier block first;
* ``HBM``: the chip's HBM bandwidth, when the launch's HBM traffic needs longer than its cores.

Where an instruction waited for a time that no recorded event produced exactly (a front-end's
own bound such as "FixPipe may start as the last Mmad drains"), the step is the part of the
instruction that holds that time, and ``CriticalPath.inexact`` counts such steps.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass

from ascsim.sim.causes import WAIT_KINDS, CausalCore
from ascsim.sim.launch import fewer_collections
from ascsim.sim.report import PIPE_LABELS
from ascsim.sim.source import Location, format_location

#: Relative tolerance of a time that a hand-over latency was added to (a + b - b).
_EPS = 1e-9


@dataclass(frozen=True)
class Segment:
    """One step of the critical path, ``start`` to ``end`` in cycles of the launch's timeline
    (0: when the cores start, after the launch overhead).

    ``kind``: see the module docstring; ``core``: the core's label (``AIV1``, ``AIC0``; empty
    for the chip-wide HBM step), ``pipe``: its pipe (``S``, ``V``, ``MTE2``...), ``what``: the
    instruction or wait, ``loc``: its kernel line (None where there is none)."""

    start: float
    end: float
    kind: str
    core: str
    pipe: str
    what: str
    loc: Location | None

    @property
    def cycles(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class CriticalPath:
    """The critical path of one launch: ``segments`` in time order, which tile ``[0,
    span_cycles]``; ``total_us`` = ``overhead_us`` + their sum = the device time."""

    kernel: str
    soc: str
    device_time_us: float
    overhead_us: float
    clock_mhz: float
    segments: tuple[Segment, ...]
    inexact: int

    def us(self, cycles: float) -> float:
        return cycles / self.clock_mhz

    @property
    def span_cycles(self) -> float:
        return self.segments[-1].end if self.segments else 0.0

    @property
    def total_us(self) -> float:
        """The launch overhead plus every segment: the device time."""
        return self.overhead_us + self.us(sum(s.cycles for s in self.segments))

    def summary(self) -> list[tuple[str, str, str, str, str, int, float]]:
        """Segments grouped by (kind, core, pipe, what, line): (kind, core, pipe label, what,
        line as text, how many, µs), the longest first."""
        return [(k, c, p, w, format_location(loc) if loc else "", n, us)
                for k, c, p, w, loc, n, us in self.summary_by_loc()]

    def summary_by_loc(self) -> list[tuple]:
        """:meth:`summary` with each line as its location (None where there is none)."""
        groups: dict[tuple, list] = defaultdict(lambda: [0, 0.0])
        for s in self.segments:
            key = (s.kind, s.core, PIPE_LABELS.get(s.pipe, s.pipe), s.what, s.loc)
            groups[key][0] += 1
            groups[key][1] += s.cycles
        rows = [(*key, n, self.us(c)) for key, (n, c) in groups.items()]
        return sorted(rows, key=lambda r: -r[6])

    def stretches(self) -> list[tuple[float, float, str, str, int, Segment]]:
        """The path as stretches on one core's pipe, in time order: (start µs, µs, core,
        pipe label, steps, the stretch's longest step) -- the hand-offs between pipes and
        cores are where one stretch ends and the next begins."""
        out: list[list] = []
        for s in self.segments:
            if out and (out[-1][2], out[-1][3]) == (s.core, s.pipe):
                run = out[-1]
                run[1] += s.cycles
                run[4] += 1
                if s.cycles > run[5].cycles:
                    run[5] = s
            else:
                out.append([s.start, s.cycles, s.core, s.pipe, 1, s])
        return [(self.us(a), self.us(d), core, PIPE_LABELS.get(pipe, pipe), n, longest)
                for a, d, core, pipe, n, longest in out]

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "soc": self.soc, "device_time_us": self.device_time_us,
                "overhead_us": self.overhead_us, "total_us": self.total_us,
                "inexact": self.inexact,
                "segments": [{"start_us": self.us(s.start), "us": self.us(s.cycles),
                              "kind": s.kind, "core": s.core, "pipe": s.pipe, "what": s.what,
                              "line": format_location(s.loc) if s.loc else None}
                             for s in self.segments]}


def core_label(core) -> str:
    return f"{core.kind}{core.block_idx}"


class _Index:
    """Lookups of one core's timeline by time: which instruction ended, completed or started
    at a cycle, which wait released a pipe at a cycle."""

    def __init__(self, core: CausalCore):
        self.core = core
        self.done: dict[tuple, int] = {}
        self.end: dict[tuple, int] = {}
        self.start: dict[tuple, int] = {}
        for i, ins in enumerate(core.instrs):  # later instructions win a tie
            for table, t in ((self.done, ins.done), (self.end, ins.end), (self.start, ins.start)):
                table[(ins.pipe, t)] = i
                table[("ALL", t)] = i
        self.blocks: dict[tuple, object] = {}
        for block in core.blocks:
            if block.until > block.before:
                self.blocks[(block.pipe, block.until)] = block
                self.blocks[("ALL", block.until)] = block
        self.dones = sorted((ins.done, i) for i, ins in enumerate(core.instrs))
        self.position = {id(ins): i for i, ins in enumerate(core.instrs)}


class _Walk:
    """The backward walk of :func:`critical_path` (one per launch)."""

    def __init__(self, launch):
        self.launch = launch
        self.cores = launch.cores
        self.flag_latency = launch.soc.timing.flag_latency_cycles
        self.start_cycles = launch.soc.timing.kernel_start_cycles
        self.index: dict[int, _Index] = {}
        self.segments: list[Segment] = []
        self.inexact = 0
        self.pos = 0.0

    def idx(self, core) -> _Index:
        found = self.index.get(core.core_id)
        if found is None:
            found = self.index[core.core_id] = _Index(core)
        return found

    def emit(self, start: float, kind: str, core, pipe: str, what: str, loc) -> None:
        """A step from ``start`` to where the walk is now; the walk moves back to ``start``."""
        if start > self.pos:  # never forward: a cause is never later than what it caused
            start = self.pos
        if start < self.pos:
            self.segments.append(Segment(start, self.pos, kind,
                                         core_label(core) if core is not None else "", pipe,
                                         what, loc))
        self.pos = start

    # ---------------------------------------------------------------- steps
    # Each step returns the next one as (method, args), or None at the launch's start.
    def at_end(self, core):
        return self.completed, (core, "ALL", core.end_time())

    def completed(self, core, pipe: str, t: float, waited_for=None):
        """What on ``pipe`` (``ALL``: any) of ``core`` completed at cycle ``t``;
        ``waited_for``: the wait asking, which is not its own answer (a barrier of every pipe
        waits for the core's own time, and holds its pipes until then)."""
        index = self.idx(core)
        for table in (index.done, index.end):
            i = table.get((pipe, t))
            if i is not None:
                return self.ran(core, i, t)
        block = index.blocks.get((pipe, t))
        if block is not None and (waited_for is None or block.record is not waited_for.record):
            return self.waited, (block,)
        if pipe in ("S", "ALL") or t <= core.scalar:
            return self.scalar, (core, t)
        return self.operand, (core, t, len(core.instrs))

    def ran(self, core, i: int, t: float):
        ins = core.instrs[i]
        hold = getattr(ins.record, "hold_until", 0.0)
        if hold > ins.start:
            # A UnitFlag FixPipe: issued early, it holds its pipe until the block's last Mmad
            # (sim/exec_cube.py), so what set its time is that Mmad, then its own transfer.
            self.emit(hold, "instruction", core, ins.pipe, ins.op, ins.loc)
            mmads = [k for k in range(i) if core.instrs[k].pipe == "M"
                     and core.instrs[k].start <= hold <= core.instrs[k].done]
            if mmads:
                k = max(mmads, key=lambda m: core.instrs[m].start)
                mmad = core.instrs[k]
                self.emit(mmad.start, "instruction", core, mmad.pipe, mmad.op, mmad.loc)
                return self.started, (core, k)
        self.emit(ins.start, "instruction", core, ins.pipe, ins.op, ins.loc)
        return self.started, (core, i)

    def started(self, core, i: int):
        """Why instruction ``i`` of ``core`` started when it did."""
        cause = core.causes[i]
        what, about = cause
        if what == "pipe":
            prev = about
            self.emit(prev.start, "instruction", core, prev.pipe, prev.op, prev.loc)
            return self.started, (core, self.idx(core).position[id(prev)])
        if what == "block":
            return self.waited, (about,)
        if what == "scalar":
            return self.scalar, (core, about)
        return self.operand, (core, about, i)

    def waited(self, block):
        """A wait released its pipe at ``block.until``: back to what it waited for."""
        core = self.cores[block.core_id]
        source = block.source
        kind = WAIT_KINDS.get(type(block.record), "wait")
        if source is None:
            self.inexact += 1
            return self.scalar, (core, block.until)
        src_id, src_pipe, t_set = source
        self.emit(t_set, "wait", core, block.pipe, kind, block.loc)
        src = self.cores[src_id] if isinstance(src_id, int) else src_id
        if src_pipe == "S" and src is not core and not self.idx(src).done.get(("S", t_set)):
            return self.scalar, (src, t_set)
        return self.completed, (src, src_pipe, t_set, block)

    def operand(self, core, t: float, before: int):
        """Instruction ``before`` of ``core`` found its operands ready at ``t``: a gate's
        hand-over or a time the front-end named, produced by an earlier instruction."""
        index = self.idx(core)
        for table in (index.done, index.end):
            i = table.get(("ALL", t))
            if i is not None and i < before:
                return self.ran(core, i, t)
        # A gate: its last user's result plus the hand-over latency.
        produced = t - self.flag_latency
        for i in (index.done.get(("ALL", produced)), self._near(index, produced)):
            if i is not None and i < before:
                ins = core.instrs[i]
                self.emit(ins.done, "hand-over", core, ins.pipe, "buffer hand-over", ins.loc)
                return self.ran(core, i, ins.done)
        i = index.start.get(("ALL", t))
        if i is not None and i < before:
            return self.started, (core, i)
        block = index.blocks.get(("ALL", t))
        if block is not None:
            return self.waited, (block,)
        # No event at exactly t: the instruction running then, or the scalar unit.
        self.inexact += 1
        holding = [i for i, ins in enumerate(core.instrs[:before]) if ins.start <= t <= ins.done]
        if holding:
            i = max(holding, key=lambda k: core.instrs[k].start)
            ins = core.instrs[i]
            self.emit(ins.start, "instruction", core, ins.pipe, ins.op, ins.loc)
            return self.started, (core, i)
        return self.scalar, (core, t)

    @staticmethod
    def _near(index: _Index, t: float):
        """An instruction that completed at ``t`` up to float rounding."""
        dones = index.dones
        k = bisect_left(dones, (t - abs(t) * _EPS - _EPS, -1))
        if k < len(dones) and abs(dones[k][0] - t) <= abs(t) * _EPS + _EPS:
            return dones[k][1]
        return None

    def scalar(self, core, t: float):
        """The scalar unit reached cycle ``t``: its work since it last waited."""
        jump = core.scalar_jump_before(t)
        if jump is not None:
            _, until, cause = jump
            self.emit(until, "scalar", core, "S", "scalar issue", None)
            what, about = cause
            if what == "block":
                return self.waited, (about,)
            _, pipe, started = cause  # a full issue queue: until its oldest one started
            i = self.idx(core).start.get((pipe, started))
            if i is not None:
                return self.started, (core, i)
            self.inexact += 1  # the oldest queued instruction is not found: go on working back
            return (self.scalar, (core, until - 1e-9)) if until > core.start_time else None
        setup_end = core.start_time + self.start_cycles
        if t > setup_end:
            self.emit(setup_end, "scalar", core, "S", "scalar issue", None)
        self.emit(core.start_time, "start-up", core, "S", "kernel start-up", None)
        if core.start_time <= 0:
            return None
        before = [c for c in self.cores if getattr(c, "physical", None) == core.physical
                  and c.kind == core.kind and c.core_id < core.core_id
                  and c.end_time() == core.start_time]
        if not before:
            self.inexact += 1
            self.emit(0.0, "previous wave", core, "S", "earlier blocks", None)
            return None
        return self.at_end, (before[-1],)

    # ---------------------------------------------------------------- the walk
    def run(self, end: float) -> None:
        self.pos = end
        last = max(self.cores, key=lambda c: c.end_time())
        if end > last.end_time():
            self.emit(last.end_time(), "HBM", None, "", "HBM bandwidth of the chip", None)
        step = (self.at_end, (last,))
        guard = 0
        limit = 4 * sum(len(c.instrs) + len(c.blocks) + len(c.scalar_jumps) + 2
                        for c in self.cores) + 16
        while step is not None:
            guard += 1
            if guard > limit:  # a cycle of zero-length steps: stop where the walk is
                self.inexact += 1
                break
            method, args = step
            step = method(*args)
        if self.pos > 0:
            self.inexact += 1
            self.segments.append(Segment(0.0, self.pos, "unattributed", "", "", "", None))
            self.pos = 0.0
        self.segments.reverse()


def critical_path(launch, report) -> CriticalPath:
    """The critical path of a finished ``launch`` (its cores recorded their causes:
    ``LaunchOptions.record_causes``) and its ``report``."""
    if not launch.cores or not isinstance(launch.cores[0], CausalCore):
        raise ValueError(f"launch of {launch.config.kernel} did not record causes: run it with "
                         "LaunchOptions(record_causes=True) (ascsim run --critical-path)")
    soc = launch.soc
    end = max(core.end_time() for core in launch.cores)
    if launch.l2_cache is not None:
        end = max(end, launch.l2_cache.hbm_bound_cycles(soc.gm_bandwidth_bytes_per_cycle))
    walk = _Walk(launch)
    with fewer_collections():  # the kept launch's records are many and all alive
        walk.run(end)
    return CriticalPath(kernel=report.kernel, soc=soc.name, device_time_us=report.device_time_us,
                        overhead_us=report.launch_overhead_us, clock_mhz=soc.clock_mhz,
                        segments=tuple(walk.segments), inexact=walk.inexact)


# ============================================================================ waits
@dataclass(frozen=True)
class WaitSite:
    """Every execution of the waits at one kernel line, over the launches looked at.

    ``kind``: the wait (``wait_flag``, ``pipe_barrier``, ...); ``count``: executions;
    ``blocked``: how many of them delayed their pipe at all; ``stall_us`` / ``max_stall_us``:
    the total and the longest delay; ``set_lines``: for a ``wait_flag``, the lines of the
    ``set_flag`` calls that met it."""

    loc: Location
    kind: str
    count: int
    blocked: int
    stall_us: float
    max_stall_us: float
    set_lines: tuple[Location, ...] = ()

    @property
    def never_blocked(self) -> bool:
        return self.blocked == 0


def wait_sites(launches) -> list[WaitSite]:
    """The waits of ``launches`` (recording causes) by kernel line, in line order."""
    acc: dict[tuple, list] = {}
    for launch in launches:
        us = launch.soc.cycles_to_us
        for core in launch.cores:
            if not isinstance(core, CausalCore):
                continue
            # A record that holds several pipes (a barrier of every pipe) is one wait: its
            # consecutive blocks, one per pipe; its delay is the longest of theirs.
            group: list = []
            for block in core.blocks:
                if block.loc is None:
                    continue
                if group and (block.record is not group[0].record
                              or any(b.pipe == block.pipe for b in group)):
                    _add(acc, group[0], us(max(b.stall for b in group)))
                    group = []
                group.append(block)
            if group:
                _add(acc, group[0], us(max(b.stall for b in group)))
    sites = []
    for (loc, kind), (count, blocked, total, longest, sets) in acc.items():
        sites.append(WaitSite(loc, kind, count, blocked, total, longest,
                              tuple(sorted(sets))))
    return sorted(sites, key=lambda s: (s.loc[0], s.loc[1], s.kind))


def _add(acc: dict, block, stall_us: float) -> None:
    key = ((block.loc[0], int(block.loc[1])), WAIT_KINDS.get(type(block.record), "wait"))
    entry = acc.setdefault(key, [0, 0, 0.0, 0.0, set()])
    entry[0] += 1
    if stall_us > 0:
        entry[1] += 1
    entry[2] += stall_us
    entry[3] = max(entry[3], stall_us)
    if block.set_loc:
        entry[4].add((block.set_loc[0], int(block.set_loc[1])))


# ============================================================================ trace
def on_path(path: CriticalPath) -> frozenset:
    """(core label, pipe, start cycle) of every instruction on the path: the trace marks
    their slices."""
    return frozenset((s.core, s.pipe, s.start) for s in path.segments if s.kind == "instruction")


def trace_events(path: CriticalPath, launch, pid: int, base_us: float, first_id: int) -> list:
    """The path as flow arrows (cat ``critical-path``) in the Perfetto trace of
    :mod:`ascsim.sim.trace`: one arrow per step from one track to another, along the path."""
    from ascsim.sim.trace import track_of

    events = []
    flow = first_id
    cores = {core_label(c): c for c in launch.cores}
    steps = [s for s in path.segments if s.core in cores]
    for a, b in zip(steps, steps[1:]):
        if (a.core, a.pipe) == (b.core, b.pipe) and a.kind == b.kind == "instruction":
            continue  # back-to-back on one pipe: the slices themselves show it
        flow += 1
        common = {"name": "critical path", "cat": "critical-path", "id": flow, "pid": pid}
        events.append({**common, "ph": "s", "ts": base_us + path.us(a.end),
                       "tid": track_of(cores[a.core], a.pipe)})
        events.append({**common, "ph": "f", "bp": "e", "ts": base_us + path.us(b.start),
                       "tid": track_of(cores[b.core], b.pipe),
                       "args": {"step": b.kind, "what": b.what,
                                "line": format_location(b.loc) if b.loc else ""}})
    return events
