"""Simulated time of one matmul algorithm written twice: in pyasc (``examples/linear_cube.py``,
the cube unit driven directly, event flags) and in PyPTO Pro (the same tiling with tile groups and
``auto_mutex``), y = x . W^T in fp16 on the Ascend 950.

Both run on the same machine model, so their times should agree; what remains is how each
language synchronises (flags vs buffer mutexes and the unit flag), the scalar work each issues,
and how W reaches L1 (pyasc: W's rows ND->NZ then read as ZN; here a transposed load into a ZN
tile). Prints both device times and their ratio for a few shapes:

    python benchmarks/pto_vs_pyasc_matmul.py [--shapes 256x512x512 ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import ascsim.pto.language as pl
from ascsim.runner import install_frontends
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
BLOCK_M, BLOCK_N, K_SEG, K_STEP = 128, 128, 512, 128
SHAPES = ((512, 1024, 1024), (1024, 1024, 1024), (1024, 2048, 512))


@pl.jit(auto_mutex=True)
def linear_pto(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
               w: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
               y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16]):
    m, k, n = x.shape[0], x.shape[1], w.shape[0]
    with pl.section_cube():
        a_l1 = pl.make_tile_group(type=pl.TileType(shape=[BLOCK_M, K_SEG], dtype=pl.DT_FP16,
                                                   target_memory=pl.MemorySpace.Mat),
                                  addrs=0x00000, mutex_ids=[0, 1])
        b_l1 = pl.make_tile_group(type=pl.TileType(shape=[K_SEG, BLOCK_N], dtype=pl.DT_FP16,
                                                   target_memory=pl.MemorySpace.Mat,
                                                   layout=pl.ZN),
                                  addrs=0x40000, mutex_ids=[2, 3])
        a_l0 = pl.make_tile_group(type=pl.TileType(shape=[BLOCK_M, K_STEP], dtype=pl.DT_FP16,
                                                   target_memory=pl.MemorySpace.Left),
                                  addrs=0x0, mutex_ids=[4, 5])
        b_l0 = pl.make_tile_group(type=pl.TileType(shape=[K_STEP, BLOCK_N], dtype=pl.DT_FP16,
                                                   target_memory=pl.MemorySpace.Right),
                                  addrs=0x0, mutex_ids=[6, 7])
        acc = pl.make_tile_group(type=pl.TileType(shape=[BLOCK_M, BLOCK_N], dtype=pl.DT_FP32,
                                                  target_memory=pl.MemorySpace.Acc),
                                 addrs=0x0, mutex_ids=[8, 9])
        n_blocks = n // BLOCK_N
        for task in pl.range(pl.get_block_idx(), (m // BLOCK_M) * n_blocks, pl.get_block_num()):
            row = (task // n_blocks) * BLOCK_M
            col = (task % n_blocks) * BLOCK_N
            out = acc.next()
            for seg in pl.range(0, k, K_SEG):
                a_seg, b_seg = a_l1.next(), b_l1.next()
                pl.load(a_seg, x, [row, seg])
                pl.load(b_seg, w, [col, seg], order=[1, 0])  # W^T's [K_SEG, BLOCK_N] block
                for off in pl.range(0, K_SEG, K_STEP):
                    left, right = a_l0.next(), b_l0.next()
                    pl.move(left, a_seg, offset=[0, off])
                    pl.move(right, b_seg, offset=[off, 0])
                    if seg + off == 0:
                        pl.matmul(out, left, right)
                    else:
                        pl.matmul_acc(out, out, left, right)
            pl.store(y, out, [row, col])


def _pyasc_linear():
    """``examples/linear_cube.py``'s ``linear`` (pyasc served by the simulator)."""
    install_frontends()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    import linear_cube  # noqa: PLC0415 - needs the front-ends installed first

    return linear_cube.linear


def compare(m: int, n: int, k: int, linear) -> tuple[float, float]:
    """(pyasc µs, PyPTO Pro µs) of y = x . W^T, both checked against torch."""
    torch.manual_seed(0)
    x = torch.randn(m, k, dtype=torch.float16)
    w = torch.randn(n, k, dtype=torch.float16)
    ref = (x.float() @ w.float().T).half()
    y_asc, report = linear(x, w)
    torch.testing.assert_close(y_asc, ref, rtol=1e-2, atol=1e-2)
    aic = report.block_num
    y_pto = torch.zeros(m, n, dtype=torch.float16)
    pto = linear_pto[None, aic](x, w, y_pto)
    torch.testing.assert_close(y_pto, ref, rtol=1e-2, atol=1e-2)
    return report.device_time_us, pto.device_time_us


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", nargs="*", metavar="MxNxK",
                        help="shapes (M and N multiples of 128, K of 512)")
    args = parser.parse_args(argv)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes] if args.shapes \
        else SHAPES
    with SESSION.using_soc(SOC):
        linear = _pyasc_linear()
        print(f"{'M x N x K':>18}  {'pyasc us':>9}  {'PyPTO us':>9}  PyPTO/pyasc")
        for m, n, k in shapes:
            if m % BLOCK_M or n % BLOCK_N or k % K_SEG:
                parser.error(f"{m}x{n}x{k}: M and N must be multiples of 128, K of 512")
            asc_us, pto_us = compare(m, n, k, linear)
            print(f"{f'{m} x {n} x {k}':>18}  {asc_us:9.2f}  {pto_us:9.2f}  "
                  f"{pto_us / asc_us:11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
