"""What do the kernel checks and the GM writer log cost? Simulation wall time with every check
on vs all off, and with the writer log (provenance, ascsim/sim/provenance.py) on top of the
checks, as ``ascsim run`` runs them.

The checks (races, uninitialised reads, alignment, queue state; ascsim.sim.checks) run inside
every simulation, so their cost must stay a small factor: the acceptance bar is at most 2x on
the 1024x256x640 matmul+LeakyReLU (examples/matmul_leakyrelu.py). SwiGLU at (2, 1024, 1024)
(examples/swiglu.py) is measured as well, as a vector-only case. Each time is the median of 3
runs after one warm-up; the ratio is "checks on / checks off". The writer log's bar is 1.15x
on every case: "writers" is checks and writer log on, its ratio is over checks on alone.

    .venv/bin/python benchmarks/check_overhead.py          # full sizes
    .venv/bin/python benchmarks/check_overhead.py --quick  # small sizes, one repeat (smoke test)
    .venv/bin/python benchmarks/check_overhead.py --cpu --repeats 5  # CPU time, loaded host
    .venv/bin/python benchmarks/check_overhead.py --cpu --repeats 7 --interleave  # noisy host

``--interleave`` alternates the two settings run by run and takes the best run of each: on a
host whose load drifts, a block of runs with the checks off and then a block with them on
can see two different loads, and the ratio of their medians swings by a third.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import torch

from ascsim.demo import load_example
from ascsim.session import SESSION

SOC = "Ascend910B1"
LIMIT = 2.0  # acceptance: checks on cost at most twice checks off
WRITERS_LIMIT = 1.15  # acceptance (issue 35): the writer log costs at most 15 % on every case
#: The settings timed: (checks, provenance).
OFF, CHECKS, WRITERS = (False, False), (True, False), (True, True)


def _median_seconds(fn: Callable[[], object], repeats: int,
                    clock: Callable[[], float] = time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)


def timed(fn: Callable[[], object], setting: tuple[bool, bool], repeats: int,
          clock: Callable[[], float] = time.perf_counter) -> tuple[float, int]:
    """(median seconds, findings of the last run) with ``setting`` = (checks, provenance)."""
    saved = (SESSION.checks, SESSION.provenance)
    SESSION.checks, SESSION.provenance = setting
    try:
        with SESSION.collect() as run:
            fn()  # warm-up: imports, jit rewrite, tiling
            seconds = _median_seconds(fn, repeats, clock)
        findings = sum(len(r.findings) for r in run.reports)
    finally:
        SESSION.checks, SESSION.provenance = saved
    return seconds, findings


def interleaved(fn: Callable[[], object], repeats: int,
                clock: Callable[[], float] = time.perf_counter) -> tuple[dict, int]:
    """({setting: best seconds}, findings of the last run with the checks on), the settings
    alternating run by run after one warm-up of each."""
    saved = (SESSION.checks, SESSION.provenance)
    settings = (OFF, CHECKS, WRITERS)
    best = dict.fromkeys(settings, float("inf"))
    try:
        with SESSION.collect() as run:
            for setting in settings:
                SESSION.checks, SESSION.provenance = setting
                fn()
            for _ in range(repeats):
                for setting in settings:
                    SESSION.checks, SESSION.provenance = setting
                    start = clock()
                    fn()
                    best[setting] = min(best[setting], clock() - start)
        findings = len(run.reports[-1].findings) if run.reports else 0
    finally:
        SESSION.checks, SESSION.provenance = saved
    return best, findings


def cases(quick: bool) -> list[tuple[str, Callable[[], object]]]:
    matmul = load_example("matmul_leakyrelu")
    swiglu = load_example("swiglu")
    cube_only = load_example("matmul_cube_only")
    mix = load_example("matmul_mix")
    m, k, n = (512, 64, 256) if quick else (1024, 256, 640)
    shape = (2, 64, 64) if quick else (2, 1024, 1024)
    # Wide C written by 24 cores side by side: 128-row strided FixPipe writes, one per block.
    wide = (128, 64, 3072) if quick else (128, 64, 30720)
    square = (128, 128, 256) if quick else (512, 512, 1024)
    gate = torch.rand(*shape, dtype=torch.float32) * 4 - 2
    up = torch.rand(*shape, dtype=torch.float32) * 4 - 2
    return [
        (f"matmul+leakyrelu {m}x{k}x{n}", lambda: matmul.run(SOC, m, k, n)),
        ("matmul cube-only {}x{}x{}".format(*wide), lambda: cube_only.run(SOC, *wide)),
        ("matmul mix {}x{}x{}".format(*square), lambda: mix.run(SOC, *square)),
        (f"swiglu fp32 {shape}", lambda: swiglu.swiglu(gate, up)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--cpu", action="store_true",
                        help="time the process's CPU time instead of wall time (steadier on "
                        "a shared, loaded host; it counts the Cube worker threads' work too)")
    parser.add_argument("--interleave", action="store_true",
                        help="alternate checks off and on run by run, best run of each")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed runs per case and setting (default 3, 1 with --quick)")
    ns = parser.parse_args(argv)
    repeats = ns.repeats or (1 if ns.quick else 3)
    clock = time.process_time if ns.cpu else time.perf_counter

    SESSION.set_soc(SOC)
    status = 0
    print(f"{'case':34} {'checks off s':>12} {'checks on s':>12} {'ratio':>6} "
          f"{'writers s':>10} {'ratio':>6}")
    for name, fn in cases(ns.quick):
        if ns.interleave:
            best, findings = interleaved(fn, repeats, clock)
            off, on, writers = best[OFF], best[CHECKS], best[WRITERS]
        else:
            off, _ = timed(fn, OFF, repeats, clock)
            on, findings = timed(fn, CHECKS, repeats, clock)
            writers, _ = timed(fn, WRITERS, repeats, clock)
        ratio, writers_ratio = on / off, writers / on
        print(f"{name:34} {off:12.3f} {on:12.3f} {ratio:6.2f} {writers:10.3f} "
              f"{writers_ratio:6.2f}" + (f"  ({findings} findings!)" if findings else ""))
        if name.startswith("matmul") and ratio > LIMIT and not ns.quick:
            status = 1
        if writers_ratio > WRITERS_LIMIT and not ns.quick:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
