"""Cross-core happens-before: cross-core flags, ``sync_all`` and explicit hand-offs.

Races between cores are found by :mod:`.races` on the GM access maps (their category is
``cross-core-race``); this module supplies the edges between cores' clocks (ascend-hw §4.5):

* ``on_cross_core_set(core, flag, scope, pipe, loc)``: the setter's ``pipe`` clock is parked
  until the flag's round completes (``pipe`` "ALL" parks everything the core issued);
* ``on_cross_core_release(flag, participants, targets)``: a round completed; the joined clocks
  of the participants' oldest parked sets go to each target's counter for ``flag``;
* ``on_cross_core_wait(core, flag, pipe, loc)``: the waiter's ``pipe`` joins the oldest
  released clock of its counter (a core barrier uses flag -1 and pipe "ALL");
* ``on_cross_core_edge(src_core, src_pipe, dst_core, dst_pipe)``: a direct hand-off (e.g. a
  Matmul server answering its AIV): what ``src_pipe`` issued so far is ordered before what
  ``dst_pipe`` issues next.
"""

from __future__ import annotations

from collections import deque

from ascsim.sim.checks.clocks import PIPE_INDEX, S, core_of, join, pipe_of

#: How many of the sets a core last waited for are kept to explain a race (a wrong pipe).
KEEP_WAITED = 32


class CrossCoreSync:
    def __init__(self, clocks_of):
        self.clocks_of = clocks_of
        # (setter core, flag) -> (clock, set info); set info = (core, pipe, loc, what the
        # core had issued on every pipe by then) for a set on one pipe, else None.
        self.parked: dict[tuple[int, int], deque] = {}
        # (target core, flag) -> (clock, [set infos]) of completed rounds.
        self.released: dict[tuple[int, int], deque] = {}
        self.waited: dict[int, deque] = {}  # core -> set infos of the rounds it waited for

    def _snapshot(self, core_id: int, pipe: str) -> dict:
        clocks = self.clocks_of(core_id)
        if pipe == "ALL":
            return clocks.snapshot_all()
        return clocks.snapshot(PIPE_INDEX[pipe])

    def _join(self, core_id: int, pipe: str, clock: dict) -> None:
        # "ALL": joined into the scalar pipe only, which every pipe's clock takes in before
        # its next instruction (CoreClocks.current): the same order, one join instead of seven.
        self.clocks_of(core_id).join_into(S if pipe == "ALL" else PIPE_INDEX[pipe], clock)

    def on_cross_core_set(self, core, flag: int, scope, pipe: str, loc) -> None:
        info = None if pipe == "ALL" else \
            (core.core_id, pipe, loc, self.clocks_of(core.core_id).snapshot_all())
        self.parked.setdefault((core.core_id, flag), deque()).append(
            (self._snapshot(core.core_id, pipe), info))

    def on_cross_core_release(self, flag: int, participants, targets) -> None:
        clock: dict = {}
        infos = []
        for p in participants:
            parked = self.parked.get((getattr(p, "core_id", p), flag))
            if parked:
                parked_clock, info = parked.popleft()
                join(clock, parked_clock)
                if info is not None:
                    infos.append(info)
        for t in targets:
            self.released.setdefault((getattr(t, "core_id", t), flag), deque()).append(
                (clock, infos))

    def on_cross_core_wait(self, core, flag: int, pipe: str, loc) -> None:
        released = self.released.get((core.core_id, flag))
        if released:
            clock, infos = released.popleft()
            self._join(core.core_id, pipe, clock)
            if infos:
                waited = self.waited.get(core.core_id)
                if waited is None:
                    waited = self.waited[core.core_id] = deque(maxlen=KEEP_WAITED)
                waited.extend(infos)

    def wrong_pipe_set(self, reader: int, key: int, count: int):
        """A set the ``reader`` core waited for, raised by the core of pipe ``key`` after that
        pipe's instruction ``count`` but on another pipe -- so it does not order that
        instruction: (setter core, set pipe, set loc), or None."""
        writer, write_pipe = core_of(key), pipe_of(key)
        for setter, pipe, loc, issued in reversed(self.waited.get(reader, ())):
            if setter == writer and pipe != write_pipe and issued.get(key, 0) >= count:
                return setter, pipe, loc
        return None

    def on_cross_core_edge(self, src_core, src_pipe: str, dst_core, dst_pipe: str) -> None:
        src = getattr(src_core, "core_id", src_core)
        dst = getattr(dst_core, "core_id", dst_core)
        self._join(dst, dst_pipe, self._snapshot(src, src_pipe))
