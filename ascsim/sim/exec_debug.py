"""Executor of :class:`~ascsim.isa.Inspect`: a debug print's read of a buffer or a GM tensor.

The machine reads the bytes (the front-end never does), so the read is timed, placed on its
pipe and seen by the checks like any other access.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa.instr import Inspect
from ascsim.isa.operands import BLOCK_BYTES
from ascsim.sim.views import check_accesses, gates_done, gates_ready, index_access, span


def execute_inspect(core, rec: Inspect):
    src, loc = rec.src, rec.loc
    index = np.asarray(rec.index, dtype=np.int64)
    flat = index.reshape(-1)
    access = index_access(src, flat)
    blocks = max(1, -(-flat.size * src.itemsize // BLOCK_BYTES))
    instr = core.issue(rec.pipe, rec.op, core.timing.scalar_ld_st_cycles * blocks, 0, loc,
                       reads=(access,), ready=gates_ready((src,)), record=rec)
    if rec.pipe == "S":  # the scalar unit prints, then goes on
        core.block_pipe("S", instr.end, (core.core_id, "S", instr.end))
    gates_done((src,), instr.done)
    if not core.launch.values:
        check_accesses(core, ((src, access),), loc)
        return None
    values, _ = span(core, src, flat, loc)
    return values[index].copy()


EXECUTORS = {Inspect: execute_inspect}
