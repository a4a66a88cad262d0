"""Executors of the GM polling flags (:class:`~ascsim.isa.instr.GmFlagSet` /
:class:`~ascsim.isa.instr.GmFlagWait`): inter-block synchronisation through a GM workspace.

The launch keeps, per GM word (memory key, byte offset), the values set so far with when
they landed and who set them; a run that holds values also writes the word, and a wait is
satisfied too by what the word held before the launch (as the device's poll would be).
"""

from __future__ import annotations

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import GmFlagSet, GmFlagWait
from ascsim.sim.scheduler import current_scheduler
from ascsim.sim.views import view


def _flags(launch) -> dict:
    return launch.shared.setdefault("gm_flags", {})


def _key(core, rec) -> tuple:
    region = rec.flag
    if region.mem.space != "GM" or region.dtype.itemsize != 4:
        raise KernelError(f"{rec.op}: the flag must be an int32 word in GM, got "
                          f"{region.dtype.name} in {region.mem.space}", rec.loc)
    return (region.mem.key, region.offset)


def execute_gm_flag_set(core, rec: GmFlagSet) -> None:
    key = _key(core, rec)
    core.call_overhead()
    t_set = (core.pipe_ready(rec.pipe) if rec.pipe != "ALL" else core.end_time()) \
        + core.timing.gm_write_latency_cycles
    if core.launch.values:
        view(core, rec.flag._replace(dtype=np.dtype(np.int32)), 0, 1, rec.loc)[0] = rec.value
    _flags(core.launch).setdefault(key, []).append((int(rec.value), t_set, core.core_id,
                                                    rec.pipe))
    current_scheduler().notify()


def execute_gm_flag_wait(core, rec: GmFlagWait) -> None:
    key = _key(core, rec)
    core.call_overhead()
    flags = _flags(core.launch)
    initial = None
    if core.launch.values and key not in flags:
        initial = int(view(core, rec.flag._replace(dtype=np.dtype(np.int32)), 0, 1,
                           rec.loc)[0])
    if initial is not None and initial >= rec.value:
        return  # the word already held it: the first poll passes

    def satisfied():
        return any(value >= rec.value for value, *_ in flags.get(key, ()))

    what = f"GM flag at byte {rec.flag.offset} to reach {rec.value}" + (
        f", to be set by {rec.who}" if rec.who else "")
    current_scheduler().wait_until(satisfied, what, rec.loc)
    value, t_set, setter, setter_pipe = next(
        entry for entry in flags[key] if entry[0] >= rec.value)
    t = t_set + core.timing.gm_read_latency_cycles
    core.launch.record_cross_edge(setter, setter_pipe, t_set, core, rec.pipe, t, rec.loc)
    pipes = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX") if rec.pipe == "ALL" else (rec.pipe,)
    for pipe in pipes:
        if pipe in core.pipe_free or pipe == "S":
            core.block_pipe(pipe, t, (setter, setter_pipe, t_set))


EXECUTORS = {GmFlagSet: execute_gm_flag_set, GmFlagWait: execute_gm_flag_wait}
