"""Why an output is wrong: the differing elements grouped by the instruction that wrote them,
and the pattern they make.

``ascsim.explain(actual, expected)`` (this module's :func:`explain`) compares a tensor a
simulated launch wrote with its reference and returns an :class:`Explanation`: how many
elements differ, which writer (core, block, source line, tile) last wrote each of them
(:mod:`ascsim.sim.provenance`), and the pattern the differences make, named the way kernel
authors look for it by hand:

==================  =========================================================================
``uninitialised``   the elements hold the 0xFF fill of local memory nothing wrote (NaN)
``race``            their writer's core took part in a cross-core race (a missing wait)
``tail tile``       only the partial last tile's elements (or the end no tile reached)
``one core``        every differing element was written by one core, the others' all match
``tile boundary``   the first or last elements of every tile
``stride period``   runs of elements a fixed number of elements apart
``written twice``   elements two plain stores wrote (overlapping tiles)
``never written``   elements no instruction wrote (they hold what the host put there)
==================  =========================================================================

The first pattern of this table that covers every differing element is the headline; the
others that cover some are listed after it. Under ``ascsim run`` the same report follows a
failed ``torch.testing.assert_close``, ``assert torch.allclose(...)``, a ``numpy.testing``
assert or the bench's precision rule (:mod:`ascsim.assert_hooks`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ascsim.sim import provenance
from ascsim.sim.provenance import BufferWriters

#: Fewest tiles (runs) a tile-boundary or stride-period pattern must span to be named.
MIN_REPEATS = 2
#: How many writer groups a report lists (the largest first).
SHOWN_GROUPS = 8

#: torch.testing.assert_close's default (rtol, atol) per dtype name, used when none are given.
DEFAULT_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
                      "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


@dataclass(frozen=True)
class Pattern:
    """A named pattern of the differing elements: ``name`` (see the module table), what it
    is in words, the source lines it points at (``file:line``), and whether it covers every
    differing element."""

    name: str
    detail: str
    lines: tuple[str, ...] = ()
    complete: bool = True


@dataclass(frozen=True)
class WriterGroup:
    """Differing elements that one writer (core, line, instruction) last wrote: how many,
    in which of that line's tiles, their element range, and one example."""

    core: int
    block: int
    where: str
    op: str
    tiles: tuple[int, ...]
    count: int
    first: int
    last: int
    example: tuple[int, float, float]


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found. ``writers``: the launch's writer log of the compared
    tensor (None when the tensor was not written by a simulated launch with provenance on)."""

    total: int
    differing: int
    max_abs_diff: float
    worst: tuple[int, float, float] | None
    kernel: str | None = None
    buffer: str | None = None
    patterns: tuple[Pattern, ...] = ()
    groups: tuple[WriterGroup, ...] = ()
    never_written: int = 0
    note: str = ""
    writers: BufferWriters | None = field(default=None, repr=False, compare=False)

    @property
    def pattern(self) -> Pattern | None:
        """The headline pattern (None when the differences make none of them)."""
        return self.patterns[0] if self.patterns else None

    @property
    def lines(self) -> tuple[str, ...]:
        """The source lines the headline pattern points at."""
        return self.pattern.lines if self.pattern else ()

    def __str__(self) -> str:
        return format_explanation(self)


def explain(actual, expected, *, rtol: float | None = None, atol: float | None = None,
            equal_nan: bool = False) -> Explanation:
    """Compare ``actual`` (a tensor or array a simulated launch wrote) with ``expected`` (same
    shape, or broadcastable to it) as ``torch.isclose`` does (``|a - e| <= atol + rtol * |e|``;
    tolerances default to ``torch.testing.assert_close``'s for the dtype) and explain the
    differing elements by their writers (see the module docstring)."""
    got = _values(actual, "actual")
    want = _values(expected, "expected")
    try:
        want = np.broadcast_to(want, got.shape)
    except ValueError as exc:
        raise ValueError(f"explain: expected has shape {want.shape}, which does not "
                         f"broadcast to actual's {got.shape}") from exc
    if rtol is None or atol is None:
        d_rtol, d_atol = DEFAULT_TOLERANCES.get(_dtype_name(actual), (0.0, 0.0))
        rtol = d_rtol if rtol is None else rtol
        atol = d_atol if atol is None else atol
    bad = np.flatnonzero(differing(got, want, rtol, atol, equal_nan))
    flat_got, flat_want = got.reshape(-1), want.reshape(-1)
    worst, max_diff = None, 0.0
    if bad.size:
        diff = np.abs(flat_got[bad] - flat_want[bad])
        diff = np.where(np.isnan(diff), np.inf, diff)
        k = int(bad[int(np.argmax(diff))])
        worst, max_diff = (k, float(flat_got[k]), float(flat_want[k])), float(diff.max())
    base = dict(total=int(got.size), differing=int(bad.size), max_abs_diff=max_diff,
                worst=worst)
    if not bad.size:
        return Explanation(**base)
    delivered = provenance.lookup(actual)
    if delivered is None:
        return Explanation(**base, note="no writer record: the tensor was not written by a "
                           "simulated launch with provenance on (ascsim run, or "
                           "SESSION.provenance = True)")
    if delivered.count != got.size:
        return Explanation(**base, note=f"the launch delivered {delivered.count} elements, "
                           f"the compared tensor has {got.size}: no element map")
    context = _Context.build(delivered, bad)
    patterns = tuple(p for p in (rule(context) for rule in PATTERNS) if p is not None)
    head = next((p for p in patterns if p.complete), None)
    ordered = ((head,) if head else ()) + tuple(p for p in patterns if p is not head)
    return Explanation(**base, kernel=delivered.writers.kernel, buffer=delivered.writers.buffer,
                       patterns=ordered, groups=context.groups(flat_got, flat_want),
                       never_written=int((context.last[bad] < 0).sum()),
                       writers=delivered.writers)


def differing(got: np.ndarray, want: np.ndarray, rtol: float, atol: float,
              equal_nan: bool) -> np.ndarray:
    """Elementwise: ``got`` and ``want`` differ beyond the tolerance (NaN differs from
    everything, itself too unless ``equal_nan``; equal infinities match)."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(got - want) <= atol + rtol * np.abs(want)
        close |= got == want
    nan = np.isnan(got) | np.isnan(want)
    if equal_nan:
        close |= np.isnan(got) & np.isnan(want)
        nan &= ~(np.isnan(got) & np.isnan(want))
    return ~close | nan


def _dtype_name(value) -> str:
    dtype = getattr(value, "dtype", None)
    return str(dtype).replace("torch.", "") if dtype is not None else ""


def _values(value, what: str) -> np.ndarray:
    """``value`` as a float64 array (a tensor, an array or a scalar)."""
    array = provenance.host_array(value)
    if array is None:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"explain: {what} must be a tensor or an array, got "
                            f"{type(value).__name__}") from exc
    return np.asarray(array, dtype=np.float64)


@dataclass
class _Context:
    """What the pattern rules look at: the differing elements (flat indices ``bad``), each
    element's last writer and store count, the writes' runs, and the raw host bytes."""

    writers: BufferWriters
    bad: np.ndarray
    last: np.ndarray
    stores: np.ndarray
    run_start: np.ndarray
    run_len: np.ndarray
    raw: np.ndarray | None
    itemsize: int

    @classmethod
    def build(cls, delivered, bad: np.ndarray) -> _Context:
        writers, count, itemsize = delivered.writers, delivered.count, delivered.dtype.itemsize
        last, stores = writers.element_map(itemsize, count)
        run_start = np.full(count, -1, dtype=np.int64)
        run_len = np.zeros(count, dtype=np.int64)
        for _, first, length in writers.runs(itemsize, count):
            run_start[first:first + length] = first
            run_len[first:first + length] = length
        array = delivered.values()
        raw = None
        if array is not None:
            raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8).reshape(count, -1)
        return cls(writers, bad, last, stores, run_start, run_len, raw, itemsize)

    def writer(self, index: int):
        return self.writers.writers[index]

    def lines_of(self, indices) -> tuple[str, ...]:
        """The distinct source lines of writers ``indices`` (in first-seen order)."""
        seen: dict[str, None] = {}
        for index in indices:
            if index >= 0:
                seen.setdefault(self.writer(int(index)).where(), None)
        return tuple(seen)

    def groups(self, got: np.ndarray, want: np.ndarray) -> tuple[WriterGroup, ...]:
        by_writer: dict[tuple, list] = {}
        owners = self.last[self.bad]
        for index in np.unique(owners[owners >= 0]):
            w = self.writer(int(index))
            by_writer.setdefault((w.core, w.loc, w.op), []).append(int(index))
        out = []
        for (core, _, op), indices in by_writer.items():
            mine = self.bad[np.isin(owners, indices)]
            k = int(mine[0])
            first = self.writer(indices[0])
            out.append(WriterGroup(core, first.block, first.where(), op,
                                   tuple(self.writer(i).tile for i in indices), int(mine.size),
                                   int(mine[0]), int(mine[-1]), (k, float(got[k]),
                                                                 float(want[k]))))
        out.sort(key=lambda g: -g.count)
        return tuple(out)


def _uninitialised(c: _Context) -> Pattern | None:
    """Elements whose bytes are all the 0xFF fill of unwritten local memory."""
    if c.raw is None:
        return None
    filled = (c.raw[c.bad] == 0xFF).all(axis=1) & (c.last[c.bad] >= 0)
    n = int(filled.sum())
    if not n:
        return None
    lines = c.lines_of(c.last[c.bad[filled]])
    reads = tuple(_where(f) for f in c.writers.findings
                  if f.category in ("uninitialized-read", "stale-read"))
    return Pattern("uninitialised", f"{n} differing elements hold the 0xFF fill of local "
                   f"memory no instruction wrote (NaN in a float type), copied out by "
                   f"{', '.join(lines)}" + (f"; uninitialised read at {', '.join(reads)}"
                                            if reads else ""),
                   tuple(dict.fromkeys(lines + reads)), complete=n == c.bad.size)


def _race(c: _Context) -> Pattern | None:
    """The differing elements' writer cores took part in a cross-core race finding. (A race
    within a core cannot change a simulated value: the machine runs each core's instructions
    in program order. Which core runs first is the order a cross-core race leaves open.)"""
    owners = c.last[c.bad]
    cores = {c.writer(int(i)).core for i in np.unique(owners[owners >= 0])}
    for finding in c.writers.findings:
        if finding.category != "cross-core-race":
            continue
        involved = {finding.core, finding.details.get("other_core")}
        if cores & involved:
            where = ", ".join(f"{p}:{n}" for p, n in finding.locations)
            return Pattern("race", f"the writing core{'s' if len(cores) > 1 else ''} "
                           f"{_list(sorted(cores))} took part in an unsynchronised access "
                           f"({finding.category} at {where}: {finding.message}) -- a missing "
                           "wait makes the value depend on which side runs first",
                           tuple(f"{p}:{n}" for p, n in finding.locations))
    return None


def _tail(c: _Context) -> Pattern | None:
    """Only the partial last tile: the elements a smaller-than-usual write wrote, or the end of
    the tensor that no full-size write reached."""
    sizes = _write_sizes(c)
    if len(set(sizes)) < 2:
        return None
    modal = Counter(sizes).most_common(1)[0][0]
    tails = [i for i, size in enumerate(sizes) if size < modal]
    if not tails:
        return None
    full_end = max(_write_end(c, i) for i, size in enumerate(sizes) if size == modal)
    owners = c.last[c.bad]
    by_tail = np.isin(owners, tails)
    beyond = (owners < 0) & (c.bad >= full_end)
    if not (by_tail | beyond).all():
        return None
    lines = c.lines_of(tails)
    tail = c.writer(tails[-1])
    return Pattern("tail tile", f"only the tail: the partial last tile (tile {tail.tile} of "
                   f"{tail.where()}, {sizes[tails[-1]]} elements where the others have "
                   f"{modal}) and the elements from {full_end} on that no full tile covers",
                   lines)


def _one_core(c: _Context) -> Pattern | None:
    """Every differing element written by one core, where several cores wrote the tensor."""
    owners = c.last[c.bad]
    if (owners < 0).any():
        return None
    cores = {c.writer(int(i)).core for i in np.unique(owners)}
    all_cores = {w.core for w in c.writers.writers}
    if len(cores) != 1 or len(all_cores) < 2:
        return None
    core = cores.pop()
    block = next(w.block for w in c.writers.writers if w.core == core)
    others = len(all_cores) - 1
    return Pattern("one core", f"every differing element was written by core {core} (block "
                   f"{block}); the elements the other {others} core{'s' if others > 1 else ''} "
                   "wrote match",
                   c.lines_of(np.unique(owners)))


def _boundary(c: _Context) -> Pattern | None:
    """The first or last elements of each tile (write run), in several tiles."""
    bad = c.bad[c.last[c.bad] >= 0]
    if bad.size != c.bad.size or not bad.size:
        return None
    start, length = c.run_start[bad], c.run_len[bad]
    offset, from_end = bad - start, start + length - 1 - bad
    tiles = np.unique(start)
    if tiles.size < MIN_REPEATS:
        return None
    edge = np.maximum(length // 4, 1)
    if (offset < edge).all():
        side, depth = "first", int(offset.max()) + 1
    elif (from_end < edge).all():
        side, depth = "last", int(from_end.max()) + 1
    else:
        return None
    return Pattern("tile boundary", f"the {side} {depth} element{'s' if depth > 1 else ''} "
                   f"of {tiles.size} tiles (of {int(length.max())} elements)",
                   c.lines_of(np.unique(c.last[bad])))


def _period(c: _Context) -> Pattern | None:
    """Runs of differing elements a fixed number of elements apart."""
    bad = c.bad
    breaks = np.flatnonzero(np.diff(bad) > 1)
    starts = np.concatenate(([bad[0]], bad[breaks + 1]))
    if starts.size < MIN_REPEATS + 1:
        return None
    gaps = np.diff(starts)
    if not (gaps == gaps[0]).all():
        return None
    width = int(bad.size // starts.size)
    return Pattern("stride period", f"{starts.size} runs of {width} element"
                   f"{'s' if width > 1 else ''}, every {int(gaps[0])} elements from element "
                   f"{int(starts[0])}", c.lines_of(np.unique(c.last[bad])))


def _twice(c: _Context) -> Pattern | None:
    """Elements that two plain stores wrote."""
    twice = c.bad[c.stores[c.bad] >= 2]
    if not twice.size:
        return None
    element = int(twice[0])
    byte = element * c.itemsize
    covering = [i for i, record in enumerate(c.writers.records) if _covers(record, byte)
                and c.writer(i).atomic is None]
    return Pattern("written twice", f"{twice.size} differing elements were stored more than "
                   f"once (element {element}: by "
                   f"{_list([_describe(c.writer(i)) for i in covering])})",
                   c.lines_of(covering), complete=twice.size == c.bad.size)


def _never(c: _Context) -> Pattern | None:
    """Elements no instruction wrote."""
    never = c.bad[c.last[c.bad] < 0]
    if not never.size:
        return None
    return Pattern("never written", f"{never.size} differing elements were never written by "
                   f"the kernel (elements {_ranges(never)}): they hold what the host put there",
                   (), complete=never.size == c.bad.size)


#: The pattern rules, most specific first (see the module docstring).
PATTERNS: tuple[Callable[[_Context], Pattern | None], ...] = (
    _uninitialised, _race, _tail, _one_core, _boundary, _period, _twice, _never)


def _write_sizes(c: _Context) -> list[int]:
    """Elements each write covers."""
    out = [0] * len(c.writers.records)
    for index, _, length in c.writers.runs(c.itemsize, c.last.size):
        out[index] += length
    return out


def _write_end(c: _Context, index: int) -> int:
    return -(-c.writers.records[index][2] // c.itemsize)


def _covers(record, byte: int) -> bool:
    lo, hi = record[1], record[2]
    if not lo <= byte < hi:
        return False
    return len(record) == 3 or (byte - lo) % record[4] < record[3]


def _describe(w) -> str:
    return f"core {w.core} at {w.where()} (tile {w.tile})"


def _where(finding) -> str:
    return ", ".join(f"{p}:{n}" for p, n in finding.locations)


def _list(items) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ranges(indices: np.ndarray, shown: int = 4) -> str:
    """``[a, b)`` runs of sorted indices, the first ``shown`` of them."""
    breaks = np.flatnonzero(np.diff(indices) > 1)
    starts = np.concatenate(([indices[0]], indices[breaks + 1]))
    ends = np.concatenate((indices[breaks], [indices[-1]])) + 1
    text = ", ".join(f"[{a}, {b})" for a, b in zip(starts[:shown], ends[:shown]))
    return text + (f" and {starts.size - shown} more runs" if starts.size > shown else "")


def format_explanation(e: Explanation) -> str:
    """The report: the differing count, the pattern(s), the writers of the differing
    elements."""
    if not e.differing:
        return f"ascsim: all {e.total} elements match"
    k, got, want = e.worst
    head = (f"ascsim: {e.differing} of {e.total} elements differ (largest difference at flat "
            f"index {k}: {got:g} where {want:g} was expected)")
    out = [head]
    if e.note:
        out.append(f"  {e.note}")
        return "\n".join(out)
    out.append(f"  written by kernel '{e.kernel}' into GM '{e.buffer}'")
    for i, p in enumerate(e.patterns):
        label = "pattern" if i == 0 else "also"
        where = f"  [{', '.join(p.lines)}]" if p.lines else ""
        out.append(f"  {label}: {p.name} -- {p.detail}{where}")
    if not e.patterns:
        out.append("  pattern: none of the known ones (the differences are scattered)")
    if e.groups:
        out.append("  differing elements by writer:")
        for g in e.groups[:SHOWN_GROUPS]:
            tiles = _list(sorted(set(g.tiles))[:6]) + (" ..." if len(set(g.tiles)) > 6 else "")
            k, got, want = g.example
            out.append(f"    core {g.core} (block {g.block})  {g.where}  {g.op}  "
                       f"tile{'s' if len(set(g.tiles)) > 1 else ''} {tiles}: {g.count} "
                       f"elements in [{g.first}, {g.last + 1}), e.g. [{k}] {got:g} vs {want:g}")
        if len(e.groups) > SHOWN_GROUPS:
            out.append(f"    ... and {len(e.groups) - SHOWN_GROUPS} more writers")
    if e.never_written:
        out.append(f"    never written: {e.never_written} elements")
    return "\n".join(out)
