"""Run the 24 cann-bench cases of fused_conv_tanh / fused_conv_sigmoid in every variant.

Prints, per SoC, one row per (case, variant): simulated device time, the kernels' times,
precision verdict (the bench rule of ascsim.bench.precision against the fp64 truth) and the
speedup over the published 950PR baseline, then the mean speedup and score per variant and the
simulator's wall time.

    .venv/bin/python benchmarks/conv_cases.py [--op fused_conv_tanh] [--soc Ascend950PR_9579]
        [--variants semi fused unfused auto] [--cases 1 5 10]
"""

from __future__ import annotations

import argparse
import os
import time

# Before numpy loads: one BLAS thread. The simulator's core threads take turns, and a
# multi-threaded BLAS in each mmad made this 5-25x slower on a 2-core machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ascsim.bench.precision import check_precision  # noqa: E402
from ascsim.bench.references import make_references  # noqa: E402
from ascsim.bench.score import hap, speedup  # noqa: E402
from ascsim.bench.tasks import load_task  # noqa: E402
from ascsim.ops import fused_conv_sigmoid, fused_conv_tanh  # noqa: E402
from ascsim.session import SESSION  # noqa: E402

OPS = {"fused_conv_tanh": fused_conv_tanh, "fused_conv_sigmoid": fused_conv_sigmoid}


def run(op: str, soc: str, variants, cases=None) -> dict:
    task = load_task(op)
    fn = OPS[op]
    rows = []
    wall = dict.fromkeys(variants, 0.0)
    for case in task.cases:
        if cases and case.case_id not in cases:
            continue
        refs = make_references(task, case)
        for v in variants:
            t0 = time.perf_counter()
            out, info = fn(*(t.clone() for t in refs.inputs), **case.kwargs(), variant=v,
                           soc=soc, return_report=True)
            wall[v] += time.perf_counter() - t0
            prec = check_precision(out, refs.golden, case.output_dtype, truth=refs.truth,
                                   reference=refs.same_precision)
            t = info.device_time_us
            rows.append((case.case_id, case.dtype, v, info.variant, t,
                         [r.device_time_us for r in info.reports], prec.passed, prec.mere,
                         prec.mare, case.baseline_us, speedup(case.baseline_us, t),
                         hap(case.baseline_us, t)))
            print(f"{case.case_id:>3} {case.dtype:<8} {v:<8}{'(' + info.variant + ')':<10} "
                  f"{t:8.2f} us  kernels {' + '.join(f'{k:.2f}' for k in rows[-1][5]):<14} "
                  f"{'pass' if prec.passed else 'FAIL'} MERE {prec.mere:.2e} MARE "
                  f"{prec.mare:.2e}  base {case.baseline_us:6.2f}  x{rows[-1][10]:5.2f}",
                  flush=True)
    print(f"\n{op} on {soc}")
    for v in variants:
        mine = [r for r in rows if r[2] == v]
        if not mine:
            continue
        passed = sum(r[6] for r in mine)
        mean_s = sum(r[10] for r in mine) / len(mine)
        score = 20 + 30 * passed / len(mine) + 50 * sum(r[11] for r in mine if r[6]) / len(mine)
        print(f"  {v:<8} pass {passed}/{len(mine)}  mean speedup {mean_s:5.2f}x  "
              f"score {score:6.2f}  total {sum(r[4] for r in mine):8.1f} us  "
              f"wall {wall[v]:6.1f} s")
    return {"rows": rows, "wall": wall}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", nargs="+", default=list(OPS))
    parser.add_argument("--soc", nargs="+", default=["Ascend950PR_9579", "Ascend910B1"])
    parser.add_argument("--variants", nargs="+", default=["semi", "fused", "unfused", "auto"])
    parser.add_argument("--cases", nargs="*", type=int, default=None)
    parser.add_argument("--checks", action="store_true",
                        help="run the dynamic kernel checks (races, uninitialised reads)")
    args = parser.parse_args(argv)
    SESSION.checks = args.checks
    for op in args.op:
        for soc in args.soc:
            run(op, soc, args.variants, args.cases)


if __name__ == "__main__":
    main()
