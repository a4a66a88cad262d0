"""A cann-bench submission package run case by case, with the resident memory of both
processes watched: the bench process (inputs, golden references, the verdict) and the worker
that runs the package under the simulator.

Each case gets a worker of its own (so a case's peak is its own) and runs exactly as
``ascsim bench TASK --cann-bench ROOT --package PKG --cases N`` runs it: references, both
calls (the second on fresh inputs), the submission rules, precision, HAP. One row per case:
its shape and dtype, status, simulated µs, HAP, the peak RSS of the worker and of the bench
process, and the wall seconds; a summary per task (cases passed, score, HAP mean).

    python benchmarks/cann_bench_package_memory.py ROOT PKG [--tasks exp,mish] [--cases 1,5]
        [--soc Ascend950PR_9579] [--max-rss-mb 6000] [--timeout 1800] [--out rows.jsonl]
        [--max-elements N]

A worker above ``--max-rss-mb`` is stopped (the case then fails as ``worker_died``, and the
row says it was stopped at the cap); a bench process above it ends the run with the row
written, since it is this process. ``--out`` appends one JSON line per case and a later run
with the same file skips the cases already there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import threading
import time
from pathlib import Path

from cann_bench_tasks import rss_mb

POLL_S = 0.2


class MemoryWatch:
    """Samples the bench process and its current worker; stops a worker above the cap."""

    def __init__(self, runner, cap_mb: float):
        self.runner, self.cap_mb = runner, cap_mb
        self.bench_peak = self.worker_peak = 0.0
        self.stopped_worker = ""
        self.bench_over = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> MemoryWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join(5)

    def _loop(self) -> None:
        me = os.getpid()
        while not self._done.wait(POLL_S):
            self.bench_peak = max(self.bench_peak, rss_mb(me))
            proc = getattr(self.runner, "_proc", None)   # the worker of this case, if running
            if proc is not None and proc.pid:
                w = rss_mb(proc.pid)
                self.worker_peak = max(self.worker_peak, w)
                if w > self.cap_mb and not self.stopped_worker:
                    self.stopped_worker = f"worker stopped at {w:.0f} MB (cap)"
                    os.kill(proc.pid, signal.SIGKILL)   # the worker this run started
            if self.bench_peak > self.cap_mb:
                self.bench_over = True
                return


def _elements(shapes) -> int:
    return sum(_elements(s) if s and isinstance(s[0], tuple) else math.prod(s)
               for s in shapes if s is not None)


def _shape_text(case) -> str:
    return " ".join("x".join(map(str, s)) if s else "-" for s in case.input_shapes
                    if s is None or not s or not isinstance(s[0], tuple))


def run_case_watched(task, case_id: int, source, soc: str, cap_mb: float, timeout_s: float):
    from ascsim.bench.isolate import PackageRunner
    from ascsim.bench.runner import PACKAGE_VARIANT, run_bench

    one = task.select([case_id])
    t0 = time.perf_counter()
    with PackageRunner(one, source, soc, timeout_s) as runner, \
            MemoryWatch(runner, cap_mb) as watch:
        result = run_bench(one, None, (PACKAGE_VARIANT,), soc, progress=False,
                           package_call=runner.call_case)
    run = result.runs[0]
    case = one.cases[0]
    why = run.error or (run.precision.why if run.precision is not None else "")
    if watch.stopped_worker:
        why = f"{watch.stopped_worker}; {why}"
    return {"task": task.rel_path, "case": case_id, "dtype": case.dtype,
            "shape": _shape_text(case), "status": run.status,
            "sim_us": None if run.timing is None else round(run.timing.device_time_us, 3),
            "t_base_us": run.t_base_us, "t_hw_us": run.t_hw_us,
            "hap": None if run.hap is None else round(run.hap, 4),
            "below_floor": run.below_floor is not None,
            "worker_peak_mb": round(watch.worker_peak), "bench_peak_mb": round(watch.bench_peak),
            "wall_s": round(time.perf_counter() - t0, 1), "why": why[:300],
            "outcome": run.outcome.__dict__}, watch.bench_over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="a cann-bench checkout (holding tasks/)")
    parser.add_argument("package", help="the submission package (a directory or module)")
    parser.add_argument("--tasks", help="comma-separated task names (default: every task the "
                        "package implements)")
    parser.add_argument("--cases", help="comma-separated case ids (default: all)")
    parser.add_argument("--soc", default="Ascend950PR_9579")
    parser.add_argument("--max-rss-mb", type=float, default=6000.0)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per case")
    parser.add_argument("--out", type=Path, help="JSON lines of finished cases; resumes")
    parser.add_argument("--max-elements", type=int, default=0,
                        help="leave out cases whose inputs hold more elements (0: none left "
                             "out); a later run with the same --out does the rest")
    ns = parser.parse_args()

    from ascsim.bench.package import SUBMISSION_PACKAGE, resolve_package
    from ascsim.bench.score import CaseOutcome, summarize
    from ascsim.bench.suite import package_exports, suite_entries

    exports = package_exports(resolve_package(ns.package, SUBMISSION_PACKAGE))
    entries = [e for e in suite_entries(ns.root, ns.soc, exports)
               if e.task is not None and "package" in e.implemented_by
               and e.path.startswith("tasks/")]
    if ns.tasks:
        wanted = set(ns.tasks.split(","))
        entries = [e for e in entries if e.task.name in wanted]
    done = {}
    if ns.out is not None and ns.out.is_file():
        for line in ns.out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                done[(row["task"], row["case"])] = row
    print(f"{'task':22s} {'case':>4s} {'dtype':9s} {'shape':22s} {'status':15s} "
          f"{'sim us':>9s} {'HAP':>6s} {'worker MB':>9s} {'bench MB':>8s} {'wall s':>7s}  why")
    for entry in entries:
        task = entry.task
        source = resolve_package(ns.package, task.name)
        ids = ([int(i) for i in ns.cases.split(",")] if ns.cases
               else [c.case_id for c in task.cases])
        rows = []
        for cid in ids:
            if ns.max_elements and _elements(task.case(cid).input_shapes) > ns.max_elements:
                continue
            row = done.get((task.rel_path, cid))
            over = False
            if row is None:
                row, over = run_case_watched(task, cid, source, ns.soc, ns.max_rss_mb,
                                             ns.timeout)
                if ns.out is not None:
                    with open(ns.out, "a", encoding="utf-8") as fh:
                        fh.write(json.dumps(row) + "\n")
            rows.append(row)
            print(f"{task.name:22s} {cid:4d} {row['dtype']:9s} {row['shape'][:22]:22s} "
                  f"{row['status']:15s} {row['sim_us'] or 0:9.2f} "
                  f"{row['hap'] if row['hap'] is not None else '-':>6} "
                  f"{row['worker_peak_mb']:9d} {row['bench_peak_mb']:8d} {row['wall_s']:7.1f}"
                  f"  {row['why'][:90]}", flush=True)
            if over:
                print(f"the bench process went above {ns.max_rss_mb:.0f} MB: stopping")
                return 1
        if not rows:
            continue
        score = summarize([CaseOutcome(**r["outcome"]) for r in rows])
        passed = sum(r["status"] == "pass" for r in rows)
        haps = [r["hap"] for r in rows if r["status"] == "pass" and r["hap"] is not None]
        print(f"== {task.name}: {passed}/{len(rows)} pass, score {score.score:.2f}, HAP mean "
              f"{sum(haps) / len(haps) if haps else 0:.3f}, worker peak "
              f"{max(r['worker_peak_mb'] for r in rows)} MB", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
