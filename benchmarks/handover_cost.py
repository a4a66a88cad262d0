"""What does handing the turn from one simulated core to another cost?

Two cores take turns N times through the scheduler (each waits with ``wait_until`` for the
other's counter to move), so every turn is one hand-over; the reference, measured in the same
run, is the mechanism the scheduler used before its cores were greenlets: two operating-system
threads passing the turn with a ``threading.Event`` each. Prints microseconds per hand-over and
their ratio (medians of several rounds).

    .venv/bin/python benchmarks/handover_cost.py
    .venv/bin/python benchmarks/handover_cost.py --quick   # fewer turns (smoke test)
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from types import SimpleNamespace

from ascsim.sim.scheduler import Scheduler, current_scheduler

ROUNDS = 5


def scheduler_turns(turns: int) -> float:
    """Seconds per hand-over between two cores of a Scheduler."""
    counters = [0, 0]

    def body(core):
        me, other = core.core_id, 1 - core.core_id
        sched = current_scheduler()
        for i in range(turns):
            counters[me] += 1
            sched.notify()
            if i + 1 < turns:
                sched.wait_until(lambda i=i: counters[other] > i, "the other core",
                                 ("handover_cost.py", 0))

    launch = SimpleNamespace(findings=None)
    cores = [SimpleNamespace(core_id=i, kind="aiv", block_idx=i, launch=launch, finished=False)
             for i in range(2)]
    start = time.perf_counter()
    Scheduler(cores, body).run()
    return (time.perf_counter() - start) / (2 * turns)


def thread_turns(turns: int) -> float:
    """Seconds per hand-over between two threads passing the turn with Events."""
    go = [threading.Event(), threading.Event()]

    def side(me: int) -> None:
        for _ in range(turns):
            go[me].wait()
            go[me].clear()
            go[1 - me].set()

    threads = [threading.Thread(target=side, args=(i,)) for i in range(2)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    go[0].set()
    for t in threads:
        t.join()
    return (time.perf_counter() - start) / (2 * turns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 turns, 2 rounds")
    args = parser.parse_args(argv)
    turns, rounds = (200, 2) if args.quick else (5000, ROUNDS)
    ours, threads = [], []
    for _ in range(rounds):  # alternating, so both see the same host load
        ours.append(scheduler_turns(turns))
        threads.append(thread_turns(turns))
    mine, ref = statistics.median(ours), statistics.median(threads)
    print(f"one hand-over between two simulated cores: {mine * 1e6:.2f} us (scheduler, "
          f"greenlets); {ref * 1e6:.2f} us (two threads and Events, the reference); "
          f"ratio {mine / ref:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
