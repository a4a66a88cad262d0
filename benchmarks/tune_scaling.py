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

    .venv/bin/python benchmarks/tune_scaling.py          # 64 trials, pool 1 and 2, Ray
    .venv/bin/python benchmarks/tune_scaling.py --quick  # 8 trials, pool only (smoke test)

On a machine shared with other work the ratio is noisy: run it twice.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ascsim.tune import search
from ascsim.tune.backends import ProcessPoolBackend
from ascsim.tune.target import parse_target

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 trials, no Ray")
    args = parser.parse_args(argv)
    budget = 8 if args.quick else 64
    target = parse_target(TARGET)  # loads the script (PyTorch, ascsim) once, untimed
    # "auto" forks when this process may fork (one thread); the row names what happened.
    runs = [(1, "auto"), (2, "auto")]
    if not args.quick:
        runs += [(1, "spawn"), (2, "spawn"), (2, None)]
    results = {}
    for workers, start in runs:
        wall, start_s, best, n, backend = sweep(target, budget, workers, start)
        name = (f"{backend}, {workers} worker{'s' if workers > 1 else ''}" if start else
                f"ray, local cluster ({workers} CPUs)")
        results[name] = (wall, wall - start_s, best, n, workers, start)
    print(f"{budget} trials of {Path(TARGET.split(':')[0]).name}:tune_entry on {SOC}")
    print(f"{'':38s} {'whole search':>24s}   {'trials only':>24s}")
    base = {}
    for name, (wall, trials, best, n, workers, start) in results.items():
        if workers == 1:
            base[start] = (wall, trials)
        ref_wall, ref_trials = base.get(start, base["auto"])
        print(f"{name:38s} {wall:7.1f} s {wall / ref_wall:5.2f}x of 1 worker   {trials:7.1f} s "
              f"{trials / ref_trials:5.2f}x of 1 worker  ({n} trials, best {best})")
    same = len({str(r[2]) for r in results.values()}) == 1
    for start, label in (("auto", "default start"), ("spawn", "fresh interpreters")):
        two = next((r for r in results.values() if r[4] == 2 and r[5] == start), None)
        if two is not None:
            print(f"2 workers / 1 worker, {label}: {two[0] / base[start][0]:.2f} whole search, "
                  f"{two[1] / base[start][1]:.2f} trials only (target <= {TARGET_RATIO})")
    print(f"same best everywhere: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
