"""Kernel checks for reused buffers, view lengths, placements, barriers and event ids.

Each check is caught on a small buggy kernel of the kind kernel developers write (wrong against
numpy with the checks' view of why), at the line to change, and its corrected twin reports
nothing and computes the right numbers. Expected lines come from ``# mark: NAME`` comments.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from source_marks import SourceMarks, checks_on_not_strict, f32  # noqa: F401 - a fixture

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.sim.errors import DeadlockError

HERE = os.path.abspath(__file__)
_MARKS = SourceMarks(HERE)
mark, lines_of = _MARKS.mark, _MARKS.lines_of

N = 64  # fp32 elements per tile: 256 B
F32 = asc.float32


def of(report, category: str):
    """The report's findings of ``category`` (there must be some)."""
    found = [f for f in report.findings if f.category == category]
    assert found, [f.format() for f in report.findings]
    return found


pytestmark = pytest.mark.usefixtures("checks_on_not_strict")


def tensors(*addresses):
    out = []
    for address in addresses:
        g = asc.GlobalTensor()
        g.set_global_buffer(address)
        out.append(g)
    return out


# ------------------------------------------------------------------------------------------
# Use after free: y[i] = x[i] + x[i-1] by tiles, keeping the previous input tile.
@asc.jit
def neighbour_sum(x: asc.GlobalAddress, y: asc.GlobalAddress, tiles: asc.ConstExpr[int],
                  bug: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 1)
    qout = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=qin, num=1 if bug else 2, len=4 * N)
    pipe.init_buffer(que=qout, num=1, len=4 * N)
    gx, gy = tensors(x, y)
    prev = None
    for i in range(tiles):
        t = qin.alloc_tensor(F32)  # mark: uaf-alloc
        asc.data_copy(t, gx[i * N:], N)
        qin.enque(t)
        cur = qin.deque(F32)
        o = qout.alloc_tensor(F32)
        if prev is None:
            asc.adds(o, cur, 0.0, N)
        else:
            asc.add(o, cur, prev, N)  # mark: uaf-read
        qout.enque(o)
        out = qout.deque(F32)
        asc.data_copy(gy[i * N:], out, N)
        qout.free_tensor(out)
        if bug:
            qin.free_tensor(cur)  # mark: uaf-free
        elif prev is not None:
            qin.free_tensor(prev)
        prev = cur
    if not bug:
        qin.free_tensor(prev)


def test_use_after_free_names_read_free_and_reallocation_and_fix():
    x = f32(2 * N, 1.0)
    y = np.zeros(2 * N, np.float32)
    finding = of(neighbour_sum[1](x, y, 2, True), "use-after-free")[0]
    assert lines_of(finding) == [mark("uaf-read"), mark("uaf-free"), mark("uaf-alloc")]
    assert "taken again" in finding.message and "[0, 256)" in finding.message
    assert not np.array_equal(y[N:], x[N:] + x[:N])  # it really read the new tile
    fixed = neighbour_sum[1](x, y, 2, False)
    assert fixed.findings == []
    np.testing.assert_array_equal(y, np.concatenate([x[:N], x[N:] + x[:N]]))


@asc.jit
def scratch_phases(x: asc.GlobalAddress, y: asc.GlobalAddress, bug: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    ones = buf.get(F32)
    asc.duplicate(ones, 1.0, N)
    pipe.reset()  # the second phase carves the buffer again
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)  # once the first phase is done with it
    qin = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=qin, num=1, len=4 * N)
    pipe.init_buffer(buf=buf, num=4 * N)  # mark: re-init
    if not bug:
        ones = buf.get(F32)
        asc.duplicate(ones, 1.0, N)
    gx, gy = tensors(x, y)
    t = qin.alloc_tensor(F32)
    asc.data_copy(t, gx, N)
    qin.enque(t)
    a = qin.deque(F32)
    asc.add(a, a, ones, N)  # mark: old-view
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gy, a, N)
    qin.free_tensor(a)


def test_view_of_a_tbuf_placed_again_and_fix():
    x, y = f32(N, 1.0), np.zeros(N, np.float32)
    finding = of(scratch_phases[1](x, y, True), "use-after-free")[0]
    assert lines_of(finding) == [mark("old-view"), mark("re-init")]
    assert "placed again (now bytes [256, 512))" in finding.message
    assert not np.array_equal(y, x + 1)  # the old view's bytes are the queue's now
    assert scratch_phases[1](x, y, False).findings == []
    np.testing.assert_array_equal(y, x + 1)


# ------------------------------------------------------------------------------------------
# Stale data: the max of every tile; the tail tile copies in fewer elements than it reduces.
@asc.jit
def tile_max(x: asc.GlobalAddress, y: asc.GlobalAddress, total: asc.ConstExpr[int],
             bug: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 1)
    qout = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=qin, num=1, len=4 * N)
    pipe.init_buffer(que=qout, num=1, len=32)
    work = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=work, num=4 * N)
    tmp = work.get(F32)
    gx, gy = tensors(x, y)
    tiles = (total + N - 1) // N
    for i in range(tiles):
        n = min(N, total - i * N)
        t = qin.alloc_tensor(F32)  # mark: stale-alloc
        asc.data_copy_pad(t, gx[i * N:], asc.DataCopyExtParams(1, n * 4, 0, 0, 0),
                          asc.DataCopyPadExtParams(False, 0, 0, 0))
        qin.enque(t)
        a = qin.deque(F32)
        o = qout.alloc_tensor(F32)
        asc.duplicate(o, 0.0, 8)
        asc.reduce_max(o, a, tmp, N if bug else n)  # mark: stale-read
        qout.enque(o)
        qin.free_tensor(a)
        b = qout.deque(F32)
        asc.data_copy(gy[i * 8:], b, 8)
        qout.free_tensor(b)


def test_stale_read_of_a_reused_tile_and_fix():
    x = np.concatenate([f32(N, 100.0), f32(40)])  # the tail's values are below the first's
    y = np.zeros(16, np.float32)
    report = tile_max[1](x, y, len(x), True)
    finding = of(report, "stale-read")[0]
    assert lines_of(finding) == [mark("stale-read"), mark("stale-alloc")]
    assert "96 B (first at byte 160)" in finding.message
    assert [f.category for f in report.findings] == ["stale-read"]  # not "uninitialised"
    assert y[8] != x[N:].max()  # the earlier tile's data won
    fixed = tile_max[1](x, y, len(x), False)
    assert fixed.findings == []
    np.testing.assert_array_equal(y[[0, 8]], [x[:N].max(), x[N:].max()])


# ------------------------------------------------------------------------------------------
# A view past its own length: two views of one TBuf; an op longer than the first one.
@asc.jit
def two_views(x: asc.GlobalAddress, y: asc.GlobalAddress, count: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=8 * N)
    a = buf.get_with_offset(N, 0, F32)
    b = buf.get_with_offset(N, 4 * N, F32)
    gx, gy = tensors(x, y)
    asc.data_copy(b, gx, N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.duplicate(a, 1.0, count)  # mark: view-end
    asc.add(b, b, a, N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gy, b, N)


@asc.jit
def sized_get(x: asc.GlobalAddress, count: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=8 * N)
    a = buf.get(F32, N)
    asc.duplicate(a, 1.0, count)  # mark: get-end


def test_op_past_its_view_and_fix():
    x, y = f32(N), np.zeros(N, np.float32)
    report = two_views[1](x, y, 2 * N)
    finding = of(report, "local-overflow")[0]
    assert lines_of(finding) == [mark("view-end")]
    assert "(byte 256)" in finding.message
    np.testing.assert_array_equal(y, np.full(N, 2.0))  # x was overwritten by the 1.0 fill
    assert two_views[1](x, y, N).findings == []
    np.testing.assert_array_equal(y, x + 1)
    assert lines_of(of(sized_get[1](x, 2 * N), "local-overflow")[0]) == [mark("get-end")]
    assert sized_get[1](x, N).findings == []


# ------------------------------------------------------------------------------------------
# Overlapping placements: a static tensor over the buffers of init_buffer.
@asc.jit
def static_over_queue(x: asc.GlobalAddress, y: asc.GlobalAddress, addr: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=qin, num=1, len=4 * N)  # mark: carve
    scale = asc.LocalTensor(F32, asc.TPosition.VECCALC, addr, N)  # mark: static
    gx, gy = tensors(x, y)
    asc.duplicate(scale, 3.0, N)
    t = qin.alloc_tensor(F32)
    asc.data_copy(t, gx, N)
    qin.enque(t)
    a = qin.deque(F32)
    asc.mul(a, a, scale, N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gy, a, N)
    qin.free_tensor(a)


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def placed_beyond(x: asc.GlobalAddress, addr: asc.ConstExpr[int]):
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, addr, 256)  # mark: beyond-l1
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    if addr + 512 <= 512 * 1024:
        asc.data_copy(a1, gx, 256)


def test_static_tensor_over_init_buffer_and_fix():
    x, y = f32(N, 1.0), np.zeros(N, np.float32)
    report = static_over_queue[1](x, y, 0)
    finding = of(report, "placement-overlap")[0]
    assert lines_of(finding) == [mark("static"), mark("carve")]
    assert "[0, 256)" in finding.message
    assert not np.array_equal(y, 3 * x)  # the copy-in overwrote the scale
    fixed = static_over_queue[1](x, y, 4 * N)
    assert fixed.findings == []
    np.testing.assert_array_equal(y, 3 * x)


def test_tensor_placed_beyond_l1_is_reported_at_its_declaration():
    x = np.zeros(256, np.float16)
    finding = of(placed_beyond[1](x, 600 * 1024), "local-overflow")[0]
    assert lines_of(finding) == [mark("beyond-l1")]
    assert "holds 524288 B" in finding.message
    assert placed_beyond[1](x, 1024).findings == []


# ------------------------------------------------------------------------------------------
# Impossible barriers: more blocks than cores meeting at sync_all; mismatched participants.
@asc.jit
def barrier_phases(x: asc.GlobalAddress, y: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    t = buf.get(F32)
    gx, gy = tensors(x, y)
    block = asc.get_block_idx()
    asc.data_copy(t, gx[block * N:], N)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(gy[block * N:], t, N)
    asc.sync_all()  # mark: sync-all
    other = (block + 1) % asc.get_block_num()
    asc.data_copy(t, gy[other * N:], N)


@asc.jit
def barrier_used_cores(x: asc.GlobalAddress, first: asc.ConstExpr[int]):
    if asc.get_block_idx() == 0:
        asc.sync_all(used_cores=first)  # mark: used-first
    else:
        asc.sync_all(used_cores=2)  # mark: used-rest


def test_sync_all_with_more_blocks_than_cores_is_a_deadlock_at_its_line():
    cores = 48  # Ascend910B1: 48 AIVs
    blocks = cores + 1
    x, y = f32(blocks * N), np.zeros(blocks * N, np.float32)
    with pytest.raises(DeadlockError) as err:
        barrier_phases[blocks](x, y)
    assert err.value.where[1] == mark("sync-all")
    assert "49 blocks" in str(err.value) and "48 blocks at a time" in str(err.value)
    report = barrier_phases[cores](f32(cores * N), np.zeros(cores * N, np.float32))
    assert report.findings == []


def test_barrier_with_mismatched_participants_is_a_deadlock():
    with pytest.raises(DeadlockError) as err:  # block 0 waits for block 2, the others do not
        barrier_used_cores[3](f32(8), 3)
    assert err.value.where[1] == mark("used-rest")
    assert "participants differ" in str(err.value)
    with pytest.raises(DeadlockError) as err:  # a barrier of more cores than the launch has
        barrier_used_cores[2](f32(8), 3)
    assert err.value.where[1] == mark("used-first")
    assert "cores that do not exist" in str(err.value)
    assert barrier_used_cores[3](f32(8), 2).findings == []


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def mix_waves(x: asc.GlobalAddress, y: asc.GlobalAddress):
    if asc.ascend_is_aiv():
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=4 * N)
        t = buf.get(F32)
        gx, gy = tensors(x, y)
        block = asc.get_block_idx()
        asc.data_copy(t, gx[block * N:], N)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.sync_all(used_cores=2)
        asc.data_copy(gy[block * N:], t, N)


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def all_aiv_flag(x: asc.GlobalAddress):
    if asc.ascend_is_aiv():
        asc.cross_core_set_flag(2, 0, asc.PipeID.PIPE_MTE3)  # mark: mode-0
        asc.cross_core_wait_flag(2, 0)


def test_full_core_cross_core_barrier_with_more_blocks_than_cores_is_a_deadlock():
    with pytest.raises(DeadlockError) as err:
        all_aiv_flag[25](f32(8))  # Ascend910B1: 24 groups at a time
    assert err.value.where[1] == mark("mode-0")
    assert "25 blocks" in str(err.value)
    assert all_aiv_flag[24](f32(8)).findings == []


def test_barriers_in_a_two_wave_launch_are_deterministic():
    """Barriers of later waves get their own identity (not the id() of a freed object): the
    same launch gives the same result every time."""
    blocks = 30  # Ascend910B1: 24 groups, so two waves
    x = f32(2 * blocks * N)
    results = set()
    for _ in range(50):
        y = np.zeros_like(x)
        report = mix_waves[blocks](x, y)
        np.testing.assert_array_equal(y, x)
        results.add((tuple(f.format() for f in report.findings), report.device_time_us))
    assert len(results) == 1 and next(iter(results))[0] == ()


def test_sync_all_results_repeat_fifty_times():
    cores = 8
    x = f32(cores * N)
    results = set()
    for _ in range(50):
        y = np.zeros_like(x)
        report = barrier_phases[cores](x, y)
        np.testing.assert_array_equal(y, x)
        results.add((tuple(f.format() for f in report.findings), report.device_time_us))
    assert len(results) == 1 and next(iter(results))[0] == ()


# ------------------------------------------------------------------------------------------
# A ping-pong wait with the wrong event id.
@asc.jit
def ping_pong(x: asc.GlobalAddress, y: asc.GlobalAddress, tiles: asc.ConstExpr[int],
              bug: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=8 * N)
    halves = (buf.get_with_offset(N, 0, F32), buf.get_with_offset(N, 4 * N, F32))
    gx, gy = tensors(x, y)
    for i in range(tiles):
        eid = i % 2
        t = halves[eid]
        if i >= 2:
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0 if bug else eid)  # mark: wrong-wait
        asc.data_copy(t, gx[i * N:], N)
        asc.set_flag(asc.HardEvent.MTE2_V, eid)
        asc.wait_flag(asc.HardEvent.MTE2_V, eid)
        asc.muls(t, t, 2.0, N)
        asc.set_flag(asc.HardEvent.V_MTE3, eid)
        asc.wait_flag(asc.HardEvent.V_MTE3, eid)
        asc.data_copy(gy[i * N:], t, N)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, eid)  # mark: pp-set
    for i in range(max(0, tiles - 2), tiles):
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, i % 2)


def test_ping_pong_wait_with_wrong_id_is_reported_at_the_wait_and_fix():
    x, y = f32(4 * N), np.zeros(4 * N, np.float32)
    findings = of(ping_pong[1](x, y, 4, True), "flag-misuse")
    first = findings[0]
    assert lines_of(first) == [mark("wrong-wait"), mark("pp-set")]
    assert "wrong event id" in first.message
    fixed = ping_pong[1](x, y, 4, False)
    assert fixed.findings == []
    np.testing.assert_array_equal(y, 2 * x)


# ------------------------------------------------------------------------------------------
# A cross-core flag raised on the wrong pipe.
@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def pair_hand_over(x: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress,
                   set_pipe: asc.ConstExpr[str]):
    if asc.ascend_is_aiv():
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=4 * N)
        t = buf.get(F32)
        gx, gw, gy = tensors(x, ws, y)
        if asc.get_sub_block_idx() == 0:
            asc.data_copy(t, gx, N)
            asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.data_copy(gw, t, N)  # mark: xc-write
        asc.cross_core_set_flag(5, 1, getattr(asc.PipeID, set_pipe))  # mark: xc-set
        asc.cross_core_wait_flag(5, 1)
        if asc.get_sub_block_idx() == 1:
            asc.data_copy(t, gw, N)  # mark: xc-read
            asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.data_copy(gy, t, N)


def test_cross_core_flag_on_the_wrong_pipe_names_the_set_and_fix():
    x, ws, y = f32(N), np.zeros(N, np.float32), np.zeros(N, np.float32)
    finding = of(pair_hand_over[1](x, ws, y, "PIPE_V"), "cross-core-race")[0]
    assert lines_of(finding) == [mark("xc-set"), mark("xc-write"), mark("xc-read")]
    assert "on V" in finding.message and "PIPE_MTE3" in finding.hint
    assert pair_hand_over[1](x, ws, y, "PIPE_MTE3").findings == []
    np.testing.assert_array_equal(y, x)


# ------------------------------------------------------------------------------------------
# Correct patterns near the new checks stay clean.
@asc.jit
def scratch_and_tails(x: asc.GlobalAddress, y: asc.GlobalAddress, total: asc.ConstExpr[int]):
    """Tiles of a two-buffer queue, the tail copied in and out with data_copy_pad and computed
    over its padded blocks; one TBuf reused as fp32 and fp16 scratch through views of their
    own length."""
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 2)
    qout = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=qin, num=2, len=4 * N)
    pipe.init_buffer(que=qout, num=2, len=4 * N)
    scratch = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=scratch, num=8 * N)
    gx, gy = tensors(x, y)
    per_core = total // asc.get_block_num()
    base = asc.get_block_idx() * per_core
    tiles = (per_core + N - 1) // N
    for i in range(tiles):
        n = min(N, per_core - i * N)
        padded = (n + 7) // 8 * 8
        t = qin.alloc_tensor(F32)
        asc.data_copy_pad(t, gx[base + i * N:], asc.DataCopyExtParams(1, n * 4, 0, 0, 0),
                          asc.DataCopyPadExtParams(False, 0, 0, 0))
        qin.enque(t)
        a = qin.deque(F32)
        half = scratch.get(asc.float16, padded)
        wide = scratch.get_with_offset(padded, 2 * N * 2, F32)
        asc.cast(half, a, asc.RoundMode.CAST_NONE, padded)
        asc.cast(wide, half, asc.RoundMode.CAST_NONE, padded)
        o = qout.alloc_tensor(F32)
        asc.add(o, a, wide, padded)
        qin.free_tensor(a)
        qout.enque(o)
        b = qout.deque(F32)
        asc.data_copy_pad(gy[base + i * N:], b, asc.DataCopyExtParams(1, n * 4, 0, 0, 0))
        qout.free_tensor(b)


@pytest.mark.parametrize("blocks", [1, 60])  # 60 blocks: two waves on 48 AIVs
def test_tail_tiles_scratch_reuse_and_two_waves_stay_clean(blocks):
    per_core = 2 * N + 37  # a tail of 37 elements: 148 B, computed over 5 padded blocks
    x = f32(blocks * per_core) / 8
    y = np.zeros_like(x)
    report = scratch_and_tails[blocks](x, y, len(x))
    assert report.findings == [], [f.format() for f in report.findings]
    np.testing.assert_allclose(y, x + x.astype(np.float16).astype(np.float32))
