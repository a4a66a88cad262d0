"""The cube path of the PyPTO Pro front-end: move (Mat->Left/Right/Bias, extraction, the
NZ<->ZN transpose, Acc->Vec in every split mode, Vec->Vec, Vec->Mat insert), matmul /
matmul_acc with bias, valid shapes and unit-flag phases, and stores from an Acc tile -- each
checked against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim.pto.errors import ParserSyntaxError
from ascsim.session import SESSION
from ascsim.sim.errors import DeadlockError

SOC = "Ascend950PR_9579"
M, K, N = 64, 64, 64
Mat, Left, Right, Acc, Vec, Bias = (pl.MemorySpace.Mat, pl.MemorySpace.Left,
                                    pl.MemorySpace.Right, pl.MemorySpace.Acc,
                                    pl.MemorySpace.Vec, pl.MemorySpace.Bias)


@pytest.fixture(autouse=True)
def _soc():
    with SESSION.using_soc(SOC):
        yield


def _tile(shape, dtype, space, addr, **kw):
    return pl.make_tile(pl.TileType(shape=shape, dtype=dtype, target_memory=space, **kw),
                        addr=addr)


def _ref(a, b):
    return a.float() @ b.float()


def _kinds(collection) -> set[str]:
    return {f.category for r in collection.reports for f in r.findings}


# ------------------------------------------------------------------ kernels
def _mm_scaled(a, b, c, in_type, scale, atomic=pl.AtomicType.AtomicNone):
    """C = A @ B through L1 and L0, stored with ``scale`` (a helper the kernels inline)."""
    with pl.section_cube():
        a_mat = _tile([M, K], in_type, Mat, 0)
        b_mat = _tile([K, N], in_type, Mat, 0x4000)
        a_l0 = _tile([M, K], in_type, Left, 0)
        b_l0 = _tile([K, N], in_type, Right, 0)
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        pl.load(a_mat, a, [0, 0])
        pl.load(b_mat, b, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(a_l0, a_mat)
        pl.move(b_l0, b_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(acc, a_l0, b_l0)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(c, acc, [0, 0], scale=scale, atomic=atomic)


@pl.jit()
def mm_kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
              c: pl.Tensor[[M, N], pl.DT_FP32]):
    _mm_scaled(a, b, c, pl.DT_FP16, None)


def test_matmul_single_tile():
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    c = torch.zeros(M, N)
    with SESSION.collect() as run:
        mm_kernel(a, b, c)
    torch.testing.assert_close(c, _ref(a, b), rtol=1e-3, atol=1e-3)
    assert not _kinds(run), _kinds(run)


@pl.jit()
def mm_tail_kernel(a: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
                   b: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP16],
                   c: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32]):
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    with pl.section_cube():
        a_mat = _tile([M, K], pl.DT_FP16, Mat, 0)
        b_mat = _tile([K, N], pl.DT_FP16, Mat, 0x4000)
        a_l0 = _tile([M, K], pl.DT_FP16, Left, 0)
        b_l0 = _tile([K, N], pl.DT_FP16, Right, 0)
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        pl.set_validshape(a_mat, [m, k])
        pl.set_validshape(b_mat, [k, n])
        pl.set_validshape(a_l0, [m, k])
        pl.set_validshape(b_l0, [k, n])
        pl.set_validshape(acc, [m, n])
        pl.load(a_mat, a, [0, 0])
        pl.load(b_mat, b, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(a_l0, a_mat)
        pl.move(b_l0, b_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(acc, a_l0, b_l0)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(c, acc, [0, 0])


@pytest.mark.parametrize("m,k,n", [(33, 40, 17), (64, 9, 64), (1, 64, 48)])
def test_matmul_tails_read_the_fractal_frames(m, k, n):
    """Valid shapes smaller than the tiles: the Mmad reads the operands in their (larger)
    frames and honours the valid K (fractal padding past K never enters the sum)."""
    a, b = torch.randn(m, k, dtype=torch.float16), torch.randn(k, n, dtype=torch.float16)
    c = torch.full((m, n), -7.0)
    mm_tail_kernel(a, b, c)
    torch.testing.assert_close(c, _ref(a, b), rtol=1e-3, atol=1e-3)


KL = 128


@pl.jit(auto_mutex=True)
def mm_acc_bias_kernel(a: pl.Tensor[[M, KL], pl.DT_BF16], b: pl.Tensor[[KL, N], pl.DT_BF16],
                       bias: pl.Tensor[[1, N], pl.DT_BF16], c: pl.Tensor[[M, N], pl.DT_FP32]):
    a_l1 = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=pl.DT_BF16,
                                               target_memory=Mat), addrs=0, mutex_ids=[0, 1])
    b_l1 = pl.make_tile_group(type=pl.TileType(shape=[K, N], dtype=pl.DT_BF16,
                                               target_memory=Mat), addrs=0x8000,
                              mutex_ids=[2, 3])
    a_l0 = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=pl.DT_BF16,
                                               target_memory=Left), addrs=0, mutex_ids=[4, 5])
    b_l0 = pl.make_tile_group(type=pl.TileType(shape=[K, N], dtype=pl.DT_BF16,
                                               target_memory=Right), addrs=0, mutex_ids=[6, 7])
    acc = pl.make_tile_group(type=pl.TileType(shape=[M, N], dtype=pl.DT_FP32,
                                              target_memory=Acc), addrs=0, mutex_ids=[8])
    bias_l1 = pl.make_tile_group(type=pl.TileType(shape=[1, N], dtype=pl.DT_BF16,
                                                  target_memory=Mat, layout=pl.ND),
                                 addrs=0x10000, mutex_ids=[9])
    bias_bt = pl.make_tile_group(type=pl.TileType(shape=[1, N], dtype=pl.DT_FP32,
                                                  target_memory=Bias), addrs=0,
                                 mutex_ids=[10])
    with pl.section_cube():
        pl.system.set_mm_layout_transform(enabled=True)
        ac = acc.current()
        bl = bias_bt.current()
        pl.load(bias_l1.current(), bias, [0, 0])
        pl.move(bl, bias_l1.current())
        for kk in pl.range(0, KL, K):
            al, br, am, bm = a_l0.next(), b_l0.next(), a_l1.next(), b_l1.next()
            pl.load(am, a, [0, kk])
            pl.load(bm, b, [kk, 0])
            pl.move(al, am)
            pl.move(br, bm)
            if kk == 0:
                pl.matmul(ac, al, br, bl, phase=pl.AccPhase.Partial)
            elif kk == KL - K:
                pl.matmul_acc(ac, ac, al, br, phase=pl.AccPhase.Final)
            else:
                pl.matmul_acc(ac, ac, al, br, phase=pl.AccPhase.Partial)
        pl.store(c, ac, [0, 0], phase=pl.STPhase.Final)
        pl.system.set_mm_layout_transform(enabled=False)


def test_matmul_acc_with_bias_and_phases():
    a, b = torch.randn(M, KL, dtype=torch.bfloat16), torch.randn(KL, N, dtype=torch.bfloat16)
    bias = torch.randn(1, N, dtype=torch.bfloat16)
    c = torch.zeros(M, N)
    with SESSION.collect() as run:
        mm_acc_bias_kernel(a, b, bias, c)
    torch.testing.assert_close(c, _ref(a, b) + bias.float(), rtol=1e-3, atol=1e-3)
    assert not _kinds(run), _kinds(run)


@pl.jit(auto_mutex=True)
def phase_kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
                 c: pl.Tensor[[M, N], pl.DT_FP32], mm_phase: pl.DT_INT64, st_phase: pl.DT_INT64,
                 rounds: pl.DT_INT64):
    a_mat = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=pl.DT_FP16,
                                                target_memory=Mat), addrs=0, mutex_ids=[0])
    b_mat = pl.make_tile_group(type=pl.TileType(shape=[K, N], dtype=pl.DT_FP16,
                                                target_memory=Mat), addrs=0x4000,
                               mutex_ids=[1])
    a_l0 = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=pl.DT_FP16,
                                               target_memory=Left), addrs=0, mutex_ids=[2])
    b_l0 = pl.make_tile_group(type=pl.TileType(shape=[K, N], dtype=pl.DT_FP16,
                                               target_memory=Right), addrs=0, mutex_ids=[3])
    acc = pl.make_tile_group(type=pl.TileType(shape=[M, N], dtype=pl.DT_FP32,
                                              target_memory=Acc), addrs=0, mutex_ids=[4])
    with pl.section_cube():
        for _ in pl.range(rounds):
            pl.load(a_mat.current(), a, [0, 0])
            pl.load(b_mat.current(), b, [0, 0])
            pl.move(a_l0.current(), a_mat.current())
            pl.move(b_l0.current(), b_mat.current())
            if mm_phase == 0:
                pl.matmul(acc.current(), a_l0.current(), b_l0.current())
            else:
                pl.matmul(acc.current(), a_l0.current(), b_l0.current(), phase=mm_phase)
            if st_phase == 0:
                pl.store(c, acc.current(), [0, 0])
            else:
                pl.store(c, acc.current(), [0, 0], phase=st_phase)


@pytest.mark.parametrize("mm_phase,st_phase,rounds,kind", [
    (pl.AccPhase.Partial, pl.STPhase.Final, 1, "deadlock"),  # the store waits for a set
    (pl.AccPhase.Final, pl.STPhase.Partial, 2, "deadlock"),  # the 2nd matmul waits for a reset
])
def test_a_wrong_phase_pairing_hangs(mm_phase, st_phase, rounds, kind):
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    c = torch.zeros(M, N)
    with SESSION.collect() as run, pytest.raises(DeadlockError, match="unit flag"):
        phase_kernel(a, b, c, int(mm_phase), int(st_phase), rounds)
    assert kind in _kinds(run)


def test_a_phase_on_the_matmul_only_is_a_race():
    """The store does not wait for the unit flag, and auto_mutex left the Acc tile to it."""
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    c = torch.zeros(M, N)
    with SESSION.collect() as run:
        phase_kernel(a, b, c, int(pl.AccPhase.Final), 0, 1)
    assert "race" in _kinds(run)


def test_matched_phases_in_a_loop_are_clean():
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    c = torch.zeros(M, N)
    with SESSION.collect() as run:
        phase_kernel(a, b, c, int(pl.AccPhase.Final), int(pl.STPhase.Final), 3)
    torch.testing.assert_close(c, _ref(a, b), rtol=1e-3, atol=1e-3)
    assert not _kinds(run), _kinds(run)


WIDE, NT = 128, 32


@pl.jit(auto_mutex=True)
def extract_transpose_kernel(a: pl.Tensor[[M, WIDE], pl.DT_FP32],
                             bt: pl.Tensor[[NT, WIDE], pl.DT_FP32],
                             c: pl.Tensor[[M, NT], pl.DT_FP32]):
    """c = a[:, 64:] @ bt[:, 64:]^T: extraction at an offset from a wide L1 tile, and B moved
    from an [N, K] NZ tile to a [K, N] ZN tile (the same bytes)."""
    a_mat = pl.make_tile_group(type=pl.TileType(shape=[M, WIDE], dtype=pl.DT_FP32,
                                                target_memory=Mat), addrs=0, mutex_ids=[0])
    b_mat = pl.make_tile_group(type=pl.TileType(shape=[NT, K], dtype=pl.DT_FP32,
                                                target_memory=Mat), addrs=0x10000,
                               mutex_ids=[1])
    a_l0 = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=pl.DT_FP32,
                                               target_memory=Left), addrs=0, mutex_ids=[2])
    b_l0 = pl.make_tile_group(type=pl.TileType(shape=[K, NT], dtype=pl.DT_FP32,
                                               target_memory=Right), addrs=0, mutex_ids=[3])
    acc = pl.make_tile_group(type=pl.TileType(shape=[M, NT], dtype=pl.DT_FP32,
                                              target_memory=Acc), addrs=0, mutex_ids=[4])
    with pl.section_cube():
        pl.load(a_mat.current(), a, [0, 0])
        pl.load(b_mat.current(), bt, [0, K])
        pl.move(a_l0.current(), a_mat.current(), offset=[0, K])
        pl.move(b_l0.current(), b_mat.current())
        pl.matmul(acc.current(), a_l0.current(), b_l0.current())
        pl.store(c, acc.current(), [0, 0])


def test_extraction_offset_and_transposing_move():
    a, bt = torch.randn(M, WIDE), torch.randn(NT, WIDE)
    c = torch.zeros(M, NT)
    with SESSION.collect() as run:
        extract_transpose_kernel(a, bt, c)
    ref = a[:, K:].double() @ bt[:, K:].double().T
    torch.testing.assert_close(c.double(), ref, rtol=1e-2, atol=1e-2)
    assert not _kinds(run), _kinds(run)


@pl.jit(auto_mutex=True)
def store_kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
                 relu_out: pl.Tensor[[M, N], pl.DT_FP16], sum_out: pl.Tensor[[M, N], pl.DT_FP32],
                 nz_out: pl.Tensor[[M, N], pl.DT_FP32, pl.NZ],
                 part: pl.Tensor[[M, 2 * N], pl.DT_FP32]):
    a_mat = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=pl.DT_FP16,
                                                target_memory=Mat), addrs=0, mutex_ids=[0])
    b_mat = pl.make_tile_group(type=pl.TileType(shape=[K, N], dtype=pl.DT_FP16,
                                                target_memory=Mat), addrs=0x4000,
                               mutex_ids=[1])
    a_l0 = pl.make_tile_group(type=pl.TileType(shape=[M, K], dtype=pl.DT_FP16,
                                               target_memory=Left), addrs=0, mutex_ids=[2])
    b_l0 = pl.make_tile_group(type=pl.TileType(shape=[K, N], dtype=pl.DT_FP16,
                                               target_memory=Right), addrs=0, mutex_ids=[3])
    acc = pl.make_tile_group(type=pl.TileType(shape=[M, N], dtype=pl.DT_FP32,
                                              target_memory=Acc), addrs=0, mutex_ids=[4])
    with pl.section_cube():
        pl.load(a_mat.current(), a, [0, 0])
        pl.load(b_mat.current(), b, [0, 0])
        pl.move(a_l0.current(), a_mat.current())
        pl.move(b_l0.current(), b_mat.current())
        ac = acc.current()
        pl.matmul(ac, a_l0.current(), b_l0.current())
        pl.store(relu_out, ac, [0, 0], relu_pre_mode=pl.ReluPreMode.NormalRelu)
        pl.store(sum_out, ac, [0, 0], atomic=pl.AtomicType.AtomicAdd)
        pl.store(nz_out, ac, [0, 0])
        pl.set_validshape(ac, [M - 3, N // 2])
        pl.store(part, ac, [3, N])
        pl.set_validshape(ac, [M, N])


def test_store_from_acc_cast_relu_atomic_nz_and_window():
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    relu_out = torch.zeros(M, N, dtype=torch.float16)
    sum_out = torch.randn(M, N)
    before = sum_out.clone()
    nz_out = torch.zeros(M, N)
    part = torch.zeros(M, 2 * N)
    store_kernel(a, b, relu_out, sum_out, nz_out, part)
    ref = _ref(a, b)
    torch.testing.assert_close(relu_out, ref.clamp_min(0).half(), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(sum_out, before + ref, rtol=1e-3, atol=1e-3)
    # NZ in GM: strips of 8 fp32 columns, each all M rows high.
    nz = nz_out.reshape(N // 8, M, 8).permute(1, 0, 2).reshape(M, N)
    torch.testing.assert_close(nz, ref, rtol=1e-3, atol=1e-3)
    expected = torch.zeros(M, 2 * N)
    expected[3:, N:N + N // 2] = ref[:M - 3, :N // 2]
    torch.testing.assert_close(part, expected, rtol=1e-3, atol=1e-3)


# ------------------------------------------------------------------ MIX: L0C->UB and UB->L1
@pl.jit()
def acc_to_vec_kernel(a: pl.Tensor[[pl.DYNAMIC, K], pl.DT_FP16],
                      b: pl.Tensor[[K, pl.DYNAMIC], pl.DT_FP16],
                      out: pl.Tensor[[2, M, N], pl.DT_FP16], mode: pl.DT_INT64):
    m, n = a.shape[0], b.shape[1]
    vec = _tile([M, N], pl.DT_FP16, Vec, 0)
    with pl.section_cube():
        a_mat = _tile([M, K], pl.DT_FP16, Mat, 0)
        b_mat = _tile([K, N], pl.DT_FP16, Mat, 0x4000)
        a_l0 = _tile([M, K], pl.DT_FP16, Left, 0)
        b_l0 = _tile([K, N], pl.DT_FP16, Right, 0)
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        pl.set_validshape(a_mat, [m, K])
        pl.set_validshape(a_l0, [m, K])
        pl.set_validshape(b_mat, [K, n])
        pl.set_validshape(b_l0, [K, n])
        pl.set_validshape(acc, [m, n])
        pl.load(a_mat, a, [0, 0])
        pl.load(b_mat, b, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(a_l0, a_mat)
        pl.move(b_l0, b_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(acc, a_l0, b_l0)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.move(vec, acc, acc_to_vec_mode=mode, relu_pre_mode=pl.ReluPreMode.NormalRelu)
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=1)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(out, vec, [pl.get_subblock_idx(), 0, 0])


def _shares(mode, m, n):
    """The part of the m x n product each AIV receives (rows, columns) per split mode."""
    if mode == pl.AccToVecMode.SingleModeVec0:
        return [(slice(0, m), slice(0, n)), None]
    if mode == pl.AccToVecMode.SingleModeVec1:
        return [None, (slice(0, m), slice(0, n))]
    if mode == pl.AccToVecMode.DualModeSplitM:
        first = (m + 1) // 2
        return [(slice(0, first), slice(0, n)), (slice(first, m), slice(0, n))]
    first = n if n <= 16 else -(-n // 32) * 32 // 2
    return [(slice(0, m), slice(0, first)), (slice(0, m), slice(first, n))]


@pytest.mark.parametrize("mode", list(pl.AccToVecMode))
@pytest.mark.parametrize("m,n", [(64, 64), (33, 50), (1, 16)])
def test_acc_to_vec_modes_land_in_each_aiv(mode, m, n):
    a, b = torch.randn(m, K, dtype=torch.float16), torch.randn(K, n, dtype=torch.float16)
    out = torch.full((2, M, N), -1.0, dtype=torch.float16)
    with SESSION.collect() as run:
        acc_to_vec_kernel[None, 1](a, b, out, int(mode))
    ref = _ref(a, b).clamp_min(0).half()
    for sub, share in enumerate(_shares(mode, m, n)):
        if share is None:
            continue
        rows, cols = share
        got = out[sub, :rows.stop - rows.start, :cols.stop - cols.start]
        torch.testing.assert_close(got, ref[rows, cols], rtol=1e-3, atol=1e-3)
    assert "race" not in _kinds(run)


@pl.jit()
def acc_block_to_vec_kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
                            out: pl.Tensor[[2, 2, M // 2, N // 2], pl.DT_FP32]):
    """Each half of the columns of one accumulator split between the AIVs by rows: the
    destination's valid shape is the whole block the two AIVs share (M rows)."""
    halves = [_tile([M // 2, N // 2], pl.DT_FP32, Vec, 0),
              _tile([M // 2, N // 2], pl.DT_FP32, Vec, 0x2000)]
    with pl.section_cube():
        a_mat = _tile([M, K], pl.DT_FP16, Mat, 0)
        b_mat = _tile([K, N], pl.DT_FP16, Mat, 0x4000)
        a_l0 = _tile([M, K], pl.DT_FP16, Left, 0)
        b_l0 = _tile([K, N], pl.DT_FP16, Right, 0)
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        pl.load(a_mat, a, [0, 0])
        pl.load(b_mat, b, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(a_l0, a_mat)
        pl.move(b_l0, b_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(acc, a_l0, b_l0)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        for half in pl.range(0, 2):
            pl.set_validshape(halves[half], [M, N // 2])
            pl.move(halves[half], acc, [0, half * (N // 2)],
                    acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=1)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE3, event_id=1)
        for half in pl.range(0, 2):
            pl.store(out, halves[half], [pl.get_subblock_idx(), half, 0, 0])


def test_an_acc_to_vec_move_with_an_offset_splits_the_block_it_extracts():
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    out = torch.zeros(2, 2, M // 2, N // 2)
    with SESSION.collect() as run:
        acc_block_to_vec_kernel[None, 1](a, b, out)
    ref = _ref(a, b)
    for sub in range(2):
        for half in range(2):
            want = ref[sub * (M // 2):(sub + 1) * (M // 2), half * (N // 2):(half + 1) * (N // 2)]
            torch.testing.assert_close(out[sub, half], want, rtol=1e-3, atol=1e-3)
    assert "race" not in _kinds(run)


SUB = M // 2


@pl.jit()
def insert_kernel(d: pl.Tensor[[M, K], pl.DT_FP16], v: pl.Tensor[[K, N], pl.DT_FP16],
                  out: pl.Tensor[[M, N], pl.DT_FP32], dt: pl.Tensor[[K, M], pl.DT_FP16],
                  out_t: pl.Tensor[[M, N], pl.DT_FP32]):
    """Both AIVs insert their half of the left operand into the AIC's L1 (NZ: rows; ZN: the
    on-chip transpose of contraction-major data), then the cube multiplies."""
    p_mat = _tile([M, K], pl.DT_FP16, Mat, 0x20000)
    p_mat_t = _tile([M, K], pl.DT_FP16, Mat, 0x30000, layout=pl.ZN)
    with pl.section_vector():
        sub = pl.get_subblock_idx()
        rows = _tile([SUB, K], pl.DT_FP16, Vec, 0)
        rows_nz = _tile([SUB, K], pl.DT_FP16, Vec, 0x4000, layout=pl.NZ)
        cols = _tile([K, SUB], pl.DT_FP16, Vec, 0x8000)
        cols_nz = _tile([K, SUB], pl.DT_FP16, Vec, 0xC000, layout=pl.NZ)
        pl.load(rows, d, [sub * SUB, 0])
        pl.load(cols, dt, [0, sub * SUB])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.move(rows_nz, rows)
        pl.move(cols_nz, cols)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.insert(p_mat, rows_nz, [sub * SUB, 0])
        pl.move(p_mat_t, cols_nz, [0, sub * SUB])  # a sub-block with an offset: an insert
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=2)
    with pl.section_cube():
        v_mat = _tile([K, N], pl.DT_FP16, Mat, 0)
        p_l0 = _tile([M, K], pl.DT_FP16, Left, 0)
        v_l0 = _tile([K, N], pl.DT_FP16, Right, 0)
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        pl.load(v_mat, v, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.move(v_l0, v_mat)
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE1, event_id=2)
        _cube_product(p_mat, p_l0, v_l0, acc, out)
        pl.system.sync_src(set_pipe=pl.PipeType.FIX, wait_pipe=pl.PipeType.MTE1, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.FIX, wait_pipe=pl.PipeType.MTE1, event_id=1)
        _cube_product(p_mat_t, p_l0, v_l0, acc, out_t)


def _cube_product(mat, left, right, acc, dst):
    """(an inlined helper) dst = mat @ right, through left and acc."""
    pl.move(left, mat)
    pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
    pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
    pl.matmul(acc, left, right)
    pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
    pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
    pl.store(dst, acc, [0, 0])


def test_insert_from_both_aivs_and_the_zn_transpose():
    d, v = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    dt = torch.randn(K, M, dtype=torch.float16)
    out, out_t = torch.zeros(M, N), torch.zeros(M, N)
    with SESSION.collect() as run:
        insert_kernel(d, v, out, dt, out_t)
    torch.testing.assert_close(out, _ref(d, v), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(out_t, _ref(dt.T, v), rtol=1e-3, atol=1e-3)
    assert not _kinds(run), _kinds(run)


# ------------------------------------------------------------------ refusals
@pl.jit()
def bad_path_kernel(a: pl.Tensor[[M, K], pl.DT_FP16], which: pl.DT_INT64):
    with pl.section_cube():
        mat = _tile([M, K], pl.DT_FP16, Mat, 0)
        left = _tile([M, K], pl.DT_FP16, Left, 0)
        right = _tile([K, N], pl.DT_FP16, Right, 0)
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        bias = _tile([M, N], pl.DT_FP32, Bias, 0)
        if which == 0:
            pl.move(mat, left)
        elif which == 1:
            pl.matmul(acc, right, left)
        elif which == 2:
            pl.matmul(acc, left, right, bias)
        else:
            pl.matmul_acc(acc, _tile([M, N], pl.DT_FP32, Acc, 0x4000), left, right)


@pytest.mark.parametrize("which,message", [
    (0, "unsupported data path Left -> Mat"),
    (1, "lhs must be a Left tile"),
    (2, r"the bias is one row \[1, N\]"),
    (3, "acc must be the dst tile"),
])
def test_bad_cube_calls_are_refused_with_the_line(which, message):
    with pytest.raises(ParserSyntaxError, match=message) as info:
        bad_path_kernel(torch.zeros(M, K, dtype=torch.float16), which)
    assert "test_pto_cube.py:" in str(info.value)


# ------------------------------------------------------------------ fixpipe quantisation
SCALE = 0.75


@pl.jit()
def scale_kernel(a: pl.Tensor[[M, K], pl.DT_FP32], b: pl.Tensor[[K, N], pl.DT_FP32],
                 deq: pl.Tensor[[1, N], pl.DT_INT64], by_float: pl.Tensor[[M, N], pl.DT_INT8],
                 by_bits: pl.Tensor[[M, N], pl.DT_FP16],
                 by_channel: pl.Tensor[[M, N], pl.DT_INT8], bits: pl.DT_INT64):
    with pl.section_cube():
        a_mat = _tile([M, K], pl.DT_FP32, Mat, 0)
        b_mat = _tile([K, N], pl.DT_FP32, Mat, 0x4000)
        deq_mat = _tile([1, N], pl.DT_INT64, Mat, 0x8000, layout=pl.ND)
        a_l0 = _tile([M, K], pl.DT_FP32, Left, 0)
        b_l0 = _tile([K, N], pl.DT_FP32, Right, 0)
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        deq_fb = _tile([1, N], pl.DT_INT64, pl.MemorySpace.Scaling, 0)
        pl.load(a_mat, a, [0, 0])
        pl.load(b_mat, b, [0, 0])
        pl.load(deq_mat, deq, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.move(a_l0, a_mat)
        pl.move(b_l0, b_mat)
        pl.move(deq_fb, deq_mat)
        pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
        pl.matmul(acc, a_l0, b_l0)
        pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
        pl.store(by_float, acc, [0, 0], scale=SCALE)
        pl.store(by_bits, acc, [0, 0], scale=bits)
        pl.store(by_channel, acc, [0, 0], scale=deq_fb)


def test_store_quantises_by_a_float_float_bits_or_a_channel_tile():
    a, b = torch.randn(M, K) * 4, torch.randn(K, N)
    scales = torch.linspace(0.05, 2.0, N)
    deq = scales.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    deq = (deq | (1 << 46)).reshape(1, N)  # flags above bit 31 do not change the scale
    by_float = torch.zeros(M, N, dtype=torch.int8)
    by_bits = torch.zeros(M, N, dtype=torch.float16)
    by_channel = torch.zeros(M, N, dtype=torch.int8)
    bits = int(torch.tensor([0.5]).view(torch.int32))
    with SESSION.collect() as run:
        scale_kernel(a, b, deq, by_float, by_bits, by_channel, bits)
    acc = (a.double() @ b.double()).float()
    as_int8 = lambda x: torch.round(x).clamp(-128, 127).to(torch.int8)  # noqa: E731
    assert (by_float.int() - as_int8(acc * SCALE).int()).abs().max() <= 1
    torch.testing.assert_close(by_bits, (acc * 0.5).half(), rtol=1e-3, atol=1e-3)
    assert (by_channel.int() - as_int8(acc * scales).int()).abs().max() <= 1
    assert not _kinds(run), _kinds(run)


@pl.jit()
def bad_scale_kernel(out: pl.Tensor[[M, N], pl.DT_UINT8], which: pl.DT_INT64):
    with pl.section_cube():
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        fb = _tile([1, N], pl.DT_FP32, pl.MemorySpace.Scaling, 0)
        if which == 0:
            pl.store(out, acc, [0, 0], scale=1.0)
        else:
            pl.move(_tile([M, N], pl.DT_FP32, Mat, 0), _tile([M, N], pl.DT_FP32, Mat, 0x8000),
                    scale=fb)


@pytest.mark.parametrize("which,message", [(0, "cannot quantise to UINT8"),
                                           (1, "unsupported data path Mat -> Mat")])
def test_bad_scales_are_refused(which, message):
    with pytest.raises(ParserSyntaxError, match=message):
        bad_scale_kernel(torch.zeros(M, N, dtype=torch.uint8), which)


@pl.jit()
def wrong_core_kernel(out: pl.Tensor[[M, N], pl.DT_FP32], which: pl.DT_INT64):
    left = _tile([M, K], pl.DT_FP16, Left, 0)
    right = _tile([K, N], pl.DT_FP16, Right, 0)
    acc = _tile([M, N], pl.DT_FP32, Acc, 0)
    vec = _tile([M, N], pl.DT_FP16, Vec, 0)
    mat = _tile([M, N], pl.DT_FP16, Mat, 0)
    with pl.section_vector():
        if which == 0:
            pl.matmul(acc, left, right)
        elif which == 1:
            pl.store(out, acc, [0, 0])
        else:
            pl.move(left, mat)
    with pl.section_cube():
        if which == 3:
            pl.insert(mat, vec, [0, 0])


@pytest.mark.parametrize("which,message", [
    (0, "matmul Left -> Acc is issued by the AIC"), (1, "store from an Acc tile is the AIC's"),
    (2, "move Mat -> Left is issued by the AIC"), (3, "insert Vec -> Mat is issued by the AIV")])
def test_cube_and_vector_ops_refuse_the_other_section(which, message):
    with pytest.raises(Exception, match=message) as info:
        wrong_core_kernel(torch.zeros(M, N), which)
    assert "test_pto_cube.py:" in str(info.value)


# ------------------------------------------------------------------ stores past the end
@pl.jit()
def acc_past_end_kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
                        c: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
                        guard: pl.Tensor[[pl.DYNAMIC], pl.DT_FP32]):
    _mm_scaled(a, b, c, pl.DT_FP16, None)  # all 64 rows into a tensor of 4: past its padding


def test_an_acc_store_past_the_end_keeps_the_rows_within_the_allocation():
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    c = torch.zeros(4, N)
    guard = torch.full((4096,), 7.0)  # the next allocation: the store must not reach it
    with SESSION.collect() as run:
        acc_past_end_kernel(a, b, c, guard)
    torch.testing.assert_close(c, _ref(a, b)[:4], rtol=1e-3, atol=1e-3)
    assert (guard == 7.0).all()
    assert "gm-out-of-bounds" in _kinds(run)


@pl.jit()
def vec_past_end_kernel(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
                        out: pl.Tensor[[2, 4, 64, 64], pl.DT_FP32],
                        guard: pl.Tensor[[pl.DYNAMIC], pl.DT_FP32]):
    with pl.section_vector():
        t = _tile([64, 8], pl.DT_FP32, Vec, 0)
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        # Rows along axis 0 (2 long), columns along axis 2: rows 2.. lie past the tensor.
        pl.store(out, t, [0, 0, 0, 0], order=[0, 2])


def test_a_strided_vec_store_past_the_end_keeps_the_elements_within_the_allocation():
    x = torch.randn(64, 8)
    out = torch.zeros(2, 4, 64, 64)
    guard = torch.full((4096,), 7.0)
    with SESSION.collect() as run:
        vec_past_end_kernel(x, out, guard)
    torch.testing.assert_close(out[:, 0, :8, 0], x[:2])
    assert (guard == 7.0).all()
    assert "gm-out-of-bounds" in _kinds(run)


@pytest.mark.parametrize("shape", [[64], [1, 64, 1], []])
@pytest.mark.parametrize("space, message", [(pl.MemorySpace.Scaling, "scale tile must be 2D"),
                                            (Vec, "a tile must be 2D")])
def test_a_tile_that_is_not_2d_is_refused_by_kind(shape, space, message):
    with pytest.raises(ValueError, match=rf"{message}.*got shape \[{', '.join(map(str, shape))}\]"):
        pl.TileType(shape=shape, dtype=pl.DT_INT64 if space == pl.MemorySpace.Scaling else
                    pl.DT_FP32, target_memory=space)


# ------------------------------------------------------------------ 8-bit float inputs
@pl.jit()
def hf8_kernel(a: pl.Tensor[[M, K], pl.DT_HF8], b: pl.Tensor[[K, N], pl.DT_HF8],
               c: pl.Tensor[[M, N], pl.DT_FP32]):
    _mm_scaled(a, b, c, pl.DT_HF8, None)


@pl.jit()
def hf8_out_kernel(a: pl.Tensor[[M, K], pl.DT_HF8], b: pl.Tensor[[K, N], pl.DT_HF8],
                   c: pl.Tensor[[M, N], pl.DT_HF8]):
    _mm_scaled(a, b, c, pl.DT_HF8, 0.25)


@pl.jit()
def hf8_atomic_kernel(a: pl.Tensor[[M, K], pl.DT_HF8], b: pl.Tensor[[K, N], pl.DT_HF8],
                      c: pl.Tensor[[M, N], pl.DT_HF8]):
    _mm_scaled(a, b, c, pl.DT_HF8, 1.0, pl.AtomicType.AtomicAdd)


@pl.jit()
def fp8_kernel(a: pl.Tensor[[M, K], pl.DT_FP8E4M3FN], b: pl.Tensor[[K, N], pl.DT_FP8E4M3FN],
               c: pl.Tensor[[M, N], pl.DT_FP32]):
    _mm_scaled(a, b, c, pl.DT_FP8E4M3FN, None)


@pl.jit()
def fp16_scaled_kernel(a: pl.Tensor[[M, K], pl.DT_FP16], b: pl.Tensor[[K, N], pl.DT_FP16],
                       c: pl.Tensor[[M, N], pl.DT_FP32]):
    _mm_scaled(a, b, c, pl.DT_FP16, 0.5)


def test_hifloat8_inputs_and_output():
    from ascsim.sim import hifloat8

    rng = np.random.default_rng(3)
    a_codes = hifloat8.encode(rng.standard_normal((M, K)))
    b_codes = hifloat8.encode(rng.standard_normal((K, N)))
    a_val, b_val = (torch.from_numpy(hifloat8.decode(x)) for x in (a_codes, b_codes))
    product = (a_val.double() @ b_val.double()).float()
    c = torch.zeros(M, N)
    with SESSION.collect() as run:
        hf8_kernel(torch.from_numpy(a_codes), torch.from_numpy(b_codes), c)
    torch.testing.assert_close(c, product, rtol=1e-5, atol=1e-5)
    codes = torch.zeros(M, N, dtype=torch.uint8)  # out HF8: scaled, then rounded to HiF8
    with SESSION.collect() as run2:
        hf8_out_kernel(torch.from_numpy(a_codes), torch.from_numpy(b_codes), codes)
    assert (codes.numpy() == hifloat8.encode(product.numpy() * 0.25)).all()
    assert not _kinds(run) and not _kinds(run2), (_kinds(run), _kinds(run2))


def test_an_atomic_store_of_hifloat8_codes_is_refused():
    codes = torch.zeros(M, K, dtype=torch.uint8)
    with pytest.raises(Exception, match="atomic add into hifloat8 output is not supported"):
        hf8_atomic_kernel(codes, codes.clone(), torch.zeros(M, N, dtype=torch.uint8))


def test_fp8_e4m3_inputs():
    a = (torch.randn(M, K) * 2).to(torch.float8_e4m3fn)
    b = torch.randn(K, N).to(torch.float8_e4m3fn)
    c = torch.zeros(M, N)
    fp8_kernel(a, b, c)
    torch.testing.assert_close(c, (a.double() @ b.double()).float(), rtol=1e-5, atol=1e-5)


def test_a_scaled_store_to_fp32_keeps_the_fraction():
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    c = torch.zeros(M, N)
    fp16_scaled_kernel(a, b, c)
    torch.testing.assert_close(c, _ref(a, b) * 0.5, rtol=1e-4, atol=1e-4)
    assert (c != c.round()).any()  # scaled, not rounded to integers


def test_an_annotation_that_names_a_vanished_local_is_an_error_at_the_kernel():
    def factory(out_type):
        @pl.jit()
        def kernel(c: pl.Tensor[[M, N], out_type]):  # out_type: only in the annotation
            """Never runs: decorating it fails."""

        return kernel

    with pytest.raises(TypeError, match=r"test_pto_cube\.py:\d+: @pl.jit .*kernel: cannot "
                       r"evaluate the annotation 'pl.Tensor\[\[M, N\], out_type\]'"):
        factory(pl.DT_FP32)


def test_an_annotation_may_name_a_closure_variable_the_body_uses():
    def factory(dtype):
        @pl.jit()
        def kernel(x: pl.Tensor[[16, 16], dtype], y: pl.Tensor[[16, 16], dtype]):
            with pl.section_vector():
                t = _tile([16, 16], dtype, Vec, 0)
                pl.load(t, x, [0, 0])
                pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3,
                                   event_id=0)
                pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3,
                                   event_id=0)
                pl.store(y, t, [0, 0])

        return kernel

    x, y = torch.randn(16, 16), torch.zeros(16, 16)
    factory(pl.DT_FP32)(x, y)
    assert torch.equal(x, y)


@pl.jit()
def hf8_vector_kernel(x: pl.Tensor[[16, 32], pl.DT_HF8], y: pl.Tensor[[16, 32], pl.DT_HF8]):
    with pl.section_vector():
        t = _tile([16, 32], pl.DT_HF8, Vec, 0)
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(t, t, t)  # mark: hf8-add
        pl.store(y, t, [0, 0])


def test_vector_ops_refuse_hifloat8_codes_at_the_line():
    x = torch.zeros(16, 32, dtype=torch.uint8)
    with pytest.raises(Exception, match=r"test_pto_cube\.py:\d+.*add: a HF8 tile holds encoded "
                                        r"values") as info:
        hf8_vector_kernel(x, x.clone())
    line = next(n for n, text in enumerate(open(__file__), 1) if "mark: hf8-add" in text
                and "next(" not in text)
    assert f"test_pto_cube.py:{line}" in str(info.value)


