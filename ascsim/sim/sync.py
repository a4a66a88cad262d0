"""Synchronisation in the machine: intra-core events, pipe barriers, cross-core flags, core
barriers, protocol hand-offs and buffer gates (semantics: :mod:`ascsim.isa.instr`).

Intra-core events (ascend-hw §4.4): a set records when its source pipe's queued work completes;
the matching wait holds the destination pipe until then plus ``flag_latency_cycles``.

Cross-core flags (ascend-hw §4.5): every core owns one counter per flag id. A wait blocks its pipe
while the counter is 0 and then takes one off; the wait names no partner. The *set* decides
whose counters it raises, by its scope (:data:`ascsim.isa.instr.CrossCoreScope`); sets that need
several participants gather until everyone has arrived. Waiting is cooperative (the scheduler
runs other cores meanwhile), and a wait no running core can satisfy surfaces as the scheduler's
DeadlockError naming the core, the flag and the line.

Buffer gates generalise a queue slot: the instructions touching a gated region start no earlier
than ``gate.ready`` and push ``gate.last_done``; the gate operations move the two (see
:class:`~ascsim.isa.instr.GateOp`). Observers hear of every synchronisation step, so the checks
turn them into happens-before edges and the trace into flow arrows.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ascsim.isa.errors import DeadlockError, KernelError
from ascsim.isa.instr import (
    CoreBarrier,
    CrossCoreSet,
    CrossCoreWait,
    GateOp,
    Handoff,
    Mutex,
    PipeBarrier,
    Request,
    SetFlag,
    WaitFlag,
)
from ascsim.sim.scheduler import current_scheduler

PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")
#: A cross-core flag counter holds at most this many unconsumed sets (ascend-hw §4.5).
MAX_PENDING = 15
#: Pipes a cross-core set may name.
SET_PIPES = frozenset({"V", "M", "MTE1", "MTE2", "MTE3", "FIX"})


def notify(launch, hook: str, *args) -> None:
    """Tell the launch's observers that have ``hook`` about a synchronisation step."""
    for observer in launch.observers:
        method = getattr(observer, hook, None)
        if method is not None:
            method(*args)


# ============================================================================ buffer gates
class Gate:
    """The hand-over state of one buffer between its producer and consumer pipes.

    ``ready``: instructions touching the buffer start no earlier; ``last_done``: completion of
    the latest one. ``state``: ``free``, ``writing`` (a producer holds it), ``handed_over`` or
    ``reading`` (a consumer holds it). ``label`` names the buffer in findings, in the words of
    the front-end that made it (a queue slot's says which queue it belongs to).
    """

    __slots__ = ("key", "lo", "hi", "space", "producer", "consumer", "label", "ready",
                 "last_done", "state", "taken_at", "core_id", "generation")

    def __init__(self, mem, lo: int, hi: int, producer: str, consumer: str, label: str):
        self.key = mem.key
        self.space = mem.space
        self.core_id = getattr(mem, "core_id", None)
        self.lo, self.hi = lo, hi
        self.producer, self.consumer = producer, consumer
        self.label = label
        self.ready = 0.0
        self.last_done = 0.0
        self.state = "free"
        self.taken_at = None  # the line where a producer last took the buffer
        # How many times a producer has taken the buffer: an operand handed out at an earlier
        # generation (``Region.lease``) refers to a buffer given back since.
        self.generation = 0

    def __repr__(self) -> str:
        return f"Gate({self.label}, {self.space}[{self.lo}:{self.hi}], {self.state})"


# Each gate action is one step function that moves the gate's times and state in one frame
# (a queue makes four gate operations per tile, so they run as often as instructions).
def _acquire_write(core, gate: Gate, loc) -> None:
    """The producer takes the buffer: its writes wait until the previous readers are done
    (write-after-read), plus the flag latency when there were any."""
    last = gate.last_done
    if last:
        gate.ready = last + core.timing.flag_latency_cycles
        if core.launch.options.keep:
            _draw_handover(core, gate.consumer, gate.producer, last, gate.ready, loc)
    else:
        gate.ready = 0.0
    gate.state = "writing"
    gate.taken_at = loc
    gate.generation += 1


def _release_write(core, gate: Gate, loc) -> None:
    """The producer hands the buffer over: the consumer may start once the producer's last
    access has completed."""
    gate.ready = gate.last_done + core.timing.flag_latency_cycles
    gate.state = "handed_over"


def _acquire_read(core, gate: Gate, loc) -> None:
    """The consumer takes the handed-over buffer: no time of its own (the times were set when
    it was handed over)."""
    if gate.last_done and core.launch.options.keep:
        _draw_handover(core, gate.producer, gate.consumer, gate.last_done, gate.ready, loc)
    gate.state = "reading"


def _release_read(core, gate: Gate, loc) -> None:
    """The consumer gives the buffer back: no time of its own (the next producer waits for its
    last use)."""
    gate.state = "free"


def _draw_handover(core, src: str, dst: str, t_src: float, t_dst: float, loc) -> None:
    """The hand-over as a flow arrow in the trace (only a kept launch is drawn): from the side
    that gave the buffer back (its last access) to the side that takes it now."""
    core.flag_edges.append((src, t_src, dst, t_dst, loc))


#: Gate action -> its step (see :class:`~ascsim.isa.instr.GateOp` for the semantics).
GATE_STEPS = {"acquire_write": _acquire_write, "release_write": _release_write,
              "acquire_read": _acquire_read, "release_read": _release_read}


def execute_gate(core, rec: GateOp) -> None:
    gate, action, loc = rec
    cycles = core.timing.scalar_cycles_per_queue_op  # inlined: it runs per queue operation
    core.scalar += cycles
    core.busy["S"] += cycles
    GATE_STEPS[action](core, gate, loc)
    for observer in core.launch.observers:
        observer.on_gate(core, gate, action, loc)


# ============================================================================ intra-core events
def execute_set_flag(core, rec: SetFlag) -> None:
    core.call_overhead()
    src, dst, event_id, loc = rec.src, rec.dst, rec.event_id, rec.loc
    pair = f"{src}_{dst}"
    pending = core.flags.setdefault((pair, event_id), deque())
    waits = core.flags.get((pair, "waits"))
    if pending:
        _set_twice(core, rec, pending[-1], waits)
    pending.append((core.pipe_ready(src), loc, waits[0] if waits else 0))
    for observer in core.launch.observers:
        observer.on_set_flag(core, src, dst, event_id, loc)


def _set_twice(core, rec: SetFlag, earlier: tuple, waits) -> None:
    """A set of an event id still set. When a wait of the same pipe pair consumed another id
    since the earlier set, that wait named the wrong id (the ping-pong index of another tile):
    on the device it waits for a set that does not come in time, so it is reported there;
    otherwise the second set is the line to change."""
    src, dst, event_id, loc = rec.src, rec.dst, rec.event_id, rec.loc
    _, earlier_loc, waits_then = earlier
    if waits and waits[0] > waits_then and waits[1] != event_id:
        _, wrong_id, wait_loc = waits
        core.launch.findings.report(
            "flag-misuse", f"wait_flag({src}_{dst}, {wrong_id}) waits for event {wrong_id}, "
            f"but the matching set raises event {event_id}, which is now set twice without a "
            f"wait (here and at {earlier_loc[0]}:{earlier_loc[1]}): the wait names the wrong "
            "event id and, on the device, waits for a set that does not come", (wait_loc, loc),
            hint=core.launch.hint("flag-wrong-id"), core=core.core_id)
        return
    core.launch.findings.report(
        "flag-misuse", f"set_flag({src}_{dst}, {event_id}) while the flag is already set "
        "and not yet waited for", (earlier_loc, loc),
        hint=core.launch.hint("flag-set-twice", src=src, dst=dst, event_id=event_id),
        core=core.core_id)


def execute_wait_flag(core, rec: WaitFlag) -> None:
    core.call_overhead()
    src, dst, event_id, loc = rec.src, rec.dst, rec.event_id, rec.loc
    pending = core.flags.get((f"{src}_{dst}", event_id))
    if not pending:
        core.launch.findings.report(
            "flag-misuse", f"wait_flag({src}_{dst}, {event_id}) with no matching set_flag: "
            "on the device this pipe would wait forever", loc,
            hint=core.launch.hint("flag-wait-unset", src=src, dst=dst, event_id=event_id),
            core=core.core_id)
        return
    t_set, set_loc, _ = pending.popleft()
    # The pair's waits so far, and the latest: (count, event id, line).
    waits = core.flags.get((f"{src}_{dst}", "waits"))
    core.flags[(f"{src}_{dst}", "waits")] = ((waits[0] if waits else 0) + 1, event_id, loc)
    t = t_set + core.timing.flag_latency_cycles
    core.block_pipe(dst, t, (core.core_id, src, t_set))
    core.flag_edges.append((src, t_set, dst, max(t, core.pipe_free.get(dst, t)), loc))
    for observer in core.launch.observers:
        observer.on_wait_flag(core, src, dst, event_id, loc, set_loc)


def execute_barrier(core, rec: PipeBarrier) -> None:
    core.call_overhead()
    pipe = rec.pipe
    if pipe == "ALL":
        t = max(core.scalar, *core.pipe_done.values(), *core.pipe_free.values())
        for p in PIPES:  # t is at least every pipe's and the scalar unit's time
            core.block_pipe(p, t, (core.core_id, "ALL", t))
    elif pipe != "S":
        core.block_pipe(pipe, core.pipe_done[pipe], (core.core_id, pipe, core.pipe_done[pipe]))
    for observer in core.launch.observers:
        observer.on_barrier(core, pipe, rec.loc)


# ============================================================================ cross-core flags
@dataclass
class _Gather:
    """Sets of one (scope, flag) waiting for the rest of their participants."""

    participants: tuple  # core ids that must all set before anyone is released
    targets: tuple  # core ids whose counters a completed round raises
    arrived: dict  # core id -> deque of (set time, core id, pipe)
    first_loc: tuple | None = None  # where the first participant entered (barriers)


class CrossCoreState:
    """A launch's cross-core flag counters and open gathers."""

    def __init__(self):
        self.counters: dict[tuple[int, int], deque] = {}  # (core id, flag) -> release times
        self.gathers: dict[tuple, _Gather] = {}

    def counter(self, core_id: int, flag: int) -> deque:
        return self.counters.setdefault((core_id, flag), deque())


def _wave_cores() -> list:
    """The cores running alongside the caller (one wave of the launch)."""
    return [slot.core for slot in current_scheduler().slots]


def _wave_id() -> int:
    """A deterministic identity of the caller's wave: its first core's id. (Not ``id()`` of
    the wave's scheduler: a later wave's scheduler may reuse a freed one's address, and its
    barriers would then find the earlier wave's half-filled gathers.)"""
    return current_scheduler().slots[0].core.core_id


def group_cores(core, kind: str) -> list:
    """The cores of ``kind`` in ``core``'s group (block) of this wave."""
    return [c for c in _wave_cores() if c.group == core.group and c.kind == kind]


def _scope(core, rec: CrossCoreSet):
    """(gather key, participants, targets) of a set by ``core``."""
    scope, loc = rec.scope, rec.loc
    if scope == "all_of_kind":
        same = [c.core_id for c in _wave_cores() if c.kind == core.kind]
        return ("all_of_kind", core.kind, _wave_id()), same, same
    if scope == "subblock_pair":
        if core.kind != "AIV":
            raise KernelError("a sub-block pair flag synchronises the two AIVs of a group; "
                              "it cannot be set from the AIC", loc)
        pair = [c.core_id for c in group_cores(core, "AIV")]
        return ("subblock_pair", core.group), pair, pair
    if scope == "group":
        aivs = [c.core_id for c in group_cores(core, "AIV")]
        aic = [c.core_id for c in group_cores(core, "AIC")]
        if core.kind == "AIC":
            return ("group", core.group, "AIC"), (core.core_id,), aivs
        return ("group", core.group, "AIV"), aivs, aic
    if scope == "unicast":
        if rec.target is None or not 0 <= rec.target < len(core.launch.cores):
            raise KernelError(f"a unicast cross-core flag names core {rec.target}, which this "
                              "launch does not have", loc)
        return ("unicast", core.core_id, rec.target), (core.core_id,), (rec.target,)
    raise KernelError(f"cross-core flag scope {scope!r} is not one of all_of_kind, "
                      "subblock_pair, group, unicast", loc)


def _release(core, state: CrossCoreState, gather: _Gather, flag: int, loc) -> None:
    """Complete every round in which all participants have set, raising the targets' counters."""
    launch = core.launch
    while all(gather.arrived.get(p) for p in gather.participants):
        # Each arrival is (cycle, core id, pipe); the round completes with the latest one.
        t = max((gather.arrived[p].popleft() for p in gather.participants),
                key=lambda arrival: arrival[0])
        notify(launch, "on_cross_core_release", flag, gather.participants, gather.targets)
        for target in gather.targets:
            counter = state.counter(target, flag)
            counter.append(t)
            if len(counter) > MAX_PENDING:
                launch.findings.report(
                    "flag-misuse", f"cross-core flag {flag} of core {target} holds "
                    f"{len(counter)} unconsumed sets; the hardware counter stops at "
                    f"{MAX_PENDING} and the kernel would hang", loc,
                    hint=launch.hint("cross-core-pending"), core=core.core_id)


def _check_mix(core, what: str, loc) -> None:
    if core.launch.kind != "MIX":
        raise KernelError(
            f"{what} needs a MIX kernel (AIC + AIV); this kernel runs {core.launch.kind}. "
            "Cross-core flags are only wired up by the hardware scheduler of MIX kernels", loc)


def _check_flag(core, flag: int, loc, per_aiv: bool = False) -> int:
    """``flag`` checked against the SoC's flag ids; ``per_aiv``: an AIC's unicast flags, one
    set of ids per AIV of its group (see :class:`~ascsim.isa.CrossCoreWait`)."""
    limit = core.soc.cross_core_flag_ids * (2 if per_aiv else 1)
    if not 0 <= flag < limit:
        raise KernelError(f"cross-core flag id {flag} is outside [0, {limit})", loc)
    return flag


def execute_cross_core_set(core, rec: CrossCoreSet) -> None:
    loc = rec.loc
    _check_mix(core, "a cross-core flag set", loc)
    target = rec.target
    to_aic = (rec.scope == "unicast" and target is not None
              and 0 <= target < len(core.launch.cores)
              and core.launch.cores[target].kind == "AIC")
    flag = _check_flag(core, int(rec.flag), loc, per_aiv=to_aic)
    pipe = rec.pipe
    if pipe not in SET_PIPES:
        core.launch.findings.report(
            "flag-misuse", f"cross-core flag {flag} ({rec.scope}) set on PIPE_{pipe}: a set "
            "names V, M, MTE1, MTE2, MTE3 or FIX", loc,
            hint="name the pipe whose work the partner core must see finished",
            core=core.core_id)
    core.call_overhead()
    if rec.scope == "all_of_kind" and \
            core.launch.config.block_num > core.launch.blocks_per_wave():
        # A barrier of every core of the kind, like sync_all: later waves cannot join it.
        _barrier_deadlock(core, f"cross-core flag {flag} is set for every {core.kind} core in a "
                          f"launch of {core.launch.config.block_num} blocks, but "
                          f"{core.launch.soc.name} runs {core.launch.blocks_per_wave()} blocks "
                          "at a time: the blocks of later waves start only when a core of the "
                          "first wave finishes, so the round never completes", loc)
    t_set = core.pipe_ready(pipe) if pipe != "ALL" else core.end_time()
    key, participants, targets = _scope(core, rec)
    state = core.launch.cross_core
    gather = state.gathers.get(key + (flag,))
    if gather is None:
        gather = state.gathers[key + (flag,)] = _Gather(tuple(participants), tuple(targets), {})
    gather.arrived.setdefault(core.core_id, deque()).append((t_set, core.core_id, pipe))
    notify(core.launch, "on_cross_core_set", core, flag, rec.scope, pipe, loc)
    _release(core, state, gather, flag, loc)
    current_scheduler().notify()


def execute_cross_core_wait(core, rec: CrossCoreWait) -> None:
    loc = rec.loc
    _check_mix(core, "a cross-core flag wait", loc)
    flag = _check_flag(core, int(rec.flag), loc,
                       per_aiv=rec.scope == "unicast" and core.kind == "AIC")
    pipe = rec.pipe
    core.call_overhead()
    counter = core.launch.cross_core.counter(core.core_id, flag)
    what = f"cross-core flag {flag}" + (f", to be set by {rec.who}" if rec.who else "")
    current_scheduler().wait_until(lambda: bool(counter), what, loc)
    t_set, setter, setter_pipe = counter.popleft()
    t = t_set + core.timing.cross_core_flag_latency_cycles
    core.launch.record_cross_edge(setter, setter_pipe, t_set, core, pipe, t, loc)
    notify(core.launch, "on_cross_core_wait", core, flag, pipe, loc)
    _block(core, pipe, t, (setter, setter_pipe, t_set))


def _block(core, pipe: str, t: float, source) -> None:
    if pipe == "ALL":
        for p in ("S", *SET_PIPES):
            core.block_pipe(p, t, source)
    else:
        core.block_pipe(pipe, t, source)


def _kind_count(launch, kind: str) -> int:
    """How many cores of ``kind`` the whole launch runs (every wave)."""
    blocks = launch.config.block_num
    per_block = {("AIV_ONLY", "AIV"): 1, ("AIC_ONLY", "AIC"): 1, ("MIX", "AIC"): 1,
                 ("MIX", "AIV"): 2}
    return blocks * per_block.get((launch.kind, kind), 0)


def _impossible_barrier(core, rec: CoreBarrier, everyone: bool, ids: tuple) -> str | None:
    """Why a barrier of ``ids`` can never complete on the device, or None.

    Blocks beyond the chip's cores run in later waves, which start only when a core of the
    first wave finishes: a barrier waiting for every block therefore waits for blocks that
    cannot start while it waits. A ``used_cores`` beyond the cores the launch has waits for
    cores that do not exist."""
    launch = core.launch
    kinds = ("AIC", "AIV") if everyone else (core.kind,)
    launched = sum(_kind_count(launch, k) for k in kinds)
    if rec.used_cores is not None and not everyone:
        if int(rec.used_cores) > launched:
            return (f"a barrier of used_cores={int(rec.used_cores)} in a launch of {launched} "
                    f"{core.kind} core(s): it waits for cores that do not exist")
        return None
    if launch.config.block_num > launch.blocks_per_wave():
        return (f"a barrier of every {'core' if everyone else core.kind + ' core'} in a launch "
                f"of {launch.config.block_num} blocks, but {launch.soc.name} runs "
                f"{launch.blocks_per_wave()} blocks at a time: the blocks of later waves start "
                "only when a core of the first wave finishes, and the first wave waits for them "
                "at this barrier forever")
    return None


def _barrier_deadlock(core, why: str, loc, other=None) -> None:
    """Report a barrier that cannot complete at its line (and ``other``, the line of the
    barrier it does not match) and stop the run, as the device would hang there."""
    core.launch.findings.report("deadlock", why, (loc, other) if other else loc,
                                hint=core.launch.hint("barrier-impossible"), core=core.core_id)
    raise DeadlockError(f"deadlock: {why}", loc)


def execute_core_barrier(core, rec: CoreBarrier) -> None:
    loc = rec.loc
    core.call_overhead()
    everyone = rec.everyone and core.launch.kind == "MIX"
    members = [c for c in _wave_cores() if everyone or c.kind == core.kind]
    if rec.used_cores is not None and not everyone:
        members = members[: int(rec.used_cores)]
    ids = tuple(c.core_id for c in members)
    why = _impossible_barrier(core, rec, everyone, ids)
    if why is not None:
        _barrier_deadlock(core, why, loc)
    if core.core_id not in ids:
        return
    state = core.launch.cross_core
    key = ("barrier", everyone or core.kind, _wave_id())
    gather = state.gathers.get(key)
    if gather is None:
        gather = state.gathers[key] = _Gather(ids, ids, {}, loc)
    elif gather.participants != ids:
        _barrier_deadlock(
            core, f"core {core.core_id} joins a barrier of {len(ids)} cores ({_ids(ids)}) that "
            f"other cores entered as a barrier of {len(gather.participants)} "
            f"({_ids(gather.participants)}, at {gather.first_loc[0]}:{gather.first_loc[1]}): "
            "the participants differ, so neither barrier completes", loc, gather.first_loc)
    gather.arrived.setdefault(core.core_id, deque()).append((core.end_time(), core.core_id, "ALL"))
    notify(core.launch, "on_cross_core_set", core, -1, "barrier", "ALL", loc)
    _release(core, state, gather, -1, loc)
    current_scheduler().notify()
    counter = state.counter(core.core_id, -1)
    current_scheduler().wait_until(
        lambda: bool(counter), f"a barrier of {len(ids)} cores", loc)
    t_set, setter, _ = counter.popleft()
    t = t_set + core.timing.cross_core_flag_latency_cycles
    core.launch.record_cross_edge(setter, "ALL", t_set, core, "ALL", t, loc)
    notify(core.launch, "on_cross_core_wait", core, -1, "ALL", loc)
    _block(core, "ALL", t, (setter, "ALL", t_set))


def _ids(ids: tuple) -> str:
    return "cores " + ", ".join(str(i) for i in ids) if len(ids) <= 6 else \
        f"cores {ids[0]}..{ids[-1]}"


# ============================================================================ hand-offs
#: How long a hand-off takes to arrive, by the link it crosses (TimingParams fields).
HANDOFF_LATENCY = {"cross_core": "cross_core_flag_latency_cycles", "flag": "flag_latency_cycles",
                   "none": None}


def execute_handoff(core, rec: Handoff) -> None:
    field = HANDOFF_LATENCY[rec.link]
    until = rec.at + (getattr(core.timing, field) if field else 0)
    core.block_pipe(rec.pipe, until, (rec.src_core, rec.src_pipe, rec.at))
    if rec.src_core != core.core_id:
        core.launch.record_cross_edge(rec.src_core, rec.src_pipe, rec.at, core, rec.pipe, until,
                                      rec.loc)
    notify(core.launch, "on_cross_core_edge", rec.src_core, rec.src_pipe, core, rec.pipe)


def execute_request(client, rec: Request) -> float:
    client.call_overhead()
    if rec.server == client.core_id:
        return client.scalar
    # Served in arrival order: let every core that is behind in simulated time catch up first.
    current_scheduler().yield_to_earlier(lambda core: core.scalar)
    notify(client.launch, "on_cross_core_edge", client, "S", rec.server, "ALL")
    return client.scalar + client.timing.cross_core_flag_latency_cycles


# ============================================================================ buffer mutexes
class MutexState:
    """One buffer token of a core: which pipe holds it (None: free), and when and by which
    pipe it was last given back."""

    __slots__ = ("holder", "held_at", "released", "released_by")

    def __init__(self):
        self.holder = None
        self.held_at = None
        self.released = 0.0
        self.released_by = None


def execute_mutex(core, rec: Mutex) -> None:
    core.call_overhead()
    state = core.mutexes.get(rec.mutex_id)
    if state is None:
        state = core.mutexes[rec.mutex_id] = MutexState()
    pipe, loc = rec.pipe, rec.loc
    if rec.action == "lock":
        if state.holder == pipe:
            core.launch.findings.report(
                "deadlock", f"mutex {rec.mutex_id} locked again on {pipe} without an unlock "
                f"since the lock at {state.held_at[0]}:{state.held_at[1]}: the device hangs",
                (state.held_at, loc), hint=core.launch.hint("mutex-relock"), core=core.core_id)
        if state.released_by is not None and state.released_by != pipe:
            until = state.released + core.timing.flag_latency_cycles
            core.block_pipe(pipe, until, (core.core_id, state.released_by, state.released))
            core.flag_edges.append((state.released_by, state.released, pipe,
                                    max(until, core.pipe_free.get(pipe, until)), loc))
        state.holder, state.held_at = pipe, loc
    else:
        if state.holder != pipe:
            held = f"held by {state.holder}" if state.holder else "not held"
            core.launch.findings.report(
                "mutex-misuse", f"mutex {rec.mutex_id} unlocked on {pipe} but {held}", loc,
                hint=core.launch.hint("mutex-unlock"), core=core.core_id)
        state.holder = None
        state.released = core.pipe_ready(pipe)
        state.released_by = pipe
    notify(core.launch, "on_mutex", core, rec.action, pipe, rec.mutex_id)


EXECUTORS = {Mutex: execute_mutex, SetFlag: execute_set_flag, WaitFlag: execute_wait_flag,
             PipeBarrier: execute_barrier, CrossCoreSet: execute_cross_core_set,
             CrossCoreWait: execute_cross_core_wait, CoreBarrier: execute_core_barrier,
             Handoff: execute_handoff, Request: execute_request, GateOp: execute_gate}
