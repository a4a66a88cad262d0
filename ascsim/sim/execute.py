"""``Core.execute``'s dispatch table: instruction record type -> executor.

Each executor applies its record's effect on memory, prices it at its true start with the one
cost model (:mod:`ascsim.sim.cost`), places it on its pipe's timeline and tells the observers.
Adding an instruction is a record in :mod:`ascsim.isa.instr` and an executor registered here.
"""

from __future__ import annotations

from ascsim.isa.instr import ScalarOps
from ascsim.sim import (
    aipp,
    core,
    exec_copy,
    exec_cube,
    exec_debug,
    exec_gm_flags,
    exec_registers,
    exec_scatter,
    exec_simt,
    exec_sparse,
    exec_vector,
    exec_vf,
    exec_watch,
    sync,
)


def execute_scalar_ops(core, rec: ScalarOps) -> None:
    core.scalar_work(core.timing.scalar_cycles_per_call * rec.count)


core.EXECUTORS.update(exec_copy.EXECUTORS)
core.EXECUTORS.update(sync.EXECUTORS)
core.EXECUTORS.update(exec_cube.EXECUTORS)
core.EXECUTORS.update(exec_vector.EXECUTORS)
core.EXECUTORS.update(exec_vf.EXECUTORS)
core.EXECUTORS.update(exec_debug.EXECUTORS)
core.EXECUTORS.update(exec_registers.EXECUTORS)
core.EXECUTORS.update(exec_scatter.EXECUTORS)
core.EXECUTORS.update(exec_simt.EXECUTORS)
core.EXECUTORS.update(exec_gm_flags.EXECUTORS)
core.EXECUTORS.update(exec_sparse.EXECUTORS)
core.EXECUTORS.update(exec_watch.EXECUTORS)
core.EXECUTORS.update(aipp.EXECUTORS)
core.EXECUTORS[ScalarOps] = execute_scalar_ops
