"""z = x + y in PyPTO Pro: tiles of 16 x 128 in double-buffered tile groups, spread over the
cores, with tails in both directions.

Run it with ``ascsim run examples/pto/vector_add.py`` (the simulated Ascend950PR_9579; ``-v``
chooses another 950 part). The 100 x 300 matrices are cut into 7 x 3 tiles; the last row of
tiles holds 4 rows and the last column 44 columns, so those tiles narrow their valid shape
before they load, add and store. Each core takes every ``block_num``-th tile. Every tile group
has two slots, each with its own buffer-id token: ``auto_mutex`` orders each slot's load, add
and store, so loading the next tile overlaps adding and storing the previous one.
"""

import pypto_pro.language as pl
import torch

M, N = 100, 300  # the matrices
TM, TN = 16, 128  # one tile
ROW_TILES = (M + TM - 1) // TM
COL_TILES = (N + TN - 1) // TN
BLOCK_DIM = 8


@pl.jit
def vector_add(x: pl.Tensor[[M, N], pl.DT_FP32], y: pl.Tensor[[M, N], pl.DT_FP32],
               z: pl.Tensor[[M, N], pl.DT_FP32]):
    tile = pl.TileType(shape=[TM, TN], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                       valid_shape=[-1, -1])
    xs = pl.make_tile_group(type=tile, addrs=0x00000, mutex_ids=[0, 1])
    ys = pl.make_tile_group(type=tile, addrs=0x04000, mutex_ids=[2, 3])
    zs = pl.make_tile_group(type=tile, addrs=0x08000, mutex_ids=[4, 5])
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), ROW_TILES * COL_TILES, pl.get_block_num()):
            r0 = (t // COL_TILES) * TM
            c0 = (t % COL_TILES) * TN
            rows = pl.min(TM, M - r0)
            cols = pl.min(TN, N - c0)
            a = xs.next()
            b = ys.next()
            c = zs.next()
            pl.set_validshape(a, [rows, cols])
            pl.set_validshape(b, [rows, cols])
            pl.set_validshape(c, [rows, cols])
            pl.load(a, x, [r0, c0])
            pl.load(b, y, [r0, c0])
            pl.add(c, a, b)
            pl.store(z, c, [r0, c0])


def main():
    torch.manual_seed(0)
    x = torch.randn(M, N)
    y = torch.randn(M, N)
    z = torch.zeros(M, N)
    vector_add[None, BLOCK_DIM](x, y, z)
    torch.testing.assert_close(z, x + y, rtol=0, atol=0, msg="wrong sum")
    print(f"z = x + y correct on {ROW_TILES * COL_TILES} tiles of {TM}x{TN} over {BLOCK_DIM} cores")


if __name__ == "__main__":
    main()
