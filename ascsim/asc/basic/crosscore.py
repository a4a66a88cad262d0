"""Cross-core synchronisation of MIX kernels: ``cross_core_set_flag``/``wait_flag``, ``sync_all``.

Every core owns one counter per flag id (ascend-hw §4.5). A wait blocks its pipe while the
counter is 0 and then takes one off; the wait itself names no partner. The *set* decides whose
counters it raises, by its mode:

* mode 0 -- all AICs (or all AIVs) of the launch: once every one of them has set the flag, each
  of them gets +1 (an all-core barrier of one core kind);
* mode 1 -- the two AIVs of one group: once both have set it, both get +1;
* mode 2 -- AIC <-> AIVs of one group: an AIC set gives each of its two AIVs +1; the AIC gets +1
  once both of its AIVs have set the flag.

Sets that need several participants gather in a :class:`_Gather` until everyone has arrived.
Waiting is cooperative (the scheduler runs other cores meanwhile), and a wait no running core can
satisfy surfaces as the scheduler's DeadlockError naming the core, flag, mode and line.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ascsim.asc.basic.sync import PIPE_NAMES
from ascsim.asc.context import current_core, current_scheduler, user_location
from ascsim.asc.enums import PipeID
from ascsim.sim.errors import KernelError

MAX_PENDING = 15  # a flag counter holds at most 15 unconsumed sets (ascend-hw §4.5)
SET_PIPES = frozenset({"V", "M", "MTE1", "MTE2", "MTE3", "FIX"})  # valid set pipes, modes 0-2


@dataclass
class _Gather:
    """Sets of one (mode, scope, flag) waiting for the rest of their participants."""

    participants: tuple  # core ids that must all set before anyone is released
    targets: tuple  # core ids whose counters a completed round raises
    arrived: dict  # core id -> deque of set times


class _CrossCoreState:
    """Per-launch flag counters and gathers (kept in ``launch.shared``)."""

    def __init__(self):
        self.counters: dict[tuple[int, int], deque] = {}  # (core id, flag) -> release times
        self.gathers: dict[tuple, _Gather] = {}

    def counter(self, core_id: int, flag: int) -> deque:
        return self.counters.setdefault((core_id, flag), deque())


def notify_observers(launch, hook: str, *args) -> None:
    """Tell the launch's observers (the race checks) about a cross-core ordering event."""
    for observer in launch.observers:
        method = getattr(observer, hook, None)
        if method is not None:
            method(*args)


def _state(core) -> _CrossCoreState:
    return core.launch.shared.setdefault("cross_core", _CrossCoreState())


def _wave_cores() -> list:
    """The cores running alongside the caller (one wave of the launch)."""
    return [slot.core for slot in current_scheduler().slots]


def _group(core, kind: str) -> list:
    return [c for c in _wave_cores() if c.group == core.group and c.kind == kind]


def _scope(core, mode: int, loc):
    """(gather key, participants, targets) of a set by ``core`` in ``mode``."""
    if mode == 0:
        same = [c.core_id for c in _wave_cores() if c.kind == core.kind]
        return (0, core.kind, id(current_scheduler())), same, same
    if mode == 1:
        if core.kind != "AIV":
            raise KernelError("cross_core_set_flag mode 1 synchronises the two AIVs of a group; "
                              "it cannot be set from the AIC", loc)
        pair = [c.core_id for c in _group(core, "AIV")]
        return (1, core.group), pair, pair
    if mode == 2:
        aivs = [c.core_id for c in _group(core, "AIV")]
        aic = [c.core_id for c in _group(core, "AIC")]
        if core.kind == "AIC":
            return (2, core.group, "AIC"), (core.core_id,), aivs
        return (2, core.group, "AIV"), aivs, aic
    raise KernelError(f"cross-core flag mode {mode} is not supported (modes 0, 1, 2)", loc)


def _check_mix(core, what: str, loc) -> None:
    if core.launch.kind != "MIX":
        raise KernelError(
            f"{what} needs a MIX kernel (AIC + AIV); this kernel runs {core.launch.kind}. "
            "Cross-core flags are only wired up by the hardware scheduler of MIX kernels", loc)


def _flag_id(core, flag_id, loc) -> int:
    flag = int(flag_id)
    limit = core.soc.cross_core_flag_ids
    if not 0 <= flag < limit:
        raise KernelError(f"cross-core flag id {flag} is outside [0, {limit})", loc)
    return flag


def _pipe_name(pipe, loc) -> str:
    try:
        return PIPE_NAMES[PipeID(pipe)]
    except (KeyError, ValueError):
        raise KernelError(f"unsupported pipe {pipe!r} for a cross-core flag", loc) from None


def _release(state: _CrossCoreState, gather: _Gather, flag: int, loc) -> None:
    """Complete every round in which all participants have set, raising the targets' counters."""
    while all(gather.arrived.get(p) for p in gather.participants):
        # Each arrival is (cycle, core id, pipe); the round completes with the latest one.
        t = max((gather.arrived[p].popleft() for p in gather.participants),
                key=lambda arrival: arrival[0])
        notify_observers(current_core().launch, "on_cross_core_release", flag,
                         gather.participants, gather.targets)
        for target in gather.targets:
            counter = state.counter(target, flag)
            counter.append(t)
            if len(counter) > MAX_PENDING:
                core = current_core()
                core.launch.findings.report(
                    "flag-misuse", f"cross-core flag {flag} of core {target} holds "
                    f"{len(counter)} unconsumed sets; the hardware counter stops at "
                    f"{MAX_PENDING} and the kernel would hang", loc,
                    hint="wait for the flag on the receiving core before setting it again",
                    core=core.core_id)


def cross_core_set_flag(flag_id, mode_id: int = 0, pipe: PipeID = PipeID.PIPE_S) -> None:
    """Raise cross-core flag ``flag_id`` once everything queued on ``pipe`` has completed."""
    loc = user_location()
    core = current_core()
    _check_mix(core, "cross_core_set_flag", loc)
    flag = _flag_id(core, flag_id, loc)
    pipe_name = _pipe_name(pipe, loc)
    mode = int(mode_id)
    if pipe_name not in SET_PIPES:
        core.launch.findings.report(
            "flag-misuse", f"cross_core_set_flag(flag {flag}, mode {mode}) on PIPE_{pipe_name}: "
            "modes 0-2 set from V, M, MTE1, MTE2, MTE3 or FIX", loc,
            hint="name the pipe whose work the partner core must see finished",
            core=core.core_id)
    core.call_overhead()
    t_set = core.pipe_ready(pipe_name) if pipe_name != "ALL" else core.end_time()
    key, participants, targets = _scope(core, mode, loc)
    state = _state(core)
    gather = state.gathers.get(key + (flag,))
    if gather is None:
        gather = _Gather(tuple(participants), tuple(targets), {})
        state.gathers[key + (flag,)] = gather
    gather.arrived.setdefault(core.core_id, deque()).append((t_set, core.core_id, pipe_name))
    notify_observers(core.launch, "on_cross_core_set", core, flag, mode, pipe_name, loc)
    _release(state, gather, flag, loc)
    current_scheduler().notify()


def _who_sets(core) -> str:
    if core.kind == "AIV":
        return (f"the group's AIC (mode 2), both AIVs of block {core.group} (mode 1) or every "
                "AIV (mode 0)")
    return f"both AIVs of block {core.group} (mode 2) or every AIC (mode 0)"


def cross_core_wait_flag(flag_id, mode_id: int = 0, pipe: PipeID = PipeID.PIPE_S) -> None:
    """Hold ``pipe`` (the scalar unit by default) until cross-core flag ``flag_id`` is raised."""
    loc = user_location()
    core = current_core()
    _check_mix(core, "cross_core_wait_flag", loc)
    flag = _flag_id(core, flag_id, loc)
    pipe_name = _pipe_name(pipe, loc)
    core.call_overhead()
    counter = _state(core).counter(core.core_id, flag)
    what = (f"cross-core flag {flag} (cross_core_wait_flag mode {int(mode_id)}), to be set by "
            f"{_who_sets(core)}")
    current_scheduler().wait_until(lambda: bool(counter), what, loc)
    t_set, setter, setter_pipe = counter.popleft()
    t = t_set + core.timing.cross_core_flag_latency_cycles
    core.launch.record_cross_edge(setter, setter_pipe, t_set, core, pipe_name, t, loc)
    notify_observers(core.launch, "on_cross_core_wait", core, flag, int(mode_id), pipe_name, loc)
    if pipe_name == "ALL":
        for p in ("S", *SET_PIPES):
            core.block_pipe(p, t)
    else:
        core.block_pipe(pipe_name, t)


def sync_all(*workspaces, used_cores=None, is_aiv_only: bool = True) -> None:
    """All-core barrier: every core of the caller's kind (every core when ``is_aiv_only`` is
    False in a MIX kernel) finishes its queued work before any of them goes on.

    The software form's GM/UB workspace arguments are accepted; the barrier is the same.
    """
    loc = user_location()
    core = current_core()
    core.call_overhead()
    everyone = not is_aiv_only and core.launch.kind == "MIX"
    members = [c for c in _wave_cores() if everyone or c.kind == core.kind]
    if used_cores is not None and not everyone:
        members = members[: int(used_cores)]
    ids = tuple(c.core_id for c in members)
    if core.core_id not in ids:
        return
    state = _state(core)
    key = ("sync_all", everyone or core.kind, id(current_scheduler()))
    gather = state.gathers.get(key)
    if gather is None:
        gather = _Gather(ids, ids, {})
        state.gathers[key] = gather
    gather.arrived.setdefault(core.core_id, deque()).append((core.end_time(), core.core_id, "ALL"))
    notify_observers(core.launch, "on_cross_core_set", core, -1, "sync_all", "ALL", loc)
    _release(state, gather, -1, loc)
    current_scheduler().notify()
    counter = state.counter(core.core_id, -1)
    current_scheduler().wait_until(
        lambda: bool(counter), f"sync_all (barrier of {len(ids)} cores)", loc)
    t_set, setter, _ = counter.popleft()
    t = t_set + core.timing.cross_core_flag_latency_cycles
    core.launch.record_cross_edge(setter, "ALL", t_set, core, "ALL", t, loc)
    notify_observers(core.launch, "on_cross_core_wait", core, -1, "sync_all", "ALL", loc)
    for p in ("S", *SET_PIPES):
        core.block_pipe(p, t)


__all__ = ["cross_core_set_flag", "cross_core_wait_flag", "sync_all"]
