"""Inter-block synchronisation through a GM workspace: ``ib_set`` / ``ib_wait`` and the
ordered-blocks pair ``notify_next_block`` / ``wait_pre_block``.

Each is a :class:`~ascsim.isa.instr.GmFlagSet` or :class:`~ascsim.isa.instr.GmFlagWait` on an
int32 word of the workspace, after all of the caller's earlier work (the device copies the
word through ``ub_workspace`` with a full barrier around it; the UB workspace's bytes are not
modelled, its size is checked). A wait that can never be met is a deadlock finding.

- ``ib_set(gm, ub, block_idx, event_id)`` writes 1 into the word of (``block_idx``,
  ``event_id``), byte ``(event_id * cores + block_idx) * 32`` of ``gm`` (cores: the block
  count, twice that in a MIX launch with ``is_aiv_only=False``); ``ib_wait`` with the same
  arguments waits until the word is 1 (Ascend C's IBSet/IBWait pages: the pair's arguments
  must match; the workspace starts zeroed).
- ``notify_next_block(gm, ub)``: block ``b``'s ``r``-th call writes ``r + 1`` into word ``b``
  (byte ``b * 32``); ``wait_pre_block(gm, ub)``: block ``b``'s ``r``-th call waits until word
  ``b - 1`` reaches ``r + 1`` -- block 0 waits for the last block's previous round -- so the
  blocks run their rounds strictly in ascending order (Ascend C's deterministic-compute pair).
"""

from __future__ import annotations

from ascsim.asc.context import current_core, user_location
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.isa import GmFlagSet, GmFlagWait, KernelError

SLOT_BYTES = 32
INT32 = 4


def _check(name: str, gm, ub, loc) -> None:
    if not isinstance(gm, GlobalTensor) or gm.dtype.sizeof() != INT32:
        raise KernelError(f"{name}: gm_workspace must be an int32 GlobalTensor", loc)
    if not isinstance(ub, LocalTensor) or ub.get_size() * ub.dtype.sizeof() < SLOT_BYTES:
        raise KernelError(f"{name}: ub_workspace must be a UB LocalTensor of at least "
                          f"{SLOT_BYTES} bytes", loc)


def _word(name: str, gm, byte: int, loc):
    if gm.get_size() * INT32 < byte + INT32:
        raise KernelError(f"{name}: gm_workspace holds {gm.get_size() * INT32} bytes, the flag "
                          f"word is at byte {byte}", loc)
    return gm.region().at(byte // INT32, 1)


def _ib_word(name: str, gm, ub, block_idx, event_id, is_aiv_only, loc):
    _check(name, gm, ub, loc)
    core = current_core()
    blocks = core.launch.config.block_num
    cores = blocks if is_aiv_only or core.launch.kind != "MIX" else 2 * blocks
    block_idx, event_id = int(block_idx), int(event_id)
    if not 0 <= block_idx < cores or event_id < 0:
        raise KernelError(f"{name}: block_idx {block_idx} must be in [0, {cores - 1}] and "
                          f"event_id {event_id} >= 0", loc)
    return _word(name, gm, (event_id * cores + block_idx) * SLOT_BYTES, loc)


def ib_set(gm_workspace, ub_workspace, block_idx, event_id, is_aiv_only: bool = True) -> None:
    """Set the flag of (``block_idx``, ``event_id``) in ``gm_workspace`` to 1."""
    loc = user_location()
    word = _ib_word("ib_set", gm_workspace, ub_workspace, block_idx, event_id, is_aiv_only,
                    loc)
    current_core().execute(GmFlagSet(word, 1, "ALL", loc, "ib_set"))


def ib_wait(gm_workspace, ub_workspace, block_idx, event_id, is_aiv_only: bool = True) -> None:
    """Wait until the flag of (``block_idx``, ``event_id``) in ``gm_workspace`` is 1."""
    loc = user_location()
    word = _ib_word("ib_wait", gm_workspace, ub_workspace, block_idx, event_id, is_aiv_only,
                    loc)
    current_core().execute(GmFlagWait(
        word, 1, "ALL", loc, f"an ib_set with block_idx={int(block_idx)}, "
        f"event_id={int(event_id)}", "ib_wait"))


def _rounds(core, which: str) -> int:
    """How many ``which`` calls this core made before (and count this one)."""
    counts = core.launch.shared.setdefault(("ordered_blocks", which), {})
    done = counts.get(core.core_id, 0)
    counts[core.core_id] = done + 1
    return done


def notify_next_block(gm_workspace, ub_workspace) -> None:
    """Tell the next block that this block finished its current round."""
    loc = user_location()
    _check("notify_next_block", gm_workspace, ub_workspace, loc)
    core = current_core()
    round_ = _rounds(core, "notify")
    word = _word("notify_next_block", gm_workspace, core.block_idx * SLOT_BYTES, loc)
    core.execute(GmFlagSet(word, round_ + 1, "ALL", loc, "notify_next_block"))


def wait_pre_block(gm_workspace, ub_workspace) -> None:
    """Wait until the previous block finished this round (block 0: the last block the
    previous round)."""
    loc = user_location()
    _check("wait_pre_block", gm_workspace, ub_workspace, loc)
    core = current_core()
    round_ = _rounds(core, "wait")
    blocks = core.launch.config.block_num
    if core.block_idx == 0:
        previous, needed = blocks - 1, round_
    else:
        previous, needed = core.block_idx - 1, round_ + 1
    if needed <= 0:  # block 0's first round goes first
        core.call_overhead()
        return
    word = _word("wait_pre_block", gm_workspace, previous * SLOT_BYTES, loc)
    core.execute(GmFlagWait(word, needed, "ALL", loc,
                            f"block {previous}'s notify_next_block (round {needed})",
                            "wait_pre_block"))


__all__ = ["ib_set", "ib_wait", "notify_next_block", "wait_pre_block"]
