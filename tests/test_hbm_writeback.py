"""HBM traffic a core causes besides its own reads: write-back of dirty lines a full L2 evicts,
written-through (bypassed) stores, and one HBM share per core for both."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ascsim.hw import get_soc
from ascsim.sim.cost import _book_hbm, _writeback, cost_table
from ascsim.sim.l2 import LINE_BYTES, L2Cache


def _cache(lines: int) -> L2Cache:
    return L2Cache(lines * LINE_BYTES, lambda buffer_id: 1 << 20)


def _core(cores: int = 1, kind: str = "AIV", core_id: int = 0):
    launch = SimpleNamespace(l2_lines={}, wave_cores={kind: cores}, wave_l2_lines=0,
                             hbm_cycles={}, hbm_free={}, hbm_sharing={})
    return SimpleNamespace(launch=launch, kind=kind, core_id=core_id, start_time=0.0)


def test_the_cache_reports_insertions_new_dirty_lines_and_written_through_bytes():
    cache = _cache(64)
    cache.read_cost(0, [0], [2 * LINE_BYTES], 0.0, 50, 320)  # two misses
    assert cache.take_changes() == (2, 0, 0.0)
    cache.write(1, [0], [LINE_BYTES], 10.0)  # one new line, dirty
    cache.write(1, [0], [LINE_BYTES], 20.0)  # the same line again: nothing new
    assert cache.take_changes() == (1, 1, 0.0)
    cache.set_bypass(2)
    cache.write(2, [0], [100], 30.0)  # straight to HBM
    assert cache.take_changes() == (0, 0, 100.0)


def test_write_back_starts_when_the_wave_has_filled_l2_at_the_cores_pace():
    # 4 cores share a 24-line L2: at the core's pace it is full after 6 of its own lines.
    cache, core = _cache(24), _core(cores=4)
    step = 0

    def iteration():
        """Read two new input lines, write one new output line (a binary element-wise op)."""
        nonlocal step
        cache.read_cost(0, [2 * step * LINE_BYTES], [(2 * step + 2) * LINE_BYTES], 0.0, 50, 320)
        read_back = _writeback(core, cache)
        cache.write(1, [step * LINE_BYTES], [(step + 1) * LINE_BYTES], 0.0)
        write_back = _writeback(core, cache)
        step += 1
        return read_back, write_back

    assert [iteration() for _ in range(2)] == [(0.0, 0.0), (0.0, 0.0)]  # 6 lines: not full
    # From now on every new line evicts one, dirty in the proportion the core has made lines
    # dirty so far (one in three, once the start no longer weighs): each iteration writes
    # back about the one output line it adds, split between its read and its write.
    for _ in range(200):
        read_back, write_back = iteration()
        assert 0 < write_back < read_back
    assert read_back + write_back == pytest.approx(LINE_BYTES, rel=0.02)


def test_a_read_only_stream_writes_nothing_back():
    cache, core = _cache(8), _core()
    for i in range(20):
        cache.read_cost(0, [i * LINE_BYTES], [(i + 1) * LINE_BYTES], 0.0, 50, 320)
        assert _writeback(core, cache) == 0.0


def test_reads_and_write_backs_share_the_cores_hbm_share():
    soc = get_soc("Ascend950PR_9589")
    costs = cost_table(soc)
    core = _core(cores=1)
    path = costs.path("AIV", "GM->UB")
    # A lone vector core reads at the AIC's ini ddr_read_rate; the chip's HBM is far wider,
    # so the write-back its reads cause costs it nothing extra.
    own = min(path.rate, soc.bw.gm_read)
    assert costs.hbm_cycles(core, path, 0.0, 8192, 0.0) == pytest.approx(8192 / own)
    assert costs.hbm_cycles(core, path, 0.0, 8192, 4096) == pytest.approx(8192 / own)
    # 64 cores streaming all the time share the chip's bandwidth: fills and write-backs
    # together go at a 64th of it.
    busy = _core(cores=64)
    busy.launch.hbm_cycles[0] = 1000.0
    share = soc.gm_bandwidth_bytes_per_cycle / 64
    assert costs.hbm_cycles(busy, path, 1000.0, 8192, 4096) == pytest.approx(12288 / share)


def test_a_cores_transfers_take_turns_on_its_hbm_share():
    core = _core()
    assert _book_hbm(core, 100.0, 50.0) == 0.0
    # MTE3's write-back issued while MTE2's fill still streams waits for it.
    assert _book_hbm(core, 120.0, 30.0) == pytest.approx(30.0)
    assert _book_hbm(core, 500.0, 10.0) == 0.0
