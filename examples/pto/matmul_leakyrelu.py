"""Matmul + LeakyReLU fused on chip (PyPTO Pro, Ascend 950): Y = LeakyReLU(X @ W), fp16.

Run it with ``ascsim run examples/pto/matmul_leakyrelu.py``.

The 950 can drain an accumulator straight into the vector cores' UB (L0C -> UB through the
fixpipe), so the product never goes to GM: each block's cube computes a 64 x 128 output tile,
and one ``pl.move(..., acc_to_vec_mode=DualModeSplitM)`` casts it to fp16 and writes the top 32
rows into AIV0's UB and the bottom 32 rows into AIV1's, at the same UB address. Each AIV then
applies LeakyReLU to its half and stores it. Cross-core flags carry the hand-over both ways:
the cube raises flag 0 when the tile is in UB, the AIVs raise flag 1 when their UB half is free
for the next tile.
"""

import pypto_pro.language as pl
import torch

M, K, N = 256, 128, 256
TM, TN = 64, 128
HALF = TM // 2
TILES_N = N // TN
TILES = (M // TM) * TILES_N
BLOCKS = 4
ALPHA = 0.1


@pl.jit(auto_mutex=True)
def matmul_leakyrelu(x: pl.Tensor[[M, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
                     y: pl.Tensor[[M, N], pl.DT_FP16]):
    # The product's half-tile in each AIV's UB: the fixpipe's destination and the vector's input.
    prod = pl.make_tile(pl.TileType(shape=[HALF, TN], dtype=pl.DT_FP16,
                                    target_memory=pl.MemorySpace.Vec), addr=0x0)
    with pl.section_cube():
        x_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[TM, K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x00000, mutex_ids=[0, 1])
        w_l1 = pl.make_tile_group(
            type=pl.TileType(shape=[K, TN], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat),
            addrs=0x10000, mutex_ids=[2, 3])
        x_l0 = pl.make_tile_group(
            type=pl.TileType(shape=[TM, K], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left),
            addrs=0x0000, mutex_ids=[4, 5])
        w_l0 = pl.make_tile_group(
            type=pl.TileType(shape=[K, TN], dtype=pl.DT_FP16,
                             target_memory=pl.MemorySpace.Right),
            addrs=0x0000, mutex_ids=[6, 7])
        acc = pl.make_tile_group(
            type=pl.TileType(shape=[TM, TN], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc),
            addrs=0x0000, mutex_ids=[8])
        first = 1
        for t in pl.range(pl.get_block_idx(), TILES, pl.get_block_num()):
            x_slot, w_slot = x_l1.next(), w_l1.next()
            pl.load(x_slot, x, [(t // TILES_N) * TM, 0])
            pl.load(w_slot, w, [0, (t % TILES_N) * TN])
            left, right = x_l0.next(), w_l0.next()
            pl.move(left, x_slot)
            pl.move(right, w_slot)
            pl.matmul(acc.current(), left, right)
            if first == 0:  # the AIVs are done with the previous tile's UB halves
                pl.system.wait_cross_core(pipe=pl.PipeType.FIX, event_id=1)
            pl.move(prod, acc.current(), acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)
            pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
            first = 0
    with pl.section_vector():
        scaled = pl.make_tile(pl.TileType(shape=[HALF, TN], dtype=pl.DT_FP16,
                                          target_memory=pl.MemorySpace.Vec), addr=0x4000)
        out = pl.make_tile(pl.TileType(shape=[HALF, TN], dtype=pl.DT_FP16,
                                       target_memory=pl.MemorySpace.Vec), addr=0x8000)
        block = pl.get_block_idx() // pl.get_subblock_num()
        for t in pl.range(block, TILES, pl.get_block_num()):
            pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=0)
            pl.muls(scaled, prod, ALPHA)
            pl.maximum(out, prod, scaled)  # LeakyReLU: max(p, alpha * p) for 0 < alpha < 1
            pl.system.set_cross_core(pipe=pl.PipeType.V, event_id=1)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            row = (t // TILES_N) * TM + pl.get_subblock_idx() * HALF
            pl.store(y, out, [row, (t % TILES_N) * TN])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V, event_id=1)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(M, K, dtype=torch.float16)
    w = torch.randn(K, N, dtype=torch.float16) / 8
    y = torch.zeros(M, N, dtype=torch.float16)
    matmul_leakyrelu[None, BLOCKS](x, w, y)
    ref = torch.nn.functional.leaky_relu((x.float() @ w.float()).half().float(), ALPHA)
    torch.testing.assert_close(y.float(), ref, rtol=2e-3, atol=2e-3)
    print("Y = LeakyReLU(X @ W) matches the torch reference")


if __name__ == "__main__":
    main()
