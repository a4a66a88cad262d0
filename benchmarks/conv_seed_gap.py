"""Where the time of a fused conv variant goes, per case, next to the seed article's published
device time on Ascend 950 (the six cases the article lists).

For each case and kernel of the variant it prints the kernel's simulated device time split into
the fixed launch overhead, the scalar start-up of the busiest core and the span the cores run,
and the busiest core's busy time per pipe (Scalar, MTE2, Cube, MTE1, FixPipe, Vector, MTE3),
plus the fp32 workspace round trip (bytes written by K1 and read back by K2). Pipe times
overlap, so they do not add up to the span. The last columns give our total against the seed's
time as a ratio (below 1: we are faster), and the model's floor for any implementation with
the variant's number of kernels: each kernel's fixed cost (launch overhead + the cores'
start-up scalar work) plus the convolution's MACs at the chip's cube peak for the case's dtype.
A seed time below that floor is one the timing model cannot reproduce, whatever the kernels do.

``seed design floor`` (semi, two kernels) tightens it for the seed's own K1/K2 design: K1 pays
its fixed cost, the HBM read latency of its first operands, the convolution at the cube peak and
the GM write latency of its last result; K2 its fixed cost, the L2 hit latency of the workspace,
the seed's published tanh chain in fp32 (e^z, -z, e^-z, difference, sum, quotient, one cast for
16-bit outputs) on the busiest AIV's share, priced step by step by the SoC's vector table with
the barrier bubble between dependent steps, and the GM write latency. Everything else (operand
traffic, FixPipe, MTE3, the layout change) is taken as free, so a seed time below it means the
model prices the seed's design above what the article measured.

``2-kernel floor`` bounds every two-kernel design (K1 the convolution writing a workspace, K2 the
activation reading it), whatever its tiling or activation chain: K1 pays its fixed cost, the
HBM read and GM write latencies, and the longer of the convolution at the cube peak and the
reading of x and the filter from HBM (cold: cann-bench flushes L2 before each step) at the chip's
GM bandwidth; K2 its fixed cost, the L2 hit and GM write latencies, and the longest of one
``exp`` per element on the busiest AIV's share at the vector-function issue width, its share
of the fp32 workspace read at the AIV's L2 read rate, and its share of y written at the AIV's
UB->GM rate. A seed time below it cannot be reached by any semi-fusion in this model.

    .venv/bin/python benchmarks/conv_seed_gap.py [--op fused_conv_tanh] [--variant semi]
        [--soc Ascend950PR_9579] [--cases 5 22 1 7 14 18]
"""

from __future__ import annotations

import argparse
import math
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ascsim.bench.references import make_inputs  # noqa: E402
from ascsim.bench.tasks import load_task  # noqa: E402
from ascsim.hw import get_soc  # noqa: E402
from ascsim.ops import fused_conv_sigmoid, fused_conv_tanh  # noqa: E402
from ascsim.ops.conv_plan import ITEMSIZE  # noqa: E402
from ascsim.sim.cost import cost_table  # noqa: E402
from ascsim.sim.profile import cube_peak_flops_per_s  # noqa: E402

OPS = {"fused_conv_tanh": fused_conv_tanh, "fused_conv_sigmoid": fused_conv_sigmoid}
#: case id -> the seed article's published device time on Ascend 950 (µs), fused_conv_tanh.
SEED_US = {5: 3.4, 22: 5.3, 1: 3.8, 7: 6.1, 14: 20.9, 18: 29.8}
PIPES = ("S", "MTE2", "M", "MTE1", "FIX", "V", "MTE3")
#: The seed's K2 chain per element (article: e^z, -z, e^-z, difference, sum, quotient; then one
#: cast for 16-bit outputs), as vector cost classes.
SEED_CHAIN = ("exp", "muls", "exp", "sub", "add", "div")


def profile_case(op: str, variant: str, soc: str, case_id: int, tuned: bool):
    """(total µs, [(kernel, device µs, launch µs, start-up µs, span µs, {pipe: busy µs},
    GM bytes by path)]) of one case."""
    task = load_task(op)
    case = task.case(case_id)
    inputs = make_inputs(task, case)
    kwargs = {} if tuned else {"tiling": {}}
    _, info = OPS[op](*inputs, **case.kwargs(), variant=variant, soc=soc, return_report=True,
                      timing_only=True, **kwargs)
    kernels = []
    for r in info.reports:
        prof = r.profile
        busy = {p.pipe: p.max_us for p in prof.pipes}
        gm = {k: v for k, v in prof.bytes_by_path.items() if "GM" in k.split("->")}
        kernels.append((r.kernel, r.device_time_us, prof.launch_overhead_us, prof.startup_us,
                        prof.span_us, busy, gm))
    return info.device_time_us, kernels


def fixed_us(soc) -> float:
    """One kernel's fixed cost in the model: the launch overhead and the cores' start-up."""
    return soc.timing.launch_overhead_us + soc.cycles_to_us(soc.timing.kernel_start_cycles)


def model_floor_us(op: str, soc_name: str, case_id: int, kernels: int) -> float:
    """The model's least device time of ``kernels`` kernels computing the case: their fixed
    costs plus the convolution at the chip's cube peak."""
    soc = get_soc(soc_name)
    case = load_task(op).case(case_id)
    (n, _, _, _), (cout, cin, kh, kw), _ = case.input_shapes
    _, _, ho, wo = case.output_shape
    flops = 2.0 * n * ho * wo * cout * cin * kh * kw
    fixed = fixed_us(soc)
    return kernels * fixed + flops / cube_peak_flops_per_s(soc, case.dtypes[0]) * 1e6


def seed_design_floor_us(op: str, soc_name: str, case_id: int) -> float:
    """The model's least device time of the seed's two-kernel design for the case (see the
    module docstring)."""
    soc = get_soc(soc_name)
    timing = soc.timing
    case = load_task(op).case(case_id)
    n, cout, ho, wo = case.output_shape
    fixed = fixed_us(soc)
    k1 = fixed + soc.cycles_to_us(timing.gm_read_latency_cycles
                                  + timing.gm_write_latency_cycles)
    k1 += model_floor_us(op, soc_name, case_id, 0)
    share = -(-n * cout * ho * wo // soc.aiv_count)  # fp32 elements of the busiest AIV
    repeats = -(-share * 4 // 256)
    steps = SEED_CHAIN + (("cast",) if case.dtypes[0] != "float32" else ())
    busy, latency = cost_table(soc).sequence(steps, "float32", repeats)
    k2 = fixed + soc.cycles_to_us(timing.l2_hit_latency_cycles + busy + latency
                                  + timing.gm_write_latency_cycles)
    return k1 + k2


def two_kernel_floor_us(op: str, soc_name: str, case_id: int) -> float:
    """The model's least device time of any two-kernel design for the case (see the module
    docstring)."""
    soc = get_soc(soc_name)
    timing = soc.timing
    case = load_task(op).case(case_id)
    x_shape, w_shape, _ = case.input_shapes
    n, cout, ho, wo = case.output_shape
    size = ITEMSIZE[case.dtypes[0]]
    fixed = fixed_us(soc)
    read_us = (math.prod(x_shape) + math.prod(w_shape)) * size / soc.gm_bandwidth_bytes_per_s
    k1 = (fixed + soc.cycles_to_us(timing.gm_read_latency_cycles
                                   + timing.gm_write_latency_cycles)
          + max(model_floor_us(op, soc_name, case_id, 0), read_us * 1e6))
    share = -(-n * cout * ho * wo // soc.aiv_count)  # elements of the busiest AIV
    exp_busy, _ = cost_table(soc).vector("exp", "float32", -(-share * 4 // 256))
    rates = soc.core_bw("aiv")
    k2_cycles = max(exp_busy / max(1, timing.vector_function_issue_width),
                    share * 4 / rates.l2_read, share * size / rates.ub_to_gm)
    k2 = fixed + soc.cycles_to_us(timing.l2_hit_latency_cycles + k2_cycles
                                  + timing.gm_write_latency_cycles)
    return k1 + k2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", default="fused_conv_tanh", choices=sorted(OPS))
    parser.add_argument("--variant", default="semi")
    parser.add_argument("--soc", default="Ascend950PR_9579")
    parser.add_argument("--cases", nargs="*", type=int, default=list(SEED_US))
    parser.add_argument("--no-tuned", action="store_true",
                        help="the operator's default tiling, not stored tuned settings")
    ns = parser.parse_args(argv)
    head = " ".join(f"{p:>6}" for p in PIPES)
    print(f"{ns.op} {ns.variant} on {ns.soc}; times in µs (pipes: busiest core's busy time)")
    print(f"{'case':>4} {'kernel':<22} {'device':>7} {'launch':>6} {'start':>6} {'span':>6} "
          f"{head}  {'GM MiB':>7}")
    ratios = []
    below_floor = 0
    below_design = 0
    below_any = 0
    for cid in ns.cases:
        total, kernels = profile_case(ns.op, ns.variant, ns.soc, cid, not ns.no_tuned)
        for name, dev, launch, start, span, busy, gm in kernels:
            pipes = " ".join(f"{busy.get(p, 0.0):6.2f}" for p in PIPES)
            print(f"{cid:>4} {name[:22]:<22} {dev:7.2f} {launch:6.2f} {start:6.2f} {span:6.2f} "
                  f"{pipes}  {sum(gm.values()) / 2**20:7.2f}")
        seed = SEED_US.get(cid)
        floor = model_floor_us(ns.op, ns.soc, cid, len(kernels))
        if seed is None:
            print(f"{cid:>4} {'total':<22} {total:7.2f}   model floor {floor:5.2f}")
        else:
            ratios.append(total / seed)
            below_floor += seed < floor
            design = seed_design_floor_us(ns.op, ns.soc, cid)
            below_design += seed < design
            any_design = two_kernel_floor_us(ns.op, ns.soc, cid)
            below_any += seed < any_design
            print(f"{cid:>4} {'total':<22} {total:7.2f}   seed {seed:5.1f}   "
                  f"ours/seed {total / seed:5.2f}x  {'<= seed' if total <= seed else '> seed'}"
                  f"   model floor {floor:5.2f}{' > seed' if seed < floor else ''}"
                  f"   2-kernel floor {any_design:5.2f}{' > seed' if seed < any_design else ''}"
                  f"   seed design floor {design:5.2f}{' > seed' if seed < design else ''}")
    if ratios:
        at_or_below = sum(r <= 1.0 for r in ratios)
        print(f"at or below the seed's time on {at_or_below} of {len(ratios)} cases; the "
              f"seed's time is below the model's floor on {below_floor}, below the 2-kernel "
              f"floor on {below_any}, below the seed design's floor on {below_design}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
