"""Mix mode: a Triton kernel with ``tl.dot`` on one AI Core group (the AIC and its two AIVs).

triton-ascend compiles a kernel that calls ``tl.dot`` into a cube program and a vector program
("CV fusion operators": the launch has as many blocks as the chip has cube cores, each an AIC
with its two AIVs, called at a ratio of 1:2 -- triton-ascend docs, programming_guide.md and
migration_guide/migrate_from_gpu.md). The two halves exchange data through a workspace in GM
(on the A2/A3 series the AIC and the AIVs share no on-chip buffer), ordered by cross-core flags
the compiler inserts.

Here the kernel body runs once per program on the block's first AIV (its vector work: see
docs/triton.md for why not both); the cube work is issued to the block's AIC as its own records
(:mod:`ascsim.triton.dot`), the way the machine's Matmul server is driven from its AIVs. The
state of one block for that lives here:

* the AIC's pipe order (MTE2 -> MTE1 -> M -> FIX, :class:`~ascsim.triton.ordering.Ordering`)
  and planners of its L1, L0A, L0B and L0C (:class:`~ascsim.triton.ub.UbPlanner`: a buffer
  lives while a value holds it, as UB tiles do);
* the GM workspace slots the two programs hand data over in (:class:`Slot`): each write and
  read by one core is ordered after the other core's last accesses by a
  :class:`~ascsim.isa.Handoff` -- the compiler's flags, which the race checks see as edges;
* the user's own ``sync_block_set`` / ``sync_block_wait`` pairs (:func:`sync_block_set`).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ascsim.isa import Handoff, KernelError
from ascsim.triton import program as _program
from ascsim.triton.errors import CompilationError
from ascsim.triton.ordering import Ordering
from ascsim.triton.program import GmArg
from ascsim.triton.ub import UbOverflow, UbPlanner

MIX = "triton.mix"
#: Cube buffers are placed at 1 KB: an L0C fractal of 16 x 16 fp32 (ascend-hw §2.2), which
#: also aligns the 512-byte fractals of L1, L0A and L0B.
CUBE_ALIGN = 1024
CUBE_BUFFERS = ("L1", "L0A", "L0B", "L0C")
#: The pipes of each side of a mix kernel that the user's sync_block_* calls default to
#: (triton-ascend, language/cann/extension/core.py: cube FIX -> MTE2, vector MTE3 -> MTE2).
DEFAULT_SET_PIPE = {"cube": "FIX", "vector": "MTE3"}
DEFAULT_WAIT_PIPE = "MTE2"
#: Workspace slots per direction: the compiler's double buffering of the workspace.
SLOTS = 2


class CubePlanner(UbPlanner):
    """A planner of one of the AIC's buffers: UB's rules, 1 KB placement, its own error."""

    def __init__(self, name: str, capacity: int):
        super().__init__(capacity)
        self.name = name

    def allocate(self, nbytes: int, loc):
        size = -(-max(nbytes, 1) // CUBE_ALIGN) * CUBE_ALIGN
        try:
            return super().allocate(size, loc)
        except UbOverflow:
            raise CompilationError(
                f"{loc[0]}:{loc[1]}: error: tl.dot needs {size} more bytes of {self.name} "
                f"while {self.live} of its {self.capacity} are held: make the dot's blocks "
                "smaller") from None


class Slot:
    """One workspace buffer in GM that the AIC and an AIV hand data over in.

    ``last_write`` / ``reads``: (core id, pipe, cycle done) of the last write and of the reads
    since; before another core writes or reads, it waits for them (a :class:`Handoff`)."""

    def __init__(self, memory, nbytes: int, name: str):
        self.buffer = memory.alloc(nbytes, name)
        self.nbytes = nbytes
        self.gm = GmArg(self.buffer, _program_elem_u8(), name)
        self.last_write: tuple | None = None
        self.reads: list[tuple] = []

    def region(self, np_dtype, count: int):
        return self.gm.region._replace(count=count, dtype=np.dtype(np_dtype))

    def before_write(self, core, pipe: str, loc) -> None:
        for src in self.reads + ([self.last_write] if self.last_write else []):
            if src[0] != core.core_id:
                core.execute(Handoff(src[0], src[1], pipe, src[2], loc))
        self.reads = []

    def wrote(self, core, pipe: str, instr) -> None:
        self.last_write = (core.core_id, pipe, instr.done)

    def before_read(self, core, pipe: str, loc) -> None:
        src = self.last_write
        if src is not None and src[0] != core.core_id:
            core.execute(Handoff(src[0], src[1], pipe, src[2], loc))

    def read(self, core, pipe: str, instr) -> None:
        self.reads.append((core.core_id, pipe, instr.done))


def _program_elem_u8():
    from ascsim.triton import dtypes

    return dtypes.uint8


class Mix:
    """The mix-mode state of one block: its AIV (running the program), its AIC, the AIC's
    buffers and pipe order, the workspace and the user's block flags."""

    def __init__(self, aiv, loc=None):
        self.aiv = aiv
        aic = aiv.launch.partner(aiv, "AIC")
        if aic is None:  # (a dot the kernel's source does not show: see cube_loads.uses_dot)
            raise KernelError("tl.dot needs the AIC of the block, but the kernel was launched "
                              "on the vector cores only: call tl.dot in the kernel or in a "
                              "@triton.jit helper of it", loc)
        self.aic = aic
        self.order = Ordering(aic)
        self.order.seq = {"MTE2": 0, "MTE1": 0, "M": 0, "FIX": 0}
        self.planners = {name: CubePlanner(name, aic.mem[name].capacity)
                         for name in CUBE_BUFFERS}
        self.held: tuple = ()  # the last tl.dot's operand buffers: double buffering
        self.slots: dict[str, deque] = {"to_cube": deque(), "to_vector": deque()}
        self.flags: dict[tuple, deque] = {}

    def slot(self, direction: str, nbytes: int) -> Slot:
        """The next workspace slot of ``direction`` (round robin over :data:`SLOTS`), large
        enough for ``nbytes``."""
        ring = self.slots[direction]
        if len(ring) < SLOTS:
            ring.append(Slot(self.aiv.launch.memory, nbytes,
                             f"triton.workspace.{direction}.b{self.aiv.group}"))
            return ring[-1]
        found = ring.popleft()
        if found.nbytes < nbytes:  # a larger block than before: a larger buffer
            replacement = Slot(self.aiv.launch.memory, nbytes, found.buffer.name)
            replacement.reads = found.reads + ([found.last_write] if found.last_write else [])
            found = replacement
        ring.append(found)
        return found

    def close(self) -> None:
        for planner in self.planners.values():
            planner.close()
        self.held = ()


def current(loc=None) -> Mix:
    """The mix state of the block whose program runs now (``loc``: the line that needs it)."""
    prog = _program.current()
    core = prog.core
    mixes = core.launch.shared.setdefault(MIX, {})
    found = mixes.get(core.core_id)
    if found is None:
        found = mixes[core.core_id] = Mix(core, loc)
    return found


def close(core) -> None:
    found = core.launch.shared.get(MIX, {}).get(core.core_id)
    if found is not None:
        found.close()


# ---------------------------------------------------------------------- the user's block flags
SIDES = ("cube", "vector")


def _pipe(pipe, default: str) -> str:
    if pipe is None:
        return default
    name = getattr(pipe, "name", pipe)
    name = str(name)
    return name[5:] if name.startswith("PIPE_") else name


def _pair(sender, receiver, event_id, loc) -> tuple:
    from ascsim.triton.semantic import unwrap

    sender, receiver, event_id = unwrap(sender), unwrap(receiver), unwrap(event_id)
    if sender not in SIDES or receiver not in SIDES or sender == receiver:
        raise CompilationError(f"{loc[0]}:{loc[1]}: sync_block_*: sender and receiver are "
                               f"'cube' -> 'vector' or 'vector' -> 'cube', got {sender!r} -> "
                               f"{receiver!r}")
    if not isinstance(event_id, (int, np.integer)) or not 0 <= int(event_id) < 16:
        raise CompilationError(f"{loc[0]}:{loc[1]}: sync_block_*: event_id must be 0 ~ 15, "
                               f"got {event_id!r}")
    return sender, receiver, int(event_id)


def _side(mix: Mix, side: str):
    return mix.aic if side == "cube" else mix.aiv


def sync_block_set(sender, receiver, event_id, sender_pipe=None, receiver_pipe=None, loc=None):
    """``sync_block_set(sender, receiver, id)``: the sender side's ``sender_pipe`` raises block
    flag ``id`` once everything queued on it has completed."""
    key = _pair(sender, receiver, event_id, loc)
    mix = current()
    core = _side(mix, key[0])
    pipe = _pipe(sender_pipe, DEFAULT_SET_PIPE[key[0]])
    mix.flags.setdefault(key, deque()).append((core.core_id, pipe, core.pipe_ready(pipe)))


def sync_block_wait(sender, receiver, event_id, sender_pipe=None, receiver_pipe=None, loc=None):
    """``sync_block_wait(sender, receiver, id)``: the receiver side's ``receiver_pipe`` waits
    for the flag's next raise (a wait with none before it would hang the device)."""
    key = _pair(sender, receiver, event_id, loc)
    mix = current()
    raised = mix.flags.get(key)
    if not raised:
        raise KernelError(f"deadlock: sync_block_wait({key[0]!r}, {key[1]!r}, {key[2]}) with no "
                          "sync_block_set before it: the device would wait forever", loc)
    src_core, src_pipe, at = raised.popleft()
    core = _side(mix, key[1])
    core.execute(Handoff(src_core, src_pipe, _pipe(receiver_pipe, DEFAULT_WAIT_PIPE), at, loc))
