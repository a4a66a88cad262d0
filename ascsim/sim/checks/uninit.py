"""Reads of local-memory bytes that nothing wrote.

Local buffers start filled with a sentinel (0xFF, NaN in every float type); this check keeps,
per local memory, a boolean mask of the bytes some instruction has written and reports a read
that covers any byte still unwritten. One numpy slice operation per access. GM is initialised by
the host and not checked.

A ``data_copy_pad`` into a local buffer counts as writing the whole 32-byte blocks its rows land
in: the pad bytes hold unspecified values, and computing over them (then storing only the real
columns) is the documented idiom for rows that are not a multiple of 32 bytes.
"""

from __future__ import annotations

import numpy as np

BLOCK = 32
PADDED_WRITES = frozenset({"data_copy_pad"})


class UninitCheck:
    """Tracks the written bytes of every local buffer of the launch."""

    def __init__(self, launch, describe_space):
        self.launch = launch
        self.describe_space = describe_space
        self.masks: dict = {}

    def _mask(self, core, space):
        mask = self.masks.get(space)
        if mask is None:
            # The owner of the space, not the issuing core: a 950 FixPipe on the AIC writes
            # its AIV's UB.
            mem = self.launch.cores[space[0]].mem.get(space[1])
            if mem is None:
                return None
            mask = self.masks[space] = np.zeros(mem.capacity, dtype=bool)
        return mask

    def on_instr(self, core, instr) -> None:
        for space, lo, hi in instr.reads:
            if space[0] == "GM" or hi <= lo:
                continue
            mask = self._mask(core, space)
            if mask is not None:
                window = mask[lo:hi]
                if not window.all():
                    self._report(core, instr, space, lo, hi, window)
        padded = instr.op in PADDED_WRITES
        for space, lo, hi in instr.writes:
            if space[0] == "GM" or hi <= lo:
                continue
            mask = self._mask(core, space)
            if mask is not None:
                if padded:
                    lo, hi = lo - lo % BLOCK, -(-hi // BLOCK) * BLOCK
                mask[lo:hi] = True

    def _report(self, core, instr, space, lo, hi, window: np.ndarray) -> None:
        first = lo + int(np.argmin(window))
        missing = int(window.size - np.count_nonzero(window))
        self.launch.findings.report(
            "uninitialized-read",
            f"{instr.op} on {instr.pipe} reads {self.describe_space(space)} bytes [{lo}, {hi}), "
            f"of which {missing} B (first at byte {first}) were never written: they hold the "
            "0xFF fill (NaN)", instr.loc,
            hint="copy or compute the data into the buffer before reading it, or read fewer "
            "elements", core=core.core_id, buffer=self.describe_space(space), start=lo, stop=hi,
            first_unwritten=first)
