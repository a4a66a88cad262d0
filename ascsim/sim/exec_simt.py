"""Executors of the SIMT unit's records (:mod:`ascsim.isa.simt`): a launch's set-up, its
threads' element accesses (one gather or scatter for all the threads of a statement) and its
arithmetic, all on the ``V`` pipe of the launching AIV."""

from __future__ import annotations

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.simt import SimtAccess, SimtIssue, SimtLaunch
from ascsim.sim.access import from_indices
from ascsim.sim.views import check_bytes, gates_done, gates_ready, view

PIPE = "V"


def _require_simt(core, loc) -> None:
    if not core.timing.simt_warp_size:
        raise KernelError(f"{core.soc.name} has no SIMT unit: SIMT functions run on the "
                          "Ascend 950's AIVs", loc)


def execute_launch(core, rec: SimtLaunch):
    _require_simt(core, rec.loc)
    if core.kind != "AIV":
        raise KernelError("a SIMT launch runs on an AIV (a vector core)", rec.loc)
    busy = core.costs.simt_warp_rounds(rec.threads)
    return core.issue(PIPE, rec.op, busy, 0.0, rec.loc, record=rec)


def _segments(core, region, index: np.ndarray, lanes: np.ndarray) -> int:
    """How many (warp, access segment) pairs the lanes touch: a warp's lanes that fall in one
    segment are served by one access."""
    timing = core.timing
    byte = region.offset + index * region.dtype.itemsize
    key = (lanes // timing.simt_warp_size) * (1 << 40) + byte // timing.simt_access_bytes
    return int(np.unique(key).size)


def execute_access(core, rec: SimtAccess):
    region, loc = rec.region, rec.loc
    index = np.asarray(rec.index, dtype=np.int64).reshape(-1)
    lanes = np.asarray(rec.lanes, dtype=np.int64).reshape(-1)
    store = rec.values is not None
    if index.size and int(index.min()) < 0:
        raise KernelError(f"{rec.op}: a thread accesses element {int(index.min())}, before the "
                          "start of the tile or tensor", loc)
    size = region.dtype.itemsize
    accesses = from_indices(region.mem.key, region.offset, size, index)
    result = None
    if index.size:
        if core.launch.values:
            data = view(core, region, 0, int(index.max()) + 1, loc)
            if store:
                values = np.broadcast_to(np.asarray(rec.values), index.shape)
                data[index] = values.astype(region.dtype, copy=False)
            else:
                result = data[index].copy()
        else:
            check_bytes(core, region, 0, (int(index.max()) + 1) * size, loc)
    if result is None and not store:
        result = np.zeros(index.shape, dtype=region.dtype)
    busy, latency = core.costs.simt_access(_segments(core, region, index, lanes),
                                           region.mem.space == "GM", store)
    ready = gates_ready((region,))
    start = max(core.pipe_free[PIPE], ready)
    instr = core.place(PIPE, rec.op, start, busy, latency, loc,
                       () if store else accesses, accesses if store else (),
                       rec._replace(index=None, lanes=None, values=None))
    gates_done((region,), instr.done)
    return result


def execute_issue(core, rec: SimtIssue):
    busy = rec.ops * core.costs.simt_warp_rounds(rec.threads)
    start = core.pipe_free[PIPE]
    return core.place(PIPE, rec.op, start, busy, 0.0, rec.loc, (), (), rec)


EXECUTORS = {SimtLaunch: execute_launch, SimtAccess: execute_access, SimtIssue: execute_issue}
