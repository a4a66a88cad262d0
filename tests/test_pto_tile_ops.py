"""PyPTO Pro compare/select, fused casts, partial ops, quantisation, gathers, scatter, fills,
sorts and the histogram on the simulated 950, against numpy/torch references."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim.isa import KernelError
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
M, N = 16, 64


def launch(kernel, *args):
    with SESSION.using_soc(SOC):
        report = kernel(*args)
    assert report.findings == [], report.findings
    return report


@pl.jit
def compare_select_kernel(a: pl.Tensor[[M, N], pl.DT_FP32], b: pl.Tensor[[M, N], pl.DT_FP32],
                          o_tt: pl.Tensor[[M, N], pl.DT_FP32],
                          o_ts: pl.Tensor[[M, N], pl.DT_FP32]):
    t = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    mt = pl.TileType(shape=[M, N], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec)
    g = pl.make_tile_group(type=t, addrs=[0x0, 0x1000, 0x2000, 0x3000, 0x4000],
                           mutex_ids=[0, 1, 2, 3, 4])
    gm = pl.make_tile_group(type=mt, addrs=[0x5000, 0x5400], mutex_ids=[5, 6])
    with pl.section_vector():
        pl.load(g[0], a, [0, 0])
        pl.load(g[1], b, [0, 0])
        pl.gt(gm[0], g[0], g[1])
        pl.select(g[2], gm[0], g[0], g[1], g[4])
        pl.cmps(gm[1], g[0], 0.25, cmp_mode=pl.CmpMode.LE)
        pl.sels(g[3], gm[1], g[0], g[4], -1.0)
        pl.store(o_tt, g[2], [0, 0])
        pl.store(o_ts, g[3], [0, 0])


def test_compare_into_bits_and_select_by_them():
    torch.manual_seed(0)
    a, b = torch.randn(M, N), torch.randn(M, N)
    o_tt, o_ts = torch.zeros(M, N), torch.zeros(M, N)
    launch(compare_select_kernel, a, b, o_tt, o_ts)
    torch.testing.assert_close(o_tt, torch.maximum(a, b))
    torch.testing.assert_close(o_ts, torch.where(a <= 0.25, a, torch.tensor(-1.0)))


@pl.jit
def fused_kernel(a: pl.Tensor[[M, N], pl.DT_FP16], b: pl.Tensor[[M, N], pl.DT_FP16],
                 o_arc: pl.Tensor[[M, N], pl.DT_FP32], o_mc: pl.Tensor[[M, N], pl.DT_FP32],
                 o_part: pl.Tensor[[M, N], pl.DT_FP16]):
    h = pl.TileType(shape=[M, N], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec,
                    valid_shape=[-1, -1])
    f = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    gh = pl.make_tile_group(type=h, addrs=[0x0, 0x800, 0x1000], mutex_ids=[0, 1, 2])
    gf = pl.make_tile_group(type=f, addrs=[0x2000, 0x3000], mutex_ids=[3, 4])
    with pl.section_vector():
        pl.load(gh[0], a, [0, 0])
        pl.load(gh[1], b, [0, 0])
        pl.add_relu_cast(gf[0], gh[0], gh[1], target_type=pl.DT_FP32)
        pl.mul_cast(gf[1], gh[0], gh[1], target_type=pl.DT_FP32)
        pl.set_validshape(gh[1], [M // 2, N])
        pl.partmax(gh[2], gh[0], gh[1])
        pl.store(o_arc, gf[0], [0, 0])
        pl.store(o_mc, gf[1], [0, 0])
        pl.store(o_part, gh[2], [0, 0])


def test_fused_casts_round_in_the_source_type_and_partial_ops_cover_both_windows():
    torch.manual_seed(1)
    a, b = torch.randn(M, N).half(), torch.randn(M, N).half()
    o_arc, o_mc = torch.zeros(M, N), torch.zeros(M, N)
    o_part = torch.zeros(M, N, dtype=torch.float16)
    launch(fused_kernel, a, b, o_arc, o_mc, o_part)
    torch.testing.assert_close(o_arc, torch.relu(a + b).float(), rtol=0, atol=0)
    torch.testing.assert_close(o_mc, (a * b).float(), rtol=0, atol=0)
    ref = a.clone()
    ref[:M // 2] = torch.maximum(a[:M // 2], b[:M // 2])
    torch.testing.assert_close(o_part, ref)


@pl.jit
def quant_kernel(x: pl.Tensor[[M, N], pl.DT_FP32], scale: pl.Tensor[[M, 1], pl.DT_FP32],
                 offset: pl.Tensor[[M, 1], pl.DT_FP32], q: pl.Tensor[[M, N], pl.DT_INT8],
                 dq: pl.Tensor[[M, N], pl.DT_FP32]):
    f = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    s = pl.TileType(shape=[M, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    i8 = pl.TileType(shape=[M, N], dtype=pl.DT_INT8, target_memory=pl.MemorySpace.Vec)
    gf = pl.make_tile_group(type=f, addrs=[0x0, 0x1000], mutex_ids=[0, 1])
    gs = pl.make_tile_group(type=s, addrs=[0x2000, 0x2100], mutex_ids=[2, 3])
    gq = pl.make_tile_group(type=i8, addrs=0x3000, mutex_ids=[4])
    with pl.section_vector():
        pl.load(gf[0], x, [0, 0])
        pl.load(gs[0], scale, [0, 0])
        pl.load(gs[1], offset, [0, 0])
        pl.quant(gq[0], gf[0], gs[0], mode=pl.QuantMode.SYM)
        pl.dequant(gf[1], gq[0], gs[0], gs[1])
        pl.store(q, gq[0], [0, 0])
        pl.store(dq, gf[1], [0, 0])


def test_quant_saturates_half_to_even_and_dequant_inverts_it():
    torch.manual_seed(2)
    x = torch.randn(M, N) * 40
    scale = torch.rand(M, 1) * 4 + 0.1
    offset = torch.randn(M, 1)
    q, dq = torch.zeros(M, N, dtype=torch.int8), torch.zeros(M, N)
    launch(quant_kernel, x, scale, offset, q, dq)
    q_ref = torch.clamp(torch.round(x * scale), -128, 127).to(torch.int8)
    torch.testing.assert_close(q, q_ref, rtol=0, atol=0)
    torch.testing.assert_close(dq, (q_ref.float() - offset) * scale)


@pl.jit
def gather_kernel(src: pl.Tensor[[M, N], pl.DT_FP32], idx: pl.Tensor[[M, N], pl.DT_INT32],
                  offs: pl.Tensor[[M, 8], pl.DT_UINT32], o_g: pl.Tensor[[M, N], pl.DT_FP32],
                  o_gb: pl.Tensor[[M, N], pl.DT_FP32], o_gm: pl.Tensor[[M, 16], pl.DT_FP32],
                  o_sc: pl.Tensor[[M, N], pl.DT_FP32], o_tr: pl.Tensor[[N, M], pl.DT_FP32]):
    f = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    i = pl.TileType(shape=[M, N], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    ot = pl.TileType(shape=[M, 8], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec)
    mt = pl.TileType(shape=[M, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    tt = pl.TileType(shape=[N, M], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    gf = pl.make_tile_group(type=f, addrs=[0x0, 0x1000, 0x2000, 0x3000], mutex_ids=[0, 1, 2, 3])
    gi = pl.make_tile_group(type=i, addrs=[0x4000, 0x5000], mutex_ids=[4, 5])
    go = pl.make_tile_group(type=ot, addrs=0x6000, mutex_ids=[6])
    gm = pl.make_tile_group(type=mt, addrs=0x6800, mutex_ids=[7])
    gt = pl.make_tile_group(type=tt, addrs=0x7000, mutex_ids=[8])
    with pl.section_vector():
        pl.load(gf[0], src, [0, 0])
        pl.load(gi[0], idx, [0, 0])
        pl.load(go[0], offs, [0, 0])
        pl.gather(gf[1], gf[0], gi[0], gi[1])
        pl.gatherb(gf[2], gf[0], go[0])
        pl.set_validshape(gf[0], [M, 32])
        pl.gathermask(gm[0], gf[0], pattern_mode=2)
        pl.set_validshape(gf[0], [M, N])
        pl.expands(gf[3], 0.0)
        pl.scatter(gf[3], gf[0], gi[0])
        pl.transpose(gt[0], gf[0])
        pl.store(o_g, gf[1], [0, 0])
        pl.store(o_gb, gf[2], [0, 0])
        pl.store(o_gm, gm[0], [0, 0])
        pl.store(o_sc, gf[3], [0, 0])
        pl.store(o_tr, gt[0], [0, 0])


def test_gathers_scatter_and_transpose():
    torch.manual_seed(3)
    src = torch.randn(M, N)
    perm = torch.randperm(M * N).to(torch.int32).reshape(M, N)
    blocks = torch.randperm(M * N * 4 // 32)[:M * 8].to(torch.int64)
    offs = (blocks * 32).to(torch.int32).reshape(M, 8)
    outs = [torch.zeros(M, N), torch.zeros(M, N), torch.zeros(M, 16), torch.zeros(M, N),
            torch.zeros(N, M)]
    launch(gather_kernel, src, perm, offs, *outs)
    flat = src.reshape(-1)
    torch.testing.assert_close(outs[0], flat[perm.long()])
    per_block = 32 // 4
    gb = flat.reshape(-1, per_block)[blocks].reshape(M, N)
    torch.testing.assert_close(outs[1], gb)
    torch.testing.assert_close(outs[2], src[:, 1:32:2])
    scattered = torch.zeros(M * N)
    scattered[perm.reshape(-1).long()] = flat
    torch.testing.assert_close(outs[3], scattered.reshape(M, N))
    torch.testing.assert_close(outs[4], src.T)


@pl.jit
def gather_compare_kernel(src: pl.Tensor[[1, 128], pl.DT_INT16],
                          out: pl.Tensor[[1, 144], pl.DT_UINT32]):
    s = pl.make_tile_group(type=pl.TileType(shape=[1, 128], dtype=pl.DT_INT16,
                                            target_memory=pl.MemorySpace.Vec),
                           addrs=0x0, mutex_ids=[0])
    k = pl.make_tile_group(type=pl.TileType(shape=[1, 16], dtype=pl.DT_INT16,
                                            target_memory=pl.MemorySpace.Vec),
                           addrs=0x100, mutex_ids=[1])
    d = pl.make_tile_group(type=pl.TileType(shape=[1, 128], dtype=pl.DT_UINT32,
                                            target_memory=pl.MemorySpace.Vec),
                           addrs=0x200, mutex_ids=[2])
    c = pl.make_tile_group(type=pl.TileType(shape=[1, 16], dtype=pl.DT_UINT32,
                                            target_memory=pl.MemorySpace.Vec),
                           addrs=0x400, mutex_ids=[3])
    t = pl.make_tile_group(type=pl.TileType(shape=[1, 256], dtype=pl.DT_UINT32,
                                            target_memory=pl.MemorySpace.Vec),
                           addrs=0x800, mutex_ids=[4])
    with pl.section_vector():
        pl.load(s[0], src, [0, 0])
        pl.expands(k[0], 5)
        pl.expands(d[0], 0)
        pl.expands(c[0], 0)
        pl.gather(d[0], s[0], k[0], c[0], t[0], cmp_mode=5, offset=1000)
        pl.store(out, d[0], [0, 0])
        pl.store(out, c[0], [0, 128])


def test_gather_compare_form_collects_indices_and_the_byte_count():
    torch.manual_seed(4)
    src = torch.randint(0, 10, (1, 128), dtype=torch.int16)
    out = torch.zeros(1, 144, dtype=torch.int32)
    launch(gather_compare_kernel, src, out)
    hits = (torch.nonzero(src[0] >= 5).reshape(-1) + 1000).to(torch.int32)
    assert out[0, 128].item() == hits.numel() * 4
    torch.testing.assert_close(out[0, :hits.numel()], hits)


@pl.jit
def fill_kernel(x: pl.Tensor[[8, 8], pl.DT_INT32], o_pad: pl.Tensor[[8, 16], pl.DT_INT32],
                o_idx: pl.Tensor[[1, 64], pl.DT_INT32]):
    st = pl.TileType(shape=[8, 8], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec,
                     valid_shape=[-1, -1])
    dt = pl.TileType(shape=[8, 16], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec,
                     pad=pl.TilePad.min)
    it = pl.TileType(shape=[1, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
    gs = pl.make_tile_group(type=st, addrs=0x0, mutex_ids=[0])
    gd = pl.make_tile_group(type=dt, addrs=0x100, mutex_ids=[1])
    gi = pl.make_tile_group(type=it, addrs=0x400, mutex_ids=[2])
    with pl.section_vector():
        pl.set_validshape(gs, [5, 7])
        pl.load(gs[0], x, [0, 0])
        pl.fillpad(gd[0], gs[0], mode=pl.FillPadMode.EXPAND)
        pl.fill_index(gi[0], -3)
        pl.store(o_pad, gd[0], [0, 0])
        pl.store(o_idx, gi[0], [0, 0])


def test_fillpad_expand_and_fill_index():
    x = torch.arange(64, dtype=torch.int32).reshape(8, 8)
    o_pad = torch.zeros(8, 16, dtype=torch.int32)
    o_idx = torch.zeros(1, 64, dtype=torch.int32)
    launch(fill_kernel, x, o_pad, o_idx)
    ref = torch.full((8, 16), torch.iinfo(torch.int32).min, dtype=torch.int32)
    ref[:5, :7] = x[:5, :7]
    torch.testing.assert_close(o_pad, ref)
    torch.testing.assert_close(o_idx[0], torch.arange(-3, 61, dtype=torch.int32))


def _entries(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Independent encoding of (value, uint32 index) 8-byte entries."""
    out = bytearray()
    for v, i in zip(values, index):
        raw = np.asarray(v).tobytes()
        out += raw + bytes(4 - len(raw)) + int(i).to_bytes(4, "little")
    return np.frombuffer(bytes(out), dtype=values.dtype)


@pl.jit
def sort_kernel(a: pl.Tensor[[1, 64], pl.DT_FP32], idx: pl.Tensor[[1, 64], pl.DT_UINT32],
                runs: pl.Tensor[[1, 128], pl.DT_FP32], merged: pl.Tensor[[1, 128], pl.DT_FP32]):
    vt = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    it = pl.TileType(shape=[1, 64], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec)
    et = pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    gv = pl.make_tile_group(type=vt, addrs=0x0, mutex_ids=[0])
    gi = pl.make_tile_group(type=it, addrs=0x100, mutex_ids=[1])
    ge = pl.make_tile_group(type=et, addrs=[0x200, 0x400, 0x600], mutex_ids=[2, 3, 4])
    with pl.section_vector():
        pl.load(gv[0], a, [0, 0])
        pl.load(gi[0], idx, [0, 0])
        pl.sort32(ge[0], gv[0], gi[0])
        pl.mrgsort(ge[1], ge[0], block_len=64)
        pl.store(runs, ge[0], [0, 0])
        pl.store(merged, ge[1], [0, 0])


def test_sort32_sorts_runs_and_mrgsort_merges_them():
    torch.manual_seed(5)
    a = torch.randn(1, 64)
    idx = torch.arange(100, 164, dtype=torch.int32).reshape(1, 64)
    runs, merged = torch.zeros(1, 128), torch.zeros(1, 128)
    launch(sort_kernel, a, idx, runs, merged)
    v, i = a[0].numpy(), idx[0].numpy()
    expect = []
    for start in (0, 32):
        order = np.argsort(-v[start:start + 32], kind="stable") + start
        expect.append(_entries(v[order], i[order]))
    np.testing.assert_array_equal(runs[0].numpy().view(np.uint32),
                                  np.concatenate(expect).view(np.uint32))
    order = np.argsort(-v, kind="stable")
    np.testing.assert_array_equal(merged[0].numpy().view(np.uint32),
                                  _entries(v[order], i[order]).view(np.uint32))


@pl.jit
def histogram_kernel(src: pl.Tensor[[32, 64], pl.DT_UINT16], idx: pl.Tensor[[32, 1], pl.DT_UINT8],
                     o_msb: pl.Tensor[[32, 256], pl.DT_UINT32],
                     o_lsb: pl.Tensor[[32, 256], pl.DT_UINT32]):
    st = pl.TileType(shape=[32, 64], dtype=pl.DT_UINT16, target_memory=pl.MemorySpace.Vec)
    it = pl.TileType(shape=[32, 1], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec,
                     layout=pl.DN)
    dt = pl.TileType(shape=[32, 256], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec)
    gs = pl.make_tile_group(type=st, addrs=0x0, mutex_ids=[0])
    gi = pl.make_tile_group(type=it, addrs=0x1000, mutex_ids=[1])
    gd = pl.make_tile_group(type=dt, addrs=[0x2000, 0xA000], mutex_ids=[2, 3])
    with pl.section_vector():
        pl.load(gs[0], src, [0, 0])
        pl.load(gi[0], idx, [0, 0])
        pl.histogram(gd[0], gs[0], gi[0], is_msb=True)
        pl.histogram(gd[1], gs[0], gi[0], is_msb=False)
        pl.store(o_msb, gd[0], [0, 0])
        pl.store(o_lsb, gd[1], [0, 0])


def test_histogram_running_counts():
    torch.manual_seed(6)
    src = torch.randint(0, 1 << 16, (32, 64), dtype=torch.int32)
    src[:, :8] = (src[:, :8] & 0xFF) | 0x1200  # make the LSB filter match something
    idx = torch.full((32, 1), 0x12, dtype=torch.uint8)
    o_msb = torch.zeros(32, 256, dtype=torch.int32)
    o_lsb = torch.zeros(32, 256, dtype=torch.int32)
    launch(histogram_kernel, src.to(torch.uint16), idx, o_msb, o_lsb)
    s = src.numpy()
    for r in range(32):
        msb = np.cumsum(np.bincount(s[r] >> 8, minlength=256))
        lsb = np.cumsum(np.bincount(s[r][(s[r] >> 8) == 0x12] & 0xFF, minlength=256))
        np.testing.assert_array_equal(o_msb[r].numpy(), msb)
        np.testing.assert_array_equal(o_lsb[r].numpy(), lsb)


@pl.jit
def bad_histogram_kernel(src: pl.Tensor[[32, 64], pl.DT_INT16],
                         o: pl.Tensor[[32, 256], pl.DT_UINT32]):
    st = pl.TileType(shape=[32, 64], dtype=pl.DT_INT16, target_memory=pl.MemorySpace.Vec)
    it = pl.TileType(shape=[32, 1], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec,
                     layout=pl.DN)
    dt = pl.TileType(shape=[32, 256], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec)
    gs = pl.make_tile_group(type=st, addrs=0x0, mutex_ids=[0])
    gi = pl.make_tile_group(type=it, addrs=0x1000, mutex_ids=[1])
    gd = pl.make_tile_group(type=dt, addrs=0x2000, mutex_ids=[2])
    with pl.section_vector():
        pl.load(gs[0], src, [0, 0])
        pl.histogram(gd[0], gs[0], gi[0], is_msb=True)
        pl.store(o, gd[0], [0, 0])


def test_histogram_of_a_signed_source_is_refused():
    with pytest.raises(KernelError, match="UINT16 source"):
        launch(bad_histogram_kernel, torch.zeros(32, 64, dtype=torch.int16),
               torch.zeros(32, 256, dtype=torch.int32))


@pl.jit
def mrgsort2_kernel(l0: pl.Tensor[[1, 64], pl.DT_FP32], l1: pl.Tensor[[1, 32], pl.DT_FP32],
                    full: pl.Tensor[[1, 96], pl.DT_FP32], stop: pl.Tensor[[1, 96], pl.DT_FP32]):
    t0 = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    t1 = pl.TileType(shape=[1, 32], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    td = pl.TileType(shape=[1, 96], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    g0 = pl.make_tile_group(type=t0, addrs=0x0, mutex_ids=[0])
    g1 = pl.make_tile_group(type=t1, addrs=0x100, mutex_ids=[1])
    gd = pl.make_tile_group(type=td, addrs=[0x200, 0x400, 0x600], mutex_ids=[2, 3, 4])
    with pl.section_vector():
        pl.load(g0[0], l0, [0, 0])
        pl.load(g1[0], l1, [0, 0])
        pl.expands(gd[1], 0.0)
        pl.mrgsort2(g0[0], g1[0], gd[0], gd[2])
        pl.mrgsort2(g0[0], g1[0], gd[1], gd[2], exhausted=True)
        pl.store(full, gd[0], [0, 0])
        pl.store(stop, gd[1], [0, 0])


def test_mrgsort2_merges_two_lists_and_stops_when_one_runs_out():
    torch.manual_seed(7)
    v0 = np.sort(np.random.default_rng(0).normal(size=32).astype(np.float32))[::-1]
    v1 = np.sort(np.random.default_rng(1).normal(size=16).astype(np.float32))[::-1] + 0.5
    i0, i1 = np.arange(32), np.arange(100, 116)
    l0 = torch.from_numpy(_entries(v0.copy(), i0).copy()).reshape(1, 64)
    l1 = torch.from_numpy(_entries(v1.copy(), i1).copy()).reshape(1, 32)
    full, stop = torch.zeros(1, 96), torch.zeros(1, 96)
    launch(mrgsort2_kernel, l0, l1, full, stop)
    values, index = np.concatenate([v0, v1]), np.concatenate([i0, i1])
    order = np.argsort(-values, kind="stable")
    merged = _entries(values[order], index[order])
    np.testing.assert_array_equal(full[0].numpy().view(np.uint32), merged.view(np.uint32))
    # exhausted: the merge stops after the last entry of the first list to run out (list 1)
    last = int(np.flatnonzero(order >= 32)[-1]) + 1
    got = stop[0].numpy().view(np.uint32)
    np.testing.assert_array_equal(got[:2 * last], merged.view(np.uint32)[:2 * last])
    assert (got[2 * last:] == 0).all()


@pl.jit
def quant_asym_kernel(x: pl.Tensor[[M, N], pl.DT_FP32], scale: pl.Tensor[[M, 1], pl.DT_FP32],
                      offset: pl.Tensor[[M, 1], pl.DT_FP32], q: pl.Tensor[[M, N], pl.DT_UINT8]):
    f = pl.TileType(shape=[M, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    s = pl.TileType(shape=[M, 1], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    u8 = pl.TileType(shape=[M, N], dtype=pl.DT_UINT8, target_memory=pl.MemorySpace.Vec)
    gf = pl.make_tile_group(type=f, addrs=0x0, mutex_ids=[0])
    gs = pl.make_tile_group(type=s, addrs=[0x2000, 0x2100], mutex_ids=[2, 3])
    gq = pl.make_tile_group(type=u8, addrs=0x3000, mutex_ids=[4])
    with pl.section_vector():
        pl.load(gf[0], x, [0, 0])
        pl.load(gs[0], scale, [0, 0])
        pl.load(gs[1], offset, [0, 0])
        pl.quant(gq[0], gf[0], gs[0], mode=pl.QuantMode.ASYM, offset=gs[1])
        pl.store(q, gq[0], [0, 0])


def test_quant_asym_adds_the_offset_after_rounding_and_saturates_to_uint8():
    torch.manual_seed(8)
    x = torch.randn(M, N) * 60
    scale = torch.rand(M, 1) + 0.5
    offset = torch.randint(0, 256, (M, 1)).float()
    q = torch.zeros(M, N, dtype=torch.uint8)
    launch(quant_asym_kernel, x, scale, offset, q)
    ref = torch.clamp(torch.round(x * scale) + offset, 0, 255).to(torch.uint8)
    torch.testing.assert_close(q, ref, rtol=0, atol=0)


@pytest.mark.parametrize("case", ["gather", "sort", "histogram", "compare"])
def test_timing_only_runs_take_the_same_time_and_find_nothing(case):
    """The routines' costs do not depend on the values, and their accesses are checked
    without them."""
    rng = torch.Generator().manual_seed(9)
    cases = {
        "gather": (gather_kernel, lambda: (
            torch.randn(M, N, generator=rng),
            torch.randperm(M * N, generator=rng).to(torch.int32).reshape(M, N),
            (torch.arange(M * 8, dtype=torch.int32) * 32).reshape(M, 8),
            torch.zeros(M, N), torch.zeros(M, N), torch.zeros(M, 16), torch.zeros(M, N),
            torch.zeros(N, M))),
        "sort": (sort_kernel, lambda: (torch.randn(1, 64, generator=rng),
                                       torch.arange(64, dtype=torch.int32).reshape(1, 64),
                                       torch.zeros(1, 128), torch.zeros(1, 128))),
        "histogram": (histogram_kernel, lambda: (
            torch.randint(0, 1 << 15, (32, 64), generator=rng).to(torch.uint16),
            torch.zeros(32, 1, dtype=torch.uint8), torch.zeros(32, 256, dtype=torch.int32),
            torch.zeros(32, 256, dtype=torch.int32))),
        "compare": (compare_select_kernel, lambda: (torch.randn(M, N, generator=rng),
                                                    torch.randn(M, N, generator=rng),
                                                    torch.zeros(M, N), torch.zeros(M, N))),
    }
    kernel, make = cases[case]
    full = launch(kernel, *make())
    with SESSION.values(False):
        timed = launch(kernel, *make())
    assert timed.device_time_us == pytest.approx(full.device_time_us)
