"""PyPTO Pro SIMT functions on the simulated 950: 1-D/2-D/3-D thread grids, the thread context,
UB tile and GM tensor access from threads, callees, masked (divergent) branches, loops, break
and continue, the per-thread fallback, a SIMD -> SIMT -> SIMD pipeline and its race findings,
against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim.pto.errors import ParserSyntaxError, ParserTypeError
from ascsim.pto.simt import launch as simt_launch
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
N = 256
ROW = pl.TileType(shape=[1, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
ROW_I32 = pl.TileType(shape=[1, N], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec)
GRID = pl.TileType(shape=[8, 32], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


@pytest.fixture(autouse=True)
def _soc():
    with SESSION.using_soc(SOC):
        yield


def _races(report):
    return [f for f in report.findings if f.category in ("race", "cross-core-race")]


def _line(text: str) -> int:
    """The line of this file holding ``text``."""
    with open(__file__) as fh:
        for number, line in enumerate(fh, start=1):
            if text in line and "_line(" not in line:
                return number
    raise AssertionError(text)


def _sync(set_pipe, wait_pipe, event):
    pl.system.sync_src(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=event)
    pl.system.sync_dst(set_pipe=set_pipe, wait_pipe=wait_pipe, event_id=event)


# ------------------------------------------------------------------ 1-D, UB tile
@pl.simt.function(max_threads=N)
def affine_1d(data: pl.Tile[[1, N], pl.DT_FP32], scale: pl.DT_FP32):
    tid = pl.simt.thread_idx().x
    data[0, tid] = data[0, tid] * scale + tid


@pl.jit(auto_mutex=False)
def run_1d(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32], scale: pl.DT_FP32):
    data = pl.make_tile(ROW, addr=0)
    with pl.section_vector():
        pl.load(data, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        pl.simt.launch(affine_1d, threads=N, args=(data, scale))
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 1)
        pl.store(y, data, [0, 0])


def test_1d_grid_on_a_ub_tile_matches_numpy():
    x = torch.randn(1, N)
    y = torch.empty_like(x)
    report = run_1d(x, y, 1.5)
    want = (x.numpy() * np.float32(1.5) + np.arange(N, dtype=np.float32)).astype(np.float32)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-5)
    assert not _races(report)
    assert report.pipe_busy_us()["V"] > 0


# ------------------------------------------------------------------ 2-D, thread context
@pl.simt.function(max_threads=256)
def grid_2d(dst: pl.Tile[[8, 32], pl.DT_FP32], src: pl.Tile[[8, 32], pl.DT_FP32]):
    t = pl.simt.thread_idx()
    dims = pl.simt.block_dim()
    dst[t.y, t.x] = src[t.y, t.x] * 3.0 - t.y + pl.simt.linear_thread_idx() * 0.0 + dims.z


@pl.jit(auto_mutex=False)
def run_2d(x: pl.Tensor[[8, 32], pl.DT_FP32], y: pl.Tensor[[8, 32], pl.DT_FP32]):
    src = pl.make_tile(GRID, addr=0)
    dst = pl.make_tile(GRID, addr=1024)
    with pl.section_vector():
        pl.load(src, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        pl.simt.launch(grid_2d, threads=(32, 8), args=(dst, src))
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 1)
        pl.store(y, dst, [0, 0])


def test_2d_grid_indexes_rows_and_columns():
    x = torch.randn(8, 32)
    y = torch.empty_like(x)
    run_2d(x, y)
    rows = np.arange(8, dtype=np.float32)[:, None]
    np.testing.assert_allclose(y.numpy(), x.numpy() * 3 - rows + 1, rtol=1e-6, atol=1e-5)


# ------------------------------------------------------------------ 3-D, GM tensors, blocks
@pl.simt.function(max_threads=128)
def grid_3d(dst: pl.Tensor[[2, 4, 4, 8], pl.DT_INT32]):
    t = pl.simt.thread_idx()
    block = pl.simt.block_idx().x
    grid = pl.simt.grid_dim().x
    dst[block, t.z, t.y, t.x] = block * 1000 + t.z * 100 + t.y * 10 + t.x + grid * 10000


@pl.jit(auto_mutex=False)
def run_3d(y: pl.Tensor[[2, 4, 4, 8], pl.DT_INT32]):
    with pl.section_vector():
        pl.simt.launch(grid_3d, threads=(8, 4, 4), args=(y,))


def test_3d_grid_writes_gm_per_block():
    y = torch.zeros(2, 4, 4, 8, dtype=torch.int32)
    run_3d[None, 2](y)
    b, z, r, c = np.meshgrid(*(np.arange(n) for n in (2, 4, 4, 8)), indexing="ij")
    np.testing.assert_array_equal(y.numpy(), b * 1000 + z * 100 + r * 10 + c + 20000)


# ------------------------------------------------------------------ divergent control flow
@pl.simt.function(max_threads=N)
def branches(dst: pl.Tensor[[1, N], pl.DT_FP32], src: pl.Tensor[[1, N], pl.DT_FP32],
             n: pl.DT_INT32):
    tid = pl.simt.linear_thread_idx()
    value = src[0, tid]
    if tid < n and value > 0.0:
        value = value * 2.0
    elif tid < n:
        value = -value
    else:
        value = 7.0 if tid % 2 == 0 else min(value, 1.0)
    dst[0, tid] = value


@pl.jit(auto_mutex=False)
def run_branches(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32],
                 n: pl.DT_INT32):
    with pl.section_vector():
        pl.simt.launch(branches, threads=N, args=(y, x, n))


@pytest.mark.parametrize("n", [0, 100, N])
def test_divergent_branches_are_masked(n):
    x = torch.randn(1, N)
    y = torch.empty_like(x)
    run_branches(x, y, n)
    v, tid = x.numpy()[0], np.arange(N)
    want = np.where(tid < n, np.where(v > 0, v * 2, -v),
                    np.where(tid % 2 == 0, 7.0, np.minimum(v, 1.0)))
    np.testing.assert_allclose(y.numpy()[0], want.astype(np.float32), rtol=1e-6, atol=1e-5)
    assert "branches" not in simt_launch.PER_THREAD


@pl.simt.function(max_threads=N)
def loops(dst: pl.Tile[[1, N], pl.DT_INT32], src: pl.Tile[[1, N], pl.DT_INT32]):
    tid = pl.simt.linear_thread_idx()
    v = src[0, tid]
    steps = 0
    while v > 1:  # a different trip count in every thread
        v = v // 2
        steps += 1
    total = 0
    for i in pl.range(0, tid % 7 + 1):  # bounds that differ between threads
        total = total + i
    dst[0, tid] = steps * 100 + total


@pl.jit(auto_mutex=False)
def run_loops(x: pl.Tensor[[1, N], pl.DT_INT32], y: pl.Tensor[[1, N], pl.DT_INT32]):
    src = pl.make_tile(ROW_I32, addr=0)
    dst = pl.make_tile(ROW_I32, addr=1024)
    with pl.section_vector():
        pl.load(src, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        pl.simt.launch(loops, threads=N, args=(dst, src))
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 1)
        pl.store(y, dst, [0, 0])


def test_loops_with_per_thread_trip_counts_run_masked():
    x = torch.randint(0, 5000, (1, N), dtype=torch.int32)
    y = torch.empty_like(x)
    run_loops(x, y)
    v = x.numpy()[0].astype(np.int64)
    steps = np.where(v > 1, np.floor(np.log2(np.maximum(v, 1))), 0).astype(np.int64)
    k = np.arange(N) % 7
    np.testing.assert_array_equal(y.numpy()[0], steps * 100 + k * (k + 1) // 2)
    assert "loops" not in simt_launch.PER_THREAD


# ------------------------------------------------------------------ callees, per-thread mode
@pl.simt.function
def scaled(value: pl.DT_FP32, scale: pl.DT_FP32) -> pl.DT_FP32:
    return value * scale


@pl.simt.function
def put(dst: pl.Tile[[1, N], pl.DT_FP32], index: pl.DT_INT32, value: pl.DT_FP32):
    dst[0, index] = scaled(value, 1.0) + 1.0


@pl.simt.function(max_threads=N)
def with_callees(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    if tid % 3 == 0:
        put(dst, tid, scaled(src[0, tid], 4.0))
    else:
        dst[0, tid] = 0.0


@pl.simt.function(max_threads=N)
def first_negative(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    found = -1.0
    for i in pl.range(0, N):
        if src[0, (tid + i) % N] < 0.0:
            found = i * 1.0
            break
    dst[0, tid] = found


def _tile_kernel(fn):
    @pl.jit(auto_mutex=False)
    def kernel(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32]):
        src = pl.make_tile(ROW, addr=0)
        dst = pl.make_tile(ROW, addr=1024)
        with pl.section_vector():
            pl.load(src, x, [0, 0])
            _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
            pl.simt.launch(fn, threads=N, args=(dst, src))
            _sync(pl.PipeType.V, pl.PipeType.MTE3, 1)
            pl.store(y, dst, [0, 0])
    return kernel


def test_callees_run_under_the_callers_mask():
    x = torch.randn(1, N)
    y = torch.empty_like(x)
    _tile_kernel(with_callees)(x, y)
    tid = np.arange(N)
    want = np.where(tid % 3 == 0, x.numpy()[0] * 4 + 1, 0)
    np.testing.assert_allclose(y.numpy()[0], want.astype(np.float32), rtol=1e-6, atol=1e-5)


def test_a_divergent_break_takes_its_threads_out_of_the_loop():
    x = torch.rand(1, N) + 0.1
    x[0, 200] = -1.0
    y = torch.empty_like(x)
    _tile_kernel(first_negative)(x, y)
    tid = np.arange(N)
    np.testing.assert_array_equal(y.numpy()[0], ((200 - tid) % N).astype(np.float32))
    assert "first_negative" not in simt_launch.PER_THREAD


@pl.simt.function(max_threads=N)
def skip_odd_steps(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    total = 0.0
    i = 0
    while i < 8:
        i += 1
        if (i + tid) % 2 == 1:
            continue
        total = total + src[0, (tid + i) % N]
    dst[0, tid] = total


@pl.simt.function(max_threads=N)
def early_return(dst: pl.Tile[[1, N], pl.DT_FP32], src: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    dst[0, tid] = 0.0
    if src[0, tid] < 0.0:
        return
    dst[0, tid] = src[0, tid] * 2.0


def test_a_divergent_continue_skips_the_rest_of_the_iteration():
    x = torch.randn(1, N)
    y = torch.empty_like(x)
    _tile_kernel(skip_odd_steps)(x, y)
    v, tid = x.numpy()[0], np.arange(N)
    want = np.zeros(N, dtype=np.float32)
    for i in range(1, 9):
        want += np.where((i + tid) % 2 == 1, 0, v[(tid + i) % N]).astype(np.float32)
    np.testing.assert_allclose(y.numpy()[0], want, rtol=1e-5, atol=1e-6)
    assert "skip_odd_steps" not in simt_launch.PER_THREAD


def test_a_return_in_a_branch_runs_thread_by_thread_with_the_same_result():
    x = torch.randn(1, N)
    y = torch.empty_like(x)
    _tile_kernel(early_return)(x, y)
    v = x.numpy()[0]
    np.testing.assert_array_equal(y.numpy()[0], np.where(v < 0, 0, v * 2).astype(np.float32))
    assert "return inside a branch" in simt_launch.PER_THREAD["early_return"]


# ------------------------------------------------------------------ SIMD <-> SIMT pipeline
@pl.simt.function(max_threads=N)
def add_one(data: pl.Tile[[1, N], pl.DT_FP32]):
    tid = pl.simt.linear_thread_idx()
    data[0, tid] = data[0, tid] + 1.0


@pl.jit(auto_mutex=False)
def simd_simt_simd(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32]):
    src = pl.make_tile(ROW, addr=0)
    mid = pl.make_tile(ROW, addr=1024)
    out = pl.make_tile(ROW, addr=2048)
    with pl.section_vector():
        pl.load(src, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        pl.muls(mid, src, 2.0)
        pl.simt.launch(add_one, threads=N, args=(mid,))
        pl.muls(out, mid, 0.5)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 1)
        pl.store(y, out, [0, 0])


@pl.jit(auto_mutex=False)
def simt_unsynced(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32]):
    data = pl.make_tile(ROW, addr=0)
    with pl.section_vector():
        pl.load(data, x, [0, 0])  # the load the launch reads
        pl.simt.launch(add_one, threads=N, args=(data,))  # no MTE2 -> V flag
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 1)
        pl.store(y, data, [0, 0])


@pl.jit()
def simt_auto_mutex(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32]):
    group = pl.make_tile_group(type=ROW, addrs=0, mutex_ids=[0])
    with pl.section_vector():
        pl.load(group.current(), x, [0, 0])
        pl.simt.launch(add_one, threads=N, args=(group.current(),))
        pl.store(y, group.current(), [0, 0])


def test_simd_simt_pipeline_matches_numpy_without_races():
    x = torch.randn(1, N)
    y = torch.empty_like(x)
    report = simd_simt_simd(x, y)
    np.testing.assert_allclose(y.numpy(), (x.numpy() * 2 + 1) * 0.5, rtol=1e-6, atol=1e-5)
    assert not _races(report)


def test_a_launch_reading_an_unsynchronised_load_is_a_race():
    x = torch.randn(1, N)
    report = simt_unsynced(x, torch.empty_like(x))
    races = _races(report)
    lines = {loc[1] for f in races for loc in f.locations}
    assert _line("# the load the launch reads") in lines
    assert _line("data[0, tid] = data[0, tid] + 1.0") in lines  # the thread's read


def test_auto_mutex_orders_the_launch_without_flags():
    x = torch.randn(1, N)
    y = torch.empty_like(x)
    report = simt_auto_mutex(x, y)
    np.testing.assert_allclose(y.numpy(), x.numpy() + 1, rtol=1e-6, atol=1e-5)
    assert not _races(report)


# ------------------------------------------------------------------ timing
def _simt_cycles(threads):
    @pl.simt.function(max_threads=1024)
    def body(dst: pl.Tensor[[1, 1024], pl.DT_FP32]):
        tid = pl.simt.linear_thread_idx()
        dst[0, tid] = tid * 2.0 + 1.0

    @pl.jit(auto_mutex=False)
    def kernel(y: pl.Tensor[[1, 1024], pl.DT_FP32]):
        with pl.section_vector():
            pl.simt.launch(body, threads=threads, args=(y,))

    return kernel(torch.zeros(1, 1024)).pipe_busy_us()["V"]


def test_more_warps_cost_more_v_time():
    assert _simt_cycles(1024) > _simt_cycles(32) > 0


# ------------------------------------------------------------------ errors
@pl.jit(auto_mutex=False)
def launch_outside_vector(y: pl.Tensor[[1, N], pl.DT_FP32]):
    with pl.section_cube():
        pl.simt.launch(add_one, threads=N, args=(y,))


@pl.jit(auto_mutex=False)
def too_many_threads(y: pl.Tensor[[1, N], pl.DT_FP32]):
    data = pl.make_tile(ROW, addr=0)
    with pl.section_vector():
        pl.simt.launch(add_one, threads=(N, 2), args=(data,))


@pl.jit(auto_mutex=False)
def launch_a_callee(y: pl.Tensor[[1, N], pl.DT_FP32]):
    with pl.section_vector():
        pl.simt.launch(scaled, threads=N, args=(1.0, 2.0))


@pytest.mark.parametrize("kernel, error, words", [
    (launch_outside_vector, ParserSyntaxError, "section_vector"),
    (too_many_threads, ParserSyntaxError, "max_threads"),
    (launch_a_callee, ParserTypeError, "not a launchable"),
])
def test_bad_launches_are_refused_at_the_line(kernel, error, words):
    with pytest.raises(error, match=words) as info:
        kernel(torch.zeros(1, N))
    assert "test_pto_simt.py" in str(info.value)


def test_a_simt_function_called_outside_a_launch_is_refused():
    with pytest.raises(ParserSyntaxError, match="only be called from a SIMT function"):
        scaled(1.0, 2.0)
