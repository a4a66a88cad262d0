"""The checks' state per buffer gate (a queue slot, a TBuf), and which gates an access touches.

A kernel's loop accesses the same few tiles over and over, each time through a gate that was
handed over since. State that belongs to a whole gate is therefore kept once per gate, in a
:class:`Slot`, rather than per byte range per instruction: the happens-before state of the
gate's hand-overs (:mod:`.queues`) and how often its bytes were taken back as unwritten
(:mod:`.uninit`). :class:`SlotIndex` finds the slots an access record touches, once per
distinct record (the loop's records repeat, so nearly every lookup is one dict hit).
"""

from __future__ import annotations

from bisect import bisect_right

from ascsim.sim.access import overlaps
from ascsim.sim.checks.clocks import PIPE_INDEX

#: Entries the per-record cache of :meth:`SlotIndex.touching` holds before it starts over.
HIT_CACHE_LIMIT = 4096


class Slot:
    """The checks' state of one gate.

    Happens-before (:mod:`.queues`): ``clock`` is what the gate's last publish carried,
    ``version`` counts publishes, ``seen[p]`` the version pipe ``p`` last joined (-1: none),
    ``touched`` the pipes that accessed the bytes since the last publish. ``seen`` is per pipe,
    not per core: only the slot's own core uses the pipes of its position (the one foreign
    writer, a 950 AIC's FixPipe into UB, is on FIX, which no UB gate uses).

    Written bytes (:mod:`.uninit`): ``takes`` counts the times a producer took the buffer
    (after each, its bytes count as unwritten for the new allocation); ``pending`` says the
    latest taking is not yet applied to the byte states -- it is applied before the next access
    to the bytes, or skipped when that access writes all of them.
    """

    __slots__ = ("gate", "lo", "hi", "clock", "version", "seen", "touched", "producer",
                 "consumer", "takes", "pending")

    def __init__(self, gate):
        self.gate = gate
        self.lo, self.hi = gate.lo, gate.hi
        self.clock: dict = {}
        self.version = 0
        self.seen = [-1] * len(PIPE_INDEX)
        self.touched: set[int] = set()
        self.producer = PIPE_INDEX[gate.producer]
        self.consumer = PIPE_INDEX[gate.consumer]
        self.takes = 0
        self.pending = False


class SlotIndex:
    """The slots of a launch's gates, by gate and by the bytes they cover.

    Gates join the index as the launch makes them (:meth:`slot_of` takes in every gate made
    since the last call); ``hits`` caches, per access record, the slots whose bytes it touches,
    and starts over whenever gates join (a record may touch the new ones).
    """

    def __init__(self, launch):
        self.launch = launch
        self.slots: dict = {}  # gate -> its Slot
        self.index: dict = {}  # space key -> (sorted gate addresses, [(end, Slot)])
        self.registered = 0  # how many of launch.gates are in the index
        # access record -> (the slots the queue check joins, every slot it touches): see
        # :func:`_touching`.
        self.hits: dict = {}

    def slot_of(self, gate) -> Slot | None:
        """The slot of ``gate`` (registering the gates made since the last call)."""
        slot = self.slots.get(gate)
        if slot is None:
            self._register_new()
            slot = self.slots.get(gate)
        return slot

    def _register_new(self) -> None:
        gates = self.launch.gates
        for gate in gates[self.registered:]:
            slot = self.slots[gate] = Slot(gate)
            addrs, entries = self.index.setdefault(gate.key, ([], []))
            k = bisect_right(addrs, gate.lo)
            addrs.insert(k, gate.lo)
            entries.insert(k, (gate.hi, slot))
        self.registered = len(gates)
        self.hits.clear()

    def touching(self, record) -> tuple:
        """``(slots the queue check joins, all slots whose bytes record touches)``, both
        ``()`` in a space without gates; see :func:`_touching`."""
        pair = self.hits.get(record)
        if pair is None:
            found = self.index.get(record[0])
            if found is None:
                return NO_SLOTS  # (not cached: a gate may still be made in that space)
            pair = _touching(found, record)
            hits = self.hits
            if len(hits) >= HIT_CACHE_LIMIT:
                hits.clear()
            hits[record] = pair
        return pair


NO_SLOTS = ((), ())


def _touching(found, record) -> tuple:
    """The slots of the gates (``found``: the space's index entry) whose bytes ``record``
    touches, in address order, twice: as the queue check has always seen them (the search
    starts at the last gate placed at or before the record, so a longer gate placed before that
    one -- an alias by another TPipe -- is not among them), and all of them."""
    lo, hi = record[1], record[2]
    addrs, entries = found
    n = len(addrs)
    first = max(bisect_right(addrs, lo) - 1, 0)
    near, every = [], []
    k = 0
    while k < n and addrs[k] < hi:
        end, slot = entries[k]
        if end > lo and (len(record) == 3 or overlaps(record, addrs[k], end)):
            every.append(slot)
            if k >= first:
                near.append(slot)
        k += 1
    every = tuple(every)
    return (every if len(near) == len(every) else tuple(near)), every
