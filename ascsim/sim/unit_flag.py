"""The unit flag of an L0C buffer: the Cube (M) and the fixpipe (FIX) hand one accumulator back
and forth without event flags (the 950's ``unitFlag`` of Mmad and FixPipe).

Each L0C buffer has one flag bit, 0 after reset. A record that takes part names its phase:

===========================  =================  ==========================
record, phase                waits for flag =   after it completes
===========================  =================  ==========================
Mmad ``partial``             0                  leaves it
Mmad ``final``               0                  sets 1
FixPipe ``partial``          1                  leaves it
FixPipe ``final``            1                  resets 0
===========================  =================  ==========================

The machine runs a core's program in order, so a wait for a value that only a *later*
instruction could produce never ends on the device either: a matmul finding the flag at 1 (its
result was not drained by a final store) or a store finding it at 0 (no final matmul filled it)
is a ``deadlock`` finding and stops the run. A wait that is met starts the waiting pipe no
earlier than the flag's change plus ``flag_latency_cycles``, and orders the two pipes for the
race checks (as a flag between them does).
"""

from __future__ import annotations

from ascsim.isa.errors import DeadlockError
from ascsim.sim.sync import notify

#: Phase names a record may carry.
PHASES = ("partial", "final")

#: Pipe -> (the flag value it waits for, the value a final record leaves, the other pipe).
RULES = {"M": (0, 1, "FIX"), "FIX": (1, 0, "M")}

#: What each pipe's record is called in a finding, and who should have changed the flag.
WORDS = {"M": ("matmul", "a store with the final phase (which resets it to 0)"),
         "FIX": ("store", "a matmul with the final phase (which sets it to 1)")}


class UnitFlag:
    """One L0C buffer's flag: its value, when it last changed, and the line that changed it."""

    __slots__ = ("value", "at", "loc", "pipe")

    def __init__(self):
        self.value = 0
        self.at = 0.0
        self.loc = None
        self.pipe = None


def _flag(core, key) -> UnitFlag:
    flags = core.flags
    state = flags.get(("unit", key))
    if state is None:
        state = flags[("unit", key)] = UnitFlag()
    return state


def wait(core, pipe: str, key, phase: str, loc) -> None:
    """Before a ``pipe`` record with ``phase`` on L0C buffer ``key`` (``(memory key, byte
    offset)``): wait for the flag's value, or report the hang."""
    if phase not in PHASES:
        raise ValueError(f"unit flag phase {phase!r} is not one of {PHASES}")
    want, _, other = RULES[pipe]
    state = _flag(core, key)
    if state.value != want:
        what, who = WORDS[pipe]
        since = (f" since {state.loc[0]}:{state.loc[1]} left it at {state.value}"
                 if state.loc else "")
        why = (f"the {what} waits for the unit flag of L0C byte {key[1]} to be {want}, but it "
               f"is {state.value}{since} and only {who} could change it: the device hangs")
        core.launch.findings.report("deadlock", why, (state.loc, loc) if state.loc else loc,
                                    core=core.core_id)
        raise DeadlockError(f"deadlock: {why}", loc)
    if state.pipe is not None:
        until = state.at + core.timing.flag_latency_cycles
        core.block_pipe(pipe, until, (core.core_id, state.pipe, state.at))
        core.flag_edges.append((state.pipe, state.at, pipe,
                                max(until, core.pipe_free.get(pipe, until)), loc))
        notify(core.launch, "on_wait_flag", core, state.pipe, pipe, ("unit", key), loc)


def done(core, pipe: str, key, phase: str, at: float, loc) -> None:
    """After a ``pipe`` record with ``phase`` completed at cycle ``at``: a final record hands
    the buffer to the other pipe."""
    _, after, other = RULES[pipe]
    state = _flag(core, key)
    if phase == "final":
        state.value, state.at, state.loc, state.pipe = after, at, loc, pipe
        notify(core.launch, "on_set_flag", core, pipe, other, ("unit", key), loc)
    elif state.pipe == other:
        # A partial record passes the buffer on to nobody; the next waiter on this pipe is
        # still ordered after the other pipe's last hand-over.
        notify(core.launch, "on_set_flag", core, other, pipe, ("unit", key), loc)
