"""Shared machinery of the basic API: running an instruction and addressing repeats.

``execute`` is the one place where an API call becomes an instruction: it waits for the queue
slots of the tensors involved, puts the instruction on its pipe and records which slots it
touched, so the framework's synchronisation and the timing stay consistent for every op.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.context import current_core
from ascsim.sim.errors import KernelError

BLOCK_BYTES = 32
REPEAT_BYTES = 256
BLOCKS_PER_REPEAT = 8
MAX_REPEAT = 255


def execute(pipe: str, op: str, busy: float, latency: float, loc, tensors, reads, writes,
            info=None):
    """Issue one instruction touching ``tensors`` (local tensors whose slots gate it)."""
    core = current_core()
    ready = 0.0
    slots = []
    for t in tensors:
        slot = getattr(t, "slot", None)
        if slot is not None:
            slots.append(slot)
            if slot.ready > ready:
                ready = slot.ready
    instr = core.issue(pipe, op, busy, latency, loc, reads, writes, ready, info)
    done = instr.done
    for slot in slots:
        if done > slot.last_done:
            slot.last_done = done
    return instr


# (id(soc), op, dtype name, repeats, bytes per repeat) -> (soc, busy, latency): pricing looks
# the op up by strings and does the arithmetic on every vector instruction, yet a kernel issues
# the same few (op, type, size) combinations over and over. Keyed by id because hashing a
# SocSpec walks all its fields; the stored soc guards against a reused id.
_VECTOR_CYCLES: dict = {}
_VECTOR_CYCLES_LIMIT = 1 << 14  # distinct repeat counts are few; this only bounds pathologies


def vector_cycles(op: str, dtype_name: str, repeats: int, bytes_per_repeat: int = REPEAT_BYTES):
    """(busy, latency) cycles of ``repeats`` repeats of a vector instruction."""
    soc = current_core().soc
    key = (id(soc), op, dtype_name, repeats, bytes_per_repeat)
    entry = _VECTOR_CYCLES.get(key)
    if entry is None or entry[0] is not soc:
        if len(_VECTOR_CYCLES) >= _VECTOR_CYCLES_LIMIT:
            _VECTOR_CYCLES.clear()
        cost = soc.vector_cost(op, dtype_name)
        busy, latency = cost.cycles(max(1, repeats), bytes_per_repeat)
        entry = _VECTOR_CYCLES[key] = (
            soc, busy * soc.timing.vector_ub_bank_conflict_factor, latency)
    return entry[1], entry[2]


def count_repeats(count: int, elem_bytes: int) -> int:
    return max(1, -(-count * elem_bytes // REPEAT_BYTES))


# ------------------------------------------------------------------- mask / repeat addressing
def mask_positions(mask, per_repeat: int, loc) -> np.ndarray:
    """Which of the ``per_repeat`` element positions of a repeat a mask enables."""
    if isinstance(mask, (list, tuple)):
        if len(mask) not in (1, 2):
            raise KernelError(f"a bit mask is one or two uint64 words, got {len(mask)}", loc)
        words = [int(w) & (2**64 - 1) for w in mask]
        bits = np.zeros(per_repeat, dtype=bool)
        for w, word in enumerate(words):
            lo = 64 * w
            if lo >= per_repeat:
                break
            n = min(64, per_repeat - lo)
            bits[lo:lo + n] = ((word >> np.arange(n, dtype=np.uint64)) & 1).astype(bool)
        return np.flatnonzero(bits)
    mask = int(mask)
    if not 0 <= mask <= per_repeat:
        raise KernelError(
            f"mask {mask} is outside [0, {per_repeat}] (elements per repeat for this type)", loc)
    return np.arange(mask)


def repeat_indices(positions: np.ndarray, repeat_times: int, elem_bytes: int, blk_stride: int,
                   rep_stride: int) -> np.ndarray:
    """Element indices (into a tensor of ``elem_bytes`` elements) of every enabled position.

    Position ``p`` of a repeat lies in this operand's block ``p // per_block`` at element
    ``p % per_block``, where a 32-byte block holds ``per_block`` of *this operand's* elements;
    block ``b`` of repeat ``r`` starts at 32-byte block ``r * rep_stride + b * blk_stride``.
    An operand narrower than the widest one (the fp16 side of an fp32<->fp16 cast) therefore
    fills fewer blocks per repeat, which is why Ascend C uses a repeat stride of 4 for it.
    """
    per_block = BLOCK_BYTES // elem_bytes
    blocks = positions // per_block
    within = positions % per_block
    base = (np.arange(repeat_times)[:, None] * rep_stride + blocks[None, :] * blk_stride)
    return (base * per_block + within[None, :]).reshape(-1)


def check_repeat(repeat_times: int, loc) -> int:
    repeat_times = int(repeat_times)
    if not 0 <= repeat_times <= MAX_REPEAT:
        raise KernelError(f"repeat_times {repeat_times} is outside [0, {MAX_REPEAT}]", loc)
    return repeat_times


def strided_view(tensor, indices: np.ndarray, loc) -> np.ndarray:
    """A numpy view of ``tensor`` covering every index in ``indices`` (from element 0)."""
    span = int(indices.max()) + 1 if indices.size else 0
    return tensor.elements(0, span, loc)


def access_of(tensor, indices: np.ndarray) -> tuple:
    """The byte range (as an access record) that ``indices`` of ``tensor`` cover."""
    if not indices.size:
        return tensor.access(0, 0)
    lo = int(indices.min())
    return tensor.access(lo, int(indices.max()) + 1 - lo)
