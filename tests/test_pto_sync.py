"""PyPTO Pro synchronisation on the simulated 950: auto_mutex, flags and barriers inside a core,
cross-core flags in every mode (with the AIV1 id + 16 numbering), sync_all, and the findings a
wrongly synchronised kernel gets (races at the kernel's lines, deadlocks naming cores and ids)."""

from __future__ import annotations

import pytest
import torch

import ascsim.pto.language as pl
from ascsim.isa import DeadlockError
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
ROWS, COLS = 16, 64
VEC = pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
TILE_BYTES = ROWS * COLS * 4


@pytest.fixture(autouse=True)
def _soc():
    with SESSION.using_soc(SOC):
        yield


def _line(text: str) -> int:
    """The line of this file holding ``text`` (findings point at kernel lines)."""
    with open(__file__) as fh:
        for number, line in enumerate(fh, start=1):
            if text in line and "_line(" not in line:
                return number
    raise AssertionError(text)


def _races(report):
    return [f for f in report.findings if f.category in ("race", "cross-core-race")]


# ------------------------------------------------------------------ flags inside a core
@pl.jit(auto_mutex=False)
def double_no_sync(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32], y: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    a = pl.make_tile(VEC, addr=0)
    with pl.section_vector():
        pl.load(a, x, [0, 0])  # the load
        pl.add(a, a, a)  # unsynchronised read of the load
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(y, a, [0, 0])


@pl.jit(auto_mutex=False)
def double_synced(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32], y: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    a = pl.make_tile(VEC, addr=0)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.add(a, a, a)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(y, a, [0, 0])


@pl.jit(auto_mutex=False)
def double_barriers(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32], y: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    a = pl.make_tile(VEC, addr=0)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.system.bar_all()
        pl.add(a, a, a)
        pl.system.bar_all()
        pl.store(y, a, [0, 0])


def test_flags_order_pipes_and_a_missing_flag_is_a_race_at_the_kernel_line():
    x = torch.randn(ROWS, COLS)
    for kernel in (double_synced, double_barriers):
        y = torch.zeros(ROWS, COLS)
        report = kernel[1](x, y)
        torch.testing.assert_close(y, x + x)
        assert not _races(report), kernel
    y = torch.zeros(ROWS, COLS)
    report = double_no_sync[1](x, y)
    torch.testing.assert_close(y, x + x)  # the values are right: only the order is missing
    races = _races(report)
    assert len(races) == 1
    lines = [loc[1] for loc in races[0].locations]
    assert lines == [_line("# the load"), _line("# unsynchronised read")]
    assert races[0].locations[0][0] == __file__
    assert "MTE2" in races[0].message and "sync_src" in races[0].hint


@pl.jit(auto_mutex=False)
def bad_event(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_vector():
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=16)


def test_event_ids_are_checked():
    with pytest.raises(Exception, match="event_id 16 is outside"):
        bad_event[1](torch.zeros(ROWS, COLS))


# ------------------------------------------------------------------ auto_mutex
@pl.jit(auto_mutex=True)
def ring_add(x: pl.Tensor[[pl.DYNAMIC, COLS], pl.DT_FP32],
             y: pl.Tensor[[pl.DYNAMIC, COLS], pl.DT_FP32]):
    group = pl.make_tile_group(type=VEC, addrs=0, mutex_ids=[0, 1])
    out = pl.make_tile_group(type=VEC, addrs=2 * TILE_BYTES, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // ROWS):
            a = group.next()
            b = out.next()
            pl.load(a, x, [i * ROWS, 0])
            pl.mul(b, a, a)
            pl.store(y, b, [i * ROWS, 0])


@pl.jit(auto_mutex=False)
def ring_add_unlocked(x: pl.Tensor[[pl.DYNAMIC, COLS], pl.DT_FP32],
                      y: pl.Tensor[[pl.DYNAMIC, COLS], pl.DT_FP32]):
    group = pl.make_tile_group(type=VEC, addrs=0, mutex_ids=[0, 1])
    out = pl.make_tile_group(type=VEC, addrs=2 * TILE_BYTES, mutex_ids=[2, 3])
    with pl.section_vector():
        for i in pl.range(0, x.shape[0] // ROWS):
            a = group.next()
            b = out.next()
            pl.load(a, x, [i * ROWS, 0])
            pl.mul(b, a, a)
            pl.store(y, b, [i * ROWS, 0])


def test_auto_mutex_orders_a_double_buffered_ring():
    x = torch.randn(4 * ROWS, COLS)
    y = torch.zeros_like(x)
    report = ring_add[1](x, y)
    torch.testing.assert_close(y, x * x)
    assert not _races(report)
    # Its locks cost time: without them the same kernel races (and is no slower).
    y2 = torch.zeros_like(x)
    unlocked = ring_add_unlocked[1](x, y2)
    torch.testing.assert_close(y2, x * x)
    assert _races(unlocked)
    assert report.device_time_us >= unlocked.device_time_us


@pl.jit(auto_mutex=True)
def same_token_twice(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32],
                     y: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    # Both slots share buffer id 5: an op on both locks it once (two locks of one id on one
    # pipe would hang the device).
    group = pl.make_tile_group(type=VEC, addrs=0, mutex_ids=[5, 5])
    with pl.section_vector():
        a = group[0]
        b = group[1]
        pl.load(a, x, [0, 0])
        pl.add(b, a, a)
        pl.store(y, b, [0, 0])


def test_auto_mutex_dedupes_one_id_across_operands():
    x = torch.randn(ROWS, COLS)
    y = torch.zeros_like(x)
    report = same_token_twice[1](x, y)
    torch.testing.assert_close(y, x + x)
    assert not [f for f in report.findings if f.category in ("deadlock", "race")]


@pl.jit(auto_mutex=False)
def manual_mutex(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32], y: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    a = pl.make_tile(VEC, addr=0)
    with pl.section_vector():
        pl.system.mutex_lock(pipe=pl.PipeType.MTE2, mutex_id=3)
        pl.load(a, x, [0, 0])
        pl.system.mutex_unlock(pipe=pl.PipeType.MTE2, mutex_id=3)
        pl.mutex.mutex_lock(pipe=pl.PipeType.V, mutex_id=3)
        pl.add(a, a, a)
        pl.mutex.mutex_unlock(pipe=pl.PipeType.V, mutex_id=3)
        pl.system.mutex_lock(pipe=pl.PipeType.MTE3, mutex_id=3)
        pl.store(y, a, [0, 0])
        pl.system.mutex_unlock(pipe=pl.PipeType.MTE3, mutex_id=3)


@pl.jit(auto_mutex=False)
def relocked_mutex(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_vector():
        pl.system.mutex_lock(pipe=pl.PipeType.V, mutex_id=7)
        pl.system.mutex_lock(pipe=pl.PipeType.V, mutex_id=7)  # the same pipe still holds it


def test_manual_mutexes_order_pipes_and_a_second_lock_hangs():
    x = torch.randn(ROWS, COLS)
    y = torch.zeros_like(x)
    report = manual_mutex[1](x, y)
    torch.testing.assert_close(y, x + x)
    assert not _races(report)
    report = relocked_mutex[1](x)
    finding = report.findings[0]
    assert finding.category == "deadlock" and "mutex 7" in finding.message
    assert _line("# the same pipe still holds it") in [loc[1] for loc in finding.locations]


# ------------------------------------------------------------------ cross-core flags
GM_TILE = pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)


@pl.jit(auto_mutex=False)
def subblock_handoff(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32],
                     work: pl.Tensor[[ROWS, COLS], pl.DT_FP32],
                     y: pl.Tensor[[ROWS, COLS], pl.DT_FP32], synced: pl.DT_BOOL):
    a = pl.make_tile(GM_TILE, addr=0)
    with pl.section_cube():
        pass
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            pl.load(a, x, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.add(a, a, a)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(work, a, [0, 0])  # AIV0 writes the workspace
        if synced:
            pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=4,
                                     sync_mode=pl.CrossCoreSyncMode.INTER_SUBBLOCK)
            pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=4,
                                      sync_mode=pl.CrossCoreSyncMode.INTER_SUBBLOCK)
        if pl.get_subblock_idx() == 1:
            pl.load(a, work, [0, 0])  # AIV1 reads it
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=2)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=2)
            pl.store(y, a, [0, 0])


def test_inter_subblock_barrier_orders_the_two_aivs_and_its_absence_is_a_race():
    x = torch.randn(ROWS, COLS)
    work, y = torch.zeros_like(x), torch.zeros_like(x)
    report = subblock_handoff[1](x, work, y, True)
    torch.testing.assert_close(y, x + x)
    assert not _races(report)
    work, y = torch.zeros_like(x), torch.zeros_like(x)
    report = subblock_handoff[1](x, work, y, False)
    races = _races(report)
    assert races, "an unsynchronised GM hand-over between the AIVs is a race"
    lines = {loc[1] for f in races for loc in f.locations}
    assert _line("# AIV0 writes the workspace") in lines
    assert _line("# AIV1 reads it") in lines


@pl.jit(auto_mutex=False)
def aic_to_aivs(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32], y: pl.Tensor[[2 * ROWS, COLS], pl.DT_FP32],
                mode: pl.DT_INT64):
    a = pl.make_tile(GM_TILE, addr=0)
    with pl.section_cube():
        if mode == 0:  # INTRA_BLOCK: one set reaches both AIVs
            pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=3)
        else:  # UNICAST_BLOCK: AIV0 by id, AIV1 by id + 16
            pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=3,
                                     sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)
            pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=19,
                                     sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)
        pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=5)  # one set from each AIV
    with pl.section_vector():
        sub = pl.get_subblock_idx()
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=3)
        pl.load(a, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(y, a, [sub * ROWS, 0])
        pl.system.set_cross_core(pipe=pl.PipeType.MTE3, event_id=5)


def test_intra_block_and_unicast_flags_with_the_aiv1_numbering():
    x = torch.randn(ROWS, COLS)
    for mode in (0, 1):
        y = torch.zeros(2 * ROWS, COLS)
        report = aic_to_aivs[1](x, y, mode)
        torch.testing.assert_close(y, torch.cat([x, x]))
        assert not [f for f in report.findings
                    if f.category in ("race", "cross-core-race", "deadlock")]


@pl.jit(auto_mutex=False)
def aic_waits_for_aiv1(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_cube():
        # AIV1's flag 2 is 18 on the AIC side; only AIV0 sets flag 2.
        pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=18,
                                  sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=2,
                                     sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)


@pl.jit(auto_mutex=False)
def aic_waits_for_both(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_cube():
        pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=2)  # needs both AIVs
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=2)


@pl.jit(auto_mutex=False)
def aic_waits_for_aiv0(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_cube():
        pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=2,
                                  sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=2)


def test_a_wait_that_is_never_met_is_a_deadlock_naming_cores_ids_and_lines():
    x = torch.zeros(ROWS, COLS)
    aic_waits_for_aiv0[1](x)  # AIV0's set is what a unicast wait on id 2 takes
    with pytest.raises(DeadlockError) as info:
        aic_waits_for_aiv1[1](x)
    text = str(info.value)
    assert "core 0 (AIC block 0)" in text and "flag 18" in text and "AIV1" in text
    assert f"test_pto_sync.py:{_line('event_id=18')}" in text
    with pytest.raises(DeadlockError) as info:
        aic_waits_for_both[1](x)
    assert "flag 18" in str(info.value) and "AIV1" in str(info.value)


@pl.jit(auto_mutex=False)
def vector_only_intra(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_vector():
        pl.system.set_cross_core(pipe=pl.PipeType.V, event_id=1)


def test_intra_block_flags_need_a_mix_kernel():
    with pytest.raises(Exception, match="needs a MIX kernel"):
        vector_only_intra[1](torch.zeros(ROWS, COLS))


# ------------------------------------------------------------------ sync_all
@pl.jit(auto_mutex=False)
def all_blocks_exchange(x: pl.Tensor[[pl.DYNAMIC, COLS], pl.DT_FP32],
                        y: pl.Tensor[[pl.DYNAMIC, COLS], pl.DT_FP32]):
    a = pl.make_tile(GM_TILE, addr=0)
    with pl.section_vector():
        me = pl.get_block_idx()
        n = pl.get_block_num()
        pl.load(a, x, [me * ROWS, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(y, a, [me * ROWS, 0])
        pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
        # Every block now reads its neighbour's rows, written by another core before the barrier.
        pl.load(a, y, [((me + 1) % n) * ROWS, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=1)
        pl.store(x, a, [me * ROWS, 0])


def test_sync_all_is_an_all_core_barrier():
    blocks = 4
    x = torch.randn(blocks * ROWS, COLS)
    expected = torch.roll(x, -ROWS, dims=0)
    y = torch.zeros_like(x)
    report = all_blocks_exchange[blocks](x, y)
    torch.testing.assert_close(x, expected)
    assert not _races(report)


@pl.jit(auto_mutex=False)
def sync_all_hard_with_workspace(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_vector():
        pl.system.sync_all([x], core_type=pl.SyncCoreType.AIV_ONLY)


def test_hard_sync_all_takes_no_workspaces():
    with pytest.raises(Exception, match="HARD mode takes no workspaces"):
        sync_all_hard_with_workspace[1](torch.zeros(ROWS, COLS))
