"""``asc.adv.concat`` / ``asc.adv.extract``: the data preparation around ``asc.sort`` on the
A2/A3 chips and the 950.

* ``concat(concat, src, tmp, repeat_time)``: the scores ``sort`` takes, 16 per repeat. On these
  chips ``sort`` reads the scores themselves (one per element), so this is a copy.
* ``extract(dst_value, dst_index, sorted, repeat_time)``: the scores and the uint32 indices of
  sorted (score, index) entries, 256 bytes of entries (32 of them) per repeat.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic.sort import ENTRY_BYTES, unpack_scores
from ascsim.asc.context import current_core, user_location
from ascsim.isa import REPEAT_BYTES, KernelError, VectorSequence, check_repeat

CONCAT_GROUP = 16
"""Scores one concat repeat moves."""
EXTRACT_ENTRIES = REPEAT_BYTES // ENTRY_BYTES
"""Entries one extract repeat reads (256 bytes)."""


def _score_type(tensor, name, loc) -> None:
    if tensor.dtype.name not in ("float16", "float32"):
        raise KernelError(f"{name}: scores are float16 or float32, got {tensor.dtype.name}", loc)


def concat(concat, src, tmp, repeat_time) -> None:
    """``concat(concat, src, tmp, repeat_time)``: 16 scores per repeat into ``concat``."""
    loc = user_location()
    _score_type(src, "concat", loc)
    if concat.dtype != src.dtype:
        raise KernelError("concat: concat and src must be one type", loc)
    n = check_repeat(repeat_time, loc) * CONCAT_GROUP
    if n:
        current_core().execute(VectorSequence(
            "concat", concat.region(n), (src.region(n),), lambda values: values, ("copy",),
            n // CONCAT_GROUP, src.dtype.np_name, loc, scratch=(tmp.region(),)))


def extract(dst_value, dst_index, sorted, repeat_time) -> None:  # noqa: A002 - pyasc's name
    """``extract(dst_value, dst_index, sorted, repeat_time)``: split 32 entries per repeat."""
    loc = user_location()
    _score_type(sorted, "extract", loc)
    if dst_value.dtype != sorted.dtype or dst_index.dtype.name != "uint32":
        raise KernelError(f"extract: dst_value is sorted's type and dst_index uint32, got "
                          f"{dst_value.dtype.name}, {dst_index.dtype.name}", loc)
    repeats = check_repeat(repeat_time, loc)
    n = repeats * EXTRACT_ENTRIES
    if not n:
        return
    np_dtype = sorted.dtype.np_dtype

    def fn(raw):
        entries = raw.reshape(n, ENTRY_BYTES)
        index = np.ascontiguousarray(entries[:, 4:]).view(np.uint32).reshape(-1)
        return unpack_scores(raw, n, np_dtype), index

    current_core().execute(VectorSequence(
        "extract", (dst_value.region(n), dst_index.region(n)),
        (sorted.reinterpret_cast("uint8").region(n * ENTRY_BYTES),), fn, ("copy", "copy"),
        repeats, np_dtype.name, loc))


__all__ = ["concat", "extract"]
