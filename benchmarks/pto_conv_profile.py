"""Where the time of a cann-bench conv package goes, per case and kernel, on the simulated SoC,
next to the seed article's published Ascend 950 time (for the six cases it lists).

For each kernel the package launches it prints the simulated device time split into the fixed
launch overhead, the scalar start-up of the busiest core and the span the cores run, the
busiest core's busy time per pipe (pipes overlap: they do not add up to the span) and the GM
bytes moved. The kernels run timing-only (no values), so this is quick.

    .venv/bin/python benchmarks/pto_conv_profile.py [--package examples/cann_bench_pto]
        [--op fused_conv_tanh] [--soc Ascend950PR_9579] [--cases 5 22 1 7 14 18]
        [--design semi|fused]

``--design`` sets ``CANN_BENCH_CONV_DESIGN`` for the package (examples/cann_bench_pto reads it).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ascsim.bench.package import import_operator, resolve_package  # noqa: E402
from ascsim.bench.references import make_inputs  # noqa: E402
from ascsim.bench.tasks import load_task  # noqa: E402
from ascsim.runner import install_frontends  # noqa: E402
from ascsim.session import SESSION  # noqa: E402

#: case id -> the seed article's published device time on Ascend 950 (µs), fused_conv_tanh.
SEED_US = {5: 3.4, 22: 5.3, 1: 3.8, 7: 6.1, 14: 20.9, 18: 29.8}
PIPES = ("S", "MTE2", "M", "MTE1", "FIX", "V", "MTE3")


def profile_case(fn, op: str, case_id: int):
    """(total µs, [(kernel, device, launch, start-up, span, {pipe: busy}, GM bytes)])."""
    task = load_task(op)
    case = task.case(case_id)
    inputs = make_inputs(task, case)
    with SESSION.values(False), SESSION.collect() as run:
        fn(*inputs, **case.kwargs())
    kernels = []
    for r in run.reports:
        prof = r.profile
        busy = {p.pipe: p.max_us for p in prof.pipes}
        gm = sum(v for k, v in prof.bytes_by_path.items() if "GM" in k.split("->"))
        kernels.append((r.kernel, r.device_time_us, prof.launch_overhead_us, prof.startup_us,
                        prof.span_us, busy, gm))
    return sum(k[1] for k in kernels), kernels


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="examples/cann_bench_pto")
    parser.add_argument("--op", default="fused_conv_tanh")
    parser.add_argument("--soc", default="Ascend950PR_9579")
    parser.add_argument("--cases", nargs="*", type=int, default=list(SEED_US))
    parser.add_argument("--design", choices=("semi", "fused"), default=None)
    ns = parser.parse_args(argv)
    if ns.design:
        os.environ["CANN_BENCH_CONV_DESIGN"] = ns.design
    install_frontends()
    SESSION.request_soc(ns.soc)
    fn = import_operator(resolve_package(ns.package, ns.op), ns.op)
    head = " ".join(f"{p:>6}" for p in PIPES)
    print(f"{ns.op} from {ns.package} on {ns.soc}; times in µs "
          f"(pipes: busiest core's busy time)")
    print(f"{'case':>4} {'kernel':<22} {'device':>7} {'launch':>6} {'start':>6} {'span':>6} "
          f"{head}  {'GM MiB':>7}")
    ratios = []
    for cid in ns.cases:
        total, kernels = profile_case(fn, ns.op, cid)
        for name, dev, launch, start, span, busy, gm in kernels:
            pipes = " ".join(f"{busy.get(p, 0.0):6.2f}" for p in PIPES)
            print(f"{cid:>4} {name[:22]:<22} {dev:7.2f} {launch:6.2f} {start:6.2f} {span:6.2f} "
                  f"{pipes}  {gm / 2**20:7.2f}")
        seed = SEED_US.get(cid)
        if seed is None:
            print(f"{cid:>4} {'total':<22} {total:7.2f}")
        else:
            ratios.append(total / seed)
            print(f"{cid:>4} {'total':<22} {total:7.2f}   seed {seed:5.1f}   "
                  f"ours/seed {total / seed:5.2f}x  {'<= seed' if total <= seed else '> seed'}")
    if ratios:
        print(f"at or below the seed's time on {sum(r <= 1.0 for r in ratios)} of "
              f"{len(ratios)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
