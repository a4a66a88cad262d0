"""Cross-core synchronisation of MIX kernels: ``cross_core_set_flag``/``wait_flag``, ``sync_all``.

pyasc names the scope of a set by a mode number (ascend-hw §4.5): mode 0 -- all AICs (or all
AIVs) of the launch, an all-core barrier of one core kind; mode 1 -- the two AIVs of one group;
mode 2 -- AIC <-> AIVs of one group. The machine's flag counters and gathers
(:mod:`ascsim.sim.sync`) do the rest.
"""

from __future__ import annotations

from ascsim.asc.basic.sync import PIPE_NAMES
from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import PipeID
from ascsim.isa import CoreBarrier, CrossCoreSet, CrossCoreWait, KernelError

#: pyasc's mode number -> the machine's scope of a cross-core set.
MODE_SCOPES = {0: "all_of_kind", 1: "subblock_pair", 2: "group"}


def _pipe_name(pipe, loc) -> str:
    try:
        return PIPE_NAMES[PipeID(pipe)]
    except (KeyError, ValueError):
        raise KernelError(f"unsupported pipe {pipe!r} for a cross-core flag", loc) from None


def _scope(mode_id, loc) -> str:
    scope = MODE_SCOPES.get(int(mode_id))
    if scope is None:
        raise KernelError(f"cross-core flag mode {int(mode_id)} is not supported (modes 0, 1, 2)",
                          loc)
    return scope


def _who_sets(core) -> str:
    if core.kind == "AIV":
        return (f"the group's AIC (mode 2), both AIVs of block {core.group} (mode 1) or every "
                "AIV (mode 0)")
    return f"both AIVs of block {core.group} (mode 2) or every AIC (mode 0)"


def cross_core_set_flag(flag_id, mode_id: int = 0, pipe: PipeID = PipeID.PIPE_S) -> None:
    """Raise cross-core flag ``flag_id`` once everything queued on ``pipe`` has completed."""
    loc = user_location()
    current_core().execute(CrossCoreSet(int(flag_id), _scope(mode_id, loc), _pipe_name(pipe, loc),
                                        loc))


def cross_core_wait_flag(flag_id, mode_id: int = 0, pipe: PipeID = PipeID.PIPE_S) -> None:
    """Hold ``pipe`` (the scalar unit by default) until cross-core flag ``flag_id`` is raised."""
    loc = user_location()
    core = current_core()
    who = f"{_who_sets(core)} (cross_core_wait_flag mode {int(mode_id)})"
    core.execute(CrossCoreWait(int(flag_id), _pipe_name(pipe, loc), loc, who))


def sync_all(*workspaces, used_cores=None, is_aiv_only: bool = True) -> None:
    """All-core barrier: every core of the caller's kind (every core when ``is_aiv_only`` is
    False in a MIX kernel) finishes its queued work before any of them goes on.

    The software form's GM/UB workspace arguments are accepted; the barrier is the same.
    """
    current_core().execute(CoreBarrier(not is_aiv_only, user_location(),
                                       None if used_cores is None else int(used_cores)))


__all__ = ["cross_core_set_flag", "cross_core_wait_flag", "sync_all"]
