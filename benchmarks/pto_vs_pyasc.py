"""The same vector add in PyPTO Pro and in pyasc drives the same machine: their simulated times.

The pyasc side is ``examples/vector_add_queues.py`` (8 x 2048 fp32 elements, 8 cores, tiles of
128 elements in double-buffered TQue queues). The PyPTO Pro side below does the same work:
a 128 x 128 fp32 matrix, each of 8 cores adding 16 rows of 128 elements through tile groups of
two slots under ``auto_mutex``. Both run on the simulated 950 in one process; the script prints
both device times and their ratio (PyPTO Pro / pyasc), and each core's pipe times.

    .venv/bin/python benchmarks/pto_vs_pyasc.py [--soc Ascend950PR_9579]

What remains different: the scalar work each front-end issues per tile (address arithmetic,
the queue calls against the mutex locks) and the sync style (TQue hand-overs vs buffer tokens).
"""

from __future__ import annotations

import argparse

import torch

import ascsim.pto.language as pl
from ascsim.demo import load_example
from ascsim.session import SESSION

ROWS, COLS, CORES = 128, 128, 8
SOC = "Ascend950PR_9579"


@pl.jit
def pto_vector_add(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32], y: pl.Tensor[[ROWS, COLS], pl.DT_FP32],
                   z: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    row = pl.TileType(shape=[1, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    xs = pl.make_tile_group(type=row, addrs=0x0000, mutex_ids=[0, 1])
    ys = pl.make_tile_group(type=row, addrs=0x0400, mutex_ids=[2, 3])
    zs = pl.make_tile_group(type=row, addrs=0x0800, mutex_ids=[4, 5])
    with pl.section_vector():
        per_core = ROWS // pl.get_block_num()
        first = pl.get_block_idx() * per_core
        for r in pl.range(first, first + per_core):
            a = xs.next()
            b = ys.next()
            c = zs.next()
            pl.load(a, x, [r, 0])
            pl.load(b, y, [r, 0])
            pl.add(c, a, b)
            pl.store(z, c, [r, 0])


def compare(soc: str = SOC):
    """Run both adds on ``soc``; returns (PyPTO Pro report, pyasc report), each checked."""
    torch.manual_seed(0)
    x, y = torch.rand(ROWS, COLS), torch.rand(ROWS, COLS)
    z = torch.zeros(ROWS, COLS)
    with SESSION.using_soc(soc):
        pto = pto_vector_add[None, CORES](x, y, z)
        pyasc = load_example("vector_add_queues").run(soc)
    if not torch.equal(z, x + y):
        raise AssertionError("pto_vector_add: wrong sum")
    return pto, pyasc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--soc", default=SOC)
    args = parser.parse_args()
    pto, pyasc = compare(args.soc)
    print(f"vector add on {args.soc}: PyPTO Pro {pto.device_time_us:.3f} us, pyasc "
          f"{pyasc.device_time_us:.3f} us, ratio {pto.device_time_us / pyasc.device_time_us:.3f}")
    for name, report in (("PyPTO Pro", pto), ("pyasc", pyasc)):
        busy = ", ".join(f"{p} {t:.3f}" for p, t in report.cores[0].pipe_busy_us.items())
        print(f"  {name:9} core 0: {busy} us busy, {report.cores[0].instructions} instructions")


if __name__ == "__main__":
    main()
