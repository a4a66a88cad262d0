"""Synchronisation: ``auto_mutex``, flags and barriers in a core, cross-core flags, ``sync_all``.

``auto_mutex`` (on unless ``@pl.jit(auto_mutex=False)``): every op whose positional operands
include tiles of a tile group with ``mutex_ids`` locks those buffer tokens on the op's pipe
before the op and unlocks them after it (one :class:`~ascsim.isa.Mutex` record each), so
different pipes touch one buffer in program order. A ``phase=`` on a matmul or a store leaves
the Acc tile's tokens out (the unit flag orders it instead).
"""

from __future__ import annotations

import functools

from ascsim.isa import (
    CoreBarrier,
    CrossCoreSet,
    CrossCoreWait,
    Mutex,
    PipeBarrier,
    ScalarOps,
    SetFlag,
    WaitFlag,
)
from ascsim.pto.enums import (
    PIPE_NAMES,
    CrossCoreSyncMode,
    MemorySpace,
    PipeType,
    SyncAllMode,
    SyncCoreType,
)
from ascsim.pto.errors import ParserSyntaxError
from ascsim.pto.ops.common import KernelError, current_core, user_location
from ascsim.pto.tile import Tile

#: Launch-shared key: whether the running kernel inserts buffer-token locks.
AUTO_MUTEX = "pto.auto_mutex"

#: Ops with a phase= keyword that leave their Acc operand to the unit flag.
PHASED_OPS = frozenset({"matmul", "matmul_acc", "matmul_mx", "matmul_mx_acc", "store",
                        "store_tile"})

#: (src space, dst space) of a move -> the pipe it runs on.
MOVE_PIPES = {(MemorySpace.Mat, MemorySpace.Left): "MTE1",
              (MemorySpace.Mat, MemorySpace.Right): "MTE1",
              (MemorySpace.Mat, MemorySpace.Bias): "MTE1",
              (MemorySpace.Mat, MemorySpace.ScaleLeft): "MTE1",
              (MemorySpace.Mat, MemorySpace.ScaleRight): "MTE1",
              (MemorySpace.Mat, MemorySpace.Scaling): "FIX",
              (MemorySpace.Acc, MemorySpace.Vec): "FIX",
              (MemorySpace.Vec, MemorySpace.Mat): "MTE3",
              (MemorySpace.Vec, MemorySpace.Vec): "V"}


def _move_pipe(args, kwargs) -> str:
    dst, src = args[0], args[1]
    return MOVE_PIPES.get((src.space, dst.space), "MTE1")


def _store_pipe(args, kwargs) -> str:
    src = args[1]
    return "FIX" if isinstance(src, Tile) and src.space == MemorySpace.Acc else "MTE3"


def _dump_pipe(args, kwargs) -> str:
    """``dump_data`` reads an Acc tile with the fixpipe (into its workspace); anything else
    with the printing pipe (V on an AIV, the scalar unit on an AIC)."""
    data = args[0] if args else None
    if isinstance(data, Tile) and data.space == MemorySpace.Acc:
        return "FIX"
    return "V" if current_core().kind == "AIV" else "S"


def _fixed(pipe: str):
    return lambda args, kwargs: pipe


#: op name -> how to find its pipe from its arguments (ops not listed run on V).
OP_PIPES = {"load": _fixed("MTE2"), "load_tile": _fixed("MTE2"), "store": _store_pipe,
            "store_tile": _store_pipe, "move": _move_pipe, "insert": _fixed("MTE3"),
            "matmul": _fixed("M"), "matmul_acc": _fixed("M"), "matmul_mx": _fixed("M"),
            "matmul_mx_acc": _fixed("M"), "matmul_bias": _fixed("M"), "gemv": _fixed("M"),
            "gemv_acc": _fixed("M"), "gemv_bias": _fixed("M"), "getval": _fixed("S"),
            "setval": _fixed("S"), "dump_data": _dump_pipe}
_VECTOR_PIPE = _fixed("V")

#: Ops that change a descriptor only and take no tokens.
DESCRIPTOR_OPS = frozenset({"set_validshape", "set_stride", "make_tile", "make_tile_group"})


def _tokens(name: str, args, kwargs) -> list[int]:
    skip_acc = name in PHASED_OPS and kwargs.get("phase") is not None
    seen: list[int] = []
    for arg in (*args, *kwargs.values()):  # tile operands by keyword too (quant's offset=)
        if type(arg) is Tile and arg.mutex:
            if skip_acc and arg.ttype.space == MemorySpace.Acc:
                continue
            for token in arg.mutex:
                if token not in seen:
                    seen.append(token)
    return seen


def with_auto_mutex(name: str, fn):
    """``fn`` (the op ``name``) wrapped in the buffer-token locks of ``auto_mutex``."""
    if name in DESCRIPTOR_OPS:
        return fn
    pipe_of = OP_PIPES.get(name, _VECTOR_PIPE)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        core = current_core()
        if not core.launch.shared.get(AUTO_MUTEX):
            return fn(*args, **kwargs)
        tokens = _tokens(name, args, kwargs)
        if not tokens:
            return fn(*args, **kwargs)
        pipe = pipe_of(args, kwargs)
        loc = user_location()
        execute = core.execute
        for token in tokens:
            execute(Mutex("lock", pipe, token, loc))
        result = fn(*args, **kwargs)
        for token in tokens:
            execute(Mutex("unlock", pipe, token, loc))
        return result

    return op


# ------------------------------------------------------------------ flags and barriers
def _pipe(value, what: str, loc) -> str:
    try:
        return PIPE_NAMES[PipeType(value)]
    except (ValueError, KeyError):
        raise KernelError(f"{what}: {value!r} is not a pl.PipeType", loc) from None


def _event(event_id, what: str, loc, limit: int = 16) -> int:
    event = int(event_id)
    if not 0 <= event < limit:
        raise ValueError(f"{what}: event_id {event} is outside [0, {limit}) "
                         f"({loc[0]}:{loc[1]})")
    return event


def sync_src(*, set_pipe, wait_pipe, event_id) -> None:
    """``pl.system.sync_src``: raise event ``event_id`` from ``set_pipe`` to ``wait_pipe``."""
    loc = user_location()
    current_core().execute(SetFlag(_pipe(set_pipe, "sync_src", loc),
                                   _pipe(wait_pipe, "sync_src", loc),
                                   _event(event_id, "sync_src", loc), loc))


def sync_dst(*, set_pipe, wait_pipe, event_id) -> None:
    """``pl.system.sync_dst``: ``wait_pipe`` waits for the event."""
    loc = user_location()
    current_core().execute(WaitFlag(_pipe(set_pipe, "sync_dst", loc),
                                    _pipe(wait_pipe, "sync_dst", loc),
                                    _event(event_id, "sync_dst", loc), loc))


def _barrier(pipe: str):
    def barrier() -> None:
        current_core().execute(PipeBarrier(pipe, user_location()))
    barrier.__name__ = f"bar_{pipe.lower()}"
    barrier.__doc__ = f"``pl.system.bar_{pipe.lower()}()``: a barrier of pipe {pipe}."
    return barrier


BARRIERS = {f"bar_{p.lower()}": _barrier(p) for p in ("M", "MTE1", "MTE2", "MTE3", "FIX", "V",
                                                       "ALL")}


def mutex_lock(*, pipe, mutex_id, mode=0, max_mutex_id=2, mutex_ids=None) -> None:
    """``pl.system.mutex_lock``: take buffer token ``mutex_id`` on ``pipe``."""
    loc = user_location()
    current_core().execute(Mutex("lock", _pipe(pipe, "mutex_lock", loc),
                                 _token(mutex_id, loc), loc))


def mutex_unlock(*, pipe, mutex_id, mode=0, max_mutex_id=2, mutex_ids=None) -> None:
    """``pl.system.mutex_unlock``: give buffer token ``mutex_id`` back from ``pipe``."""
    loc = user_location()
    current_core().execute(Mutex("unlock", _pipe(pipe, "mutex_unlock", loc),
                                 _token(mutex_id, loc), loc))


def _token(mutex_id, loc) -> int:
    token = int(mutex_id)
    if not 0 <= token <= 31:
        raise ValueError(f"mutex id {token} is outside [0, 31] ({loc[0]}:{loc[1]})")
    return token


# ------------------------------------------------------------------ across cores
#: Cross-core mode -> the machine's scope of a set.
MODE_SCOPES = {CrossCoreSyncMode.INTER_BLOCK: "all_of_kind",
               CrossCoreSyncMode.INTER_SUBBLOCK: "subblock_pair",
               CrossCoreSyncMode.INTRA_BLOCK: "group",
               CrossCoreSyncMode.UNICAST_BLOCK: "unicast"}
CROSS_CORE_PIPES = frozenset({"MTE1", "MTE2", "MTE3", "V", "S", "FIX", "M"})
#: The AIC side names an AIV1 flag of a unicast or intra-block set as id + 16.
AIV1_OFFSET = 16


def _cross_pipe(pipe, what: str, loc) -> str:
    name = _pipe(pipe, what, loc)
    if name not in CROSS_CORE_PIPES:
        raise ValueError(f"{what}: pipe {name} cannot carry a cross-core flag "
                         f"({loc[0]}:{loc[1]})")
    return name


def _partner(core, kind: str, sub: int, loc):
    found = core.launch.partner(core, kind, sub)
    if found is None:
        raise KernelError("an intra-block cross-core flag (INTRA_BLOCK, UNICAST_BLOCK) "
                          "synchronises the AIC and AIVs of one block: it needs a MIX kernel "
                          "(both pl.section_cube and pl.section_vector)", loc)
    return found


def _check_event(core, mode, event_id, what: str, loc) -> int:
    """The event id, in [0, 16) -- or [0, 32) for an AIC's UNICAST_BLOCK flags, which name
    their AIV as PyPTO Pro does on the 950 (AIV1's flag is id + 16)."""
    unicast_aic = core.kind == "AIC" and mode == CrossCoreSyncMode.UNICAST_BLOCK
    return _event(event_id, what, loc, 2 * AIV1_OFFSET if unicast_aic else AIV1_OFFSET)


def set_cross_core(*, pipe, event_id, sync_mode=CrossCoreSyncMode.INTRA_BLOCK) -> None:
    """``pl.system.set_cross_core``: raise cross-core flag ``event_id`` once ``pipe``'s queued
    work has completed, for the cores ``sync_mode`` names.

    Intra-block flags follow the 950's numbering: an AIC has one set of flags per AIV (AIV1's
    are id + 16 on the AIC side). An AIV's set raises its own flag on the AIC; the AIC's
    INTRA_BLOCK set raises flag ``id`` on both AIVs, its UNICAST_BLOCK set flag ``id % 16`` on
    AIV ``id // 16``."""
    loc = user_location()
    core = current_core()
    mode = CrossCoreSyncMode(sync_mode)
    pipe_name = _cross_pipe(pipe, "set_cross_core", loc)
    event = _check_event(core, mode, event_id, "set_cross_core", loc)
    execute = core.execute
    if mode in (CrossCoreSyncMode.INTER_BLOCK, CrossCoreSyncMode.INTER_SUBBLOCK):
        execute(CrossCoreSet(event, MODE_SCOPES[mode], pipe_name, loc))
    elif core.kind == "AIV":
        aic = _partner(core, "AIC", 0, loc)
        execute(CrossCoreSet(event + AIV1_OFFSET * core.sub_block_idx, "unicast", pipe_name,
                             loc, aic.core_id))
    elif mode == CrossCoreSyncMode.INTRA_BLOCK:
        for sub in (0, 1):
            execute(CrossCoreSet(event, "unicast", pipe_name, loc,
                                 _partner(core, "AIV", sub, loc).core_id))
    else:
        aiv = _partner(core, "AIV", event // AIV1_OFFSET, loc)
        execute(CrossCoreSet(event % AIV1_OFFSET, "unicast", pipe_name, loc, aiv.core_id))


def wait_cross_core(*, pipe, event_id, sync_mode=CrossCoreSyncMode.INTRA_BLOCK) -> None:
    """``pl.system.wait_cross_core``: hold ``pipe`` until cross-core flag ``event_id`` is
    raised for this core, and take one set off its counter. The AIC's INTRA_BLOCK wait takes
    one set from each AIV (flags ``id`` and ``id + 16``); its UNICAST_BLOCK wait one from AIV
    ``id // 16``."""
    loc = user_location()
    core = current_core()
    mode = CrossCoreSyncMode(sync_mode)
    pipe_name = _cross_pipe(pipe, "wait_cross_core", loc)
    event = _check_event(core, mode, event_id, "wait_cross_core", loc)
    execute = core.execute
    if mode == CrossCoreSyncMode.INTER_BLOCK:
        execute(CrossCoreWait(event, pipe_name, loc, f"every {core.kind} (INTER_BLOCK), "
                              f"set_cross_core(event_id={event})"))
    elif mode == CrossCoreSyncMode.INTER_SUBBLOCK:
        execute(CrossCoreWait(event, pipe_name, loc, "the other AIV of the block "
                              f"(INTER_SUBBLOCK), set_cross_core(event_id={event})"))
    elif core.kind == "AIV":
        _partner(core, "AIC", 0, loc)
        execute(CrossCoreWait(event, pipe_name, loc, f"the block's AIC ({mode.name}), "
                              f"set_cross_core(event_id={event})"))
    else:
        subs = (0, 1) if mode == CrossCoreSyncMode.INTRA_BLOCK else (event // AIV1_OFFSET,)
        for sub in subs:
            _partner(core, "AIV", sub, loc)
            execute(CrossCoreWait(event % AIV1_OFFSET + AIV1_OFFSET * sub, pipe_name, loc,
                                  f"AIV{sub} of the block ({mode.name}), "
                                  f"set_cross_core(event_id={event % AIV1_OFFSET})",
                                  "unicast"))


def sync_all(workspaces=None, *, core_type=SyncCoreType.MIX, mode=SyncAllMode.HARD,
             used_cores=None) -> None:
    """``pl.system.sync_all``: an all-core barrier (the soft form's workspaces are accepted)."""
    loc = user_location()
    if SyncAllMode(mode) == SyncAllMode.HARD and workspaces:
        raise ValueError(f"sync_all: the HARD mode takes no workspaces ({loc[0]}:{loc[1]})")
    everyone = SyncCoreType(core_type) == SyncCoreType.MIX and current_core().launch.kind == "MIX"
    current_core().execute(CoreBarrier(everyone, loc,
                                       None if used_cores is None else int(used_cores)))


def issue_only(name: str):
    """An instruction whose effect is on caches or control registers only: one scalar call."""
    def op(*args, **kwargs) -> None:
        current_core().execute(ScalarOps(1, user_location()))
    op.__name__ = name
    op.__doc__ = (f"``pl.system.{name}``: no effect on the data the simulator holds; costs one "
                  "scalar call")
    return op


def set_mm_layout_transform(*, enabled=None) -> None:
    """``pl.system.set_mm_layout_transform(*, enabled)``: the fixpipe drain order (timing only
    on the device; nothing to change in the data)."""
    if enabled is None:
        raise ParserSyntaxError("set_mm_layout_transform needs the enabled= keyword",
                                user_location())
    current_core().execute(ScalarOps(1, user_location()))
