"""The L2 model: first touches miss, re-reads hit, writes stay in L2, capacity, HBM bound."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.hw import DEFAULT_SOC, get_soc
from ascsim.session import SESSION
from ascsim.sim.l2 import LINE_BYTES, L2Cache


def _cache(l2_bytes=1 << 20, size=1 << 16):
    return L2Cache(l2_bytes, lambda bid: size)


def test_first_read_misses_then_hits():
    cache = _cache()
    lat, hit = cache.read(0, [0], [4096], t=0.0, hit_latency=50, miss_latency=320)
    assert (lat, hit) == (320.0, 0.0)
    lat, hit = cache.read(0, [0], [4096], t=1000.0, hit_latency=50, miss_latency=320)
    assert (lat, hit) == (50.0, 1.0)
    assert cache.miss_bytes == 4096 and cache.hit_bytes == 4096


def test_read_of_a_line_in_flight_waits_for_its_fill():
    cache = _cache()
    cache.read(0, [0], [512], t=100.0, hit_latency=50, miss_latency=320)
    lat, hit = cache.read(0, [0], [512], t=200.0, hit_latency=50, miss_latency=320)
    assert hit == 1.0 and lat == pytest.approx(220.0)  # fill arrives at 420


@pytest.mark.parametrize("nbytes", [512, 64 * 1024])  # a few lines, and more than FEW_LINES
def test_read_before_a_later_requested_fill_waits_at_most_the_hbm_latency(nbytes):
    # Cores run one after the other: a core run first may have requested the line at a later
    # simulated time; an earlier read fetches it itself, and its fill then counts for both.
    cache = _cache()
    cache.read(0, [0], [nbytes], t=100_000.0, hit_latency=50, miss_latency=320)
    lat, hit = cache.read(0, [0], [nbytes], t=1000.0, hit_latency=50, miss_latency=320)
    assert hit == 1.0 and lat == pytest.approx(320.0)
    lat, _ = cache.read(0, [0], [nbytes], t=2000.0, hit_latency=50, miss_latency=320)
    assert lat == pytest.approx(50.0)  # the fill of the read at 1000 arrived at 1320


def test_partial_overlap_counts_hit_fraction_and_strided_ranges():
    cache = _cache()
    # Rows of 512 B every 1024 B: only the even lines are touched.
    starts = np.arange(4) * 1024
    cache.read(0, starts, starts + 512, t=0, hit_latency=50, miss_latency=320)
    lat, hit = cache.read(0, [0], [4096], t=1000, hit_latency=50, miss_latency=320)
    assert lat == 320 and hit == pytest.approx(0.5)


def test_writes_land_in_l2_and_lru_evicts_the_least_recently_used_line():
    cache = _cache(l2_bytes=4 * LINE_BYTES)
    cache.write(0, [0], [2 * LINE_BYTES], t=10.0)  # two dirty lines
    assert cache.read(0, [0], [LINE_BYTES], 20.0, 50, 320) == (50.0, 1.0)  # refreshes line 0
    cache.read(1, [0], [2 * LINE_BYTES], 0.0, 50, 320)  # L2 now full
    cache.write(2, [0], [LINE_BYTES], 30.0)  # evicts buffer 0's line 1, dirty: written back
    assert cache.resident_lines == 4
    assert cache.evicted_dirty_bytes() == LINE_BYTES
    assert cache.hbm_bytes() == 2 * LINE_BYTES + LINE_BYTES
    assert cache.read(0, [0], [LINE_BYTES], 40.0, 50, 320)[0] == 50  # line 0 is still there
    assert cache.read(0, [LINE_BYTES], [2 * LINE_BYTES], 50.0, 50, 320)[0] == 320
    # The write-back is counted once, when the line was evicted, not again now.
    assert cache.spill_bytes == LINE_BYTES and cache.evicted_dirty_bytes() == 0


def test_a_miss_brings_the_whole_line_from_hbm():
    cache = _cache()
    assert cache.read_cost(0, [0], [128], 0.0, 50, 320) == (320.0, 0.0, float(LINE_BYTES))
    assert cache.read_cost(0, [128], [256], 500.0, 50, 320) == (50.0, 1.0, 0.0)
    assert cache.miss_bytes == LINE_BYTES


def test_bypassed_buffers_go_to_hbm_and_take_no_room():
    cache = _cache(l2_bytes=4 * LINE_BYTES)
    cache.set_bypass(3)
    assert cache.read_cost(3, [0], [1000], 0.0, 50, 320) == (320.0, 0.0, 1000.0)
    assert cache.read_cost(3, [0], [1000], 900.0, 50, 320)[0] == 320  # not kept
    cache.write(3, [0], [100], 10.0)
    assert cache.inserted == 0 and cache.hbm_bytes() == 2000 + 100
    cache.set_bypass(3, False)
    cache.read(3, [0], [100], 1000.0, 50, 320)
    assert cache.read(3, [0], [100], 2000.0, 50, 320) == (50.0, 1.0)


@asc.jit
def _copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int],
                 reps: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=n * 4)
    t = buf.get(asc.float32)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    for _ in range(reps):
        asc.data_copy(t, gx, n)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy[asc.get_block_idx() * n:], t, n)


@pytest.fixture
def soc_910b4():
    SESSION.set_soc("Ascend910B4")
    yield get_soc("Ascend910B4")
    SESSION.set_soc(DEFAULT_SOC)


def test_rereading_the_same_tile_is_faster_than_the_first_read(soc_910b4):
    n = 4096
    x = np.arange(n, dtype=np.float32)
    once = _copy_kernel[1](x, np.zeros(n, np.float32), n, 1)
    twice = _copy_kernel[1](x, np.zeros(n, np.float32), n, 2)
    mte2_once = once.cores[0].pipe_busy_us["MTE2"]
    mte2_twice = twice.cores[0].pipe_busy_us["MTE2"]
    # The second read pays the L2 hit latency instead of the HBM latency.
    assert mte2_once < mte2_twice < 2 * mte2_once


def test_many_cores_streaming_are_bounded_by_hbm(soc_910b4):
    soc = soc_910b4
    n = 64 * 1024  # 256 KiB per core, each core its own slice: every read misses
    cores = soc.aiv_count
    x = np.zeros(n * cores, dtype=np.float32)

    @asc.jit
    def stream(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int]):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=16 * 1024)
        t = buf.get(asc.float32)
        gx = asc.GlobalTensor()
        gx.set_global_buffer(x + asc.get_block_idx() * n)
        for i in range(n // 4096):
            asc.data_copy(t, gx[i * 4096:], 4096)

    report = stream[cores](x, np.zeros(8, np.float32), n)
    span_us = report.device_time_us - report.launch_overhead_us
    hbm_us = soc.cycles_to_us(x.nbytes / soc.gm_bandwidth_bytes_per_cycle)
    # No faster than the chip's HBM bandwidth; each core, streaming without a pause, gets
    # its 1/n share, so it ends past that bound only by its own start, the copies' start-ups
    # and the last read's latency.
    assert span_us >= hbm_us * (1 - 1e-6)
    fixed = (soc.timing.kernel_start_cycles + n // 4096 * soc.timing.mte2_startup_cycles
             + soc.timing.gm_read_latency_cycles)
    assert span_us < hbm_us + soc.cycles_to_us(fixed)


def test_transfer_without_addresses_is_costed_as_a_miss(soc_910b4):
    from ascsim.sim.launch import Launch, LaunchConfig
    from ascsim.sim.memory import DeviceMemory

    launch = Launch(LaunchConfig(kernel="k", soc=soc_910b4, block_num=1), DeviceMemory())

    def body(core):
        busy, lat = core.costs.transfer(core, core.costs.path(core.kind, "GM->UB"), 4096, 1,
                                        None, 0.0)
        assert lat == soc_910b4.timing.gm_read_latency_cycles
        # Every byte from HBM: a lone vector core streams at the AIC's ini ddr_read_rate.
        assert busy == pytest.approx(4096 / soc_910b4.bw.gm_read
                                     + soc_910b4.timing.mte2_startup_cycles)

    launch.run(body)
    assert launch.l2.miss_bytes == 4096
