"""What the CATLASS int8 quant matmul points would read with CATLASS's own published A2 costs.

CATLASS publishes three figures for the Atlas A2 that the timing model does not have (hicann/catlass
@ 0dfcf9df):

* ``examples/102_dynamic_optimized_matmul/include/select_kernel_b16.h`` (the padding model of
  ``docs/en/CommonMatmul_en.md`` section 2.3.3): the single-core GM -> L1 ND2NZ read bandwidth
  of an AIC, a fit of the row length, at most 80 GB/s (rows of 512 B or more from a 512 B
  aligned stride) and 60.5 GB/s for 256 B rows (the fit at 128 fp16 elements, stride a multiple
  of 256 elements); the model moves these rows at its L2 port rate (110 B/cycle, ~200 GB/s)
  with a 4-cycle row floor;
* the same file's ``headCost``, the extra start-up of a MIX kernel over a cube-only one:
  ``1 + 7 x (AICs used) / (AIC count)`` µs, 8 µs when every AIC runs;
* ``docs/zh/1_Practice/evaluation/bottleneck_analysis_and_optimization.md``: the head of a
  full-core launch on Atlas A2 is about 20-21 µs (read from an empty kernel's Task Duration).

This script runs every ``catlass-qmm-b1-*`` point of ``ascsim/calib/points.yaml`` (timing-only)
on the model as it is (``model``), on a copy of the SoC whose GM -> L1 rate is capped at 80 GB/s
(``cap``), and with in addition a row floor that makes 256 B rows 60.5 GB/s (``rates``). The
heads are added to the model's time (a launch's head only adds to its time): ``+mix`` the 8 µs
MIX head scaled by the AICs used, ``+head`` what raises the model's own empty full-core MIX
launch to 20.5 µs. It prints each against the published time, the per-block pipe times of the
median AIC under ``model`` and ``rates``, and the median ratio of each column. It changes no
machine file: it asks which published figure explains the points.

    .venv/bin/python benchmarks/catlass_quant_published_rates.py
    .venv/bin/python benchmarks/catlass_quant_published_rates.py --match 512x4096x1024   # some
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.calib import catlass_quant_matmul as qmm
from ascsim.calib.kernels import KERNELS
from ascsim.calib.points import load_points
from ascsim.hw import get_soc
from ascsim.session import SESSION

POINTS = Path(__file__).resolve().parents[1] / "ascsim" / "calib" / "points.yaml"
PIPES = ("M", "MTE1", "MTE2", "FIX")
COLUMNS = ("model", "+mix", "+head", "cap", "rates")


@dataclass(frozen=True)
class PublishedA2Costs:
    """CATLASS's A2 figures: ``nd2nz_peak_gbs`` the per-AIC ND2NZ bandwidth cap,
    ``nd2nz_256b_gbs`` its fit for 256 B rows (128 fp16 elements from a 512 B aligned stride),
    ``mix_head_base_us`` + ``mix_head_full_us`` x (AICs used / AIC count) the MIX kernel's
    extra head (select_kernel_b16.h); ``full_core_head_us`` the head of a full-core launch
    (the bottleneck-analysis guide's 20-21 µs, its middle)."""

    nd2nz_peak_gbs: float = 80.0
    nd2nz_256b_gbs: float = 60.47
    mix_head_base_us: float = 1.0
    mix_head_full_us: float = 7.0
    full_core_head_us: float = 20.5

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
    points = [p for p in load_points(POINTS).points
              if p.id.startswith("catlass-qmm-b1-") and args.match in p.id]
    if not points:
        parser.error(f"no catlass-qmm-b1 point matches {args.match!r}")
    costs = PublishedA2Costs()
    heads = {}
    print(f"{'point':32} {'pub':>6} | " + " | ".join(f"{n:>6} {'/pub':>5}" for n in COLUMNS)
          + " | per block M/MTE1/MTE2/FIX µs: model -> rates")
    ratios = {name: [] for name in COLUMNS}
    for point in points:
        base = get_soc(point.soc)
        if point.soc not in heads:
            heads[point.soc] = costs.full_core_head_us - empty_mix_us(base)
        cores = qmm.plan(str(point.knobs["variant"]), point.knobs["mnk"], soc=base).cores
        reports = {"model": run(point, base), "cap": run(point, costs.with_cap(base)),
                   "rates": run(point, costs.with_rates(base))}
        times = {name: r.device_time_us for name, r in reports.items()}
        times["+mix"] = times["model"] + costs.mix_head_us(base, cores)
        times["+head"] = times["model"] + heads[point.soc]
        for name in COLUMNS:
            ratios[name].append(times[name] / point.published_us)
        before = per_block(reports["model"], point)
        after = per_block(reports["rates"], point)
        blocks = "/".join(f"{before[p]:.1f}" for p in PIPES) + " -> " + \
            "/".join(f"{after[p]:.1f}" for p in PIPES)
        print(f"{point.id.removeprefix('catlass-qmm-b1-'):32} {point.published_us:6.2f} | "
              + " | ".join(f"{times[n]:6.2f} {times[n] / point.published_us:5.2f}"
                           for n in COLUMNS) + f" | {blocks}")
    print("head added in +head: " + ", ".join(f"{soc} {us:.2f} µs" for soc, us in heads.items()))
    print("median sim/pub: " + ", ".join(f"{name} {statistics.median(r):.2f}"
                                         for name, r in ratios.items()))
    print("worst |sim/pub - 1|: " + ", ".join(
        f"{name} {max(abs(v - 1) for v in r):.2f}" for name, r in ratios.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
