"""L2 contents carried from one launch to the next inside one operator call.

A launch starts with a cold L2 (``ascsim/sim/l2.py``). That is how cann-bench times a step (it
flushes L2 before every timed operator call), but not how the kernels *inside* one call meet
L2: K2 of a two-kernel operator runs right after K1 on the same device, and what K1 wrote is
still in the 128-192 MiB write-back L2 (device-times.md: writes look faster than HBM because
they land in L2). Inside :func:`carried_l2`, every launch starts with the lines the previous
launches left in L2, for the GM buffers that hold the same host memory (same address and
size), aged by the lines inserted since (the same least-recently-used approximation as within
a launch); dirty lines stay dirty, so their write-back is charged when they are evicted.

Operators wrap one call in it (``ascsim.ops``' conv and matmul operators, the ``--package``
path of ``ascsim bench``); outside it every launch is cold, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

_LOCK = threading.Lock()
_ACTIVE: list[CarriedL2] = []


class CarriedL2:
    """Per host memory region (address, bytes): the L2 lines resident after the last launch,
    as insertion stamps relative to that launch's end (``L2Cache.NEVER``: not resident), and
    which of them are dirty."""

    def __init__(self):
        self.lines: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def prior(self, key, n_lines: int):
        """(stamps, dirty) of region ``key`` if it is carried with ``n_lines`` lines."""
        entry = self.lines.get(key) if key is not None else None
        if entry is None or entry[0].size != n_lines:
            return None
        return entry

    def after_launch(self, l2, host_keys: dict[int, tuple[int, int]]) -> None:
        """Take over what ``l2`` (an :class:`ascsim.sim.l2.L2Cache` at its launch's end) holds
        of the host regions ``host_keys`` (buffer id -> region); age the others."""
        never = l2.NEVER
        for key, (stamps, dirty) in list(self.lines.items()):
            aged = np.where(stamps == never, never, stamps - l2.inserted)
            self.lines[key] = (aged, dirty)
        for bid, key in host_keys.items():
            state = l2.carry_out(bid)
            if state is not None:
                self.lines[key] = state


def active() -> CarriedL2 | None:
    """The carry of the innermost :func:`carried_l2` block, or None (every launch is cold)."""
    with _LOCK:
        return _ACTIVE[-1] if _ACTIVE else None


@contextmanager
def carried_l2() -> Iterator[CarriedL2]:
    """Launches inside the block share L2 as consecutive launches on one device do. Nested
    blocks share the outer block's L2."""
    with _LOCK:
        carry = _ACTIVE[-1] if _ACTIVE else CarriedL2()
        _ACTIVE.append(carry)
    try:
        yield carry
    finally:
        with _LOCK:
            _ACTIVE.pop()
