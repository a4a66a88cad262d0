"""Attention scores and their softmax (PyPTO Pro, Ascend 950): P = softmax(Q @ K^T) by rows.

Run it with ``ascsim run examples/pto/matmul_softmax.py``.

A MIX kernel in two stages that meet in a GM workspace. Each block's cube computes a 64 x 128
block of scores -- K is loaded as it lies in GM, ``[S, D]`` in NZ, and moved into L0B as the
``[D, S]`` ZN tile of K^T (the same bytes) -- stores it into the workspace and raises
cross-core flag 0. Each of the block's two AIVs waits for the flag, loads its 32 rows and
computes a numerically safe softmax: subtract the row maximum, exponentiate, divide by the
row sum.

The AIV loads its rows into a DN tile ``[32, 128]`` (column-major), and works on the ND tile
``[128, 32]`` over the same UB bytes: there a row of scores is a column, so the reductions over
a row are trees over whole 128-byte rows of the ND view (``t[0:64] = max(x[0:64], x[64:128])``,
then 32 rows, ... down to one), and the one-row result is spread back by copies that double the
filled height -- every operand starts on a 32-byte boundary. The result is stored from the DN
view, row-major in GM again.
"""

import pypto_pro.language as pl
import torch

S, D = 128, 64
ROWS = 64  # rows of scores per block
HALF = ROWS // 2  # rows per AIV
BLOCKS = S // ROWS


def col_reduce(op, t, x, height):
    """t[0:1, :] = op over each column of x[0:height, :] (a tree over row halves)."""
    op(t[0:height // 2, :], x[0:height // 2, :], x[height // 2:height, :])
    step = height // 2
    while step > 1:
        op(t[0:step // 2, :], t[0:step // 2, :], t[step // 2:step, :])
        step = step // 2


def col_spread(t, height):
    """t[0:height, :] = t[0:1, :] in every row (copies that double the filled height)."""
    filled = 1
    while filled < height:
        pl.move(t[filled:2 * filled, :], t[0:filled, :])
        filled = filled * 2


@pl.jit()
def matmul_softmax(q: pl.Tensor[[S, D], pl.DT_FP16], k: pl.Tensor[[S, D], pl.DT_FP16],
                   workspace: pl.Tensor[[S, S], pl.DT_FP32], p: pl.Tensor[[S, S], pl.DT_FP32]):
    block = pl.get_block_idx() // pl.get_subblock_num()
    with pl.section_cube():
        q_mat = pl.make_tile(pl.TileType(shape=[ROWS, D], dtype=pl.DT_FP16,
                                         target_memory=pl.MemorySpace.Mat), addr=0x0)
        k_mat = pl.make_tile(pl.TileType(shape=[S, D], dtype=pl.DT_FP16,
                                         target_memory=pl.MemorySpace.Mat), addr=0x2000)
        q_l0 = pl.make_tile(pl.TileType(shape=[ROWS, D], dtype=pl.DT_FP16,
                                        target_memory=pl.MemorySpace.Left), addr=0x0)
        kt_l0 = pl.make_tile(pl.TileType(shape=[D, S], dtype=pl.DT_FP16,
                                         target_memory=pl.MemorySpace.Right), addr=0x0)
        scores = pl.make_tile(pl.TileType(shape=[ROWS, S], dtype=pl.DT_FP32,
                                          target_memory=pl.MemorySpace.Acc), addr=0x0)
        pl.load(q_mat, q, [block * ROWS, 0])
        pl.load(k_mat, k, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(q_l0, q_mat)
        pl.move(kt_l0, k_mat)  # [S, D] NZ -> [D, S] ZN: K^T
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(scores, q_l0, kt_l0)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(workspace, scores, [block * ROWS, 0])
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=0)
    with pl.section_vector():
        # One UB buffer seen two ways: x_rows[q, k] (DN) is x[k, q] (ND).
        x_rows = pl.make_tile(pl.TileType(shape=[HALF, S], dtype=pl.DT_FP32,
                                          target_memory=pl.MemorySpace.Vec, layout=pl.DN),
                              addr=0x0)
        x = pl.make_tile(pl.TileType(shape=[S, HALF], dtype=pl.DT_FP32,
                                     target_memory=pl.MemorySpace.Vec), addr=0x0)
        t = pl.make_tile(pl.TileType(shape=[S, HALF], dtype=pl.DT_FP32,
                                     target_memory=pl.MemorySpace.Vec), addr=0x4000)
        row = block * ROWS + pl.get_subblock_idx() * HALF
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=0)
        pl.load(x_rows, workspace, [row, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        col_reduce(pl.maximum, t, x, S)
        col_spread(t, S)
        pl.sub(x, x, t)
        pl.exp(x, x)
        col_reduce(pl.add, t, x, S)
        col_spread(t, S)
        pl.div(x, x, t)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(p, x_rows, [row, 0])


def main() -> None:
    torch.manual_seed(0)
    q = torch.randn(S, D, dtype=torch.float16)
    k = torch.randn(S, D, dtype=torch.float16)
    workspace = torch.zeros(S, S, dtype=torch.float32)
    p = torch.zeros(S, S, dtype=torch.float32)
    matmul_softmax[None, BLOCKS](q, k, workspace, p)
    ref = torch.softmax(q.float() @ k.float().T, dim=-1)
    torch.testing.assert_close(p, ref, rtol=1e-4, atol=1e-5)
    print("P = softmax(Q @ K^T) matches the torch reference")


if __name__ == "__main__":
    main()
