"""Reads of local-memory bytes that nothing wrote, and of reused buffers' bytes that nothing
wrote since the buffer was taken.

Local buffers start filled with a sentinel (0xFF, NaN in every float type); this check keeps,
per local memory, one state byte per memory byte and reports a read that covers any byte no
instruction has written. GM is initialised by the host and not checked.

Buffers handed out through a gate (a queue's tensors) start over at each ``acquire_write``:
their bytes count as unwritten again, and a read of a byte written before that (by an earlier
tile) but not since is a ``stale-read`` -- it sees the previous tile's data. Buffers without a
gate (scratch space, statically placed tensors) keep their contents by design.

A state byte holds two bits: ``WRITTEN`` (written since its buffer was last taken, or ever for
ungated bytes) and ``STALE`` (written before its buffer was last taken). The states live in a
``bytearray``, so the common operations on a plain byte range are single C calls with no numpy
dispatch: a taking or a write rewrites the range through a 256-entry ``translate`` table, and a
read looks for a state without ``WRITTEN`` with ``find``. A strided record (rows every ``pitch``
bytes) goes through a numpy view of the same bytes, so the gaps between its rows are neither
read nor marked written.

A copy marked ``whole_blocks`` (a padding copy) into a local buffer counts as writing the whole
32-byte blocks its rows land in: the pad bytes hold unspecified values, and computing over them
(then storing only the real columns) is the documented idiom for rows that are not a multiple
of 32 bytes.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa.operands import BLOCK_BYTES
from ascsim.sim.access import ranges, rows_of, strided

BLOCK = BLOCK_BYTES
WRITTEN = 1  # state bit: written since the buffer was last taken (ever, for ungated bytes)
STALE = 2  # state bit: written before the buffer was last taken
#: ``translate`` tables over the state bytes: a write sets WRITTEN; a taking turns whatever was
#: written (now or before) into STALE alone.
MARK_WRITTEN = bytes((s | WRITTEN) & 0xFF for s in range(256))
TAKE = bytes(STALE if s else 0 for s in range(256))
#: The four states as one-byte strings (``find`` needles and fill patterns).
FRESH, ONLY_WRITTEN, ONLY_STALE, STALE_WRITTEN = (bytes((s,)) for s in range(4))


class UninitCheck:
    """Tracks the written bytes of every local buffer of the launch."""

    def __init__(self, launch, describe_space):
        self.launch = launch
        self.describe_space = describe_space
        self.masks: dict = {}  # space -> bytearray of state bytes (WRITTEN | STALE)
        self.arrays: dict = {}  # space -> numpy view of its bytearray (for strided records)
        # Records whose bytes are all written (found so by a read, or marked by a write) ->
        # the space's version then. A space's version grows each time a buffer in it is taken
        # again (on_acquire), which makes its cached records stale; so a kernel reading and
        # writing the same tiles every iteration has each tile checked and marked once per
        # allocation, not every time.
        self.version: dict = {}
        self.written: dict = {}
        self.padded_done: dict = {}  # whole-block write records already marked -> version

    def on_acquire(self, gate) -> None:
        """A producer takes a gated buffer (``acquire_write``): its bytes are unwritten for
        this allocation."""
        self.take(gate.key, gate.lo, gate.hi)

    def take(self, space, lo: int, hi: int) -> None:
        """:meth:`on_acquire` of a buffer at ``[lo, hi)`` of ``space`` (the bounds the gate
        had then: a scratch buffer may be placed elsewhere later)."""
        mask = self.masks.get(space)
        if mask is None:
            return  # nothing written there yet
        hi = min(hi, len(mask))
        if hi > lo:
            _take(mask, lo, hi)
        self.version[space] = self.version.get(space, 0) + 1

    def forget_core(self, core_id: int) -> None:
        """Core ``core_id`` has finished and its local buffers are gone: drop their masks."""
        for space in [k for k in self.masks if k[0] == core_id]:
            del self.masks[space]
            self.arrays.pop(space, None)

    def _mask(self, core, space):
        mask = self.masks.get(space)
        if mask is None:
            # The owner of the space, not the issuing core: a 950 FixPipe on the AIC writes
            # its AIV's UB.
            mem = self.launch.cores[space[0]].mem.get(space[1])
            if mem is None:
                return None
            mask = self.masks[space] = bytearray(mem.capacity)
            self.arrays[space] = np.frombuffer(mask, dtype=np.uint8)
        return mask

    def on_instr(self, core, instr) -> None:
        masks, written, version = self.masks, self.written, self.version
        for record in instr.reads:
            space, lo, hi = record[0], record[1], record[2]
            if space[0] == "GM" or hi <= lo:
                continue
            now = version.get(space, 0)
            if written.get(record) == now:
                continue
            mask = masks.get(space)
            if mask is None:
                mask = self._mask(core, space)
                if mask is None:
                    continue
            if len(record) == 3:  # (_all_written of a plain range, inline)
                complete = mask.find(FRESH, lo, hi) < 0 and mask.find(ONLY_STALE, lo, hi) < 0
            else:
                complete = _all_written(mask, self.arrays[space], record, lo, hi)
            if complete:
                written[record] = now
            else:
                self._report(core, instr, space, lo, hi, record)
        if not instr.writes:
            return
        padded = getattr(instr.record, "whole_blocks", False)
        done_cache = self.padded_done if padded else written
        for record in instr.writes:
            space, lo, hi = record[0], record[1], record[2]
            if space[0] == "GM" or hi <= lo:
                continue
            now = version.get(space, 0)
            if done_cache.get(record) == now:
                continue
            mask = masks.get(space)
            if mask is None:
                mask = self._mask(core, space)
                if mask is None:
                    continue
            if padded:
                for done in _padded(record):
                    _mark(mask, self.arrays[space], done, done[1], done[2])
                self.padded_done[record] = now
            elif len(record) == 3:  # (_mark of a plain range, inline)
                if hi > len(mask):
                    hi = len(mask)
                if hi > lo:
                    _mark_written(mask, lo, hi)
            else:
                _mark(mask, self.arrays[space], record, lo, hi)
            written[record] = now

    def _report(self, core, instr, space, lo, hi, record) -> None:
        window = _window(self.arrays[space], record, lo, hi)
        unwritten = (window & WRITTEN) == 0
        # A strided record's window is (rows x row_bytes): map its flat index back to a byte.
        at = int(np.argmax(unwritten.reshape(-1)))
        first = lo + at if window.ndim == 1 else \
            lo + at // record[3] * record[4] + at % record[3]
        missing = int(np.count_nonzero(unwritten))
        if self.masks[space][first] & STALE:
            self._report_stale(core, instr, space, lo, hi, first, missing)
            return
        self.launch.findings.report(
            "uninitialized-read",
            f"{instr.op} on {instr.pipe} reads {self.describe_space(space)} bytes [{lo}, {hi}), "
            f"of which {missing} B (first at byte {first}) were never written: they hold the "
            "0xFF fill (NaN)", instr.loc,
            hint="copy or compute the data into the buffer before reading it, or read fewer "
            "elements", core=core.core_id, buffer=self.describe_space(space), start=lo, stop=hi,
            first_unwritten=first)

    def _report_stale(self, core, instr, space, lo, hi, first: int, missing: int) -> None:
        gate = next((g for g in self.launch.gates if g.key == space and g.lo <= first < g.hi),
                    None)
        taken = gate.taken_at if gate is not None else None
        label = gate.label if gate is not None else "buffer"
        self.launch.findings.report(
            "stale-read",
            f"{instr.op} on {instr.pipe} reads {self.describe_space(space)} bytes [{lo}, {hi}), "
            f"of which {missing} B (first at byte {first}) were not written since this {label} "
            "was taken: they still hold an earlier tile's data",
            (instr.loc, taken) if taken else instr.loc, hint=self.launch.hint("stale-read"),
            core=core.core_id, buffer=self.describe_space(space), start=lo, stop=hi,
            first_unwritten=first)


def _all_written(mask: bytearray, array: np.ndarray, record, lo: int, hi: int) -> bool:
    """Whether every byte ``record`` covers has its WRITTEN bit."""
    if len(record) == 3 or hi > len(mask):
        # (Past the end: the overflow is reported where it happened; the hull is checked.)
        return mask.find(FRESH, lo, hi) < 0 and mask.find(ONLY_STALE, lo, hi) < 0
    return bool((_window(array, record, lo, hi) & WRITTEN).all())


def _mark(mask: bytearray, array: np.ndarray, record, lo: int, hi: int) -> None:
    """Set the WRITTEN bit of every byte ``record`` covers."""
    if len(record) == 3 or hi > len(mask):
        hi = min(hi, len(mask))
        if hi > lo:
            _mark_written(mask, lo, hi)
        return
    window = _window(array, record, lo, hi)
    np.bitwise_or(window, WRITTEN, out=window)


def _take(mask: bytearray, lo: int, hi: int) -> None:
    """``mask[lo:hi]`` through TAKE. A buffer taken again is mostly all written, so that case
    is tested first with ``find`` (a memchr) and done as a fill."""
    if mask.find(FRESH, lo, hi) < 0:
        mask[lo:hi] = ONLY_STALE * (hi - lo)
    else:
        mask[lo:hi] = mask[lo:hi].translate(TAKE)


def _mark_written(mask: bytearray, lo: int, hi: int) -> None:
    """``mask[lo:hi]`` through MARK_WRITTEN. A write mostly lands on a buffer that is all
    stale (taken again) or all fresh, so those cases are tested first and done as a fill."""
    if mask.find(FRESH, lo, hi) < 0 and mask.find(ONLY_WRITTEN, lo, hi) < 0:
        mask[lo:hi] = STALE_WRITTEN * (hi - lo)
    elif mask.find(ONLY_STALE, lo, hi) < 0 and mask.find(STALE_WRITTEN, lo, hi) < 0:
        mask[lo:hi] = ONLY_WRITTEN * (hi - lo)
    else:
        mask[lo:hi] = mask[lo:hi].translate(MARK_WRITTEN)


def _window(array: np.ndarray, record, lo: int, hi: int) -> np.ndarray:
    """The state bytes a record covers: a slice, or a (rows x row_bytes) strided view."""
    if len(record) == 3 or hi > array.size:
        return array[lo:hi]  # (past the end: the overflow is reported where it happened)
    row, pitch = record[3], record[4]
    rows = rows_of(record)
    return np.lib.stride_tricks.as_strided(array[lo:], (rows, row), (pitch, 1))


def _padded(record) -> list:
    """A whole-block write widened to the 32-byte blocks its rows land in."""
    space, lo, hi = record[0], record[1], record[2]
    if len(record) == 3:
        return [(space, lo - lo % BLOCK, -(-hi // BLOCK) * BLOCK)]
    row, pitch = record[3], record[4]
    if pitch % BLOCK:  # rows sit at different offsets in their blocks
        return [r for a, b in ranges(record) for r in _padded((space, a, b))]
    start = lo - lo % BLOCK
    width = -(-(lo % BLOCK + row) // BLOCK) * BLOCK
    rows = rows_of(record)
    if width >= pitch:
        return [(space, start, start + (rows - 1) * pitch + width)]
    return [strided(space, start, width, pitch, rows)]
