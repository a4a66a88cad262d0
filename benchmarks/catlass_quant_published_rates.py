"""What the CATLASS int8 quant matmul points read with CATLASS's own published A2 costs.

CATLASS publishes three figures for the Atlas A2 (hicann/catlass @ 0dfcf9df):

* ``examples/102_dynamic_optimized_matmul/include/select_kernel_b16.h`` (the padding model of
  ``docs/en/CommonMatmul_en.md`` section 2.3.3): the single-core GM -> L1 ND2NZ read bandwidth
  of an AIC, a fit of the row length, at most 80 GB/s (rows of 512 B or more from a 512 B
  aligned stride) and 60.5 GB/s for 256 B rows (the fit at 128 fp16 elements, stride a multiple
  of 256 elements); the model moves these rows at its L2 port rate (110 B/cycle, ~200 GB/s)
  with a 4-cycle row floor;
* the same file's ``headCost``, the extra start-up of a launch: ``1 + 7 x (AICs used) / (AIC
  count)`` µs, 8 µs when every AIC runs;
* ``docs/zh/1_Practice/evaluation/bottleneck_analysis_and_optimization.md``: the head of a
  full-core launch on Atlas A2 is about 20-21 µs (read from an empty kernel's Task Duration),
  which the model now charges MIX launches (``mix_launch_head_us``, ascsim/hw/socs.py).

This script runs every ``catlass-qmm-b1-*`` point of ``ascsim/calib/points.yaml`` (timing-only)
on the model without its MIX head (``no head``), on the model as it is (``model``: the MIX head
raises an empty full-core MIX launch to 20.5 µs), and without the MIX head on a copy of the SoC
whose GM -> L1 rate is capped at 80 GB/s (``cap``) and with in addition a row floor that makes
256 B rows 60.5 GB/s (``rates``); ``+mix`` adds ``headCost`` to ``no head``. It prints each
against the published time, the per-block pipe times of the median AIC under ``no head`` and
``rates``, and the median ratio of each column: which published figure explains the points.

    .venv/bin/python benchmarks/catlass_quant_published_rates.py
    .venv/bin/python benchmarks/catlass_quant_published_rates.py --match 512x4096x1024   # some
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass, replace

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.calib import catlass_quant_matmul as qmm
from ascsim.calib.kernels import KERNELS
from ascsim.hw import get_soc
from ascsim.session import SESSION

PIPES = ("M", "MTE1", "MTE2", "FIX")
COLUMNS = ("no head", "+mix", "model", "cap", "rates")


@dataclass(frozen=True)
class PublishedA2Costs:
    """CATLASS's A2 figures: ``nd2nz_peak_gbs`` the per-AIC ND2NZ bandwidth cap,
    ``nd2nz_256b_gbs`` its fit for 256 B rows (128 fp16 elements from a 512 B aligned stride),
    ``mix_head_base_us`` + ``mix_head_full_us`` x (AICs used / AIC count) a launch's extra
    head (select_kernel_b16.h)."""

    nd2nz_peak_gbs: float = 80.0
    nd2nz_256b_gbs: float = 60.47
    mix_head_base_us: float = 1.0
    mix_head_full_us: float = 7.0

    def with_cap(self, soc):
        """``soc`` with its GM -> L1 rate at the cap (bytes per cycle at its clock)."""
        return replace(soc, bw=replace(soc.bw, gm_to_l1=self.nd2nz_peak_gbs * 1000.0
                                       / soc.clock_mhz))

    def with_rates(self, soc):
        """``soc`` with the cap and a GM -> L1 row floor that moves 256 B rows at their rate
        (never below the SoC's own floor)."""
        row_cycles = 256 / (self.nd2nz_256b_gbs * 1000.0 / soc.clock_mhz)
        capped = self.with_cap(soc)
        return replace(capped, timing=replace(
            capped.timing, gm_to_l1_row_cycles=max(row_cycles, soc.timing.gm_to_l1_row_cycles)))

    def mix_head_us(self, soc, cores: int) -> float:
        """The MIX kernel's extra head for a launch on ``cores`` AICs."""
        return self.mix_head_base_us + self.mix_head_full_us * cores / soc.aic_count


def without_mix_head(soc):
    """``soc`` without the model's MIX launch head (``TimingParams.mix_launch_head_us``)."""
    return replace(soc, timing=replace(soc.timing, mix_launch_head_us=0.0))


@asc.jit
def empty_mix():
    """A MIX kernel that does nothing: its simulated time is the model's own head."""
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def empty_mix_us(soc) -> float:
    """The model's time for an empty MIX launch on every AIC of ``soc``."""
    with SESSION.using_soc(soc), SESSION.values(False):
        report = empty_mix[soc.aic_count](kernel_type=KernelType.MIX_AIC_1_2)
    return report.device_time_us


def per_block(report, point) -> dict:
    """Busy µs per block of each cube-side pipe on the median-ending AIC among the busiest."""
    knobs = point.knobs
    p = qmm.plan(str(knobs["variant"]), knobs["mnk"])
    counts = [len(blocks) for blocks in qmm.schedule(p)]
    most = max(counts)
    aics = sorted((c for c in report.cores if c.kind == "AIC" and counts[c.block_idx] == most),
                  key=lambda c: c.end_us)
    core = aics[len(aics) // 2]
    return {pipe: core.pipe_busy_us.get(pipe, 0.0) / most for pipe in PIPES}


def run(point, soc):
    with SESSION.using_soc(soc), SESSION.values(False):
        (report,) = KERNELS[point.kernel].run(**point.knobs)
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--match", default="", help="only the points whose id contains this")
    args = parser.parse_args(argv)
    points = qmm.published_points(args.match)
    if not points:
        parser.error(f"no catlass-qmm-b1 point matches {args.match!r}")
    costs = PublishedA2Costs()
    heads = {}
    print(f"{'point':32} {'pub':>6} | " + " | ".join(f"{n:>7} {'/pub':>5}" for n in COLUMNS)
          + " | per block M/MTE1/MTE2/FIX µs: no head -> rates")
    ratios = {name: [] for name in COLUMNS}
    for point in points:
        model = get_soc(point.soc)
        base = without_mix_head(model)
        if point.soc not in heads:
            heads[point.soc] = empty_mix_us(model)
        cores = qmm.plan(str(point.knobs["variant"]), point.knobs["mnk"], soc=base).cores
        reports = {"no head": run(point, base), "model": run(point, model),
                   "cap": run(point, costs.with_cap(base)),
                   "rates": run(point, costs.with_rates(base))}
        times = {name: r.device_time_us for name, r in reports.items()}
        times["+mix"] = times["no head"] + costs.mix_head_us(base, cores)
        for name in COLUMNS:
            ratios[name].append(times[name] / point.published_us)
        before = per_block(reports["no head"], point)
        after = per_block(reports["rates"], point)
        blocks = "/".join(f"{before[p]:.1f}" for p in PIPES) + " -> " + \
            "/".join(f"{after[p]:.1f}" for p in PIPES)
        print(f"{point.id.removeprefix('catlass-qmm-b1-'):32} {point.published_us:6.2f} | "
              + " | ".join(f"{times[n]:7.2f} {times[n] / point.published_us:5.2f}"
                           for n in COLUMNS) + f" | {blocks}")
    print("the model's empty full-core MIX launch: "
          + ", ".join(f"{soc} {us:.2f} µs" for soc, us in heads.items()))
    print("median sim/pub: " + ", ".join(f"{name} {statistics.median(r):.2f}"
                                         for name, r in ratios.items()))
    print("worst |sim/pub - 1|: " + ", ".join(
        f"{name} {max(abs(v - 1) for v in r):.2f}" for name, r in ratios.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
