"""Wall time of the whole cann-bench run per variant (issue target: all variants of one conv op
within 2 minutes on a 2-core machine).

For each conv operator and each variant this runs every case of the task (24 by default) the
way ``ascsim bench`` does — inputs, torch golden, the simulated operator, the precision rule —
and prints the wall time; then the time of all variants of one operator together, as a ratio
to the 120 s target.

    python benchmarks/bench_wall.py [--soc Ascend950PR_9579] [--quick]
"""

from __future__ import annotations

import argparse
import time

from ascsim.bench.cli import load_operator
from ascsim.bench.runner import run_bench
from ascsim.bench.tasks import load_task

OPS = ("fused_conv_tanh", "fused_conv_sigmoid")
VARIANTS = ("semi", "fused", "unfused")
TARGET_S = 120.0


def measure(op_name: str, variant: str, soc: str, quick: bool) -> tuple[float, int, int]:
    """(wall seconds, cases run, cases passing precision) of one variant over the task."""
    task = load_task(op_name).select(None, quick=quick)
    op = load_operator(task.name)
    start = time.perf_counter()
    result = run_bench(task, op, [variant], soc, progress=False)
    wall = time.perf_counter() - start
    runs = [r for r in result.runs if r.variant == variant]
    return wall, len(runs), sum(r.status == "pass" for r in runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--soc", default="Ascend950PR_9579")
    parser.add_argument("--quick", action="store_true",
                        help="only the small (S) cases of one operator, one variant")
    ns = parser.parse_args(argv)
    ops = OPS[:1] if ns.quick else OPS
    variants = VARIANTS[:1] if ns.quick else VARIANTS
    print(f"cann-bench wall time on this machine, simulated SoC {ns.soc}")
    print(f"{'operator':22} {'variant':8} {'cases':>5} {'pass':>5} {'wall s':>8}")
    for op_name in ops:
        total = 0.0
        for variant in variants:
            wall, cases, passed = measure(op_name, variant, ns.soc, ns.quick)
            total += wall
            print(f"{op_name:22} {variant:8} {cases:5d} {passed:5d} {wall:8.1f}")
        print(f"{op_name:22} {'all':8} {'':5} {'':5} {total:8.1f}  "
              f"({total / TARGET_S:.2f} of the {TARGET_S:.0f} s target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
