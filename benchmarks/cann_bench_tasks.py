"""Every cann-bench task under ROOT/tasks/level1..4 read by ascsim: its cases' inputs generated
and its golden.py run on the CPU (truth in float64 and the same-precision reference), the way
``ascsim bench`` prepares a case before calling a candidate.

Prints one row per task: its cases, how many had their references made, the seconds that took
(inputs + both golden runs, summed over the cases) and, for a task that could not, the first
reason. No simulated kernel runs here.

    python benchmarks/cann_bench_tasks.py ROOT [--soc Ascend950PR_9579] [--tasks exp,rms_norm]
        [--max-elements N]

``--max-elements`` skips cases whose inputs hold more elements than N (0, the default: none
skipped) — the largest cases' fp64 goldens take minutes on a small machine.
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from ascsim.bench.cann_refs import make_cann_references
from ascsim.bench.cann_task import load_cann_task, task_folders


def _elements(shapes) -> int:
    total = 0
    for s in shapes:
        if s is None:
            continue
        if s and isinstance(s[0], tuple):
            total += _elements(s)
        else:
            total += math.prod(s)
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="a cann-bench checkout (holding tasks/)")
    parser.add_argument("--soc", default="Ascend950PR_9579")
    parser.add_argument("--tasks", help="comma-separated task folder names (default: all)")
    parser.add_argument("--max-elements", type=int, default=0)
    ns = parser.parse_args()
    torch.set_num_threads(1)   # a shared machine; per-task seconds stay comparable
    wanted = set(ns.tasks.split(",")) if ns.tasks else None
    folders = [f for f in task_folders(ns.root, ("tasks",))
               if f.parent.name.startswith("level") and (wanted is None or f.name in wanted)]
    print(f"{'task':42s} {'cases':>5s} {'ok':>4s} {'skip':>4s} {'seconds':>8s}  reason")
    total_ok = total_cases = 0
    t_all = time.perf_counter()
    for folder in folders:
        task = load_cann_task(folder, ns.soc)
        ok = skipped = 0
        reason = ""
        t0 = time.perf_counter()
        for case in task.cases:
            if ns.max_elements and _elements(case.input_shapes) > ns.max_elements:
                skipped += 1
                continue
            try:
                make_cann_references(task, case)
                ok += 1
            except Exception as exc:  # noqa: BLE001 - report and go on with the next case
                reason = reason or f"case {case.case_id}: {type(exc).__name__}: {exc}"[:200]
        seconds = time.perf_counter() - t0
        total_ok += ok
        total_cases += len(task.cases)
        print(f"{task.rel_path:42s} {len(task.cases):5d} {ok:4d} {skipped:4d} {seconds:8.1f}  "
              f"{reason}", flush=True)
    print(f"{len(folders)} tasks, {total_cases} cases, {total_ok} with references, "
          f"{time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
