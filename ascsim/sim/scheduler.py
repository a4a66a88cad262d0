"""Cooperative, deterministic execution of one kernel body per core.

Kernels are ordinary Python executed eagerly, so a core that waits for another core (a cross-core
flag, ``sync_all``) must be suspended mid-function: each core that starts runs in its own greenlet
(a coroutine with its own stack, switched in and out by a plain function call, so a hand-over
costs about a microsecond and no operating-system thread is involved). Only one core runs at a
time, all in the launching thread: cores take turns in a fixed order and hand over when they
finish or must wait. The interleaving, and so every result and every simulated cycle, is the
same on every run. When a full round passes with every unfinished core waiting and nothing
changing, the kernel is deadlocked and we say which core waits for what, and where.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable

import greenlet

from ascsim.sim.errors import DeadlockError
from ascsim.sim.source import format_location

# Per thread, because launches in different threads (tuning trials, tests) each have their own
# scheduler; the core is set again whenever one of its greenlets resumes.
_state = threading.local()


def current_core():
    """The core whose kernel code is running now."""
    try:
        return _state.core
    except AttributeError:
        raise RuntimeError(
            "this asc API call is only valid inside a kernel launched with kernel[n](...)"
        ) from None


# What a core's greenlet tells the driver when it switches to it: start that core, or this
# core has finished (its body returned or was unwound).
_START = "start"
_FINISHED = "finished"


class _Abort(BaseException):  # noqa: N818 - control flow, not an error
    """Unwinds a parked core after another core failed; the driver reports that failure."""


class _Slot:
    __slots__ = ("core", "greenlet", "waiting", "done")

    def __init__(self, core):
        self.core = core
        self.greenlet: greenlet.greenlet | None = None  # made when the core starts
        self.waiting: tuple[str, tuple] | None = None  # (what, location) while blocked
        self.done = False

    @property
    def started(self) -> bool:
        return self.greenlet is not None


class Scheduler:
    """Runs ``body(core)`` for every core, one core at a time.

    The driver (the launching code) enters the first core; a core that must wait hands over to
    the next unfinished core itself, and a core that finishes returns to the driver, which enters
    the next unfinished core. Each core's greenlet runs in a copy of the launching code's
    context variables, so context set around a launch holds inside every core.
    """

    def __init__(self, cores, body: Callable):
        self.slots = [_Slot(c) for c in cores]
        self.body = body
        self.progress = 0  # bumped whenever a core changes shared state (flags, finishing)
        self._driver: greenlet.greenlet | None = None
        self._context: contextvars.Context | None = None  # the launching code's, at run()

    # ---------------------------------------------------------------- driver side
    def run(self) -> None:
        for i, slot in enumerate(self.slots):
            slot.core.scheduler_slot = i
        self._driver = greenlet.getcurrent()
        self._context = contextvars.copy_context()
        _state.scheduler = self
        try:
            message = self._start(0) if self.slots else None
            while message is not None:
                kind, index = message
                if kind is _START:
                    message = self._start(index)
                    continue
                index = self._next_slot(index)
                if index is None:
                    break
                slot = self.slots[index]
                message = slot.greenlet.switch() if slot.started else self._start(index)
        except BaseException:
            self._unwind_parked()
            raise
        finally:
            for name in ("core", "scheduler"):
                if hasattr(_state, name):
                    delattr(_state, name)

    def _start(self, index: int):
        """Start core ``index``'s greenlet (from the driver only: a greenlet started inside
        another one would add to that one's recursion depth, and a chain of 84 cores each
        starting the next would exceed Python's limit)."""
        slot = self.slots[index]
        g = slot.greenlet = greenlet.greenlet(self._core_main, parent=self._driver)
        g.gr_context = self._context.copy()
        return g.switch(index)

    def _core_main(self, index: int) -> tuple[str, int]:
        """A core's greenlet: run its body; the return value goes to the driver."""
        slot = self.slots[index]
        _state.core = slot.core
        try:
            self.body(slot.core)
        except _Abort:
            return _FINISHED, index
        slot.done = True
        slot.core.finished = True
        self.progress += 1
        return _FINISHED, index

    def _unwind_parked(self) -> None:
        """After a failure, unwind every core still parked inside its kernel code (its
        ``finally`` blocks run), so none is left suspended."""
        for slot in self.slots:
            g = slot.greenlet
            if g is not None and not g.dead:
                # A second failure while unwinding is dropped: the first is the one reported.
                with contextlib.suppress(BaseException):
                    g.throw(_Abort)

    def _next_slot(self, index: int) -> int | None:
        """The slot after ``index`` (cyclically, ``index`` itself last) that is not done."""
        n = len(self.slots)
        for step in range(1, n + 1):
            nxt = (index + step) % n
            if not self.slots[nxt].done:
                return nxt
        return None

    def _enter(self, index: int) -> None:
        """From a core: switch to core ``index``, resuming it where it is parked, or asking the
        driver to start it. Returns when another core switches back to the caller."""
        slot = self.slots[index]
        if slot.started:
            slot.greenlet.switch()
        else:
            self._driver.switch((_START, index))

    def _park(self, slot: _Slot, index: int) -> None:
        """Core ``slot`` gives the turn to core ``index`` and waits until it is its turn again."""
        if index != slot.core.scheduler_slot:
            self._enter(index)
            _state.core = slot.core

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
            self._park(slot, self._next_slot(index))
            if self.progress == seen_progress:
                idle_rounds += 1
            else:
                seen_progress = self.progress
                idle_rounds = 0
        slot.waiting = None

    def yield_to_earlier(self, clock: Callable) -> None:
        """Let cores that are behind the caller in simulated time run first.

        Cores that share a resource (two AIVs sending requests to one AIC) must reach it in
        simulated-time order, not in the order the turns happen to visit them. A core calls
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
            target_clock = None
            for i, other in enumerate(self.slots):
                if other is slot or other.done or other.waiting is not None:
                    continue
                when = clock(other.core)
                if when < mine and (target_clock is None or when < target_clock):
                    target, target_clock = i, when
            if target is None:
                return
            self._park(slot, target)

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
    """Whether kernel code is running now (in this thread)."""
    return hasattr(_state, "core")
