"""Intra-core synchronisation: ``set_flag``/``wait_flag`` between pipes and ``pipe_barrier``."""

from __future__ import annotations

from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import HardEvent, MemDsbT, PipeID
from ascsim.isa import KernelError, PipeBarrier, SetFlag, WaitFlag

PIPE_NAMES = {
    PipeID.PIPE_S: "S", PipeID.PIPE_V: "V", PipeID.PIPE_M: "M", PipeID.PIPE_MTE1: "MTE1",
    PipeID.PIPE_MTE2: "MTE2", PipeID.PIPE_MTE3: "MTE3", PipeID.PIPE_ALL: "ALL",
    PipeID.PIPE_FIX: "FIX",
}


def _event(event, loc) -> HardEvent:
    try:
        return HardEvent(event)
    except ValueError:
        raise KernelError(f"{event!r} is not a HardEvent", loc) from None


def _event_id(event_id, loc) -> int:
    event_id = int(event_id)
    if not 0 <= event_id < current_core().soc.event_ids:
        raise KernelError(f"event id {event_id} is outside [0, {current_core().soc.event_ids})",
                          loc)
    return event_id


def set_flag(event: HardEvent, event_id: int = 0) -> None:
    """Signal ``event`` (SRC_DST) once everything queued on the source pipe is done."""
    loc = user_location()
    ev = _event(event, loc)
    current_core().execute(SetFlag(ev.src_pipe, ev.dst_pipe, _event_id(event_id, loc), loc))


def wait_flag(event: HardEvent, event_id: int = 0) -> None:
    """Hold the destination pipe of ``event`` until the matching ``set_flag``."""
    loc = user_location()
    ev = _event(event, loc)
    current_core().execute(WaitFlag(ev.src_pipe, ev.dst_pipe, _event_id(event_id, loc), loc))


def pipe_barrier(pipe: PipeID) -> None:
    """Later instructions of ``pipe`` (every pipe for PIPE_ALL) wait for the earlier ones."""
    loc = user_location()
    try:
        name = PIPE_NAMES[PipeID(pipe)]
    except (KeyError, ValueError):
        raise KernelError(f"pipe_barrier: unsupported pipe {pipe!r}", loc) from None
    current_core().execute(PipeBarrier(name, loc))


def data_sync_barrier(mode: MemDsbT = MemDsbT.ALL) -> None:
    """Memory barrier for scalar accesses: modelled as waiting for every pipe."""
    current_core().execute(PipeBarrier("ALL", user_location()))
