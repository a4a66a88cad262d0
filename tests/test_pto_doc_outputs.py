"""PyPTO Pro's API pages print device outputs of their examples; the simulator gives the same.

The inputs are the pages' own: ``fp16(start + step * arange)`` matrices (rounded to fp16 as the
pages show them) and, for the histogram, rows of ``base + 257 * i`` (uint16). The expected
numbers are copied from the pages' output blocks (hicann/pypto, docs/zh/pypto_pro/api/SIMD-API/
operation/memory_vector_computation/: partadd.md, histogram.md, argmax.md, sum.md).
"""

from __future__ import annotations

import numpy as np
import torch

import ascsim.pto.language as pl
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
M, N = 64, 128


def launch(kernel, *args):
    with SESSION.using_soc(SOC):
        report = kernel(*args)
    assert report.findings == [], report.findings
    return report


def ramp(step: float, start: float, dtype=torch.float16) -> torch.Tensor:
    return (torch.arange(M * N, dtype=torch.float32) * step + start).to(dtype).reshape(M, N)


@pl.jit
def partadd_kernel(x: pl.Tensor[[M, N], pl.DT_FP16], y: pl.Tensor[[M, N], pl.DT_FP16],
                   z: pl.Tensor[[M, N], pl.DT_FP16]):
    t = pl.TileType(shape=[M, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec,
                    valid_shape=[-1, -1])
    g = pl.make_tile_group(type=t, addrs=[0x0, 0x4000, 0x8000], mutex_ids=[0, 1, 2])
    with pl.section_vector():
        pl.set_validshape(g[0], [M, N])
        pl.load(g[0], x, [0, 0])
        pl.set_validshape(g[1], [32, N])
        pl.load(g[1], y, [0, 0])
        pl.set_validshape(g[2], [M, N])
        pl.partadd(g[2], g[0], g[1])
        pl.store(z, g[2], [0, 0])


def test_partadd_page_output():
    x, y = ramp(0.25, 1.0), ramp(0.5, 10.0)
    z = torch.zeros(M, N, dtype=torch.float16)
    launch(partadd_kernel, x, y, z)
    page = {  # rows 0, 1, 30, 31, 32, 33: the first 16 values of each
        0: [11, 11.75, 12.5, 13.25, 14, 14.75, 15.5, 16.25, 17, 17.75, 18.5, 19.25, 20, 20.75,
            21.5, 22.25],
        1: [107, 107.75, 108.5, 109.25, 110, 110.75, 111.5, 112.25, 113, 113.75, 114.5, 115.25,
            116, 116.75, 117.5, 118.25],
        30: [2892, 2892, 2892, 2894, 2894, 2894, 2896, 2896, 2896, 2896, 2898, 2900, 2900, 2900,
             2902, 2904],
        31: [2988, 2988, 2988, 2990, 2990, 2990, 2992, 2992, 2992, 2992, 2994, 2996, 2996, 2996,
             2998, 3000],
        32: [1025, 1025, 1026, 1026, 1026, 1026, 1026, 1027, 1027, 1027, 1028, 1028, 1028, 1028,
             1028, 1029],
        33: [1057, 1057, 1058, 1058, 1058, 1058, 1058, 1059, 1059, 1059, 1060, 1060, 1060, 1060,
             1060, 1061],
    }
    for row, values in page.items():
        assert z[row, :16].tolist() == values, row


@pl.jit
def histogram_kernel(src: pl.Tensor[[32, N], pl.DT_UINT16], idx: pl.Tensor[[32, 1], pl.DT_UINT8],
                     out: pl.Tensor[[32, 256], pl.DT_UINT32]):
    ts = pl.TileType(shape=[32, N], dtype=pl.DT_UINT16, target_memory=pl.MemorySpace.Vec)
    ti = pl.TileType(shape=[32, 1], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec,
                     layout=pl.DN)
    td = pl.TileType(shape=[32, 256], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec)
    gs = pl.make_tile_group(type=ts, addrs=0x0, mutex_ids=[0])
    gi = pl.make_tile_group(type=ti, addrs=0x2000, mutex_ids=[1])
    gd = pl.make_tile_group(type=td, addrs=0x2020, mutex_ids=[2])
    with pl.section_vector():
        pl.load(gs[0], src, [0, 0])
        pl.load(gi[0], idx, [0, 0])
        pl.histogram(gd[0], gs[0], gi[0], is_msb=True)
        pl.store(out, gd[0], [0, 0])


def test_histogram_page_output():
    rows = np.arange(32)[:, None]
    base = (rows // 2) * 256 + (rows % 2) * 32896
    src = torch.from_numpy(((base + 257 * np.arange(N)) % 65536).astype(np.int32))
    out = torch.zeros(32, 256, dtype=torch.int32)
    launch(histogram_kernel, src.to(torch.uint16), torch.zeros(32, 1, dtype=torch.uint8), out)
    assert out[0, :8].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert out[1, :8].tolist() == [0] * 8
    assert out[2, :8].tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    assert out[3, :8].tolist() == [1] * 8


@pl.jit
def argmax_sum_kernel(x: pl.Tensor[[M, N], pl.DT_FP16], rows: pl.Tensor[[M, 1], pl.DT_INT32],
                      cols: pl.Tensor[[1, N], pl.DT_INT32], xs: pl.Tensor[[M, N], pl.DT_FP32],
                      sums: pl.Tensor[[M, 1], pl.DT_FP32]):
    th = pl.TileType(shape=[M, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    tf = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tr = pl.TileType(shape=[M, 1], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    tc = pl.TileType(shape=[1, N], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    ts = pl.TileType(shape=[M, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec,
                     layout=pl.DN)
    gh = pl.make_tile_group(type=th, addrs=[0x0, 0x4000], mutex_ids=[0, 1])
    gf = pl.make_tile_group(type=tf, addrs=[0x8000, 0x10000], mutex_ids=[2, 3])
    gr = pl.make_tile_group(type=tr, addrs=0x18000, mutex_ids=[4])
    gc = pl.make_tile_group(type=tc, addrs=0x18100, mutex_ids=[5])
    gs = pl.make_tile_group(type=ts, addrs=0x18400, mutex_ids=[6])
    with pl.section_vector():
        pl.load(gh[0], x, [0, 0])
        pl.argmax(gr[0], gh[0], gh[1])
        pl.argmax(gc[0], gh[0], gh[1], dim=1)
        pl.load(gf[0], xs, [0, 0])
        pl.sum(gs[0], gf[0], gf[1])
        pl.store(rows, gr[0], [0, 0])
        pl.store(cols, gc[0], [0, 0])
        pl.store(sums, gs[0], [0, 0])


def test_argmax_and_row_sum_page_outputs():
    rows = torch.zeros(M, 1, dtype=torch.int32)
    cols = torch.zeros(1, N, dtype=torch.int32)
    sums = torch.zeros(M, 1)
    launch(argmax_sum_kernel, ramp(0.25, -8.0), rows, cols, ramp(0.25, -8.0, torch.float32),
           sums)
    assert rows[:4, 0].tolist() == [127] * 4
    assert cols[0, :8].tolist() == [63] * 8
    assert sums[:4, 0].tolist() == [1008.0, 5104.0, 9200.0, 13296.0]
