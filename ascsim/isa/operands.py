"""Operands of the instruction set: regions of memory, copy bursts and the vector unit's addressing.

A :class:`Region` names ``count`` elements of one dtype from a byte offset of one memory. The
memory is a core's local buffer (UB, L1, L0A, L0B, L0C, BT, FB) or a GM allocation; the machine
supplies both, each with

* ``space`` -- the space name data paths use (``"UB"``, ``"GM"``),
* ``key`` -- its identity in access records (``(core id, "UB")``, ``("GM", buffer id)``),
* ``capacity`` -- the bytes that exist (a GM allocation's include the allocator's padding),
* ``data`` -- its bytes as a ``uint8`` array.

The rules every operand obeys are written here once and applied by the machine to every record:

* **Bounds.** Bytes outside ``[0, capacity)`` do not exist: touching them is a fault (a
  :class:`~ascsim.isa.errors.KernelError`). Inside, a local region may still run past the end of
  its owner's allocation (``end``): a ``local-overflow`` finding; a GM region past the
  allocation's true size (``nbytes``): a ``gm-out-of-bounds`` finding. The device reads whatever
  lies there, and so does the simulation.
* **Alignment.** A local operand starts on the boundary :func:`required_alignment` gives for its
  buffer (the SoC table's ``alignment``, ascend-hw §2.2): 32 B in UB and L1, 512 B in L0A/L0B,
  64 B in L0C/BT. A misaligned operand is an ``alignment`` finding.

Vector addressing (ascend-hw §2.2): an instruction covers ``repeat_times`` repeats of 256 bytes
(8 DataBlocks of 32 bytes); a mask enables element positions of each repeat; each operand has a
block stride and a repeat stride in DataBlocks. :func:`repeat_indices` turns those into element
indices, so a vector record carries plain index sets and the machine never sees a call form.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, NamedTuple

import numpy as np

from ascsim.hw.spec import DATA_BLOCK_BYTES, MAX_REPEAT_TIMES, VECTOR_REPEAT_BYTES
from ascsim.isa.errors import KernelError

BLOCK_BYTES = DATA_BLOCK_BYTES
REPEAT_BYTES = VECTOR_REPEAT_BYTES
BLOCKS_PER_REPEAT = REPEAT_BYTES // BLOCK_BYTES
MAX_REPEAT = MAX_REPEAT_TIMES


class Region(NamedTuple):
    """``count`` elements of ``dtype`` (a numpy dtype) from byte ``offset`` of ``mem``.

    ``end``: the byte at which the owner's allocation ends (local memories; None: the memory's
    capacity). ``gate``: the buffer gate that orders accesses to these bytes (a queue slot's,
    see :class:`ascsim.sim.sync.Gate`), or None. A record that touches a gated region starts no
    earlier than the gate allows and moves the gate's last use to its own completion.
    ``lease``: the gate's generation (how many times a producer had taken it) when the
    operand's tensor was handed out; a later generation means the buffer was given back and
    taken again since (the checks report such a use).
    """

    mem: Any
    offset: int
    count: int
    dtype: np.dtype
    end: int | None = None
    gate: Any = None
    lease: int | None = None

    @property
    def space(self) -> str:
        return self.mem.space

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize

    def at(self, start: int, count: int | None = None) -> Region:
        """The region ``start`` elements further on, ``count`` long (default: to the end)."""
        size = self.dtype.itemsize
        return self._replace(offset=self.offset + start * size,
                             count=self.count - start if count is None else count)

    def access(self, start: int = 0, count: int | None = None) -> tuple:
        """The access record of elements ``[start, start + count)`` (default: all of them)."""
        size = self.dtype.itemsize
        lo = self.offset + start * size
        return (self.mem.key, lo, lo + (self.count if count is None else count) * size)


#: ``region_of((mem, offset, count, dtype, end, gate, lease))``: a :class:`Region` from all of
#: its fields in order, without the keyword handling of its constructor (a Python frame): front-
#: ends make one for every operand of every instruction.
region_of = partial(tuple.__new__, Region)


def required_alignment(alignment: dict, space: str) -> int:
    """The byte alignment a ``space`` operand must start on (the SoC's ``alignment`` table);
    GM has none at the instruction level (a misaligned GM transfer is only slower)."""
    if space == "GM":
        return 1
    return alignment.get(space, BLOCK_BYTES)


class Bursts:
    """The blocks one copy moves: ``count`` blocks of ``width`` bytes, block ``i`` read at byte
    ``src + i * src_pitch`` of the source and written at ``dst + i * dst_pitch`` of the
    destination (offsets from each operand's start).

    Every copy form moves equal blocks at constant pitches, and its validated parameters
    (strides are gaps, never negative) keep blocks from overlapping on either side. So a copy
    of 256 rows is described, copied, recorded and costed in O(1) Python work, not as a list of
    256 tuples. A copy that moves nothing has ``count == width == 0``.
    """

    __slots__ = ("src", "dst", "width", "src_pitch", "dst_pitch", "count")

    def __init__(self, src: int, dst: int, width: int, src_pitch: int, dst_pitch: int,
                 count: int):
        if width <= 0 or count <= 0:
            width = count = 0
        elif count > 1 and min(src_pitch, dst_pitch) < width:
            raise ValueError(f"blocks of {width} B at pitches {src_pitch}/{dst_pitch} overlap")
        self.src, self.dst, self.width = src, dst, width
        self.src_pitch, self.dst_pitch, self.count = src_pitch, dst_pitch, count

    @classmethod
    def contiguous(cls, nbytes: int) -> Bursts:
        """One block of ``nbytes`` from the start of each side."""
        return cls(0, 0, nbytes, nbytes, nbytes, 1)

    @property
    def nbytes(self) -> int:
        return self.width * self.count

    def side(self, index: int) -> tuple[int, int]:
        """(first block's offset, pitch) on the source (``index`` 0) or destination (1)."""
        return (self.src, self.src_pitch) if index == 0 else (self.dst, self.dst_pitch)

    def hull(self, index: int) -> tuple[int, int]:
        """The byte range [lo, hi) the blocks span on the source (0) or destination (1)."""
        first, pitch = self.side(index)
        return first, first + (self.count - 1) * pitch + self.width

    def __repr__(self) -> str:
        return (f"Bursts({self.count} x {self.width} B, src +{self.src} every {self.src_pitch}, "
                f"dst +{self.dst} every {self.dst_pitch})")


# ------------------------------------------------------------------- vector addressing
def count_repeats(count: int, elem_bytes: int) -> int:
    """Repeats a count-form instruction over ``count`` elements of ``elem_bytes`` takes."""
    return max(1, -(-count * elem_bytes // REPEAT_BYTES))


def check_repeat(repeat_times: int, loc) -> int:
    repeat_times = int(repeat_times)
    if not 0 <= repeat_times <= MAX_REPEAT:
        raise KernelError(f"repeat_times {repeat_times} is outside [0, {MAX_REPEAT}]", loc)
    return repeat_times


MAX_COUNT_MASK = 2**31 - 1
"""Largest count mask: Ascend C passes the count as an ``int32_t``."""


def mask_positions(mask, per_repeat: int, loc) -> np.ndarray:
    """Which of the ``per_repeat`` element positions of a repeat a mask enables: a count of
    leading positions, or one or two uint64 bit-mask words (bit ``i`` enables position ``i``).
    The array is read-only: equal masks share it (see :func:`repeat_indices`)."""
    if isinstance(mask, (list, tuple)):
        if len(mask) not in (1, 2):
            raise KernelError(f"a bit mask is one or two uint64 words, got {len(mask)}", loc)
        return _word_positions(tuple(int(w) & (2**64 - 1) for w in mask), per_repeat)
    mask = int(mask)
    if not 0 <= mask <= MAX_COUNT_MASK:
        raise KernelError(
            f"mask {mask} is outside [0, {MAX_COUNT_MASK}] (a count of leading elements per "
            f"repeat; {per_repeat} for this type)", loc)
    # Ascend C turns a count into the two 64-bit mask registers: n < 64 sets the low n bits,
    # 64 < n < 128 also n - 64 bits of the high word, and any n >= 128 (or n equal to the
    # elements per repeat) sets both words full. A count above the elements per repeat
    # therefore enables the whole repeat; a 32-bit type never reads the high word.
    return _leading_positions(min(mask, per_repeat))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@lru_cache(maxsize=256)
def _leading_positions(n: int) -> np.ndarray:
    return _frozen(np.arange(n))


@lru_cache(maxsize=256)
def _word_positions(words: tuple[int, ...], per_repeat: int) -> np.ndarray:
    bits = np.zeros(per_repeat, dtype=bool)
    for w, word in enumerate(words):
        lo = 64 * w
        if lo >= per_repeat:
            break
        n = min(64, per_repeat - lo)
        bits[lo:lo + n] = ((word >> np.arange(n, dtype=np.uint64)) & 1).astype(bool)
    return _frozen(np.flatnonzero(bits))


def repeat_indices(positions: np.ndarray, repeat_times: int, elem_bytes: int, blk_stride: int,
                   rep_stride: int) -> np.ndarray:
    """Element indices (into an operand of ``elem_bytes`` elements) of every enabled position.

    Position ``p`` of a repeat lies in this operand's block ``p // per_block`` at element
    ``p % per_block``, where a 32-byte block holds ``per_block`` of *this operand's* elements;
    block ``b`` of repeat ``r`` starts at 32-byte block ``r * rep_stride + b * blk_stride``.
    An operand narrower than the widest one (the fp16 side of an fp32<->fp16 cast) therefore
    fills fewer blocks per repeat, which is why Ascend C uses a repeat stride of 4 for it.

    The array is read-only and shared by every call with the same arguments: an instruction
    record keeps its index sets until the launch ends, and a kernel's loop issues the same
    few shapes over and over (a fresh array per record was most of a record's memory).
    """
    return _repeat_indices(positions.tobytes(), positions.dtype.str, int(repeat_times),
                           int(elem_bytes), int(blk_stride), int(rep_stride))


@lru_cache(maxsize=1024)
def _repeat_indices(positions: bytes, dtype: str, repeat_times: int, elem_bytes: int,
                    blk_stride: int, rep_stride: int) -> np.ndarray:
    positions = np.frombuffer(positions, dtype=dtype)
    per_block = BLOCK_BYTES // elem_bytes
    blocks = positions // per_block
    within = positions % per_block
    base = (np.arange(repeat_times)[:, None] * rep_stride + blocks[None, :] * blk_stride)
    return _frozen((base * per_block + within[None, :]).reshape(-1))


__all__ = ["BLOCKS_PER_REPEAT", "BLOCK_BYTES", "Bursts", "MAX_REPEAT", "REPEAT_BYTES", "Region",
           "region_of",
           "check_repeat", "count_repeats", "mask_positions", "repeat_indices",
           "required_alignment"]
