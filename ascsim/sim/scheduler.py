"""Cooperative, deterministic execution of one kernel body per core.

Kernels are ordinary Python executed eagerly, so a core that waits for another core (a cross-core
flag, ``sync_all``) must be suspended mid-function. Each core runs in its own thread, but only the
holder of the baton runs: cores take turns in a fixed order and hand the baton on when they finish
or must wait. The interleaving, and so every result and every simulated cycle, is the same on
every run. When a full round passes with every unfinished core waiting and nothing changing, the
kernel is deadlocked and we say which core waits for what, and where.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from ascsim.sim.errors import DeadlockError
from ascsim.sim.source import format_location

_state = threading.local()


def current_core():
    """The core whose kernel code is running in this thread."""
    try:
        return _state.core
    except AttributeError:
        raise RuntimeError(
            "this asc API call is only valid inside a kernel launched with kernel[n](...)"
        ) from None


class _Slot:
    __slots__ = ("core", "thread", "go", "waiting", "done", "error")

    def __init__(self, core):
        self.core = core
        self.thread = None
        self.go = threading.Event()
        self.waiting: tuple[str, tuple] | None = None  # (what, location) while blocked
        self.done = False
        self.error: BaseException | None = None


class Scheduler:
    """Runs ``body(core)`` for every core, one core at a time."""

    def __init__(self, cores, body: Callable):
        self.slots = [_Slot(c) for c in cores]
        self.body = body
        self.progress = 0  # bumped whenever a core changes shared state (flags, finishing)
        self._finished = threading.Event()
        self._failure: BaseException | None = None

    # ---------------------------------------------------------------- driver side
    def run(self) -> None:
        if len(self.slots) == 1:  # the common small case: no threads needed
            self._run_inline(self.slots[0])
            return
        for i, slot in enumerate(self.slots):
            slot.core.scheduler_slot = i
            slot.thread = threading.Thread(target=self._thread_main, args=(i,), daemon=True,
                                           name=f"ascsim-core{slot.core.core_id}")
            slot.thread.start()
        self.slots[0].go.set()
        self._finished.wait()
        for slot in self.slots:
            slot.go.set()  # release anything still parked after a failure
        if self._failure is not None:
            raise self._failure

    def _run_inline(self, slot) -> None:
        slot.core.scheduler_slot = 0
        _state.core = slot.core
        _state.scheduler = self
        try:
            self.body(slot.core)
        finally:
            del _state.core
            slot.done = True
            slot.core.finished = True

    def _thread_main(self, index: int) -> None:
        slot = self.slots[index]
        slot.go.wait()
        slot.go.clear()
        if self._failure is not None:
            return
        _state.core = slot.core
        _state.scheduler = self
        try:
            self.body(slot.core)
        except BaseException as exc:  # noqa: BLE001 - handed to the driver thread
            self._failure = exc
            self._finished.set()
            return
        slot.done = True
        slot.core.finished = True
        self.progress += 1
        self._pass_baton(index)

    def _pass_baton(self, index: int) -> None:
        n = len(self.slots)
        for step in range(1, n + 1):
            nxt = self.slots[(index + step) % n]
            if not nxt.done:
                nxt.go.set()
                return
        self._finished.set()

    # ---------------------------------------------------------------- core side
    def wait_until(self, ready: Callable[[], bool], what: str, loc) -> None:
        """Suspend the calling core until ``ready()``; other cores run meanwhile."""
        if ready():
            return
        index = current_core().scheduler_slot
        slot = self.slots[index]
        slot.waiting = (what, loc)
        seen_progress = self.progress
        idle_rounds = 0
        while not ready():
            if len(self.slots) == 1 or idle_rounds > 1:
                self._deadlock()
            self._pass_baton(index)
            slot.go.wait()
            slot.go.clear()
            if self._failure is not None:
                sys.exit(0)  # unwind this thread quietly; the driver reports the failure
            if self.progress == seen_progress:
                idle_rounds += 1
            else:
                seen_progress = self.progress
                idle_rounds = 0
        slot.waiting = None

    def yield_to_earlier(self, clock: Callable) -> None:
        """Let cores that are behind the caller in simulated time run first.

        Cores that share a resource (two AIVs sending requests to one AIC) must reach it in
        simulated-time order, not in the order the baton happens to visit them. A core calls
        this before using such a resource: while another unfinished, non-waiting core has an
        earlier ``clock(core)``, that core runs. The earliest core never yields, so this ends;
        choices depend only on simulated times and slot order, so it stays deterministic.
        """
        if len(self.slots) == 1:
            return
        me = current_core()
        slot = self.slots[me.scheduler_slot]
        while True:
            mine = clock(me)
            target = None
            for other in self.slots:
                if other is slot or other.done or other.waiting is not None:
                    continue
                if clock(other.core) < mine and (target is None
                                                 or clock(other.core) < clock(target.core)):
                    target = other
            if target is None:
                return
            target.go.set()
            slot.go.wait()
            slot.go.clear()
            if self._failure is not None:
                sys.exit(0)

    def notify(self) -> None:
        """Record that shared state changed, so waiting cores look again."""
        self.progress += 1

    def _deadlock(self) -> None:
        lines = []
        for slot in self.slots:
            if slot.done:
                continue
            core = slot.core
            if slot.waiting:
                what, loc = slot.waiting
                lines.append(f"  core {core.core_id} ({core.kind} block {core.block_idx}) waits "
                             f"for {what} at {format_location(loc)}")
            else:
                lines.append(f"  core {core.core_id} ({core.kind} block {core.block_idx}) "
                             "has not finished")
        loc = next((s.waiting[1] for s in self.slots if s.waiting), None)
        err = DeadlockError("deadlock: every unfinished core is waiting and none can proceed:\n"
                            + "\n".join(lines), loc)
        launch = self.slots[0].core.launch
        launch.findings.report("deadlock", str(err).split("\n", 1)[-1].strip(),
                               tuple(s.waiting[1] for s in self.slots if s.waiting),
                               hint="every wait needs a matching set on another running core")
        raise err


def current_scheduler() -> Scheduler:
    return _state.scheduler


def in_kernel() -> bool:
    """Whether kernel code is running in this thread."""
    return hasattr(_state, "core")
