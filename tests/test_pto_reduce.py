"""PyPTO Pro reductions and broadcasts on the simulated 950, against numpy.

Every kernel loads a 32x64 tile, narrows its valid window to a tail (30x50) where the op reads
a valid window, and stores the results; elements outside the written windows keep the GM
values the test put there.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim.isa import KernelError
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
M, N = 32, 64
R, C = 30, 50  # the valid window of the tail cases


def launch(kernel, *args):
    with SESSION.using_soc(SOC):
        report = kernel(*args)
    assert report.findings == [], report.findings
    return report


@pl.jit
def row_reduce_kernel(x: pl.Tensor[[M, N], pl.DT_FP32], s: pl.Tensor[[M, 1], pl.DT_FP32],
                      mx: pl.Tensor[[M, 1], pl.DT_FP32], mn: pl.Tensor[[M, 1], pl.DT_FP32],
                      pr: pl.Tensor[[M, 1], pl.DT_FP32], am: pl.Tensor[[M, 1], pl.DT_INT32],
                      an: pl.Tensor[[M, 1], pl.DT_INT32]):
    src_t = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    red_t = pl.TileType(shape=[M, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                        layout=pl.DN)
    idx_t = pl.TileType(shape=[M, 1], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec,
                        layout=pl.DN)
    g_src = pl.make_tile_group(type=src_t, addrs=0x0, mutex_ids=[0])
    g_tmp = pl.make_tile_group(type=src_t, addrs=0x2000, mutex_ids=[1])
    g_red = pl.make_tile_group(type=red_t, addrs=[0x4000, 0x4100, 0x4200, 0x4300],
                               mutex_ids=[2, 3, 4, 5])
    g_idx = pl.make_tile_group(type=idx_t, addrs=[0x4400, 0x4500], mutex_ids=[6, 7])
    with pl.section_vector():
        a = g_src.current()
        tmp = g_tmp.current()
        pl.set_validshape(a, [R, C])
        pl.load(a, x, [0, 0])
        pl.sum(g_red[0], a, tmp, dim=0)
        pl.maximum(g_red[1], a, tmp, dim=0)
        pl.row_min(g_red[2], a, tmp)
        pl.row_prod(g_red[3], a, tmp)
        pl.argmax(g_idx[0], a, tmp)
        pl.row_argmin(g_idx[1], a, tmp)
        for i in pl.range(4):
            pl.set_validshape(g_red[i], [R, 1])
        pl.set_validshape(g_idx, [R, 1])
        pl.store(s, g_red[0], [0, 0])
        pl.store(mx, g_red[1], [0, 0])
        pl.store(mn, g_red[2], [0, 0])
        pl.store(pr, g_red[3], [0, 0])
        pl.store(am, g_idx[0], [0, 0])
        pl.store(an, g_idx[1], [0, 0])


def test_row_reductions_over_a_tail_window():
    torch.manual_seed(0)
    x = torch.rand(M, N) + 0.5
    outs = [torch.full((M, 1), -7.0) for _ in range(4)]
    idx = [torch.full((M, 1), -7, dtype=torch.int32) for _ in range(2)]
    launch(row_reduce_kernel, x, *outs, *idx)
    w = x[:R, :C].numpy().astype(np.float64)
    np.testing.assert_allclose(outs[0][:R, 0], w.sum(1), rtol=1e-5)
    np.testing.assert_array_equal(outs[1][:R, 0], w.max(1).astype(np.float32))
    np.testing.assert_array_equal(outs[2][:R, 0], w.min(1).astype(np.float32))
    np.testing.assert_allclose(outs[3][:R, 0], w.prod(1), rtol=1e-4)
    np.testing.assert_array_equal(idx[0][:R, 0], w.argmax(1))
    np.testing.assert_array_equal(idx[1][:R, 0], w.argmin(1))
    for t in (*outs, *idx):  # rows past the window are not written
        assert (t[R:] == -7).all()


@pl.jit
def col_reduce_kernel(x: pl.Tensor[[M, N], pl.DT_FP16], s: pl.Tensor[[1, N], pl.DT_FP16],
                      mx: pl.Tensor[[1, N], pl.DT_FP16], am: pl.Tensor[[1, N], pl.DT_INT32]):
    src_t = pl.TileType(shape=[M, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    red_t = pl.TileType(shape=[1, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    idx_t = pl.TileType(shape=[1, N], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    g_src = pl.make_tile_group(type=src_t, addrs=0x0, mutex_ids=[0])
    g_tmp = pl.make_tile_group(type=src_t, addrs=0x1000, mutex_ids=[1])
    g_red = pl.make_tile_group(type=red_t, addrs=[0x2000, 0x2100], mutex_ids=[2, 3])
    g_idx = pl.make_tile_group(type=idx_t, addrs=0x2200, mutex_ids=[4])
    with pl.section_vector():
        a = g_src.current()
        pl.load(a, x, [0, 0])
        pl.sum(g_red[0], a, g_tmp.current(), dim=1)
        pl.col_max(g_red[1], a, g_tmp.current())
        pl.argmax(g_idx[0], a, g_tmp.current(), dim=1)
        pl.store(s, g_red[0], [0, 0])
        pl.store(mx, g_red[1], [0, 0])
        pl.store(am, g_idx[0], [0, 0])


def test_column_reductions_fp16_sum_in_fp32():
    torch.manual_seed(1)
    x = torch.randn(M, N).half()
    s, mx = torch.zeros(1, N, dtype=torch.float16), torch.zeros(1, N, dtype=torch.float16)
    am = torch.zeros(1, N, dtype=torch.int32)
    launch(col_reduce_kernel, x, s, mx, am)
    w = x.float().numpy()
    # summed in fp32 and rounded once: within one fp16 rounding of the exact sum
    np.testing.assert_allclose(s[0].float().numpy(), w.sum(0), rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(mx[0].numpy(), x.numpy().max(0))
    np.testing.assert_array_equal(am[0].numpy(), w.argmax(0))


@pl.jit
def expand_kernel(x: pl.Tensor[[M, N], pl.DT_FP32], rv: pl.Tensor[[M, 1], pl.DT_FP32],
                  cv: pl.Tensor[[1, N], pl.DT_FP32], o_sub: pl.Tensor[[M, N], pl.DT_FP32],
                  o_div: pl.Tensor[[M, N], pl.DT_FP32], o_cmul: pl.Tensor[[M, N], pl.DT_FP32],
                  o_cmax: pl.Tensor[[M, N], pl.DT_FP32], o_exp: pl.Tensor[[M, N], pl.DT_FP32],
                  o_bc: pl.Tensor[[M, N], pl.DT_FP32]):
    t = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    rt = pl.TileType(shape=[M, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                     layout=pl.DN)
    ct = pl.TileType(shape=[1, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    g_x = pl.make_tile_group(type=t, addrs=0x0, mutex_ids=[0])
    g_r = pl.make_tile_group(type=rt, addrs=0x2000, mutex_ids=[1])
    g_c = pl.make_tile_group(type=ct, addrs=0x2100, mutex_ids=[2])
    g_o = pl.make_tile_group(type=t, addrs=[0x4000, 0x6000, 0x8000, 0xA000, 0xC000, 0xE000],
                             mutex_ids=[3, 4, 5, 6, 7, 8])
    with pl.section_vector():
        a = g_x.current()
        r = g_r.current()
        c = g_c.current()
        pl.load(a, x, [0, 0])
        pl.load(r, rv, [0, 0])
        pl.load(c, cv, [0, 0])
        pl.expand_sub(g_o[0], a, r)
        pl.row_expand_div(g_o[1], a, r)
        pl.expand_mul(g_o[2], a, c, dim=1)
        pl.col_expand_max(g_o[3], a, c)
        pl.row_expand_expdif(g_o[4], a, r)
        pl.set_validshape(g_o[5], [R, C])
        pl.row_expand(g_o[5], r)
        pl.store(o_sub, g_o[0], [0, 0])
        pl.store(o_div, g_o[1], [0, 0])
        pl.store(o_cmul, g_o[2], [0, 0])
        pl.store(o_cmax, g_o[3], [0, 0])
        pl.store(o_exp, g_o[4], [0, 0])
        pl.store(o_bc, g_o[5], [0, 0])


def test_broadcasts_along_rows_and_columns():
    torch.manual_seed(2)
    x = torch.randn(M, N)
    rv = torch.rand(M, 1) + 0.5
    cv = torch.randn(1, N)
    outs = [torch.zeros(M, N) for _ in range(6)]
    launch(expand_kernel, x, rv, cv, *outs)
    torch.testing.assert_close(outs[0], x - rv)
    torch.testing.assert_close(outs[1], x / rv)
    torch.testing.assert_close(outs[2], x * cv)
    torch.testing.assert_close(outs[3], torch.maximum(x, cv))
    torch.testing.assert_close(outs[4], torch.exp(x - rv))
    torch.testing.assert_close(outs[5][:R, :C], rv[:R].expand(R, C))


@pl.jit
def bad_dim_kernel(x: pl.Tensor[[M, N], pl.DT_FP32], s: pl.Tensor[[M, 1], pl.DT_FP32]):
    t = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    rt = pl.TileType(shape=[M, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    g = pl.make_tile_group(type=t, addrs=0x0, mutex_ids=[0])
    g_r = pl.make_tile_group(type=rt, addrs=0x2000, mutex_ids=[1])
    with pl.section_vector():
        pl.load(g.current(), x, [0, 0])
        pl.sum(g_r.current(), g.current(), g.current(), dim=2)
        pl.store(s, g_r.current(), [0, 0])


def test_a_dim_other_than_0_or_1_is_refused_at_its_line():
    with pytest.raises(KernelError, match=r"dim must be 0 \(per row\) or 1") as err:
        launch(bad_dim_kernel, torch.zeros(M, N), torch.zeros(M, 1))
    assert "test_pto_reduce.py" in str(err.value)
