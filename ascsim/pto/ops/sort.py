"""Sorting tile operations: ``sort32``, ``mrgsort``, ``mrgsort2`` and ``histogram``.

The sorts work on *entries* of 8 bytes, a value and its index: FP32 entries are (value, UINT32
index); FP16 entries are (value, 2 unused bytes, UINT32 index) -- so a tile of a sorted list
holds two FP32 or four FP16 elements per entry. Lists are sorted by value, largest first; equal
values keep their order. ``sort32`` sorts each run of 32 elements of each row of the source's
valid window into the same row of ``dst`` (a shorter last run, which needs a ``tmp`` tile, is
sorted as it is); ``mrgsort`` merges each four consecutive sorted lists
of ``block_len`` elements; ``mrgsort2`` merges its two to four source lists into ``dst`` as far
as ``dst``'s valid shape reaches (with ``exhausted``: until one source list runs out).

``histogram`` counts, per row of a UINT16 source, the high bytes (``is_msb``) or the low bytes
of the elements whose high byte equals the row's entry of ``idx`` (UINT8, DN), and writes the
running total over the 256 bins (the offsets a radix sort pass needs) to the row of ``dst``.
"""

from __future__ import annotations

import numpy as np

from ascsim.pto.ops.common import KernelError, user_location
from ascsim.pto.ops.routine import Window, repeats_of, run, vec_tiles, window
from ascsim.pto.tile import Tile

ENTRY_BYTES = 8
SORT_RUN = 32
MERGE_WAYS = 4
SORTABLE = ("FP16", "FP32")


def _entry_elems(tile: Tile, op: str, loc) -> int:
    if tile.dtype.name not in SORTABLE:
        raise KernelError(f"{op}: sorts FP16 or FP32 values, got {tile.dtype.name}", loc)
    return ENTRY_BYTES // tile.np_dtype.itemsize


def _stored(tile: Tile, count: int) -> Window:
    """The first ``count`` stored elements of a one-row list tile."""
    return Window(tile.region().at(0, count), np.arange(count))


def _entries(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Entries (as elements of ``values``' type) of values and their UINT32 indices."""
    n = values.size
    raw = np.zeros((n, ENTRY_BYTES), dtype=np.uint8)
    raw[:, :values.dtype.itemsize] = values.reshape(n, 1).view(np.uint8)
    raw[:, 4:] = index.astype(np.uint32).reshape(n, 1).view(np.uint8)
    return raw.reshape(-1).view(values.dtype)


def _keys(entries: np.ndarray) -> np.ndarray:
    """The value of every entry of a list stored as elements of its value type."""
    per = ENTRY_BYTES // entries.dtype.itemsize
    return entries.reshape(-1, per)[:, 0].astype(np.float32)


def _order(keys: np.ndarray) -> np.ndarray:
    """Largest first; equal keys keep their order."""
    return np.argsort(-keys, kind="stable")


def sort32(dst: Tile, src: Tile, idx: Tile, tmp=None) -> None:
    """``pl.sort32(dst, src, idx, tmp=None)``: each row's runs of 32 values, largest first, as
    (value, index) entries in the same row of ``dst``; ``idx`` has one row shared by every row
    or one row per row; a row whose length is not a multiple of 32 needs ``tmp``."""
    loc = user_location()
    vec_tiles("sort32", loc, dst, src, idx, *(() if tmp is None else (tmp,)))
    per = _entry_elems(src, "sort32", loc)
    if dst.dtype.name != src.dtype.name or idx.dtype.name != "UINT32":
        raise KernelError("sort32: dst must have the source's type and idx must be UINT32", loc)
    rows, cols = src.valid
    if cols % SORT_RUN and tmp is None:
        raise KernelError(f"sort32: rows of {cols} values end in a run shorter than "
                          f"{SORT_RUN}; pass a tmp tile", loc)
    if dst.shape[0] < rows or dst.shape[1] < cols * per:
        raise KernelError(f"sort32: the destination must be at least {rows}x{cols * per} "
                          f"({per} elements per entry), got {dst.shape[0]}x{dst.shape[1]}", loc)
    idx_rows = rows if idx.shape[0] >= rows and rows > 1 else 1
    if idx.shape[1] < cols:
        raise KernelError(f"sort32: the index tile needs {cols} columns", loc)

    def fn(values, index):
        out = np.empty((rows, cols * per), dtype=values.dtype)
        for r in range(rows):
            v, i = values[r], index[r if idx_rows > 1 else 0]
            order = np.concatenate([start + _order(v[start:start + SORT_RUN].astype(np.float32))
                                    for start in range(0, cols, SORT_RUN)])
            out[r] = _entries(v[order], i[order])
        return (out,)

    steps = (("sort", repeats_of(rows, cols * per, src.np_dtype.itemsize)),)
    run("sort32", (window(dst, rows, cols * per),),
        (window(src, rows, cols), window(idx, idx_rows, cols)), fn, steps, src.np_dtype, loc,
        () if tmp is None else (tmp,))


def _merge(lists: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The entries of sorted ``lists`` merged (as one array) and the list each came from."""
    entries = np.concatenate(lists)
    source = np.concatenate([np.full(lst.size // (ENTRY_BYTES // lst.dtype.itemsize), i)
                             for i, lst in enumerate(lists)])
    per = ENTRY_BYTES // entries.dtype.itemsize
    order = _order(_keys(entries))
    return entries.reshape(-1, per)[order].reshape(-1), source[order]


def mrgsort(dst: Tile, src: Tile, *, block_len) -> None:
    """``pl.mrgsort(dst, src, *, block_len)``: merge each four sorted lists of ``block_len``
    elements of ``src``."""
    loc = user_location()
    vec_tiles("mrgsort", loc, dst, src)
    per = _entry_elems(src, "mrgsort", loc)
    block = int(block_len)
    rows, cols = src.valid
    n = rows * cols
    if block <= 0 or block % per or n % block:
        raise KernelError(f"mrgsort: block_len {block} must be a positive number of whole "
                          f"entries ({per} elements each) dividing the {n} source elements", loc)
    if dst.shape[0] * dst.shape[1] < n:
        raise KernelError(f"mrgsort: the destination holds fewer than {n} elements", loc)
    group = block * MERGE_WAYS

    def fn(values):
        values = values.reshape(-1)
        return (np.concatenate([_merge([values[s:s + block] for s in range(g, min(g + group, n),
                                                                            block)])[0]
                                for g in range(0, n, group)]),)

    steps = (("merge_sort", repeats_of(1, n, src.np_dtype.itemsize)),)
    run("mrgsort", (_stored(dst, n),), (_stored(src, n),), fn, steps, src.np_dtype, loc)


def mrgsort2(src0: Tile, src1: Tile, dst: Tile, tmp: Tile, *more, exhausted=False) -> None:
    """``pl.mrgsort2(src0, src1, dst, tmp, *more, exhausted=False)``: merge the sorted lists
    into ``dst``."""
    loc = user_location()
    sources = (src0, src1, *more)
    vec_tiles("mrgsort2", loc, dst, tmp, *sources)
    per = _entry_elems(dst, "mrgsort2", loc)
    if not 2 <= len(sources) <= MERGE_WAYS:
        raise KernelError(f"mrgsort2: merges 2 to {MERGE_WAYS} lists, got {len(sources)}", loc)
    sizes = []
    for s in sources:
        if s.dtype.name != dst.dtype.name:
            raise KernelError("mrgsort2: every list must have dst's type", loc)
        n = s.valid[0] * s.valid[1]
        sizes.append(n - n % per)
    capacity = dst.valid[0] * dst.valid[1] // per  # dst's valid shape sets the output length
    if tmp.shape[1] < dst.valid[1]:
        raise KernelError(f"mrgsort2: tmp needs at least dst's {dst.valid[1]} columns", loc)

    def fn(*lists):
        merged, source = _merge([lst.reshape(-1) for lst in lists])
        count = source.size
        if exhausted:  # stop once a list has given its last entry
            for i in range(len(lists)):
                taken = np.flatnonzero(source == i)
                if taken.size:
                    count = min(count, int(taken[-1]) + 1)
        count = min(count, capacity)
        return ((np.arange(count * per), merged[:count * per]),)

    total = sum(sizes)
    steps = (("merge_sort", repeats_of(1, total, dst.np_dtype.itemsize)),)
    run("mrgsort2", (_stored(dst, capacity * per),), tuple(_stored(s, n) for s, n in
                                                           zip(sources, sizes)),
        fn, steps, dst.np_dtype, loc, (tmp,))


BINS = 256


def histogram(dst: Tile, src: Tile, idx: Tile, *, is_msb) -> None:
    """``pl.histogram(dst, src, idx, *, is_msb)``: per row, the running count of byte values
    over 256 bins."""
    loc = user_location()
    vec_tiles("histogram", loc, dst, src, idx)
    if (src.dtype.name, idx.dtype.name, dst.dtype.name) != ("UINT16", "UINT8", "UINT32"):
        raise KernelError(f"histogram: needs a UINT16 source, UINT8 idx and UINT32 dst, got "
                          f"{src.dtype.name}, {idx.dtype.name}, {dst.dtype.name}", loc)
    rows, cols = src.valid
    if dst.shape[0] < rows or dst.shape[1] < BINS or idx.shape[0] < rows:
        raise KernelError(f"histogram: dst must be at least {rows}x{BINS} and idx {rows} rows",
                          loc)
    msb = bool(is_msb)

    def fn(values, index):
        values = values.astype(np.int64)
        high, low = values >> 8, values & 0xFF
        counts = np.zeros((rows, BINS), dtype=np.int64)
        for r in range(rows):
            picked = high[r] if msb else low[r][high[r] == int(index[r, 0])]
            counts[r] = np.bincount(picked, minlength=BINS)
        return (np.cumsum(counts, axis=1),)

    steps = (("compare", repeats_of(rows, cols, 2)), ("add", repeats_of(rows, BINS, 4)))
    run("histogram", (window(dst, rows, BINS),), (window(src, rows, cols), window(idx, rows, 1)),
        fn, steps, src.np_dtype, loc)


OPS = {"sort32": sort32, "mrgsort": mrgsort, "mrgsort2": mrgsort2, "histogram": histogram}
