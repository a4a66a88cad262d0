"""Wall time of the whole cann-bench run per variant (issue target: all variants of one conv op
within 2 minutes on a 2-core machine).

For each conv operator this runs every case of the task (24 by default) in every variant the
way ``ascsim bench --variant all`` does — inputs and torch golden once per case, then each
variant's simulated operator call and its precision check — and prints the wall time of each
variant's operator calls, the shared golden/precision time, and the total for the operator as
a ratio to the 120 s target.

The package path (``ascsim bench <op> --package examples/cann_bench_asc``) is timed too: the
example package launches the same semi-fusion kernels as the ``semi`` variant, so its wall
time over the ``semi`` variant's (with its golden), measured in the same run, is what the
package path adds (a worker process, a second call per case on fresh inputs and its golden,
the rule watch).

    python benchmarks/bench_wall.py [--soc Ascend950PR_9579] [--quick]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ascsim.bench.cli import load_operator
from ascsim.bench.isolate import PackageRunner
from ascsim.bench.package import resolve_package
from ascsim.bench.runner import PACKAGE_VARIANT, run_bench
from ascsim.bench.tasks import load_task

OPS = ("fused_conv_tanh", "fused_conv_sigmoid")
# Operators the example package (examples/cann_bench_asc) provides.
PACKAGE_DIR = Path(__file__).resolve().parents[1] / "examples" / "cann_bench_asc"
PACKAGE_OPS = ("fused_conv_tanh", "fused_conv_sigmoid")
VARIANTS = ("semi", "fused", "unfused")
TARGET_S = 120.0


def measure(op_name: str, variants, soc: str, quick: bool):
    """Run the task once with ``variants`` as ``ascsim bench --variant all`` does (inputs and
    the golden reference are computed once per case and shared by the variants).

    Returns (total wall s, {variant: (wall s of its operator calls, cases, passing)}).
    """
    task = load_task(op_name).select(None, quick=quick)
    op = load_operator(task.name)
    start = time.perf_counter()
    result = run_bench(task, op, list(variants), soc, progress=False)
    total = time.perf_counter() - start
    per_variant = {}
    for s in result.summaries:
        runs = [r for r in result.runs if r.variant == s.variant]
        per_variant[s.variant] = (s.wall_s, len(runs), sum(r.status == "pass" for r in runs))
    return total, per_variant


def measure_package(op_name: str, soc: str, quick: bool):
    """The example package on the task: (total wall s, cases, passing)."""
    task = load_task(op_name).select(None, quick=quick)
    source = resolve_package(str(PACKAGE_DIR), task.name)
    start = time.perf_counter()
    with PackageRunner(task, source, soc) as runner:
        result = run_bench(task, None, (PACKAGE_VARIANT,), soc, progress=False,
                           package_call=runner.call_case)
    total = time.perf_counter() - start
    return total, len(result.runs), sum(r.status == "pass" for r in result.runs)


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
        total, per_variant = measure(op_name, variants, ns.soc, ns.quick)
        for variant, (wall, cases, passed) in per_variant.items():
            print(f"{op_name:22} {variant:8} {cases:5d} {passed:5d} {wall:8.1f}")
        shared = total - sum(w for w, _, _ in per_variant.values())
        print(f"{op_name:22} {'golden':8} {'':5} {'':5} {shared:8.1f}  (inputs, torch golden "
              "and precision rule, shared by the variants)")
        print(f"{op_name:22} {'all':8} {'':5} {'':5} {total:8.1f}  "
              f"({total / TARGET_S:.2f} of the {TARGET_S:.0f} s target)")
        if op_name in PACKAGE_OPS:
            wall, cases, passed = measure_package(op_name, ns.soc, ns.quick)
            semi = per_variant["semi"][0] + shared
            print(f"{op_name:22} {'package':8} {cases:5d} {passed:5d} {wall:8.1f}  "
                  f"({wall / semi:.2f}x semi with its golden in this run; "
                  f"{wall / TARGET_S:.2f} of the {TARGET_S:.0f} s target)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
