"""Where the CATLASS int8 quant matmul points' simulated time goes, core by core.

For each ``catlass-qmm-b1-*`` point of ``ascsim/calib/points.yaml`` (timing-only): the launch
time against the published one; the AIC that ends last (the launch time is its end), its MTE2
busy time; the median end of the AICs that run as many blocks as the busiest one (what the
launch would take if the last core were a typical one); and the bytes every core moves through
L2 (GM -> L1 tiles, the int32 workspace written by FixPipe and read by the AIVs, D) per
published microsecond, the L2 throughput the device must have sustained.

    .venv/bin/python benchmarks/catlass_quant_cores.py
    .venv/bin/python benchmarks/catlass_quant_cores.py --match 512x4096x1024-44   # some points
"""

from __future__ import annotations

import argparse
import statistics

from ascsim.calib import catlass_quant_matmul as qmm
from ascsim.calib.kernels import KERNELS
from ascsim.session import SESSION

L2_PATHS = ("GM->L1", "L0C->GM", "GM->UB", "UB->GM")


def core_view(report, point):
    """(last AIC end, its MTE2 busy, median end of the AICs with as many blocks, L2 bytes)."""
    from ascsim.calib import catlass_quant_matmul as qmm

    knobs = point.knobs
    p = qmm.plan(str(knobs["variant"]), knobs["mnk"])
    counts = [len(blocks) for blocks in qmm.schedule(p)]
    aics = [c for c in report.cores if c.kind == "AIC"]
    last = max(aics, key=lambda c: c.end_us)
    most = max(counts)
    peers = [c.end_us for c in aics if counts[c.block_idx] == most]
    l2_bytes = sum(report.bytes_moved.get(path, 0) for path in L2_PATHS)
    return last, statistics.median(peers), l2_bytes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--match", default="", help="only the points whose id contains this")
    args = parser.parse_args(argv)
    points = qmm.published_points(args.match)
    if not points:
        parser.error(f"no catlass-qmm-b1 point matches {args.match!r}")
    print(f"{'point':48} {'sim':>7} {'pub':>7} {'last AIC':>9} {'its MTE2':>9} "
          f"{'median':>7} {'median/pub':>10} {'L2 TB/s at pub':>15}")
    for point in points:
        with SESSION.using_soc(point.soc), SESSION.values(False):
            (report,) = KERNELS[point.kernel].run(**point.knobs)
        last, median, l2_bytes = core_view(report, point)
        print(f"{point.id:48} {report.device_time_us:7.2f} {point.published_us:7.2f} "
              f"{last.end_us:9.2f} {last.pipe_busy_us.get('MTE2', 0.0):9.2f} {median:7.2f} "
              f"{median / point.published_us:10.2f} "
              f"{l2_bytes / point.published_us / 1e6:15.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
