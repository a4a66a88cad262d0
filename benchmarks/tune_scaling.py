"""How does a tuning sweep scale with workers? 64 trials of the matmul_leakyrelu example's
tiling space (examples/matmul_leakyrelu_space.yaml: base_m x base_n x cores, the 64-point
grid, on Ascend910B1) on the process pool with 1 and with 2 workers, each with forked workers
(the default here: this process runs one thread) and with fresh interpreters, and on a local
Ray cluster of 2 CPUs, all in one run. The target script is loaded once before any run is
timed, as `ascsim tune` loads it before it starts workers. Two wall times per run: the whole
search, and its trials alone (after the workers started: forks, new interpreters importing
ascsim, or a Ray cluster starting). The target: 2 workers take at most 0.6x the time of 1.
Every run must find the same best configuration (the search does not depend on where trials
run).

    .venv/bin/python benchmarks/tune_scaling.py              # 64 trials, pool 1 and 2, Ray
    .venv/bin/python benchmarks/tune_scaling.py --rounds 5   # five interleaved rounds
    .venv/bin/python benchmarks/tune_scaling.py --quick      # 8 trials, one round, no Ray

The whole sweep is about a second of simulation, and on a virtual machine the same search
varies by a quarter from one run to the next. So the pool runs are repeated in ``--rounds``
rounds (default 3), each round running every configuration once in turn (1 worker, 2
workers, ...), so that a slow spell of the host falls on all of them alike. Each row gives
the median over the rounds, the ratios are those of the medians, and the per-round ratios
are printed too. Ray runs once (its cluster start dominates it).

Each round also runs the same trials with no tuner at all, as the machine's own reference:
forks of this process, each taking every n-th configuration of the grid (in a seeded
shuffled order) and calling the run function on them back to back, released together and
timed until the last one ends. The pool's forked workers start in the same state, so what the
pool's 2-worker ratio has beyond this one is the tuner's own cost (the sampler, dispatch,
results); what this one has beyond 0.5 is the host's (two busy cores that are slower than one,
each process's first trial, a split that does not come out even).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

from ascsim.tune import search
from ascsim.tune.backends import ProcessPoolBackend
from ascsim.tune.backends.processes import fork_unsafe_reason
from ascsim.tune.measure import INFEASIBLE_FINDINGS
from ascsim.tune.space import as_space
from ascsim.tune.target import parse_target
from ascsim.tune.trial import TrialSpec

ROOT = Path(__file__).resolve().parent.parent
TARGET = f"{ROOT / 'examples' / 'matmul_leakyrelu.py'}:tune_entry"
SPACE = ROOT / "examples" / "matmul_leakyrelu_space.yaml"
SOC = "Ascend910B1"
TARGET_RATIO = 0.6  # 2 workers / 1 worker


def sweep(target, budget: int, workers: int, start: str | None) -> tuple[float, float, dict, int,
                                                                       str]:
    """(wall seconds, of which starting, best configuration, trials evaluated, backend) of one
    search on the process pool (``start``: how its workers start) or, for ``start=None``, on
    Ray."""
    begin = time.perf_counter()
    if start is None:
        result = search(target, SPACE, budget=budget, soc=SOC, seed=0, backend="ray",
                        workers=workers)
    else:
        pool = ProcessPoolBackend(workers, start=start)
        try:
            result = search(target, SPACE, budget=budget, soc=SOC, seed=0, backend=pool)
        finally:
            pool.close()
    wall = time.perf_counter() - begin
    return wall, result.start_s, result.config, len(result.evaluated()), result.backend


def no_tuner(target, budget: int, processes: int) -> float | None:
    """Wall seconds of ``budget`` grid configurations run by ``processes`` forks of this
    process (every n-th configuration each), released together; None if this process may not
    fork now."""
    if fork_unsafe_reason() is not None:
        return None
    configs = list(as_space(SPACE).grid())
    random.Random(0).shuffle(configs)
    configs = configs[:budget]
    spec = TrialSpec(target, "device_time_us", INFEASIBLE_FINDINGS, SOC)
    go_read, go_write = os.pipe()
    children = []
    for part in range(processes):
        pid = os.fork()
        if pid == 0:  # the child: wait for the start, run its share, leave without cleanup
            code = 0
            try:
                os.close(go_write)
                import torch

                torch.set_num_threads(1)  # as a forked pool worker does
                os.read(go_read, 1)
                for config in configs[part::processes]:
                    spec.run(config)
            except BaseException:  # noqa: BLE001 - the parent sees the exit code
                code = 1
            os._exit(code)
        children.append(pid)
    os.close(go_read)
    begin = time.perf_counter()
    os.write(go_write, b"x" * processes)
    failed = [pid for pid in children if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])]
    wall = time.perf_counter() - begin
    os.close(go_write)
    if failed:
        raise RuntimeError(f"{len(failed)} of the no-tuner processes failed")
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 trials, one round, no Ray")
    parser.add_argument("--rounds", type=int, default=None,
                        help="interleaved rounds of the pool runs (default 3; 1 with --quick)")
    args = parser.parse_args(argv)
    budget = 8 if args.quick else 64
    rounds = args.rounds or (1 if args.quick else 3)
    if rounds < 1:
        parser.error("--rounds must be at least 1")
    target = parse_target(TARGET)  # loads the script (PyTorch, ascsim) once, untimed
    # "auto" forks when this process may fork (one thread); the row names what happened.
    pool_runs = [(1, "auto"), (2, "auto")]
    if not args.quick:
        pool_runs += [(1, "spawn"), (2, "spawn")]
    timed: dict[tuple[int, str | None], list[tuple[float, float, dict, int, str]]] = {}
    bare: dict[int, list[float]] = {}
    for _ in range(rounds):
        for workers, start in pool_runs:
            timed.setdefault((workers, start), []).append(sweep(target, budget, workers, start))
        for processes in (1, 2):
            wall = no_tuner(target, budget, processes)
            if wall is not None:
                bare.setdefault(processes, []).append(wall)
    if not args.quick:
        timed[(2, None)] = [sweep(target, budget, 2, None)]
    print(f"{budget} trials of {Path(TARGET.split(':')[0]).name}:tune_entry on {SOC}, "
          f"median of {rounds} interleaved round{'s' if rounds > 1 else ''} (Ray: one run)")
    print(f"{'':38s} {'whole search':>24s}   {'trials only':>24s}")
    medians = {key: (statistics.median(r[0] for r in runs),
                     statistics.median(r[0] - r[1] for r in runs)) for key, runs in timed.items()}
    for (workers, start), runs in timed.items():
        wall, trials = medians[(workers, start)]
        _, _, best, n, backend = runs[-1]
        name = (f"{backend}, {workers} worker{'s' if workers > 1 else ''}" if start else
                f"ray, local cluster ({workers} CPUs)")
        ref_wall, ref_trials = medians[(1, start or "auto")]
        print(f"{name:38s} {wall:7.1f} s {wall / ref_wall:5.2f}x of 1 worker   {trials:7.1f} s "
              f"{trials / ref_trials:5.2f}x of 1 worker  ({n} trials, best {best})")
    same = len({str(r[2]) for runs in timed.values() for r in runs}) == 1
    for start, label in (("auto", "default start"), ("spawn", "fresh interpreters")):
        if (2, start) not in timed:
            continue
        one, two = timed[(1, start)], timed[(2, start)]
        per_round = ", ".join(f"{b[0] / a[0]:.2f}" for a, b in zip(one, two))
        wall = medians[(2, start)][0] / medians[(1, start)][0]
        trials = medians[(2, start)][1] / medians[(1, start)][1]
        print(f"2 workers / 1 worker, {label}: {wall:.2f} whole search, {trials:.2f} trials "
              f"only (target <= {TARGET_RATIO}); whole search per round: {per_round}")
    if len(bare.get(2, ())) == rounds and len(bare.get(1, ())) == rounds:
        one, two = statistics.median(bare[1]), statistics.median(bare[2])
        per_round = ", ".join(f"{b / a:.2f}" for a, b in zip(bare[1], bare[2]))
        print(f"no tuner (forked processes, every n-th configuration): 1 process {one:.1f} s, "
              f"2 processes {two:.1f} s, {two / one:.2f} (the host's own 2-core ratio); per "
              f"round: {per_round}")
    else:
        print("no tuner: not run (this process could not fork safely)")
    print(f"same best everywhere: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
