"""One Python run of a kernel for a wave of cores (its *lanes*), exact against per-core runs.

Per core, a launch runs the kernel's Python once for every core (:mod:`ascsim.sim.scheduler`),
although the cores of a wave usually run the same Python on their own slices. A wave runs it
once: the block index is a :class:`~ascsim.sim.lanes.Lanes` value (one integer per lane), the
front-end builds each instruction record once, and the machine executes the record once per
lane, through the same ``Core.execute`` and the same executors, cost model, L2 model and checks
as a per-core run (there is no second copy of any of them):

1. **Lane 0 live.** The kernel's Python runs against a :class:`WaveCore`, which stands for the
   wave's first core. Every record it executes is executed on that core at once, with lane 0's
   values put in for the lane values in it (:class:`LaneMap`); so is every other call the
   front-end makes on the core (scalar work, buffer placements, gates it makes). Each call is
   also written to the wave's log.
2. **The other lanes replay the log**, one lane after the other, each with its own values, its
   own local memories and its own copies of the buffer gates put in. The machine so sees the
   lanes' records in exactly the order a per-core run gives them: core after core. The L2
   model, the HBM share and the checks see the same accesses in the same order, so the times,
   per-pipe busy times, findings and GM bytes are the per-core run's by construction, not by
   approximation.

**Divergence.** Whatever the lanes cannot share stops the wave with :class:`Diverged`: a use
of a lane value that needs one Python value where the lanes differ (an ``if``, a ``range``
bound, ``int()``), a record type outside :data:`WAVE_RECORDS` (cross-core flags, barriers of
cores, debug prints, watches), a record field the lane map does not know, a scalar read whose
value differs in a later lane from lane 0's (lane 0's Python went on with its value), an access
to per-core state the front-end would read (the scalar clock), console output, a gate changed
outside the machine, and any finding or exception. The launch then rewinds (GM, the
front-end's per-launch state, the machine's state) and runs per core as it always did, and
the (kernel, signature) is remembered so that later launches do not try again. Findings
therefore always come from the per-core run.

What still runs per core: MIX and AIC launches, launches with observers other than the checks,
waves of one core, and every launch that diverged. The machine work itself is still done once
per lane (the executors have no lane axis yet); what the wave saves is the kernel's Python and
the front-end's work per record.

``ASCSIM_WAVES=off|on|verify`` (:data:`MODES`, read by the session): ``verify`` runs every
launch that can wave both ways and compares the reports and GM bytes (:func:`compare`),
raising :class:`WaveMismatch` on any difference.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

import numpy as np

from ascsim.isa import instr as isa
from ascsim.isa.operands import Bursts
from ascsim.sim import scheduler
from ascsim.sim.core import Instr
from ascsim.sim.lanes import Diverged, Lanes
from ascsim.sim.memory import GmBuffer, LocalMemory
from ascsim.sim.report import KernelReport
from ascsim.sim.sync import Gate

MODES = ("off", "on", "verify")


class WaveMismatch(AssertionError):
    """``ASCSIM_WAVES=verify`` found a difference between a launch run as waves and per core."""


#: The records a wave executes: the core-local ones. Cross-core flags, barriers of cores,
#: hand-offs and requests (which switch cores), GM flags, debug prints and memory watches
#: stop it (they would run in another order than per core, or print).
WAVE_RECORDS = frozenset({
    isa.Copy, isa.IndexedCopy, isa.Vector, isa.VectorCompare, isa.VectorSelect,
    isa.VectorReduce, isa.GateOp, isa.SetFlag, isa.WaitFlag, isa.PipeBarrier, isa.Mutex,
    isa.ScalarOps, isa.ScalarLoad, isa.ScalarStore, isa.Handoff, isa.SetVectorRegisters,
} | {t for t in vars(isa).values() if isinstance(t, type) and t.__name__.startswith("Vector")
     and issubclass(t, tuple)})

#: Record field types that hold nothing per core (the lane map keeps them as they are).
_LEAVES = (int, float, bool, str, bytes, type(None), complex, np.ndarray, np.generic, np.dtype,
           GmBuffer, slice, range, frozenset, type, type(len), type(lambda: 0))


def _leaf(t: type) -> bool:
    return issubclass(t, _LEAVES) or (isinstance(t, type) and t.__module__ == "enum")


class LaneMap:
    """Puts one lane's values into what lane 0's Python built: its lane values, its local
    memories for lane 0's, its copies of lane 0's buffer gates.

    Lane 0's map (``core`` None) changes only lane values, and snapshots each gate when it
    first meets it, for the other lanes' copies (``gates``: shared by the wave's maps)."""

    __slots__ = ("lane", "memories", "by_key", "gates", "pristine", "registered", "left", "met",
                 "results", "core_ids", "_kinds")

    def __init__(self, lane: int, memories: dict | None, by_key: dict | None, pristine: dict,
                 registered: dict):
        self.lane = lane
        self.memories = memories  # id(lane 0's LocalMemory) -> this lane's, None for lane 0
        self.by_key = by_key  # lane 0's memory keys -> this lane's memories
        self.gates: dict[int, Gate] = {}  # id(lane 0's gate) -> this lane's copy
        # id(lane 0's gate) -> (gate, its slots) when a record first used it (``pristine``)
        # and when the front-end registered it (``registered``; for gates never used).
        self.pristine = pristine
        self.registered = registered
        # Lane 0: the gates the record being executed names, and how each gate was left by
        # the last record that named it (a change in between is the front-end's).
        self.met: list[Gate] = []
        self.left: dict[int, tuple] = {}
        # This lane's result of each log entry (timeline entries, for LaneTime values), and
        # (lane 0's core id, this lane's) for the records that name their own core.
        self.results: dict[int, object] = {}
        self.core_ids: tuple[int, int] = (0, 0)
        self._kinds: dict[type, Callable] = {}

    # -- lane 0: the record with lane 0's values, and its plan for the other lanes
    def plan(self, obj):
        """``(obj with lane 0's values, its plan)``: the plan names the places in ``obj``
        that differ between lanes (None: none do), for :meth:`apply`."""
        kind = self._kinds.get(type(obj))
        if kind is None:
            kind = self._kinds[type(obj)] = _kind_of(type(obj))
        if kind is None:
            return obj, None
        if kind == "items":
            return self._plan_items(obj)
        if kind == "handoff":
            # Only a core's hand-off to itself (a library's V->S edge) runs in a wave.
            if obj.src_core != self.core_ids[0]:
                raise Diverged("a hand-off from another core")
            value, plan = self._plan_items(obj)
            return value, ((0, "core"),) + (plan or ())
        if kind == "gate":
            return self._first_meeting(obj), "gate"
        if kind == "bursts":
            value = self._bursts(obj)
            return value, (None if value is obj else "bursts")
        return LEAF_APPLY[kind](self, obj), kind

    def _plan_items(self, obj):
        values, places, changed = [], [], False
        for i, item in enumerate(obj):
            value, plan = self.plan(item)
            values.append(value)
            if plan is not None:
                places.append((i, plan))
            if value is not item:
                changed = True
        if changed:
            t = type(obj)
            obj = t(values) if t is tuple or t is list else tuple.__new__(t, values)
        return obj, (tuple(places) if places else None)

    # -- the other lanes
    def apply(self, obj, plan):
        """``obj`` (lane 0's Python built it) with this lane's values at the places of
        ``plan`` (from :meth:`plan`)."""
        if type(plan) is str:
            return LEAF_APPLY[plan](self, obj)
        items = list(obj)
        for i, place in plan:
            items[i] = self.apply(items[i], place)
        t = type(obj)
        return t(items) if t is tuple or t is list else tuple.__new__(t, items)

    def _lane(self, value: Lanes) -> int:
        return value.at(self.lane)

    def _core(self, core_id: int) -> int:
        return self.core_ids[1]

    def _time(self, time: LaneTime):
        return getattr(self.results[time.entry], time.field)

    def _bursts(self, bursts: Bursts):
        values = [getattr(bursts, name) for name in Bursts.__slots__]
        if not any(type(v) is Lanes for v in values):
            return bursts
        return Bursts(*(v.at(self.lane) if type(v) is Lanes else v for v in values))

    def _memory(self, mem):
        if self.memories is None:
            return mem
        other = self.memories.get(id(mem))
        if other is None:
            raise Diverged(f"a record names {mem.name} of core {mem.core_id}, not a memory "
                           "of the wave's first core")
        return other

    def _gate(self, gate: Gate):
        if self.memories is None:
            return self._first_meeting(gate)
        copy = self.gates.get(id(gate))
        if copy is None:
            copy = self.gates[id(gate)] = self._copy_gate(gate)
        return copy

    def _first_meeting(self, gate: Gate) -> Gate:
        key = id(gate)
        if key not in self.pristine:
            self.pristine[key] = (gate, _gate_slots(gate))
        else:
            left = self.left.get(key)
            if left is not None and left != (gate.state, gate.lo, gate.hi, gate.label):
                # The front-end changed the gate itself, between records (a LocalTensorAuto
                # hands its buffer over so): the other lanes' copies would not know.
                raise Diverged(f"the front-end changed {gate!r} outside the machine")
        self.met.append(gate)
        return gate

    def gates_left(self) -> None:
        """After lane 0 executed a record: how it left the gates the record names."""
        for gate in self.met:
            self.left[id(gate)] = (gate.state, gate.lo, gate.hi, gate.label)
        self.met.clear()

    def _copy_gate(self, gate: Gate) -> Gate:
        seen = self.pristine.get(id(gate)) or self.registered.get(id(gate))
        if seen is None:
            raise Diverged(f"{gate!r} was never met in lane 0")
        copy = Gate.__new__(Gate)
        for name, value in zip(Gate.__slots__, seen[1][0]):
            setattr(copy, name, value)
        mem = self.by_key.get(seen[1][4])
        if mem is None:
            raise Diverged(f"{gate!r} is not in a memory of the wave's first core")
        copy.key, copy.core_id = mem.key, mem.core_id
        return copy


def _kind_of(t: type) -> str | None:
    """How the lane map treats a value of type ``t`` (None: the same in every lane)."""
    if t is Lanes:
        return "lane"
    if t is LaneTime:
        return "time"
    if t is isa.Handoff:
        return "handoff"
    if t is Bursts:
        return "bursts"
    if t is LocalMemory:
        return "mem"
    if t is Gate:
        return "gate"
    if t is tuple or t is list or (issubclass(t, tuple) and hasattr(t, "_fields")):
        return "items"
    if _leaf(t):
        return None
    raise Diverged(f"a record holds a {t.__module__}.{t.__name__}, which a wave cannot give "
                   "each lane")


#: Plan place -> how a lane map puts its lane's value there.
LEAF_APPLY = {"lane": LaneMap._lane, "mem": LaneMap._memory, "gate": LaneMap._gate,
              "time": LaneMap._time, "bursts": LaneMap._bursts, "core": LaneMap._core}


class LaneTime:
    """A time of an instruction lane 0's Python was handed (``start``, ``end``, ``done`` of
    the timeline entry of log entry ``entry``), which differs between lanes: it may only be
    passed on into a record (the lane map puts each lane's time in); any arithmetic or
    comparison on it stops the wave."""

    __slots__ = ("entry", "field")

    def __init__(self, entry: int, field: str):
        self.entry = entry
        self.field = field

    def _diverge(self, *args):
        raise Diverged("the kernel's Python computes with an instruction's time, which differs "
                       "between lanes")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _diverge
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __float__ = __int__ = _diverge
    __bool__ = __index__ = __hash__ = __neg__ = __abs__ = _diverge


class WaveInstr:
    """Lane 0's timeline entry as the kernel's Python sees it: its times are
    :class:`LaneTime` values, everything else (pipe, op, ...) is the same in every lane."""

    __slots__ = ("_instr", "_entry")

    def __init__(self, instr: Instr, entry: int):
        self._instr = instr
        self._entry = entry

    def __getattr__(self, name):
        if name in ("start", "end", "done"):
            return LaneTime(self._entry, name)
        if name in ("pipe", "op", "loc", "record"):
            return getattr(self._instr, name)
        raise Diverged(f"the kernel's Python reads an instruction's {name}")


def _gate_slots(gate: Gate) -> tuple:
    """(all slots, lo, hi, label, its memory's key) of a gate as first met."""
    return (tuple(getattr(gate, name) for name in Gate.__slots__), gate.lo, gate.hi,
            gate.label, gate.key)


class _GateList(list):
    """``launch.gates`` while lane 0's Python runs: each gate the front-end registers is also
    written to the wave's log, so that each lane registers its copy at the same point."""

    def __init__(self, gates: list, wave: Wave):
        super().__init__()
        self.real = gates
        self.wave = wave

    def append(self, gate) -> None:
        self.wave.lane0.registered[id(gate)] = (gate, _gate_slots(gate))
        self.real.append(gate)
        self.wave.log.append((_GATE, gate))

    def __len__(self) -> int:
        return len(self.real)

    def __iter__(self):
        return iter(self.real)

    def __getitem__(self, index):
        return self.real[index]


class _Placements:
    """``launch.placements`` while lane 0's Python runs: placed on the first core and logged."""

    def __init__(self, placements, wave: Wave):
        self.real = placements
        self.wave = wave

    def place(self, core, mem, lo, hi, owner, kind, label, loc) -> None:
        self.real.place(self.wave.cores[0], mem, lo, hi, owner, kind, label, loc)
        self.wave.log.append((_PLACE, (mem, lo, hi, owner, kind, label, loc)))

    def release(self, owner) -> None:
        self.real.release(owner)
        self.wave.log.append((_RELEASE, owner))


# The log's entry kinds.
_EXECUTE, _CALL, _LOOP, _SCALAR, _PLACE, _RELEASE, _GATE, _READ = range(8)

#: What the front-end may read of the launch while lane 0's Python runs: the same for every
#: lane, or the front-end's own bookkeeping (``shared``), which only lane 0's Python reads.
_LAUNCH_READS = frozenset({"soc", "kind", "config", "options", "values", "vector_functions",
                           "hints", "hint", "shared", "memory", "l2", "findings", "quiet",
                           "blocks_per_wave", "overhead_us"})


class WaveLaunch:
    """The launch as the front-end sees it while lane 0's Python runs (see :class:`WaveCore`)."""

    def __init__(self, wave: Wave):
        self._wave = wave
        self._launch = wave.launch
        self.placements = _Placements(wave.launch.placements, wave)
        self.gates = _GateList(wave.launch.gates, wave)

    def say(self, text: str) -> None:
        if not self._launch.quiet:
            raise Diverged("the kernel prints")

    def __getattr__(self, name):
        if name in _LAUNCH_READS:
            return getattr(self._launch, name)
        raise Diverged(f"the front-end reads launch.{name}, which a wave does not share")


#: What the front-end may read of the core while lane 0's Python runs (the same on every lane
#: of an AIV_ONLY wave; ``core_id`` keys the front-end's own per-core bookkeeping).
_CORE_READS = frozenset({"soc", "kind", "sub_block_idx", "timing", "costs", "mem", "core_id"})
#: Per-core machine state the front-end may read if every lane has the same at that point.
_CHECKED_READS = frozenset({"vector_registers"})


class WaveCore:
    """The core the kernel's Python sees in a wave: lane 0's core, with the block index as a
    lane value, whose calls are executed on lane 0 and logged for the other lanes."""

    is_wave = True

    def __init__(self, wave: Wave):
        self._wave = wave
        self._first = wave.cores[0]
        self.launch = WaveLaunch(wave)
        self.block_idx = Lanes([core.block_idx for core in wave.cores])

    def execute(self, record):
        if type(record) not in WAVE_RECORDS:
            raise Diverged(f"{type(record).__name__} records do not run in waves")
        wave = self._wave
        lane0 = wave.lane0
        first_record, plan = lane0.plan(record)
        result = self._first.execute(first_record)
        if lane0.met:
            lane0.gates_left()
        entry = len(wave.log)
        wave.log.append((_EXECUTE, (record, plan, result)))
        if type(result) is Instr:
            lane0.results[entry] = result
            return WaveInstr(result, entry)
        return result

    def call_overhead(self) -> None:
        self._first.call_overhead()
        self._wave.log.append((_CALL, None))

    def loop_iteration(self) -> None:
        self._first.loop_iteration()
        self._wave.log.append((_LOOP, None))

    def scalar_work(self, cycles: float) -> None:
        self._first.scalar_work(cycles)
        self._wave.log.append((_SCALAR, cycles))

    def __getattr__(self, name):
        if name in _CORE_READS:
            return getattr(self._first, name)
        if name in _CHECKED_READS:
            # Machine state the records set (the mask registers): lane 0's, and each other
            # lane checks at this point of the log that it has the same.
            value = getattr(self._first, name, None)
            self._wave.log.append((_READ, (name, value)))
            return value
        raise Diverged(f"the front-end reads core.{name}, which differs between lanes")

    def __setattr__(self, name, value):
        if name.startswith("_") or name in ("launch", "block_idx"):
            object.__setattr__(self, name, value)
            return
        raise Diverged(f"the front-end sets core.{name}")


class Wave:
    """The state of one wave's run: its cores, lane 0's map and the log the others replay."""

    def __init__(self, launch, cores: list):
        self.launch = launch
        self.cores = cores
        self.log: list[tuple[int, object]] = []
        self.lane0 = LaneMap(0, None, None, {}, {})
        self.lane0.core_ids = (cores[0].core_id, cores[0].core_id)

    def run(self, body: Callable) -> None:
        """Lane 0 live, then every other lane from the log (see the module docstring)."""
        launch = self.launch
        first = self.cores[0]
        proxy = WaveCore(self)
        state = scheduler._state
        state.core = proxy
        try:
            contextvars.copy_context().run(body, proxy)
        finally:
            del state.core
        first.finished = True
        for lane in range(1, len(self.cores)):
            self._replay(lane)
        if len(launch.findings):
            raise Diverged("a finding was reported (findings come from the per-core run)")
        launch.waved_instructions += sum(len(core.instrs) for core in self.cores)

    def _replay(self, lane: int) -> None:
        core = self.cores[lane]
        first = self.cores[0]
        pairs = [(mem, core.mem[name]) for name, mem in first.mem.items() if name in core.mem]
        lane_map = LaneMap(lane, {id(a): b for a, b in pairs}, {a.key: b for a, b in pairs},
                           self.lane0.pristine, self.lane0.registered)
        lane_map.core_ids = (first.core_id, core.core_id)
        results = lane_map.results
        launch = self.launch
        scheduler._state.core = core
        try:
            for entry, (kind, payload) in enumerate(self.log):
                if kind == _EXECUTE:
                    record, plan, expected = payload
                    result = core.execute(record if plan is None else lane_map.apply(record, plan))
                    if type(result) is Instr:
                        results[entry] = result
                    elif not _same_result(expected, result):
                        raise Diverged(f"lane {lane} read {result!r} where lane 0 read "
                                       f"{expected!r} ({type(record).__name__})")
                elif kind == _READ:
                    name, expected = payload
                    if getattr(core, name, None) != expected:
                        raise Diverged(f"lane {lane}'s {name} differ from lane 0's")
                elif kind == _CALL:
                    core.call_overhead()
                elif kind == _LOOP:
                    core.loop_iteration()
                elif kind == _SCALAR:
                    core.scalar_work(payload)
                elif kind == _PLACE:
                    mem, *rest = payload
                    launch.placements.place(core, lane_map._memory(mem), *rest)
                elif kind == _RELEASE:
                    launch.placements.release(payload)
                else:  # _GATE
                    launch.gates.append(lane_map._gate(payload))
        finally:
            del scheduler._state.core
        core.finished = True


def _same_result(expected, result) -> bool:
    """Whether a lane's result of a record is lane 0's (which lane 0's Python went on with):
    timeline entries and None always are; values must be equal."""
    if expected is None or type(expected) is Instr:
        return type(result) is type(expected)
    if type(result) is not type(expected):
        return False
    if isinstance(expected, np.ndarray):
        return expected.dtype == result.dtype and np.array_equal(expected, result,
                                                                   equal_nan=True)
    same = expected == result
    if isinstance(same, (bool, np.bool_)):
        return bool(same) or (expected != expected and result != result)
    return False


# ---------------------------------------------------------------------------- the launch's side
#: (kernel, kind, blocks, SoC, arguments) of launches that diverged: later ones run per core.
_CANNOT_WAVE: dict[tuple, str] = {}


def signature(launch, body) -> tuple:
    """What tells launches of one kernel apart for :data:`_CANNOT_WAVE`: the launch's
    configuration and the front-end's own key of the body (its compile-time arguments)."""
    cfg = launch.config
    return (cfg.kernel, cfg.kind, cfg.block_num, cfg.soc.name, cfg.arguments,
            launch.options.timing_only, getattr(body, "wave_key", None))


def can_wave(launch, body) -> bool:
    """Whether ``launch`` may try waves: the front-end's body knows lane values, an AIV_ONLY
    launch whose waves have two cores or more, no observers but the checks and those whose
    factory says ``wave_safe`` (they only read each core's records through ``on_instr``, which
    every core's replay calls as the per-core run does), and no earlier launch of the same
    signature diverged."""
    return (getattr(body, "waves", False) and launch.kind == "AIV_ONLY"
            and min(launch.config.block_num, launch.blocks_per_wave()) > 1
            and all(getattr(factory, "wave_safe", False) for factory in launch.options.observers)
            and signature(launch, body) not in _CANNOT_WAVE)


def remember(launch, body, why: str) -> None:
    """Launches of ``launch``'s signature run per core from now on (``why`` says why)."""
    if len(_CANNOT_WAVE) > 4096:
        _CANNOT_WAVE.clear()
    _CANNOT_WAVE[signature(launch, body)] = why


def gm_bytes(memory) -> list:
    """A copy of every GM allocation's bytes (None where none were made), for :func:`compare`."""
    return [None if buf._data is None else buf._data.copy() for buf in memory.buffers]


def compare(kernel: str, waved: KernelReport, per_core: KernelReport, waved_gm: list,
            per_core_gm: list) -> None:
    """Raise :class:`WaveMismatch` naming the first difference between a launch run as waves
    and run per core: device time, per-core clocks, per-pipe busy times and instruction counts
    (the core reports), bytes moved, findings, the profile's pipe totals, GM bytes."""
    checks = (
        ("device time", waved.device_time_us, per_core.device_time_us),
        ("cores (clocks, per-pipe busy times, instruction counts)", waved.cores,
         per_core.cores),
        ("bytes moved", waved.bytes_moved, per_core.bytes_moved),
        ("findings", [repr(f) for f in waved.findings], [repr(f) for f in per_core.findings]),
        ("values computed", waved.values_computed, per_core.values_computed),
        ("GM allocations", len(waved_gm), len(per_core_gm)),
    )
    for what, a, b in checks:
        if a != b:
            raise WaveMismatch(f"kernel {kernel}: waves and per-core runs differ in {what}:\n"
                               f"  waves:    {a}\n  per core: {b}")
    for i, (a, b) in enumerate(zip(waved_gm, per_core_gm)):
        if (a is None) != (b is None) or (a is not None and not np.array_equal(a, b)):
            raise WaveMismatch(f"kernel {kernel}: waves and per-core runs leave different "
                               f"bytes in GM allocation {i}")
