"""Cooperative, deterministic execution of one kernel body per core.

Kernels are ordinary Python executed eagerly, so a core that waits for another core (a cross-core
flag, ``sync_all``) must be suspended mid-function: such a core keeps a thread parked inside its
kernel code. Only the holder of the baton runs: cores take turns in a fixed order and hand the
baton on when they finish or must wait. The interleaving, and so every result and every
simulated cycle, is the same on every run. When a full round passes with every unfinished core
waiting and nothing changing, the kernel is deadlocked and we say which core waits for what,
and where.
"""

from __future__ import annotations

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


class _Abort(BaseException):  # noqa: N818 - control flow, not an error
    """Unwinds a parked core after another core failed; the driver reports that failure."""


class _Slot:
    __slots__ = ("core", "go", "waiting", "started", "done")

    def __init__(self, core):
        self.core = core
        self.go = threading.Event()
        self.waiting: tuple[str, tuple] | None = None  # (what, location) while blocked
        self.started = False
        self.done = False


class Scheduler:
    """Runs ``body(core)`` for every core, one core at a time.

    Threads are made only when needed: the driver thread runs the cores one after the other
    itself, and a new thread takes over only when a core must wait (its thread stays parked
    inside the kernel code until the core is resumed). A kernel whose cores never wait runs
    without any thread; the order in which cores run is the same either way.
    """

    def __init__(self, cores, body: Callable):
        self.slots = [_Slot(c) for c in cores]
        self.body = body
        self.progress = 0  # bumped whenever a core changes shared state (flags, finishing)
        self._finished = threading.Event()
        self._failure: BaseException | None = None

    # ---------------------------------------------------------------- driver side
    def run(self) -> None:
        for i, slot in enumerate(self.slots):
            slot.core.scheduler_slot = i
        try:
            if self.slots and not self._work(0):
                self._finished.wait()
        finally:
            for name in ("core", "scheduler"):
                if hasattr(_state, name):
                    delattr(_state, name)
        if self._failure is not None:
            raise self._failure

    def _work(self, index: int) -> bool:
        """Run core ``index`` in this thread, then every following core that has not started;
        returns True when all cores are done, False when this thread handed the baton on."""
        while True:
            slot = self.slots[index]
            slot.started = True
            _state.core = slot.core
            _state.scheduler = self
            try:
                self.body(slot.core)
            except _Abort:
                return False
            except BaseException as exc:  # noqa: BLE001 - handed to the driver thread
                if self._failure is None:
                    self._failure = exc
                for other in self.slots:
                    other.go.set()  # parked cores (maybe the driver's) unwind with _Abort
                self._finished.set()
                return False
            slot.done = True
            slot.core.finished = True
            self.progress += 1
            nxt = self._next_slot(index)
            if nxt is None:
                self._finished.set()
                return True
            if not self.slots[nxt].started:
                index = nxt
                continue
            self.slots[nxt].go.set()
            return False

    def _thread_main(self, index: int) -> None:
        self._work(index)

    def _next_slot(self, index: int) -> int | None:
        """The slot after ``index`` (cyclically, ``index`` itself last) that is not done."""
        n = len(self.slots)
        for step in range(1, n + 1):
            nxt = (index + step) % n
            if not self.slots[nxt].done:
                return nxt
        return None

    def _hand_over(self, index: int) -> None:
        """Core ``index`` must wait: let the next unfinished core run (in a new thread if it
        has not started yet, since this thread stays parked inside core ``index``)."""
        nxt = self._next_slot(index)
        if nxt is None:
            self._finished.set()
            return
        self._resume(nxt)

    def _resume(self, index: int) -> None:
        """Give the baton to core ``index``: wake its parked thread, or start one for it."""
        slot = self.slots[index]
        if slot.started:
            slot.go.set()
            return
        slot.started = True
        threading.Thread(target=self._thread_main, args=(index,), daemon=True,
                         name=f"ascsim-core{slot.core.core_id}").start()

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
            self._hand_over(index)
            slot.go.wait()
            slot.go.clear()
            if self._failure is not None:
                raise _Abort
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
            self._resume(self.slots.index(target))
            slot.go.wait()
            slot.go.clear()
            if self._failure is not None:
                raise _Abort

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
