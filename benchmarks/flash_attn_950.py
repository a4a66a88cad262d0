"""FALite flash attention (cann-samples flash_attn_lite_story v0 / v1) on the Ascend950PR at a
shorter sequence than the published S=32768 / 131072, timing-only, and what it implies there.

    .venv/bin/python benchmarks/flash_attn_950.py                 # S=4096 on 28 AICs
    .venv/bin/python benchmarks/flash_attn_950.py --seq 2048 --cores 28

For each version: the simulated device time, the busiest core's busy time per pipe and the
simulation's wall time. The kernel is serial per task (Q tile): each AIC runs
ceil(tasks / cores) tasks in turn, each over S / Bc KV tiles of identical work, so the device
time scales with rounds x KV tiles; the script prints that scaling of the simulated time to the
published shapes beside the published times (an extrapolation of the model, not a simulation
of the published shape), and the wall time per (task, KV tile) times the published shapes'
count (what a timing-only simulation of them would take on this host).
"""

from __future__ import annotations

import argparse
import time

from ascsim.calib import flash_attn as fa
from ascsim.calib.measure import sim_pipes
from ascsim.session import SESSION

SOC = "Ascend950PR_9589"
#: (version, S, AICs) -> published µs (device-times.md §B samples-falite-950-*).
PUBLISHED = {("v0", 32768, 28): 20359.0, ("v1", 32768, 28): 10409.0,
             ("v0", 131072, 32): 269403.0, ("v1", 131072, 32): 139645.0}
PIPES = ("vec", "aiv_mte2", "mte3", "mac", "mte1", "mte2", "fixpipe", "scalar")


def _rounds_x_tiles(seq: int, cores: int) -> int:
    tasks = seq // fa.BR
    return -(-tasks // min(cores, tasks)) * (seq // fa.BC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--cores", type=int, default=28)
    args = parser.parse_args()
    pairs = (args.seq // fa.BR) * (args.seq // fa.BC)
    print(f"FALite on {SOC}, B1 N1 S={args.seq} D128, {args.cores} AICs, timing-only")
    print(f"{'ver':4} {'sim us':>10} " + " ".join(f"{p:>9}" for p in PIPES) + f" {'wall s':>7}")
    sims = {}
    for version in fa.VERSIONS:
        started = time.perf_counter()
        with SESSION.using_soc(SOC), SESSION.values(False):
            (report,) = fa.run_flash_attn(version, args.seq, cores=args.cores)
        wall = time.perf_counter() - started
        pipes = sim_pipes(report)
        sims[version] = (report.device_time_us, wall)
        print(f"{version:4} {report.device_time_us:10.1f} "
              + " ".join(f"{pipes[p]:9.1f}" for p in PIPES) + f" {wall:7.1f}")
    print(f"v1 / v0 simulated: {sims['v1'][0] / sims['v0'][0]:.3f}  "
          f"(published at S=32768: {10409.0 / 20359.0:.3f})")
    print("\nscaled by rounds x KV tiles to the published shapes (an extrapolation):")
    for (version, seq, cores), published in PUBLISHED.items():
        scale = _rounds_x_tiles(seq, cores) / _rounds_x_tiles(args.seq, args.cores)
        estimate = sims[version][0] * scale
        wall = sims[version][1] / pairs * (seq // fa.BR) * (seq // fa.BC)
        print(f"  {version} S={seq} {cores} AIC: sim ~{estimate:9.0f} us, published "
              f"{published:9.0f} us, ratio {estimate / published:.3f}; timing-only wall "
              f"~{wall / 60:.0f} min on this host")


if __name__ == "__main__":
    main()
