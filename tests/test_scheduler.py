"""The cooperative scheduler on its own: turn order, hand-overs, failures and deadlocks.

Cores here are plain objects with the attributes the scheduler reads, so these tests pin the
scheduler's contract without a launch around it.
"""

from __future__ import annotations

import contextvars
from types import SimpleNamespace

import pytest

from ascsim.sim.errors import DeadlockError
from ascsim.sim.scheduler import Scheduler, current_core, current_scheduler, in_kernel


class _Findings:
    def __init__(self):
        self.reports = []

    def report(self, category, message, locations, hint=""):
        self.reports.append((category, message, locations, hint))


def _cores(n, findings=None):
    launch = SimpleNamespace(findings=findings or _Findings())
    return [SimpleNamespace(core_id=i, kind="aiv", block_idx=i, launch=launch, finished=False)
            for i in range(n)]


def test_cores_run_in_slot_order_and_finish():
    order = []
    cores = _cores(4)
    Scheduler(cores, lambda core: order.append(core.core_id)).run()
    assert order == [0, 1, 2, 3]
    assert all(core.finished for core in cores)
    assert not in_kernel()


def test_a_waiting_core_lets_the_next_run_and_resumes_when_ready():
    events, flags = [], set()

    def body(core):
        if core.core_id == 0:
            events.append("0 waits")
            current_scheduler().wait_until(lambda: 1 in flags, "core 1's flag", ("k.py", 3))
            events.append("0 resumes")
        else:
            events.append("1 sets")
            flags.add(1)
            current_scheduler().notify()
        assert current_core() is core

    Scheduler(_cores(2), body).run()
    assert events == ["0 waits", "1 sets", "0 resumes"]


def test_a_long_chain_of_waiting_cores_does_not_exhaust_the_recursion_limit():
    # Every core waits for the one after it, so each hands over to a core not started yet:
    # 300 nested starts would overflow the stack if each started inside the previous one.
    n, done = 300, set()

    def body(core):
        i = core.core_id
        if i + 1 < n:
            current_scheduler().wait_until(lambda: i + 1 in done, f"core {i + 1}", ("k.py", 1))
        done.add(i)
        current_scheduler().notify()

    Scheduler(_cores(n), body).run()
    assert done == set(range(n))


def test_context_variables_set_around_a_launch_hold_in_every_core():
    var = contextvars.ContextVar("var", default="unset")
    seen = []
    token = var.set("launch")
    try:
        Scheduler(_cores(3), lambda core: seen.append(var.get())).run()
    finally:
        var.reset(token)
    assert seen == ["launch"] * 3


def test_a_failing_core_unwinds_the_parked_ones_and_its_error_reaches_the_caller():
    unwound = []

    def body(core):
        if core.core_id == 0:
            try:
                current_scheduler().wait_until(lambda: False, "never", ("k.py", 7))
            finally:
                unwound.append(0)
        else:
            raise ValueError("core 1 failed")

    with pytest.raises(ValueError, match="core 1 failed"):
        Scheduler(_cores(2), body).run()
    assert unwound == [0]
    assert not in_kernel()


def test_cores_that_all_wait_are_a_deadlock_naming_each_wait():
    findings = _Findings()

    def body(core):
        current_scheduler().wait_until(lambda: False, f"flag {core.core_id}",
                                       ("kern.py", 10 + core.core_id))

    with pytest.raises(DeadlockError) as err:
        Scheduler(_cores(2, findings), body).run()
    assert "core 0 (aiv block 0) waits for flag 0" in str(err.value)
    assert "core 1 (aiv block 1) waits for flag 1" in str(err.value)
    assert [r[0] for r in findings.reports] == ["deadlock"]


def test_yield_to_earlier_runs_the_core_behind_in_simulated_time_first():
    clock = {0: 100, 1: 10}
    order = []

    def body(core):
        current_scheduler().yield_to_earlier(lambda c: clock[c.core_id])
        order.append(core.core_id)
        clock[core.core_id] += 1000

    Scheduler(_cores(2), body).run()
    assert order == [1, 0]
