"""PyPTO Pro's automatic cross-core pipeline (``@pl.jit(pipeline=PipelineConfig(...))``) on the
simulated 950: a cube -> vector -> cube -> vector chain of ``@pl.pipeline.stage`` functions with
no flags written by hand runs with the flags and the preload order the framework inserts: the
results match torch, the checks find no race, the preload schedule overlaps the cores (faster
than the serial ``sync_only`` order), and hand-over buffers without flag ids are races."""

from __future__ import annotations

import pytest
import torch

import ascsim.pto.language as pl
from ascsim.pto import pipeline
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
M, K, N, D = 32, 64, 64, 64  # rows per task; contraction = columns of both products
HALF = M // 2
TASKS = 6

Mat, Left, Right, Acc, Vec = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                              pl.MemorySpace.Acc, pl.MemorySpace.Vec)


@pytest.fixture(autouse=True)
def _soc():
    with SESSION.using_soc(SOC):
        yield


def _type(shape, dtype, space, **kw):
    return pl.TileType(shape=shape, dtype=dtype, target_memory=space, **kw)


@pl.pipeline.stage
def first_product(k, x, w, x_l1, w_l1, left_db, right_db, acc_db, s_db):
    """(cube) S_k = X_k @ W, each AIV receiving half of its rows."""
    x_slot = x_l1.next()
    w_slot = w_l1.next()
    pl.load(x_slot, x, [k * M, 0])
    pl.load(w_slot, w, [0, 0])
    left = left_db.next()
    right = right_db.next()
    acc = acc_db.next()
    pl.move(left, x_slot)
    pl.move(right, w_slot)
    pl.matmul(acc, left, right)
    pl.move(s_db.next(), acc, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)


@pl.pipeline.stage
def scale_rows(sub, s_db, h_db, p_nz_db, p_mat_db):
    """(vector) P_k = (S_k / 2) as fp16, inserted into the AIC's L1."""
    s = s_db.next()
    h = h_db.next()
    p_nz = p_nz_db.next()
    pl.muls(s, s, 0.5)
    pl.cast(h, s, mode=pl.RoundMode.CAST_ROUND)
    pl.move(p_nz, h)
    pl.insert(p_mat_db.next(), p_nz, [sub * HALF, 0])


@pl.pipeline.stage
def second_product(v_l1, left_db, right_db, acc_db, p_mat_db, o_db, v):
    """(cube) O_k = P_k @ V."""
    v_slot = v_l1.next()
    pl.load(v_slot, v, [0, 0])
    left = left_db.next()
    right = right_db.next()
    acc = acc_db.next()
    pl.move(left, p_mat_db.next())
    pl.move(right, v_slot)
    pl.matmul(acc, left, right)
    pl.move(o_db.next(), acc, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)


@pl.pipeline.stage
def write_out(k, sub, o_db, out):
    """(vector) the AIV's half of O_k to GM."""
    pl.store(out, o_db.next(), [k * M + sub * HALF, 0])


def _kernel(config, flags: bool = True):
    fwd = (lambda ids: ids) if flags else (lambda ids: None)

    @pl.jit(auto_mutex=True, pipeline=config)
    def chain(x: pl.Tensor[[TASKS * M, K], pl.DT_FP16], w: pl.Tensor[[K, N], pl.DT_FP16],
              v: pl.Tensor[[N, D], pl.DT_FP16], out: pl.Tensor[[TASKS * M, D], pl.DT_FP32]):
        s_db = pl.make_tile_group(type=_type([HALF, N], pl.DT_FP32, Vec), addrs=0,
                                  mutex_ids=[14, 15], fwd_ids=fwd([0, 1]), bwd_ids=fwd([2, 3]))
        o_db = pl.make_tile_group(type=_type([HALF, D], pl.DT_FP32, Vec), addrs=0x4000,
                                  mutex_ids=[16, 17], fwd_ids=fwd([7, 8]), bwd_ids=fwd([9, 10]))
        p_mat_db = pl.make_tile_group(type=_type([M, N], pl.DT_FP16, Mat), addrs=0x40000,
                                      mutex_ids=[18, 19, 20], fwd_ids=fwd([4, 5, 6]))
        with pl.section_cube():
            x_l1 = pl.make_tile_group(type=_type([M, K], pl.DT_FP16, Mat), addrs=0,
                                      mutex_ids=[0, 1])
            w_l1 = pl.make_tile_group(type=_type([K, N], pl.DT_FP16, Mat), addrs=0x2000,
                                      mutex_ids=[2, 3])
            v_l1 = pl.make_tile_group(type=_type([N, D], pl.DT_FP16, Mat), addrs=0x8000,
                                      mutex_ids=[4, 5])
            left_db = pl.make_tile_group(type=_type([M, K], pl.DT_FP16, Left), addrs=0,
                                         mutex_ids=[6, 7])
            right_db = pl.make_tile_group(type=_type([K, N], pl.DT_FP16, Right), addrs=0,
                                          mutex_ids=[8, 9])
            acc_db = pl.make_tile_group(type=_type([M, N], pl.DT_FP32, Acc), addrs=0,
                                        mutex_ids=[10, 11, 12, 13])
        with pl.section_vector():
            sub = pl.get_subblock_idx()
            h_db = pl.make_tile_group(type=_type([HALF, N], pl.DT_FP16, Vec), addrs=0x8000,
                                      mutex_ids=[0, 1])
            p_nz_db = pl.make_tile_group(type=_type([HALF, N], pl.DT_FP16, Vec, layout=pl.NZ),
                                         addrs=0xA000, mutex_ids=[2, 3])
        for k in pl.range(0, TASKS):
            with pl.section_cube():
                first_product(k, x, w, x_l1, w_l1, left_db, right_db, acc_db, s_db)
            with pl.section_vector():
                scale_rows(sub, s_db, h_db, p_nz_db, p_mat_db)
            with pl.section_cube():
                second_product(v_l1, left_db, right_db, acc_db, p_mat_db, o_db, v)
            with pl.section_vector():
                write_out(k, sub, o_db, out)

    return chain


def _inputs():
    torch.manual_seed(0)
    x = torch.randn(TASKS * M, K, dtype=torch.float16)
    w = torch.randn(K, N, dtype=torch.float16) / 8
    v = torch.randn(N, D, dtype=torch.float16)
    return x, w, v, torch.zeros(TASKS * M, D)


def _reference(x, w, v):
    p = ((x.float() @ w.float()) * 0.5).half()
    return p.float() @ v.float()


def _races(report):
    return [f for f in report.findings if f.category in ("race", "cross-core-race")]


@pytest.mark.parametrize("config", [pl.pipeline.PipelineConfig(preload=2),
                                    pl.pipeline.PipelineConfig(preload=1),
                                    pl.pipeline.PipelineConfig(sync_only=True)],
                         ids=["preload2", "preload1", "sync_only"])
def test_the_inserted_flags_make_the_chain_correct_and_race_free(config):
    x, w, v, out = _inputs()
    report = _kernel(config)[None, 1](x, w, v, out)
    torch.testing.assert_close(out, _reference(x, w, v), rtol=2e-3, atol=2e-3)
    assert not report.findings, [f.format() for f in report.findings]


def test_the_preload_schedule_overlaps_the_cores():
    x, w, v, out = _inputs()
    serial = _kernel(pl.pipeline.PipelineConfig(sync_only=True))[None, 1](x, w, v, out)
    piped = _kernel(pl.pipeline.PipelineConfig(preload=2))[None, 1](x, w, v, out)
    assert piped.device_time_us < 0.9 * serial.device_time_us


def test_hand_over_buffers_without_flag_ids_are_races():
    x, w, v, out = _inputs()
    report = _kernel(pl.pipeline.PipelineConfig(preload=2), flags=False)[None, 1](x, w, v, out)
    assert any(f.category == "cross-core-race" for f in report.findings)


def test_delays_follow_pypto_pros_rule():
    assert pipeline._delays(["cube", "vector", "cube", "vector"], 2) == [0, 1, 2, 3]
    assert pipeline._delays(["cube", "vector", "cube", "vector"], 3) == [0, 1, 3, 4]
    assert pipeline._delays(["vector", "cube"], 2) == [0, 1]


def test_the_config_is_checked():
    with pytest.raises(ValueError, match="preload"):
        pl.pipeline.PipelineConfig(preload=0)
    assert pl.pipeline.PipelineConfig().preload == 2


@pl.pipeline.stage
def double(k, x, out, g):
    """(vector) out[k] = 2 x[k] through one tile of g."""
    t = g.next()
    pl.load(t, x, [k, 0])
    pl.muls(t, t, 2.0)
    pl.store(out, t, [k, 0])


@pl.jit(auto_mutex=True, pipeline=pl.pipeline.PipelineConfig(preload=1))
def one_stage(x: pl.Tensor[[4, 64], pl.DT_FP32], out: pl.Tensor[[4, 64], pl.DT_FP32]):
    g = pl.make_tile_group(type=_type([1, 64], pl.DT_FP32, Vec), addrs=0, mutex_ids=[0, 1])
    for k in pl.range(0, 4):
        with pl.section_vector():
            double(k, x, out, g)


@pl.jit(auto_mutex=True, pipeline=pl.pipeline.PipelineConfig(preload=1))
def two_in_a_row(x: pl.Tensor[[4, 64], pl.DT_FP32], out: pl.Tensor[[4, 64], pl.DT_FP32]):
    g = pl.make_tile_group(type=_type([1, 64], pl.DT_FP32, Vec), addrs=0, mutex_ids=[0, 1])
    for k in pl.range(0, 4):
        with pl.section_vector():
            double(k, x, out, g)
        with pl.section_vector():
            double(k, x, out, g)


def test_a_one_stage_pipeline_runs_in_order():
    x, out = torch.randn(4, 64), torch.zeros(4, 64)
    report = one_stage[None, 1](x, out)
    torch.testing.assert_close(out, x * 2)
    assert not report.findings


def test_consecutive_stages_on_one_core_are_refused():
    with pytest.raises(ValueError, match="alternate"):
        two_in_a_row[None, 1](torch.zeros(4, 64), torch.zeros(4, 64))
