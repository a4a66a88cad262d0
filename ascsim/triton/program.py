"""The state of a Triton kernel on one simulated core: which program it runs, its UB planner and
its pipe order, and the GM tensors of the launch.

triton-ascend runs one program per physical core at a time (a vector-only kernel on the vector
cores, AIV): a launch of ``n`` programs is ``n`` blocks on the device, delivered in waves of as
many as there are vector cores, or -- with ``TRITON_ALL_BLOCKS_PARALLEL=1`` -- folded by the
compiler onto the physical cores, each core running the programs ``core, core + cores, ...`` one
after another (triton-ascend docs, environment_variable_reference.md and
migration_guide/performance_guidelines.md).
"""

from __future__ import annotations

from ascsim.isa import Region
from ascsim.sim.scheduler import current_core
from ascsim.triton.ordering import GmAccess, Ordering
from ascsim.triton.ub import UbPlanner

PROGRAMS = "triton.programs"


class GmArg:
    """A tensor argument in GM: its buffer as an operand, its element type, and its last
    accesses by each core's pipes."""

    __slots__ = ("region", "elem", "name", "access_by_core")

    def __init__(self, buffer, elem, name: str):
        size = elem.np_dtype.itemsize
        self.region = Region(buffer, 0, buffer.nbytes // size, elem.np_dtype)
        self.elem = elem
        self.name = name
        self.access_by_core: dict[int, GmAccess] = {}

    def access(self, core_id: int) -> GmAccess:
        found = self.access_by_core.get(core_id)
        if found is None:
            found = self.access_by_core[core_id] = GmAccess()
        return found


class Program:
    """One core's Triton state: the program it runs now and its grid, the UB, the planner of
    its tiles and the order of its pipes."""

    def __init__(self, core, grid: tuple[int, int, int]):
        self.core = core
        self.ub = core.mem["UB"]
        self.planner = UbPlanner(self.ub.capacity)
        self.order = Ordering(core)
        self.grid = grid
        self.pid = (0, 0, 0)

    def set_program(self, linear: int) -> None:
        """Run program number ``linear`` of the grid (axis 0 varies fastest)."""
        gx, gy, _ = self.grid
        self.pid = (linear % gx, (linear // gx) % gy, linear // (gx * gy))

    def close(self) -> None:
        """The core's programs are over: its planner's history and this state go (a launch
        of many programs otherwise holds them for every block until it ends)."""
        self.planner.close()
        self.planner.history = {}
        self.core.launch.shared.get(PROGRAMS, {}).pop(self.core.core_id, None)


def start(core, grid) -> Program:
    programs = core.launch.shared.setdefault(PROGRAMS, {})
    program = programs[core.core_id] = Program(core, grid)
    return program


def current() -> Program:
    """The Triton state of the core running now."""
    core = current_core()
    try:
        return core.launch.shared[PROGRAMS][core.core_id]
    except KeyError:
        raise RuntimeError("triton.language operations run only inside a @triton.jit kernel "
                           "launched as kernel[grid](...)") from None
