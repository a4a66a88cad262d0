"""How GM reads are priced: a core's share of HBM, misaligned bursts, the L2 bypass hint."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.hw import DEFAULT_SOC, get_soc
from ascsim.session import SESSION
from ascsim.sim.access import ByteRows
from ascsim.sim.launch import Launch, LaunchConfig
from ascsim.sim.memory import DeviceMemory

N = 128 * 1024  # fp32 elements per core: 512 KiB, in 8 KiB copies


@pytest.fixture
def soc_910b1():
    SESSION.set_soc("Ascend910B1")
    yield get_soc("Ascend910B1")
    SESSION.set_soc(DEFAULT_SOC)


@asc.jit
def _stream(x: asc.GlobalAddress, n: asc.ConstExpr[int], bypass: asc.ConstExpr[bool],
            passes: asc.ConstExpr[int]):
    """Each core reads its own slice of x ``passes`` times, 2048 elements per copy."""
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2048 * 4)
    t = buf.get(asc.float32)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x + asc.get_block_idx() * n)
    if bypass:
        gx.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_DISABLE)
    for _ in range(passes):
        for i in range(n // 2048):
            asc.data_copy(t, gx[i * 2048:], 2048)


def _mte2_cycles(soc, report) -> float:
    return max(soc.us_to_cycles(c.pipe_busy_us["MTE2"]) for c in report.cores)


def test_a_lone_vector_core_streams_at_the_ini_ddr_rate(soc_910b1):
    soc = soc_910b1
    report = _stream[1](np.zeros(N, np.float32), N, False, 1)
    # Every byte misses; one core alone is held to the AIC's ini ddr_read_rate (32 B/cycle),
    # not to its L2 port (110): the copies' startups and the first latency add ~10 %.
    floor = N * 4 / soc.bw.gm_read
    assert floor < _mte2_cycles(soc, report) < 1.15 * floor


def test_cores_streaming_together_share_the_chips_hbm(soc_910b1):
    soc = soc_910b1
    cores = soc.aiv_count
    alone = _stream[1](np.zeros(N, np.float32), N, False, 1)
    together = _stream[cores](np.zeros(N * cores, np.float32), N, False, 1)
    # 48 AIV streaming at once share 768 B/cycle (16 each): every core's reads take longer
    # than one core's alone at 32 B/cycle. The share follows the core's own duty (its time
    # with a request in the memory system, latency included), which the kernel start dilutes
    # at first: no slower than the 1/48 share plus the copies' start-ups and one latency.
    share = soc.gm_bandwidth_bytes_per_cycle / cores
    fixed = N // 2048 * soc.timing.mte2_startup_cycles + soc.timing.gm_read_latency_cycles
    assert 1.25 * _mte2_cycles(soc, alone) < _mte2_cycles(soc, together) < N * 4 / share + fixed
    # And the launch as a whole is no faster than the chip's HBM bandwidth.
    hbm_cycles = N * 4 * cores / soc.gm_bandwidth_bytes_per_cycle
    assert soc.us_to_cycles(together.device_time_us) > hbm_cycles


def test_l2_hits_are_not_held_to_the_hbm_share(soc_910b1):
    soc = soc_910b1
    cores = soc.aiv_count
    once = _stream[cores](np.zeros(N * cores, np.float32), N, False, 1)
    twice = _stream[cores](np.zeros(N * cores, np.float32), N, False, 2)
    # The second pass hits L2 and streams at the port rate, several times the HBM share.
    assert _mte2_cycles(soc, twice) < 1.5 * _mte2_cycles(soc, once)


def test_the_bypass_hint_keeps_a_buffer_out_of_l2(soc_910b1):
    x = np.zeros(N, np.float32)
    cached = _stream[1](x, N, False, 2)
    bypassed = _stream[1](x, N, True, 2)
    # Cached: the second pass hits. Bypassed: both passes come from HBM.
    assert bypassed.profile.hbm_bytes == pytest.approx(2 * cached.profile.hbm_bytes)
    assert bypassed.device_time_us > cached.device_time_us


def _transfer_cycles(soc, rows: ByteRows) -> float:
    launch = Launch(LaunchConfig(kernel="k", soc=soc, block_num=1), DeviceMemory())
    out = []

    def body(core):
        # Twice: the second read hits L2, so only the rate and the extra requests differ.
        cost = core.costs.path(core.kind, "GM->UB")
        for t in (0.0, 1e6):
            out.append(core.costs.transfer(core, cost, rows.nbytes, rows.count, (0, rows), t)[0])

    launch.memory.alloc(1 << 24, "src")
    launch.run(body)
    return out[1] - soc.timing.mte2_startup_cycles - (rows.count - 1) * soc.timing.burst_gap_cycles


@pytest.mark.parametrize("soc_name", ["Ascend910B1", "Ascend950PR_9579"])
def test_bursts_off_32_byte_boundaries_cost_an_extra_request(soc_name):
    soc = get_soc(soc_name)
    width, count = 2046, 64
    aligned = _transfer_cycles(soc, ByteRows(0, width, 24576, count))
    # Pitch 24574: row starts step by 2 bytes modulo 32, so 15 rows in 16 start off a
    # 32-byte boundary and each costs gm_misaligned_extra_bytes more.
    misaligned = _transfer_cycles(soc, ByteRows(0, width, 24574, count))
    extra = soc.timing.gm_misaligned_extra_bytes * count * 15 / 16
    assert misaligned / aligned == pytest.approx(1 + extra / (width * count), rel=1e-6)


def test_the_950_runs_fp32_on_the_cube_at_half_the_fp16_rate():
    cube = get_soc("Ascend950PR_9579").cube
    assert cube.k_step["float32"] * 2 == cube.k_step["float16"]
    assert get_soc("Ascend910B1").cube.k_step["float32"] * 4 == 16


@asc.jit
def _stream_and_wait(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """Each core reads its own slice of x, 2048 elements per copy, waiting for every copy."""
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2048 * 4)
    t = buf.get(asc.float32)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x + asc.get_block_idx() * n)
    for i in range(n // 2048):
        asc.data_copy(t, gx[i * 2048:], 2048)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def test_cores_waiting_for_their_reads_still_share_hbm_as_if_streaming(soc_910b1):
    soc = soc_910b1
    cores = soc.aiv_count
    report = _stream_and_wait[cores](np.zeros(N * cores, np.float32), N)
    # Every copy waits out its HBM latency, but its request is in the memory system all that
    # time: the cores do not lend those waits to each other, so each reads at close to its
    # 1/48 share (the kernel start dilutes the duty at first) and pays the latency on top
    # (device-times.md §A1: single-buffered all-core Add on the 950). Counting only the
    # transfer cycles as the duty, each core read at its 32 B/cycle cap: 0.8 of this.
    share = soc.gm_bandwidth_bytes_per_cycle / cores
    waits = N // 2048 * soc.timing.gm_read_latency_cycles
    assert _mte2_cycles(soc, report) > 0.85 * (N * 4 / share + waits)
