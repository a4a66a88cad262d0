"""A multi-core matmul in PyPTO Pro: C[M, N] = A[M, K] @ B[K, N], fp16 in, fp32 out.

Run it with ``ascsim run examples/pto/matmul_ring.py`` (it simulates an Ascend 950).

Each of the BLOCKS cube cores takes every BLOCKS-th 128 x 128 output tile. For one tile it
walks K in steps of 64: A's and B's K-slices are loaded into a ring of three L1 (Mat) tiles
each -- ``next()`` hands out the slots in turn, so the load of the next slice overlaps the
work on the current one -- then moved into double-buffered L0A/L0B tiles and accumulated in one
L0C tile. ``auto_mutex`` orders the pipes on each slot through the groups' buffer ids; the
accumulator is handed between the Cube and the fixpipe by the unit flag (``phase=``): the last
matmul of a tile sets it, the store resets it.
"""

import pypto_pro.language as pl
import torch

M, K, N = 512, 256, 384
TM, TN, TK = 128, 128, 64
TILES_N = N // TN
TILES = (M // TM) * TILES_N
BLOCKS = 6
RING = 3


@pl.jit(auto_mutex=True)
def matmul_ring(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
                c: pl.Tensor[[M, N], pl.DT_FP32]):
    with pl.section_cube():
        # L1 rings: RING slots each, one buffer id per slot.
        a_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[TM, TK], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x00000, mutex_ids=[0, 1, 2])
        b_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[TK, TN], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x10000, mutex_ids=[3, 4, 5])
        # L0A / L0B double buffers, one L0C accumulator.
        a_l0 = pl.make_tile_group(
            type=pl.TileType(shape=[TM, TK], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
            addrs=0x0000, mutex_ids=[6, 7])
        b_l0 = pl.make_tile_group(
            type=pl.TileType(shape=[TK, TN], dtype=pl.DT_FP16,
                             target_memory=pl.MemorySpace.Right),
            addrs=0x0000, mutex_ids=[8, 9])
        acc = pl.make_tile_group(
            type=pl.TileType(shape=[TM, TN], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
            addrs=0x0000, mutex_ids=[10])
        for t in pl.range(pl.get_block_idx(), TILES, pl.get_block_num()):
            row = (t // TILES_N) * TM
            col = (t % TILES_N) * TN
            out = acc.current()
            for k in pl.range(0, K, TK):
                a_slot = a_l1.next()
                b_slot = b_l1.next()
                pl.load(a_slot, a, [row, k])
                pl.load(b_slot, b, [k, col])
                left = a_l0.next()
                right = b_l0.next()
                pl.move(left, a_slot)
                pl.move(right, b_slot)
                if k == 0:
                    pl.matmul(out, left, right, phase=pl.AccPhase.Partial)
                elif k == K - TK:
                    pl.matmul_acc(out, out, left, right, phase=pl.AccPhase.Final)
                else:
                    pl.matmul_acc(out, out, left, right, phase=pl.AccPhase.Partial)
            pl.store(c, out, [row, col], phase=pl.STPhase.Final)


def main() -> None:
    torch.manual_seed(0)
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16)
    c = torch.zeros(M, N, dtype=torch.float32)
    matmul_ring[None, BLOCKS](a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)
    print("C = A @ B matches the torch reference")


if __name__ == "__main__":
    main()
