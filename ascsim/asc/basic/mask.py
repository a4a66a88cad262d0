"""The vector mask registers (Ascend C SetMaskCount/SetMaskNorm/SetVectorMask/ResetMask).

Vector instructions normally carry their own mask. Issued with ``is_set_mask=False`` they
use the registers instead: in normal mode the two 64-bit words are the per-repeat bit mask; in
counter mode the low word is the number of elements of the whole call, the repeat count
follows from it and the last repeat is partial. ``set_vector_mask`` writes the words,
``set_mask_count``/``set_mask_norm`` the mode, ``reset_mask`` sets every bit. A core starts in
normal mode with every bit set. An instruction issued with its own mask leaves that mask in
the registers, and a count-form call leaves normal mode with every bit set, as Ascend C's
implementations do. Each call is one
:class:`~ascsim.isa.instr.SetVectorRegisters` record.
"""

from __future__ import annotations

from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import as_dtype
from ascsim.asc.enums import MaskMode
from ascsim.isa import REPEAT_BYTES, KernelError, SetVectorRegisters
from ascsim.sim.exec_registers import ALL_ONES, VectorRegisters, vector_registers

MASK_PLACEHOLDER = 0
"""The mask argument to pass to an instruction issued with ``is_set_mask=False``."""
WORD_BITS = 64


def _set(mode=None, low=None, high=None) -> None:
    current_core().execute(SetVectorRegisters(mode, low, high, user_location()))


def set_mask_count() -> None:
    """Counter mode: the low mask word counts the elements of a whole call."""
    _set(mode="counter")


def set_mask_norm() -> None:
    """Normal mode (the default): the mask words are a per-repeat bit mask."""
    _set(mode="normal")


def reset_mask() -> None:
    """Every mask bit set: all elements of every repeat take part."""
    _set(low=ALL_ONES, high=ALL_ONES)


def count_to_words(count: int, per_repeat: int) -> tuple[int, int]:
    """The (low, high) words Ascend C makes of a count of leading elements: ``n < 64`` sets
    the low ``n`` bits, ``64 < n < 128`` also ``n - 64`` high bits, and ``n >= 128`` or ``n``
    equal to the elements per repeat sets both words full."""
    if count >= 2 * WORD_BITS or count == per_repeat:
        return ALL_ONES, ALL_ONES
    low = ALL_ONES if count >= WORD_BITS else (1 << count) - 1
    high = (1 << (count - WORD_BITS)) - 1 if count > WORD_BITS else 0
    return low, high


def set_vector_mask(*args, dtype, mode=MaskMode.NORMAL) -> None:
    """``set_vector_mask(length, dtype=, mode=)`` or ``set_vector_mask(mask_high, mask_low,
    dtype=, mode=)``: write the mask words. In ``MaskMode.COUNTER`` the length (or mask_low) is
    the element count of a whole call; in ``MaskMode.NORMAL`` a length is a count of leading
    elements per repeat."""
    loc = user_location()
    dtype = as_dtype(dtype)
    counter = MaskMode(mode) == MaskMode.COUNTER
    if len(args) == 1:
        length = int(args[0])
        if length < 0:
            raise KernelError(f"set_vector_mask: length {length} is negative", loc)
        per_repeat = REPEAT_BYTES // dtype.sizeof()
        low, high = (length, 0) if counter else count_to_words(length, per_repeat)
    elif len(args) == 2:
        high, low = (int(word) for word in args)
        if not (0 <= low <= ALL_ONES and 0 <= high <= ALL_ONES):
            raise KernelError(f"set_vector_mask: mask words {high:#x}, {low:#x} are not "
                              "64-bit unsigned values", loc)
    else:
        raise KernelError("set_vector_mask takes (length) or (mask_high, mask_low), got "
                          f"{len(args)} positional arguments", loc)
    _set(low=low, high=high)


def note_own_mask(mask, per_repeat: int, loc) -> None:
    """A vector instruction issued with its own mask leaves it in the registers (Ascend C's
    ``isSetMask=true`` writes them before the instruction); ``mask`` None: a count-form call,
    which Ascend C ends with ResetMask and SetMaskNorm."""
    if mask is None:
        low, high, mode = ALL_ONES, ALL_ONES, "normal"
    elif isinstance(mask, (list, tuple)):
        words = [int(w) & ALL_ONES for w in mask] + [0]
        low, high, mode = words[0], words[1], None
    else:
        (low, high), mode = count_to_words(int(mask), per_repeat), None
    core = current_core()
    now = vector_registers(core)
    if (now.low, now.high) == (low, high) and mode in (None, now.mode):
        return  # nothing changes (the usual case: count-form calls in normal mode)
    core.execute(SetVectorRegisters(mode, low, high, loc, side_effect=True))


def registers() -> VectorRegisters:
    """The executing core's mask registers."""
    return vector_registers(current_core())


def register_bit_mask(name: str, loc) -> list[int]:
    """The per-repeat bit mask of the registers, for an instruction issued with
    ``is_set_mask=False`` that has no counter-mode form here."""
    reg = registers()
    if reg.mode == "counter":
        raise KernelError(f"{name}(is_set_mask=False) in counter mode (set_mask_count) is not "
                          "modelled: pass the mask, or call set_mask_norm first", loc)
    return [reg.low, reg.high]


__all__ = ["MASK_PLACEHOLDER", "count_to_words", "register_bit_mask", "registers",
           "reset_mask", "set_mask_count", "set_mask_norm", "set_vector_mask"]
