"""Vector clocks of the pipes of a core: the happens-before order the race checks rely on.

Every pipe of every core counts its instructions that access memory (the others have nothing
an epoch would name; leaving them out keeps the same order). A pipe's clock is a sparse dict
``{pipe key: count}`` (pipe key = ``core_id * 8 + pipe index``) saying how much of each pipe's
work is known to be complete before the pipe's next instruction starts. An access made by
instruction ``count`` of pipe ``key`` happens before the current instruction of pipe ``p`` iff
``clock[p].get(key, 0) >= count`` (an *epoch* check, O(1)).

Edges (ascend-hw §4.3-4.4):

* program order within a pipe (each pipe is in order);
* the scalar unit issues every instruction, so work on any pipe follows what the scalar pipe did
  before it (joined lazily, only when the scalar clock changed);
* ``set_flag(SRC_DST)`` snapshots SRC's clock, the matching ``wait_flag`` joins it into DST;
* ``pipe_barrier(PIPE_ALL)`` joins every pipe into every pipe; a single-pipe barrier adds
  nothing here because a pipe is already ordered with itself;
* queue and cross-core edges are built from the same :meth:`snapshot` / :meth:`join` calls by
  :mod:`ascsim.sim.checks.queues` and :mod:`ascsim.sim.checks.crosscore`.
"""

from __future__ import annotations

from collections import deque

from ascsim.sim.core import PIPES

PIPE_INDEX = {name: i for i, name in enumerate(PIPES)}
S = PIPE_INDEX["S"]
KEY_STRIDE = 8  # pipe keys: core_id * KEY_STRIDE + pipe index (7 pipes fit)


def join(into: dict, other: dict) -> bool:
    """``into = max(into, other)`` entry by entry; True if ``into`` changed."""
    changed = False
    get = into.get
    for key, count in other.items():
        if count > get(key, 0):
            into[key] = count
            changed = True
    return changed


def pipe_of(key: int) -> str:
    return PIPES[key % KEY_STRIDE]


def core_of(key: int) -> int:
    return key // KEY_STRIDE


class CoreClocks:
    """The vector clocks of one core's pipes, plus its pending intra-core flag snapshots."""

    __slots__ = ("core_id", "base", "vc", "s_version", "seen", "flags")

    def __init__(self, core_id: int):
        self.core_id = core_id
        self.base = core_id * KEY_STRIDE
        self.vc: list[dict] = [{} for _ in PIPES]
        self.s_version = 0  # bumped whenever the scalar pipe's clock changes
        self.seen = [0] * len(PIPES)  # the scalar version each pipe has joined
        self.flags: dict[tuple, deque] = {}  # (src, dst, event id) -> snapshots of SRC

    def current(self, p: int) -> dict:
        """Pipe ``p``'s clock, brought up to date with what the scalar unit did before."""
        vc = self.vc[p]
        if p != S and self.seen[p] != self.s_version:
            join(vc, self.vc[S])
            self.seen[p] = self.s_version
        return vc

    def tick(self, p: int) -> int:
        """Count one more instruction on pipe ``p``; returns its number."""
        vc = self.current(p)
        key = self.base + p
        count = vc.get(key, 0) + 1
        vc[key] = count
        if p == S:
            self.s_version += 1
        return count

    def join_into(self, p: int, other: dict) -> None:
        if join(self.current(p), other) and p == S:
            self.s_version += 1

    def snapshot(self, p: int) -> dict:
        return dict(self.current(p))

    def snapshot_all(self) -> dict:
        """Everything any pipe of this core has issued so far (a barrier's view)."""
        out: dict = {}
        for p in range(len(PIPES)):
            join(out, self.current(p))
        return out

    # ------------------------------------------------------------- intra-core edges
    def set_flag(self, src: str, dst: str, event_id: int) -> None:
        self.flags.setdefault((src, dst, event_id), deque()).append(
            self.snapshot(PIPE_INDEX[src]))

    def wait_flag(self, src: str, dst: str, event_id: int) -> None:
        pending = self.flags.get((src, dst, event_id))
        if pending:
            self.join_into(PIPE_INDEX[dst], pending.popleft())

    def mutex(self, action: str, pipe: str, mutex_id: int) -> None:
        """A buffer token given back carries the releasing pipe's clock to its next holder."""
        if action == "unlock":
            self.flags[("mutex", mutex_id)] = self.snapshot(PIPE_INDEX[pipe])
        else:
            released = self.flags.get(("mutex", mutex_id))
            if released is not None:
                self.join_into(PIPE_INDEX[pipe], released)

    def barrier(self, pipe: str) -> None:
        if pipe != "ALL":
            return  # one pipe is already in order with itself
        # Into the scalar pipe, which every pipe's clock takes in before its next instruction.
        self.join_into(S, self.snapshot_all())
