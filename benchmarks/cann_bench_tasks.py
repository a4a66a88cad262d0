"""Every cann-bench task under ROOT/tasks/level1..4 read by ascsim: its cases' inputs generated
and its golden.py run on the CPU (truth in float64 and the same-precision reference), the way
``ascsim bench`` prepares a case before calling a candidate — and the way cann-bench's own
evaluator does it (its default ``golden_precision`` is ``fp64_cpu``: the inputs moved to
float64 on the CPU; the same-precision reference is a second CPU run on the inputs as drawn).

Prints one row per task: its cases, how many had their references made, the seconds that took
(inputs + both golden runs, summed over the cases), the task's peak resident memory and, for a
task that could not, the first reason. No simulated kernel runs here.

    python benchmarks/cann_bench_tasks.py ROOT [--soc Ascend950PR_9579] [--tasks exp,rms_norm]
        [--max-elements N] [--max-rss-mb 6000] [--task-timeout S] [--out rows.jsonl]
        [--threads 1] [--smallest-first]

Each task runs in a child process of its own, so its memory is returned when it ends, and is
watched: above ``--max-rss-mb`` resident memory (default 6000 MB; the machine is shared) or
past ``--task-timeout`` seconds the child is stopped and the row says so, with the cases done
by then. ``--out`` appends every finished row as one JSON line, and a later run with the same
``--out`` skips the tasks already there (a long table can be made in several sittings).
``--max-elements`` skips cases whose inputs hold more elements than N (0, the default: none
skipped).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

POLL_S = 0.25


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


# --- the child: one task, one JSON line per case on stdout --------------------------------------

def run_task(folder: str, soc: str, max_elements: int, threads: int) -> int:
    import torch

    from ascsim.bench.cann_refs import make_cann_references
    from ascsim.bench.cann_task import load_cann_task

    torch.set_num_threads(threads)
    task = load_cann_task(folder, soc)
    print(json.dumps({"task": task.rel_path, "cases": len(task.cases)}), flush=True)
    for case in task.cases:
        print(json.dumps({"start": case.case_id}), flush=True)
        row = {"case": case.case_id, "elements": _elements(case.input_shapes)}
        if max_elements and row["elements"] > max_elements:
            row["skipped"] = True
        else:
            t0 = time.perf_counter()
            try:
                make_cann_references(task, case)
            except Exception as exc:  # noqa: BLE001 - report and go on with the next case
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            row["seconds"] = time.perf_counter() - t0
        print(json.dumps(row), flush=True)
    return 0


# --- the parent: one child per task, watched ------------------------------------------------------

@dataclass
class TaskRow:
    """One task's line of the table."""

    task: str
    cases: int = 0
    ok: int = 0
    skipped: int = 0
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    reason: str = ""
    case_seconds: dict = field(default_factory=dict)


def rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` in MB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def watch_task(folder: Path, ns: argparse.Namespace) -> TaskRow:
    row = TaskRow(task=f"{folder.parent.name}/{folder.name}")
    cmd = [sys.executable, __file__, ns.root, "--one", str(folder), "--soc", ns.soc,
           "--max-elements", str(ns.max_elements), "--threads", str(ns.threads)]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(child.stdout), daemon=True)
    reader.start()
    t0 = time.perf_counter()
    stopped = ""
    while child.poll() is None:
        rss = rss_mb(child.pid)
        row.peak_rss_mb = max(row.peak_rss_mb, rss)
        if rss > ns.max_rss_mb:
            stopped = f"stopped at {rss:.0f} MB resident (cap {ns.max_rss_mb} MB)"
        elif ns.task_timeout and time.perf_counter() - t0 > ns.task_timeout:
            stopped = f"stopped after {ns.task_timeout:g} s (--task-timeout)"
        if stopped:
            child.kill()   # the child this script started, by its handle
            break
        time.sleep(POLL_S)
    child.wait()
    reader.join(5)
    errors = child.stderr.read()
    done, started = 0, None
    for line in lines:
        item = json.loads(line)
        if "cases" in item:
            row.task, row.cases = item["task"], item["cases"]
            continue
        if "start" in item:
            started = item["start"]
            continue
        done, started = done + 1, None
        if item.get("skipped"):
            row.skipped += 1
            continue
        row.seconds += item["seconds"]
        row.case_seconds[item["case"]] = round(item["seconds"], 2)
        if "error" in item:
            row.reason = row.reason or f"case {item['case']}: {item['error']}"
        else:
            row.ok += 1
    if stopped:
        nxt = f"; case {started} unfinished" if started is not None else ""
        row.reason = f"{stopped} after {done} of {row.cases} cases{nxt}" + (
            f"; {row.reason}" if row.reason else "")
    elif child.returncode:
        tail = errors.strip().splitlines()[-1:] or [f"exit code {child.returncode}"]
        row.reason = row.reason or f"the task's process failed: {tail[0]}"[:300]
    return row


def _done_rows(path: Path | None) -> dict[str, dict]:
    if path is None or not path.is_file():
        return {}
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            rows[item["task"]] = item
    return rows


def _print_row(r: dict) -> None:
    print(f"{r['task']:42s} {r['cases']:5d} {r['ok']:4d} {r['skipped']:4d} "
          f"{r['seconds']:8.1f} {r['peak_rss_mb']:7.0f}  {r['reason']}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="a cann-bench checkout (holding tasks/)")
    parser.add_argument("--soc", default="Ascend950PR_9579")
    parser.add_argument("--tasks", help="comma-separated task folder names (default: all)")
    parser.add_argument("--max-elements", type=int, default=0)
    parser.add_argument("--max-rss-mb", type=float, default=6000.0)
    parser.add_argument("--task-timeout", type=float, default=0.0,
                        help="seconds per task (0: no limit)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads of the golden runs (1: per-task seconds stay "
                             "comparable on a shared machine)")
    parser.add_argument("--out", type=Path, help="JSON lines of finished rows; resumes")
    parser.add_argument("--smallest-first", action="store_true",
                        help="run the tasks in order of their cases' total input elements "
                             "(the most rows in a short sitting)")
    parser.add_argument("--one", help=argparse.SUPPRESS)   # the child: one task folder
    ns = parser.parse_args()
    if ns.one:
        return run_task(ns.one, ns.soc, ns.max_elements, ns.threads)

    from ascsim.bench.cann_task import task_folders

    wanted = set(ns.tasks.split(",")) if ns.tasks else None
    folders = [f for f in task_folders(ns.root, ("tasks",))
               if f.parent.name.startswith("level") and (wanted is None or f.name in wanted)]
    if ns.smallest_first:
        from ascsim.bench.cann_task import load_cann_task

        size = {f: sum(_elements(c.input_shapes) for c in load_cann_task(f, ns.soc).cases)
                for f in folders}
        folders.sort(key=size.get)
    done = _done_rows(ns.out)
    print(f"{'task':42s} {'cases':>5s} {'ok':>4s} {'skip':>4s} {'seconds':>8s} {'peak MB':>7s}"
          "  reason")
    rows = []
    t_all = time.perf_counter()
    for folder in folders:
        key = f"{folder.parent.name}/{folder.name}"
        if key in done:
            rows.append(done[key])
            _print_row(done[key])
            continue
        row = asdict(watch_task(folder, ns))
        rows.append(row)
        _print_row(row)
        if ns.out is not None:
            with open(ns.out, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
    complete = sum(1 for r in rows if r["ok"] == r["cases"])
    print(f"{len(rows)} tasks ({complete} with every case's references), "
          f"{sum(r['cases'] for r in rows)} cases, {sum(r['ok'] for r in rows)} with "
          f"references, {sum(r['seconds'] for r in rows):.0f} s of golden work "
          f"({time.perf_counter() - t_all:.0f} s this run)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    raise SystemExit(main())
