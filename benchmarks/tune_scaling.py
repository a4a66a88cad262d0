"""How does a tuning sweep scale with workers? 64 trials of the matmul_leakyrelu example's
tiling space (examples/matmul_leakyrelu_space.yaml: base_m x base_n x cores, the 64-point
grid, on Ascend910B1) on the process pool with 1 and with 2 workers, and on a local Ray
cluster of 2 CPUs, all in one run. Two wall times per run: the whole search, and its trials
alone (after the workers started: new interpreters importing ascsim, or a Ray cluster
starting). The target: 2 workers take at most 0.6x the time of 1. Every run must find the
same best configuration (the search does not depend on where trials run).

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
from ascsim.tune.target import parse_target

ROOT = Path(__file__).resolve().parent.parent
TARGET = f"{ROOT / 'examples' / 'matmul_leakyrelu.py'}:tune_entry"
SPACE = ROOT / "examples" / "matmul_leakyrelu_space.yaml"
SOC = "Ascend910B1"
TARGET_RATIO = 0.6  # 2 workers / 1 worker


def sweep(budget: int, **backend) -> tuple[float, float, dict, int]:
    """(wall seconds, of which trials, best configuration, trials evaluated) of one search."""
    start = time.perf_counter()
    result = search(parse_target(TARGET), SPACE, budget=budget, soc=SOC, seed=0, **backend)
    wall = time.perf_counter() - start
    return wall, wall - result.start_s, result.config, len(result.evaluated())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 trials, no Ray")
    args = parser.parse_args(argv)
    budget = 8 if args.quick else 64
    runs = {"pool, 1 worker": {"workers": 1}, "pool, 2 workers": {"workers": 2}}
    if not args.quick:
        runs["ray, local cluster (2 CPUs)"] = {"backend": "ray", "workers": 2}
    results = {name: sweep(budget, **options) for name, options in runs.items()}
    base, base_trials = results["pool, 1 worker"][:2]
    print(f"{budget} trials of {Path(TARGET.split(':')[0]).name}:tune_entry on {SOC}")
    print(f"{'':30s} {'whole search':>24s}   {'trials only':>24s}")
    for name, (wall, trials, best, n) in results.items():
        print(f"{name:30s} {wall:7.1f} s {wall / base:5.2f}x of 1 worker   {trials:7.1f} s "
              f"{trials / base_trials:5.2f}x of 1 worker  ({n} trials, best {best})")
    two = results["pool, 2 workers"]
    same = len({str(r[2]) for r in results.values()}) == 1
    print(f"2 workers / 1 worker: {two[0] / base:.2f} whole search, "
          f"{two[1] / base_trials:.2f} trials only (target <= {TARGET_RATIO}); same best "
          f"everywhere: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
