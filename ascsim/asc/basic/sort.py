"""Sorting on the vector unit (Ascend C Sort32, MrgSort, Sort, GetSortLen/GetSortOffset,
GetMrgSortResult) as the A2/A3 chips and the 950 do it.

Sorted data is a list of 8-byte (score, index) entries: for float the score in the low 4
bytes and the uint32 index in the high 4; for half the score in the low 2 bytes, 2 reserved
bytes (not written) and the index in the high 4. Order is by score, largest first; equal
scores keep their input order (Ascend C: when score[i] == score[j] and i > j, j comes first).

* ``sort32``: each repeat sorts 32 scores with their indices into 32 entries (src0 and src1
  advance 32 elements per repeat, dst 256 bytes).
* ``mrg_sort``: merges 2, 3 or 4 sorted queues of entries (``valid_bit`` 3, 7, 15), taking the
  largest head each step, earlier queues first on a tie. With ``is_exhausted_suspension`` it
  stops when a queue runs out. The entries taken from each queue go to ``sorted_num`` (a list
  the call fills) and to the register ``get_mrg_sort_result`` reads. ``repeat_times`` above 1
  needs four equal, contiguous queues, no suspension and ``valid_bit`` 15; each repeat moves
  every queue and dst by the four queues' length.
* ``sort``: ``repeat_time`` groups of 32 scores: each group sorted (``is_full_sort=False``) or
  all of them as one list (``True``); ``tmp`` is the scratch buffer Ascend C asks for.

The proposal instructions of the older chips (``mrg_sort4``, ``rp_sort16``,
``proposal_concat``, ``proposal_extract``) do not exist on these chips: they raise an error
saying so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.asc.basic.mask import registers
from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import as_dtype, float32
from ascsim.isa import KernelError, SetVectorRegisters, VectorSequence, check_repeat

ENTRY_BYTES = 8
"""Bytes of one (score, index) entry."""
SORT32_GROUP = 32
"""Scores one sort32 repeat sorts."""
VALID_BITS = {3: 2, 7: 3, 15: 4}
"""valid_bit -> number of queues mrg_sort merges."""
MAX_QUEUE_ENTRIES = 4095


def _score_types(dtype, name: str, loc) -> None:
    if dtype.name not in ("float16", "float32"):
        raise KernelError(f"{name}: scores are float16 or float32, got {dtype.name}", loc)


def pack_entries(scores: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(byte positions, bytes) of the entries for ``scores`` and their uint32 ``indices``,
    from entry 0; a half entry's reserved bytes are not among the positions."""
    n = scores.size
    raw = np.zeros((n, ENTRY_BYTES), np.uint8)
    width = scores.dtype.itemsize
    raw[:, :width] = scores.reshape(n, 1).view(np.uint8).reshape(n, width)
    raw[:, 4:] = indices.astype(np.uint32).reshape(n, 1).view(np.uint8).reshape(n, 4)
    columns = [*range(width), 4, 5, 6, 7]
    where = (np.arange(n)[:, None] * ENTRY_BYTES + np.array(columns)[None, :]).reshape(-1)
    return where, raw[:, columns].reshape(-1)


def unpack_scores(raw: np.ndarray, count: int, np_dtype) -> np.ndarray:
    """The scores of the first ``count`` entries in ``raw`` (bytes)."""
    entries = raw[:count * ENTRY_BYTES].reshape(count, ENTRY_BYTES)
    width = np.dtype(np_dtype).itemsize
    return np.ascontiguousarray(entries[:, :width]).view(np_dtype).reshape(-1)


def descending_order(scores: np.ndarray) -> np.ndarray:
    """Positions of ``scores`` largest first, equal scores in input order."""
    return np.argsort(-scores.astype(np.float64), kind="stable")


def _entries_view(tensor):
    return tensor.reinterpret_cast("uint8")


def sort32(dst, src0, src1, repeat_time) -> None:
    """``sort32(dst, src0, src1, repeat_time)``: sort each group of 32 scores (src0) with their
    uint32 indices (src1) into (score, index) entries, largest first."""
    loc = user_location()
    _score_types(src0.dtype, "sort32", loc)
    if dst.dtype != src0.dtype or src1.dtype.name != "uint32":
        raise KernelError(f"sort32: dst is src0's type and src1 is uint32, got dst "
                          f"{dst.dtype.name}, src1 {src1.dtype.name}", loc)
    repeats = check_repeat(repeat_time, loc)
    if not repeats:
        return  # a NOP on these chips
    _sort_groups("sort32", dst, src0, src1, None, repeats, full=False, loc=loc)


def _sort_groups(name, dst, scores, indices, tmp, repeats, full: bool, loc) -> None:
    n = repeats * SORT32_GROUP

    def fn(values, index):
        groups = values.reshape(-1 if full else repeats, n if full else SORT32_GROUP)
        order = np.concatenate([descending_order(g) + i * groups.shape[1]
                                for i, g in enumerate(groups)])
        return pack_entries(values[order], index[order])

    out = _entries_view(dst)
    current_core().execute(VectorSequence(
        name, out.region(n * ENTRY_BYTES), (scores.region(n), indices.region(n)), fn,
        ("sort",) if not full else ("sort", ("merge_sort", max(1, repeats // 4))), repeats,
        scores.dtype.np_dtype.name, loc, scratch=() if tmp is None else (tmp.region(),)))


def sort(dst, concat, index, tmp, repeat_time, is_full_sort: bool = False) -> None:
    """``sort(dst, concat, index, tmp, repeat_time, is_full_sort=False)``: ``repeat_time``
    groups of 32 scores into entries, each group sorted, or all as one list."""
    loc = user_location()
    _score_types(concat.dtype, "sort", loc)
    if dst.dtype != concat.dtype or index.dtype.name != "uint32":
        raise KernelError(f"sort: dst is concat's type and index is uint32, got dst "
                          f"{dst.dtype.name}, index {index.dtype.name}", loc)
    repeats = int(repeat_time)
    if repeats < 0:
        raise KernelError(f"sort: repeat_time {repeats} is negative", loc)
    if repeats:
        _sort_groups("sort", dst, concat, index, tmp, repeats, bool(is_full_sort), loc)


# ------------------------------------------------------------------------------ merging
class MrgSortSrcList:
    """``MrgSortSrcList([dtype,] src1, src2, src3, src4)``: the queues ``mrg_sort`` merges
    (only as many as ``valid_bit`` names are read)."""

    def __init__(self, *args, **kwargs):
        args = list(args)
        if args and not hasattr(args[0], "mem"):
            args.pop(0)  # pyasc's leading element type
        kwargs.pop("dtype", None)
        names = ("src1", "src2", "src3", "src4")
        queues = dict(zip(names, args))
        queues.update({k: v for k, v in kwargs.items() if k in names})
        unknown = set(kwargs) - set(names)
        if unknown:
            raise TypeError(f"MrgSortSrcList: unexpected argument(s) {sorted(unknown)}")
        self.queues = tuple(queues.get(name) for name in names)


@dataclass(frozen=True)
class MrgSort4Info:
    """``MrgSort4Info(element_lengths, if_exhausted_suspension=False, valid_bit=15,
    repeat_times=1)``: the merge's parameters (queue lengths in entries)."""

    element_lengths: tuple = (0, 0, 0, 0)
    if_exhausted_suspension: bool = False
    valid_bit: int = 15
    repeat_times: int = 1

    def __post_init__(self):
        object.__setattr__(self, "element_lengths",
                           tuple(int(n) for n in self.element_lengths))


def merge_order(heads: list[np.ndarray], suspend: bool) -> tuple[list[tuple[int, int]], list]:
    """The (queue, position) of each entry a merge of ``heads`` (score arrays) takes, largest
    head first and the earlier queue on a tie; with ``suspend`` it stops when a queue runs
    out. Also the entries taken per queue."""
    taken = [0] * len(heads)
    order = []
    while True:
        live = [q for q in range(len(heads)) if taken[q] < heads[q].size]
        if not live or (suspend and len(live) < len(heads)):
            break
        best = live[0]
        for q in live[1:]:
            if heads[q][taken[q]] > heads[best][taken[best]]:
                best = q
        order.append((best, taken[best]))
        taken[best] += 1
    return order, taken


def mrg_sort(dst, src_list: MrgSortSrcList, *args, **kwargs) -> None:
    """``mrg_sort(dst, src_list, element_count_list, sorted_num, valid_bit, repeat_time,
    is_exhausted_suspension=False)`` or ``mrg_sort(dst, src_list, MrgSort4Info)``."""
    loc = user_location()
    sorted_num = None
    if len(args) == 1 and not kwargs or "params" in kwargs:
        info = kwargs.get("params", args[0] if args else None)
    else:
        names = ("element_count_list", "sorted_num", "valid_bit", "repeat_time",
                 "is_exhausted_suspension")
        given = dict(zip(names, args))
        given.update(kwargs)
        missing = [n for n in names[:4] if n not in given]
        if missing:
            raise KernelError(f"mrg_sort: missing {missing}", loc)
        sorted_num = given["sorted_num"]
        info = MrgSort4Info(given["element_count_list"],
                            bool(given.get("is_exhausted_suspension", False)),
                            int(given["valid_bit"]), int(given["repeat_time"]))
    _merge(dst, src_list, info, sorted_num, loc)


def _merge(dst, src_list, info: MrgSort4Info, sorted_num, loc) -> None:
    _score_types(dst.dtype, "mrg_sort", loc)
    if info.valid_bit not in VALID_BITS:
        raise KernelError(f"mrg_sort: valid_bit is 3, 7 or 15 (2, 3 or 4 queues), got "
                          f"{info.valid_bit}", loc)
    n_queues = VALID_BITS[info.valid_bit]
    queues = src_list.queues[:n_queues]
    if any(q is None for q in queues):
        raise KernelError(f"mrg_sort: valid_bit {info.valid_bit} merges {n_queues} queues; "
                          "the source list has fewer", loc)
    if any(q.dtype != dst.dtype for q in queues):
        raise KernelError("mrg_sort: the queues and dst must be one type", loc)
    lengths = list(info.element_lengths[:n_queues]) + [0] * (4 - n_queues)
    if any(not 0 <= n <= MAX_QUEUE_ENTRIES for n in lengths):
        raise KernelError(f"mrg_sort: queue lengths are in [0, {MAX_QUEUE_ENTRIES}], got "
                          f"{lengths[:n_queues]}", loc)
    repeats = check_repeat(info.repeat_times, loc)
    if repeats > 1:
        _check_repeatable(queues, lengths, info, loc)
    if not repeats:
        return  # a NOP on these chips
    suspend = bool(info.if_exhausted_suspension)
    np_dtype = dst.dtype.np_dtype
    span = sum(lengths[:n_queues])
    result = {}

    def fn(*raws):
        places, values = [], []
        for r in range(repeats):
            shift = r * span * ENTRY_BYTES  # each repeat moves past all four queues
            heads = [unpack_scores(raw[shift:], n, np_dtype) for raw, n in zip(raws, lengths)]
            order, result["taken"] = merge_order(heads, suspend)
            for k, (q, pos) in enumerate(order):
                first = shift + pos * ENTRY_BYTES
                places.append(shift + k * ENTRY_BYTES + np.arange(ENTRY_BYTES))
                values.append(raws[q][first:first + ENTRY_BYTES])
        if not places:
            return np.zeros(0, np.int64), np.zeros(0, np.uint8)
        return np.concatenate(places), np.concatenate(values)

    reads = tuple(_entries_view(q).region(((repeats - 1) * span + n) * ENTRY_BYTES)
                  for q, n in zip(queues, lengths))
    current_core().execute(VectorSequence(
        "mrg_sort", _entries_view(dst).region(max(1, repeats * span) * ENTRY_BYTES), reads, fn,
        ("merge_sort",), repeats * max(1, -(-span // 32)), np_dtype.name, loc))
    if "taken" in result:
        taken = result["taken"]
    elif suspend:
        raise KernelError("mrg_sort with is_exhausted_suspension: how far each queue got "
                          "depends on the scores, which a timing-only run does not compute", loc)
    else:
        taken = lengths
    counts = tuple(int(t) for t in (list(taken) + [0] * 4)[:4])
    if sorted_num is not None:
        sorted_num[:len(counts)] = list(counts)[:len(sorted_num)]
    current_core().execute(SetVectorRegisters(None, None, None, loc, mrg_sort=counts))


def _check_repeatable(queues, lengths, info, loc) -> None:
    """Ascend C's four conditions for repeat_times > 1."""
    contiguous = all(
        b.mem is a.mem and b.addr == a.addr + lengths[0] * ENTRY_BYTES
        for a, b in zip(queues, queues[1:]))
    if not (len(queues) == 4 and len(set(lengths)) == 1 and contiguous
            and not info.if_exhausted_suspension and info.valid_bit == 15):
        raise KernelError("mrg_sort: repeat_times > 1 needs four queues of one length stored "
                          "one after the other, no exhausted suspension and valid_bit 15", loc)


def get_mrg_sort_result() -> tuple[int, int, int, int]:
    """The entries the last ``mrg_sort`` of this core took from each of its four queues."""
    return registers().mrg_sort


def get_sort_len(elem_count, dtype=float32) -> int:
    """``get_sort_len(elem_count)``: the length, in elements of ``dtype`` (pyasc: float), of
    ``elem_count`` sorted entries (8 bytes each)."""
    return int(elem_count) * ENTRY_BYTES // as_dtype(dtype).sizeof()


def get_sort_offset(elem_offset, dtype=float32) -> int:
    """``get_sort_offset(elem_offset)``: where entry ``elem_offset`` starts, in elements of
    ``dtype`` (pyasc: float)."""
    return int(elem_offset) * ENTRY_BYTES // as_dtype(dtype).sizeof()


def _not_on_these_chips(name: str):
    def unsupported(*args, **kwargs):
        raise KernelError(f"{name} is an instruction of the Atlas training and inference "
                          "series (the proposal format); the A2/A3 chips and the 950 do not "
                          "have it: use sort32/mrg_sort", user_location())

    unsupported.__name__ = name
    unsupported.__doc__ = f"``{name}``: not on the A2/A3 chips or the 950 (raises)."
    return unsupported


mrg_sort4 = _not_on_these_chips("mrg_sort4")
rp_sort16 = _not_on_these_chips("rp_sort16")
proposal_concat = _not_on_these_chips("proposal_concat")
proposal_extract = _not_on_these_chips("proposal_extract")

__all__ = ["MrgSort4Info", "MrgSortSrcList", "get_mrg_sort_result", "get_sort_len",
           "get_sort_offset", "mrg_sort", "mrg_sort4", "proposal_concat", "proposal_extract",
           "rp_sort16", "sort", "sort32"]
