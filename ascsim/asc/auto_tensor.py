"""``asc.LocalTensorAuto``: a UB tensor that pyasc's compiler places and synchronises itself.

pyasc hoists each ``LocalTensorAuto(dtype, shape)`` to one buffer per declaration (a loop that
declares it again reuses that buffer) and inserts the set/wait flags that order the pipes using
it (``insert_sync``). Here each declaration site gets its own bytes of UB, carved per core from
the top of UB down (a kernel's TPipe carves from the bottom; an overlap of the two is reported
as a placement overlap), and every instruction that touches the tensor waits for the previous
one that touched it: before the next use the tensor's gate hands the buffer over (a
``release_write`` gate step: a flag from the pipes that used it), which is the ordering the
inserted flags give, priced as one flag each.
"""

from __future__ import annotations

import math

from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import as_dtype
from ascsim.asc.enums import TPosition
from ascsim.asc.tensor import LocalTensor, memory_for
from ascsim.isa import KernelError
from ascsim.isa.instr import gate_op
from ascsim.sim.sync import Gate

BLOCK = 32
POSITION = TPosition.VECCALC


class AutoSlot:
    """The synchronisation state of one LocalTensorAuto buffer (what its views carry as slot)."""

    __slots__ = ("gate", "used")
    auto = True
    queue = None
    state = "allocated"

    def __init__(self, gate: Gate):
        self.gate = gate
        self.used = False  # an instruction was given the tensor since the last hand-over

    def before_use(self) -> None:
        """Called as an instruction takes the tensor as an operand: hand over what the earlier
        instructions did to it, so this one starts after them."""
        if self.used:
            gate = self.gate
            current_core().execute(gate_op((gate, "release_write", user_location())))
            gate.state = "free"  # nothing holds it between uses
        self.used = True


def _shape_length(shape, loc) -> int:
    dims = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    length = math.prod(int(d) for d in dims)
    if length <= 0:
        raise KernelError(f"LocalTensorAuto: shape {tuple(int(d) for d in dims)} has no "
                          "elements", loc)
    return length


def _site_buffer(core, mem, nbytes: int, loc):
    """(address, slot) of the buffer of declaration site ``loc`` on ``core``, carved at its
    first declaration from the top of UB down."""
    sites = core.launch.shared.setdefault("auto_tensors", {}).setdefault(core.core_id, {})
    found = sites.get(loc)
    if found is not None:
        addr, size, slot = found
        if nbytes > size:
            raise KernelError(f"LocalTensorAuto declared here again with {nbytes} B, more than "
                              f"the {size} B it was given", loc)
        return addr, slot
    size = -(-nbytes // BLOCK) * BLOCK
    low = min((a for a, _, _ in sites.values()), default=mem.capacity)
    addr = low - size
    if addr < 0:
        raise KernelError(f"LocalTensorAuto needs {size} B of UB, but only {low} B are left "
                          f"of {mem.capacity} B on {core.soc.name}", loc)
    gate = Gate(mem, addr, addr + size, "V", "V", "LocalTensorAuto")
    core.launch.gates.append(gate)
    # Taken once, as an allocation (fresh bytes for the checks), then never held.
    core.execute(gate_op((gate, "acquire_write", loc)))
    gate.state = "free"
    slot = AutoSlot(gate)
    core.launch.placements.place(core, mem, addr, addr + size, slot, "fixed",
                                 f"a LocalTensorAuto of {size} B", loc)
    sites[loc] = (addr, size, slot)
    return addr, slot


class LocalTensorAuto(LocalTensor):
    """``asc.LocalTensorAuto(dtype, shape)``: a UB tensor placed and synchronised for you."""

    __slots__ = ()

    def __init__(self, dtype, shape=None):
        loc = user_location()
        if shape is None:
            raise TypeError("LocalTensorAuto(dtype, shape): the shape (an element count or a "
                            "tuple of dimensions) is missing")
        dtype = as_dtype(dtype)
        length = _shape_length(shape, loc)
        core = current_core()
        mem = memory_for(core, POSITION, loc)
        addr, slot = _site_buffer(core, mem, length * dtype.sizeof(), loc)
        super().__init__()
        self.dtype = dtype
        self.position = POSITION
        self.mem = mem
        self.addr = addr
        self.length = length
        self.slot = slot
        self.alloc_end = addr + length * dtype.sizeof()


__all__ = ["LocalTensorAuto"]
