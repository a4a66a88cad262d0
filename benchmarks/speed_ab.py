"""Two checkouts' simulation speed, measured alternately in one session: the A/B of a speed change.

A speed change is only worth keeping if it shows against the code before it on the same host at
the same time; on a small shared host one checkout measured after the other sees a different
load. So this script runs both checkouts in turn, in fresh processes (``PYTHONPATH`` names the
checkout, as for ``findings_ab.py``), round after round, and each process times every case
against its numpy or torch reference in that same process:

- ``matmul``: the fused 1024x256x640 matmul + LeakyReLU of ``sim_speed.py`` (one MIX block),
  against torch;
- ``add``: the 8x2048 fp32 add of the TQue example (8 cores, 512 instruction records),
  against numpy;
- ``launch``: a launch with as little in it as a launch can have -- one core, two copies of
  128 floats through one queue -- against numpy's ``np.add`` of 128 floats: the launch's fixed
  cost (arguments, cores, checks, report and profile, copy-back, release).

Per case it prints the medians over the rounds of each checkout's simulation times (wall time,
the simulating thread's CPU time, and the process's CPU time, which adds the Matmul's product
workers), B/A of each, and the simulation's wall time over the reference's.

    .venv/bin/python benchmarks/speed_ab.py /path/to/checkout-A /path/to/checkout-B --rounds 6
    .venv/bin/python benchmarks/speed_ab.py A B --rounds 1 --repeats 2   # smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES = ("matmul", "add", "launch")
TIMEOUT_S = 600


def _clocks(fn) -> tuple[float, float, float]:
    """(wall, this thread's CPU, the process's CPU) seconds of one call."""
    wall, thread, proc = time.perf_counter(), time.thread_time(), time.process_time()
    fn()
    return (time.perf_counter() - wall, time.thread_time() - thread,
            time.process_time() - proc)


def _launch_case():
    """The smallest launch: one core copies 128 floats into UB and back out."""
    import numpy as np
    import torch

    from ascsim.runner import install_asc_alias

    install_asc_alias()
    import asc
    import asc.lib.runtime as rt

    @asc.jit
    def copy_through_ub(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
        x_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor()
        x_gm.set_global_buffer(x, n)
        z_gm.set_global_buffer(z, n)
        pipe = asc.TPipe()
        queue = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que=queue, num=1, len=n * 4)
        tile = queue.alloc_tensor(x_gm.dtype)
        asc.data_copy(tile, x_gm, n)
        queue.enque(tile)
        tile = queue.deque(x_gm.dtype)
        asc.data_copy(z_gm, tile, n)
        queue.free_tensor(tile)

    x, z = torch.rand(128), torch.zeros(128)
    xn, out = x.numpy(), np.empty(128, np.float32)

    def simulate():
        copy_through_ub[1, rt.current_stream()](x, z, 128)
        if not torch.equal(x, z):
            raise AssertionError("the copy through UB lost values")

    return simulate, lambda: np.add(xn, xn, out=out)


def _cases() -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import sim_speed

    from ascsim.session import SESSION

    SESSION.request_soc(sim_speed.SOC)
    matmul = sim_speed.matmul_case(1024, 256, 640)
    add = sim_speed.add_case(8 * 2048)
    return {"matmul": (matmul.simulate, matmul.reference),
            "add": (add.simulate, add.reference), "launch": _launch_case()}


def worker(repeats: int) -> None:
    """Time every case ``repeats`` times (after a warm-up); print medians as JSON."""
    import ascsim

    out = {"ascsim": str(Path(ascsim.__file__).resolve().parent.parent)}
    for name, (simulate, reference) in _cases().items():
        simulate()
        reference()
        runs = [_clocks(simulate) for _ in range(repeats)]
        refs = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(10):
                reference()
            refs.append((time.perf_counter() - start) / 10)
        out[name] = {"wall": statistics.median(r[0] for r in runs),
                     "thread": statistics.median(r[1] for r in runs),
                     "process": statistics.median(r[2] for r in runs),
                     "reference": statistics.median(refs)}
    print(json.dumps(out))


def _run(checkout: Path, repeats: int) -> dict:
    # One hash seed for every process: string hashing orders the dicts and sets the simulator
    # walks, and a per-process seed adds its own few per cent of spread between processes.
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONHASHSEED="0")
    done = subprocess.run([sys.executable, __file__, "--worker", "--repeats", str(repeats)],
                          env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                          check=False)
    if done.returncode:
        raise RuntimeError(f"{checkout}: the timing run failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(result["ascsim"]) != checkout:
        raise RuntimeError(f"PYTHONPATH={checkout} imported ascsim from {result['ascsim']}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", nargs="?", type=Path, help="checkout A (the code before)")
    parser.add_argument("b", nargs="?", type=Path, help="checkout B (the change)")
    parser.add_argument("--rounds", type=int, default=6, help="A then B, this many times")
    parser.add_argument("--repeats", type=int, default=9, help="runs per case per process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.repeats)
        return 0
    if args.a is None or args.b is None:
        parser.error("give two checkouts, A and B")
    for checkout in (args.a, args.b):
        if not (checkout / "ascsim" / "__init__.py").is_file():
            parser.error(f"{checkout} is not an ascsim checkout (no ascsim/__init__.py)")
    results: dict[str, list[dict]] = {"a": [], "b": []}
    for _ in range(args.rounds):
        results["a"].append(_run(args.a.resolve(), args.repeats))
        results["b"].append(_run(args.b.resolve(), args.repeats))
    print(f"A = {args.a}\nB = {args.b}\n{args.rounds} rounds, A then B; medians over the "
          f"rounds of each process's medians of {args.repeats} runs; ms")
    print(f"{'case':<8}{'clock':<9}{'A':>10}{'B':>10}{'B/A':>8}   sim/ref A   sim/ref B")
    for case in CASES:
        for clock in ("wall", "thread", "process"):
            a = statistics.median(r[case][clock] for r in results["a"])
            b = statistics.median(r[case][clock] for r in results["b"])
            line = f"{case:<8}{clock:<9}{a * 1e3:>10.3f}{b * 1e3:>10.3f}{b / a:>8.3f}"
            if clock == "wall":
                ra = statistics.median(r[case]["wall"] / r[case]["reference"]
                                       for r in results["a"])
                rb = statistics.median(r[case]["wall"] / r[case]["reference"]
                                       for r in results["b"])
                line += f"{ra:>12.1f}{rb:>12.1f}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
