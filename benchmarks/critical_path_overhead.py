"""What does recording the critical path cost? Simulation wall time of ordinary cores vs cores
that record why each instruction started (``LaunchOptions.record_causes``,
ascsim/sim/causes.py), and the walk of the path itself.

The two settings alternate run by run after one warm-up of each, and the best run of each is
kept (a shared host's load drifts); the ratio is "recording / ordinary". The cases are those of
benchmarks/check_overhead.py. Also checks that recording changes no simulated time.

    .venv/bin/python benchmarks/critical_path_overhead.py          # full sizes, 3 repeats
    .venv/bin/python benchmarks/critical_path_overhead.py --quick  # small sizes, one repeat
"""

from __future__ import annotations

import argparse
import sys
import time

from check_overhead import SOC, cases

from ascsim.session import SESSION
from ascsim.sim.critical_path import critical_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--repeats", type=int, default=None)
    ns = parser.parse_args(argv)
    repeats = ns.repeats or (1 if ns.quick else 3)
    SESSION.set_soc(SOC)
    status = 0
    print(f"{'case':34} {'ordinary s':>10} {'recording s':>11} {'ratio':>6} {'walk s':>7}")
    for name, fn in cases(ns.quick):
        best = {False: float("inf"), True: float("inf")}
        times = {}
        for round_ in range(repeats + 1):  # round 0 warms up
            for record in (False, True):
                SESSION.record_causes = record
                with SESSION.collect(launches=record) as run:
                    start = time.perf_counter()
                    fn()
                    took = time.perf_counter() - start
                if round_:
                    best[record] = min(best[record], took)
                times[record] = [r.device_time_us for r in run.reports]
                if record:
                    start = time.perf_counter()
                    for launch, report in zip(run.launches, run.reports):
                        critical_path(launch, report)
                    walk = time.perf_counter() - start
        SESSION.record_causes = False
        same = times[False] == times[True]
        status |= not same
        print(f"{name:34} {best[False]:10.3f} {best[True]:11.3f} "
              f"{best[True] / best[False]:6.2f} {walk:7.3f}"
              + ("" if same else "  (simulated times differ!)"))
    return status


if __name__ == "__main__":
    sys.exit(main())
