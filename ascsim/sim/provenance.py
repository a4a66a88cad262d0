"""Who wrote each GM element: the writer log of a launch, and the host tensors it explains.

:class:`WriterLog` is a launch observer (``Session.provenance``; on by default under ``ascsim
run`` / ``check``). It keeps, per GM buffer, the write access records of every instruction that
wrote it (:mod:`ascsim.sim.access`: a byte range or rows of a strided copy), with the writer:
core, block, source line, the instruction and which of that line's writes on that core it was
(the *tile*: the loop iteration, for a tiled kernel). That is one list append per GM-writing
instruction and nothing per element, so it costs next to nothing; the element-level map is
painted only when someone asks (:meth:`BufferWriters.element_map`, one numpy slice assignment
per write).

At the end of the launch each written buffer gets its :class:`BufferWriters`; when the host
copy-back delivers the buffer's bytes to a host tensor (:mod:`ascsim.sim.host`), the tensor is
remembered here (:func:`remember`) so that a failed comparison of that tensor can ask who
wrote its elements (:func:`lookup`, used by :mod:`ascsim.explain`).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ascsim.sim.observer import Observer
from ascsim.sim.source import Location

#: Finding categories whose lines and cores a wrong-output report names beside the writers.
RELATED_FINDINGS = ("race", "cross-core-race", "uninitialized-read", "stale-read",
                    "gm-out-of-bounds", "use-after-free")
#: How many delivered host tensors are remembered (the latest ones: a failed check compares
#: a script's last outputs).
REMEMBERED = 64


@dataclass(frozen=True)
class Writer:
    """One GM write: which core (and block) ran it, the kernel source line, the instruction,
    which of that line's writes on that core it was (``tile``, from 0), and its atomic mode
    (None for a plain store)."""

    core: int
    block: int
    loc: Location | None
    op: str
    tile: int
    atomic: str | None

    def where(self) -> str:
        """``file:line`` of the writing call (``?`` when the machine had no line)."""
        if self.loc is None:
            return "?"
        return f"{self.loc[0]}:{self.loc[1]}"


@dataclass(frozen=True)
class BufferWriters:
    """Every write into one GM buffer during one launch, in execution order.

    ``records[i]`` is the access record (bytes of the buffer, see :mod:`ascsim.sim.access`)
    that ``writers[i]`` wrote. ``findings`` are the launch's findings of the categories in
    :data:`RELATED_FINDINGS` (a race or an uninitialised read explains a wrong output better
    than its writer does). ``cores``: how many cores the launch ran. The writers are kept as
    the log took them down, ``(core id, loc, op, atomic)`` with ``blocks`` (core id -> block),
    and made :class:`Writer` s only when asked for: most launches' writers are never asked."""

    kernel: str
    buffer: str
    nbytes: int
    records: tuple
    raw: tuple
    blocks: dict
    findings: tuple
    cores: int

    @cached_property
    def writers(self) -> tuple[Writer, ...]:
        tiles: dict = {}
        out = []
        for core_id, loc, op, atomic in self.raw:
            key = (core_id, loc)
            tile = tiles[key] = tiles.get(key, -1) + 1
            out.append(Writer(core_id, self.blocks.get(core_id, core_id), loc, op, tile, atomic))
        return tuple(out)

    def element_map(self, itemsize: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(index into :attr:`writers` of each element's last writer, -1 where none wrote;
        how many plain stores wrote each element) for ``count`` elements of ``itemsize`` bytes
        from the buffer's start. A write covering part of an element counts for it."""
        last = np.full(count, -1, dtype=np.int32)
        stores = np.zeros(count, dtype=np.int32)
        for index, (record, writer) in enumerate(zip(self.records, self.writers)):
            for rows in _element_rows(record, itemsize, count, last):
                rows[...] = index
            if writer.atomic is None:
                for rows in _element_rows(record, itemsize, count, stores):
                    rows += 1
        return last, stores

    def runs(self, itemsize: int, count: int) -> list[tuple[int, int, int]]:
        """(writer index, first element, element count) of each write's rows, within the
        first ``count`` elements: the tiles as the writes laid them down."""
        out = []
        for index, record in enumerate(self.records):
            lo, hi = record[1] // itemsize, -(-record[2] // itemsize)
            if len(record) == 5:
                row, pitch = record[3], record[4]
                rows = (record[2] - record[1] - row) // pitch + 1
                for r in range(min(rows, count)):
                    a = (record[1] + r * pitch) // itemsize
                    if a >= count:
                        break
                    out.append((index, a, min(-(-(record[1] + r * pitch + row) // itemsize),
                                                count) - a))
            elif lo < count:
                out.append((index, lo, min(hi, count) - lo))
        return out


def _element_rows(record, itemsize: int, count: int, target: np.ndarray):
    """Views of ``target`` (one value per element) covering the elements ``record`` wrote:
    one view for a range, one 2-D strided view for rows whose pitch is whole elements, else
    one view per row."""
    lo, hi = record[1], record[2]
    if len(record) == 3:
        a, b = max(lo // itemsize, 0), min(-(-hi // itemsize), count)
        if a < b:
            yield target[a:b]
        return
    row, pitch = record[3], record[4]
    n_rows = (hi - lo - row) // pitch + 1
    if lo % itemsize == 0 and pitch % itemsize == 0 and row % itemsize == 0:
        a, step, width = lo // itemsize, pitch // itemsize, row // itemsize
        fits = max(min(n_rows, (count - a - width) // step + 1), 0) if a < count else 0
        if fits:
            yield np.lib.stride_tricks.as_strided(
                target[a:], (fits, width), (step * target.itemsize, target.itemsize))
        for r in range(fits, n_rows):  # rows that run past the end: clipped one by one
            start = a + r * step
            if start >= count:
                break
            yield target[start:min(start + width, count)]
        return
    for r in range(n_rows):
        first = lo + r * pitch
        a, b = max(first // itemsize, 0), min(-(-(first + row) // itemsize), count)
        if a < b:
            yield target[a:b]


class WriterLog(Observer):
    """The launch observer that records every GM write with its writer (see the module
    docstring); hands each written buffer its :class:`BufferWriters` when the launch ends."""

    def __init__(self, launch):
        self.launch = launch
        # GM buffer id -> [(access record, core id, loc, op, atomic mode), ...]
        self.writes: dict[int, list] = {}

    def on_instr(self, core, instr) -> None:
        writes = instr.writes
        if writes:
            for record in writes:
                space = record[0]
                if space[0] == "GM":
                    self.writes.setdefault(space[1], []).append(
                        (record, core.core_id, instr.loc, instr.op,
                         getattr(instr.record, "atomic", None)))

    def on_launch_end(self, launch) -> None:
        if not self.writes:
            return
        blocks = {core.core_id: core.block_idx for core in launch.cores}
        related = tuple(f for f in launch.findings.findings if f.category in RELATED_FINDINGS)
        buffers = launch.memory.buffers
        for buffer_id, writes in self.writes.items():
            buf = buffers[buffer_id]
            buf.writers = BufferWriters(launch.config.kernel, buf.name, buf.nbytes,
                                        tuple(w[0] for w in writes),
                                        tuple(w[1:] for w in writes), blocks, related,
                                        len(launch.cores))
        self.writes = {}

    def release(self) -> None:
        self.writes = {}


def writer_log(launch) -> WriterLog:
    """The observer factory (``LaunchOptions.observers``) of the writer log."""
    return WriterLog(launch)


# The log reads each core's records through on_instr only, which a wave's replay calls for every
# core as the per-core run does: waves may run with it (ascsim/sim/wave.py can_wave).
writer_log.wave_safe = True


@dataclass(frozen=True)
class Delivered:
    """A host array a launch delivered: its writers, its element type and shape as the host
    holds it, and weak references to it and to the object owning its memory (a numpy view
    made for the call, ``tensor.numpy()``, dies at once; the tensor it views lives on)."""

    writers: BufferWriters
    dtype: np.dtype
    shape: tuple
    ref: weakref.ref | None
    owner: weakref.ref | None
    offset: int  # bytes from the owner's first byte to the array's
    #: A numpy view of a torch tensor (``tensor.numpy()``) made for the call: its base is a
    #: throw-away alias of the tensor, so the view itself is kept (at most REMEMBERED of them).
    kept: object = None

    @property
    def count(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    def values(self) -> np.ndarray | None:
        """The delivered elements as the host holds them now (None once they are gone)."""
        held = self.ref() if self.ref is not None else None
        if held is None:
            held = self.kept
        if held is not None:
            return host_array(held)
        owner = self.owner() if self.owner is not None else None
        whole = host_array(owner) if owner is not None else None
        if whole is None or not whole.flags.c_contiguous:
            return None
        raw = whole.reshape(-1).view(np.uint8)
        if self.offset < 0 or self.offset + self.count * self.dtype.itemsize > raw.size:
            return None
        return np.ndarray(self.shape, self.dtype, buffer=raw, offset=self.offset)


# (host address, bytes) -> Delivered, the latest last.
_DELIVERED: OrderedDict = OrderedDict()


def host_array(value) -> np.ndarray | None:
    """A numpy view of a host tensor or array (None for other objects)."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.startswith("torch") and hasattr(value, "data_ptr"):
        import torch

        tensor = value.detach()
        if tensor.device.type != "cpu":
            return None
        if tensor.dtype == torch.bfloat16:
            import ml_dtypes

            return tensor.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        try:
            return tensor.numpy()
        except (TypeError, RuntimeError):
            return None
    return None


def _key(array: np.ndarray) -> tuple[int, int]:
    return (_address(array), int(array.nbytes))


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def _weak(value) -> weakref.ref | None:
    try:
        return weakref.ref(value)
    except TypeError:
        return None


def _owner(value):
    """The object at the root of ``value``'s chain of views (numpy ``base``, torch ``_base``)."""
    while True:
        base = getattr(value, "base", None) if isinstance(value, np.ndarray) else \
            getattr(value, "_base", None)
        if base is None:
            return value
        value = base


def remember(value, writers: BufferWriters | None) -> None:
    """``value`` (a host tensor or array) now holds a launch's results, written by ``writers``
    (None: the launch kept no writer log, and anything remembered for this memory is
    forgotten)."""
    array = host_array(value)
    if array is None or not array.size:
        return
    key = _key(array)
    _DELIVERED.pop(key, None)
    if writers is None:
        return
    owner = _owner(value)
    whole = host_array(owner) if owner is not value else array
    offset = _address(array) - _address(whole) if whole is not None else 0
    kept = value if isinstance(value, np.ndarray) and \
        type(value.base).__module__.startswith("torch") else None
    _DELIVERED[key] = Delivered(writers, array.dtype, tuple(array.shape), _weak(value),
                                _weak(owner) if owner is not value else None, offset, kept)
    while len(_DELIVERED) > REMEMBERED:
        _DELIVERED.popitem(last=False)


def lookup(value) -> Delivered | None:
    """What wrote ``value``: a delivered host tensor, or a view or copy of one (found by
    memory first, then by equal values among the delivered tensors with as many elements:
    ``out.float()`` of an fp16 output is a new tensor)."""
    array = host_array(value)
    if array is None:
        return None
    found = _DELIVERED.get(_key(array))
    if found is not None and found.values() is not None:
        return found
    wanted = np.asarray(array, dtype=np.float64).reshape(-1)
    for entry in reversed(_DELIVERED.values()):
        if entry.count != wanted.size:
            continue
        values = entry.values()
        if values is None:
            continue
        if np.array_equal(np.asarray(values, dtype=np.float64).reshape(-1), wanted,
                          equal_nan=True):
            return entry
    return None


def forget_all() -> None:
    """Forget every delivered tensor (tests start from nothing)."""
    _DELIVERED.clear()
