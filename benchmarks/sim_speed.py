"""How fast is the simulator? Wall time of simulating a kernel vs numpy doing the same arithmetic.

Cases: the 8×2048 fp32 vector add (the TQue example) and SwiGLU at (2, 1024, 1024) fp32. The
ratio "simulated / numpy" is what to track: it does not depend on the host machine as much as
absolute times do. Each time is the median of a few repeats.

    .venv/bin/python benchmarks/sim_speed.py            # full sizes
    .venv/bin/python benchmarks/sim_speed.py --quick    # tiny sizes, one repeat (smoke test)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ascsim import context
from ascsim.demo import load_example
from ascsim.session import SESSION

SOC = "Ascend910B1"
REPEATS = 3


@dataclass(frozen=True)
class SpeedCase:
    """One measurement: ``simulate()`` runs the kernel, ``reference()`` the same maths in numpy."""

    name: str
    simulate: Callable[[], object]
    reference: Callable[[], object]


def _median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def add_case(length: int) -> SpeedCase:
    example = load_example("vector_add_queues")
    x = torch.rand(length, dtype=torch.float32)
    y = torch.rand(length, dtype=torch.float32)
    xn, yn = x.numpy(), y.numpy()
    cores = min(example.DEFAULT_CORES, length // example.DEFAULT_TILE)
    return SpeedCase(f"add fp32 {length}", lambda: example.vector_add(x, y, cores),
                     lambda: xn + yn)


def swiglu_case(shape: tuple[int, ...]) -> SpeedCase:
    example = load_example("swiglu")
    gate = torch.rand(*shape, dtype=torch.float32) * 4 - 2
    up = torch.rand(*shape, dtype=torch.float32) * 4 - 2
    gn, un = gate.numpy(), up.numpy()

    def numpy_swiglu():
        return gn / (np.float32(1) + np.exp(-gn)) * un

    return SpeedCase(f"swiglu fp32 {shape}", lambda: example.swiglu(gate, up), numpy_swiglu)


def measure(case: SpeedCase, repeats: int) -> tuple[float, float]:
    """(simulated seconds, numpy seconds), medians; the simulated run is warmed up once."""
    case.simulate()
    sim = _median_seconds(case.simulate, repeats)
    ref = _median_seconds(case.reference, max(repeats, 5))
    SESSION.clear()  # the reports of repeated launches are not needed
    return sim, ref


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes, one repeat")
    args = parser.parse_args(argv)
    context.request_soc(SOC)
    if args.quick:
        cases, repeats = [add_case(2 * 1024), swiglu_case((2, 4, 256))], 1
    else:
        cases, repeats = [add_case(8 * 2048), swiglu_case((2, 1024, 1024))], REPEATS
    print(f"simulator speed on {SOC} (median of {repeats}):")
    print(f"{'case':<28}{'simulated ms':>14}{'numpy ms':>12}{'ratio':>10}")
    for case in cases:
        sim, ref = measure(case, repeats)
        print(f"{case.name:<28}{sim * 1e3:>14.1f}{ref * 1e3:>12.3f}{sim / ref:>9.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
