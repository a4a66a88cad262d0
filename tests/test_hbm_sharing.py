"""Cores that read the same GM lines share those lines' HBM fills (the launch's timing pass)."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.hw import DEFAULT_SOC, get_soc
from ascsim.session import SESSION
from ascsim.sim import launch as launch_module
from ascsim.sim.l2 import LINE_BYTES, L2Cache
from ascsim.sim.memory import DeviceMemory

# They count the passes and the cores' checks of each launch.
pytestmark = pytest.mark.usefixtures("per_core_launches")

N = 64 * 1024  # fp32 elements every core reads: 256 KiB, in 8 KiB copies
TILE = 2048


@pytest.fixture
def soc_910b1():
    SESSION.set_soc("Ascend910B1")
    yield get_soc("Ascend910B1")
    SESSION.set_soc(DEFAULT_SOC)


@pytest.fixture
def passes(monkeypatch):
    """How many passes each launch ran (calls of Launch._run)."""
    counts = []
    run = launch_module.Launch._run

    def counted(self, body):
        counts.append(self.config.kernel)
        return run(self, body)

    monkeypatch.setattr(launch_module.Launch, "_run", counted)
    return counts


@asc.jit
def _copy_from(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int],
               shared: asc.ConstExpr[bool]):
    """Every core copies n elements of x to its own slice of y through UB: the same n
    elements (``shared``) or its own slice of x."""
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=TILE * 4)
    t = buf.get(asc.float32)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x if shared else x + asc.get_block_idx() * n)
    gy.set_global_buffer(y + asc.get_block_idx() * n)
    asc.printf("core %d starts\n", asc.get_block_idx())
    for i in range(n // TILE):
        if i:
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.data_copy(t, gx[i * TILE:], TILE)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gy[i * TILE:], t, TILE)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
    asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)


@asc.jit
def _read_shared(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """Every core reads the same n elements of x, 2048 per copy."""
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=TILE * 4)
    t = buf.get(asc.float32)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    for i in range(n // TILE):
        asc.data_copy(t, gx[i * TILE:], TILE)


def _mte2_us(report) -> list[float]:
    return [c.pipe_busy_us["MTE2"] for c in report.cores]


def test_l2_counts_the_cores_that_read_each_filled_line():
    cache = L2Cache(1 << 24, lambda bid: 64 * LINE_BYTES)
    for core in range(4):  # four cores read the same 8 lines: one fill each, four readers
        cache.read(0, [0], [8 * LINE_BYTES], 0.0, 10, 100, reader=core)
    assert cache.sharing([0, 1, 2, 3]) == pytest.approx(4.0)
    # A fifth core reading lines of its own adds fills read once: (32 + 8) / (8 + 8).
    cache.read(0, [8 * LINE_BYTES], [16 * LINE_BYTES], 0.0, 10, 100, reader=4)
    assert cache.sharing([0, 1, 2, 3, 4]) == pytest.approx(40 / 16)
    # Reading a line again is not sharing it; reading what a core wrote is not a shared fill.
    cache.read(0, [0], [8 * LINE_BYTES], 0.0, 10, 100, reader=3)
    cache.write(0, [16 * LINE_BYTES], [20 * LINE_BYTES], 0.0)
    cache.read(0, [16 * LINE_BYTES], [20 * LINE_BYTES], 0.0, 10, 100, reader=1)
    assert cache.sharing([0, 1, 2, 3, 4]) == pytest.approx(40 / 16)


def test_lines_a_core_of_an_earlier_wave_read_are_not_shared_fills():
    cache = L2Cache(1 << 24, lambda bid: 64 * LINE_BYTES)
    cache.read(0, [0], [8 * LINE_BYTES], 0.0, 10, 100, reader=0)
    cache.wave_first = 1  # core 0 ran in the wave before: its lines are in L2 for core 1
    cache.read(0, [0], [8 * LINE_BYTES], 0.0, 10, 100, reader=1)
    assert cache.sharing([1]) == 1.0  # core 1 filled nothing and shared no fill
    assert cache.sharing([0, 1]) == 1.0


def test_cores_reading_the_same_lines_pay_for_them_once(soc_910b1, monkeypatch, passes):
    cores = soc_910b1.aiv_count
    x = np.arange(4 * N, dtype=np.float32)
    shared = _read_shared[cores](x, 4 * N)
    assert passes == ["_read_shared"] * 2  # measured, then timed with the sharing
    monkeypatch.setattr(launch_module, "SHARING_RETIME", float("inf"))
    first_pass = _read_shared[cores](x, 4 * N)
    alone = _read_shared[1](x, 4 * N)
    # Run one after the other, the first core fetched every line at a 1/48 share of HBM and
    # the others found them in L2. Timed with the sharing, the 48 cores' fills are one
    # stream: the first core reads as fast as a core alone on the chip.
    assert _mte2_us(first_pass)[0] > 1.5 * _mte2_us(alone)[0]
    assert _mte2_us(shared)[0] == pytest.approx(_mte2_us(alone)[0], rel=0.05)
    assert max(_mte2_us(shared)[1:]) == pytest.approx(max(_mte2_us(first_pass)[1:]))
    assert shared.device_time_us < 0.6 * first_pass.device_time_us


def test_the_timing_pass_keeps_the_first_passs_results_findings_and_output(
        soc_910b1, capfd, passes):
    cores = 4
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    y = np.zeros(N * cores, np.float32)
    report = _copy_from[cores](x, y, N, True)
    assert len(passes) == 2
    np.testing.assert_array_equal(y.reshape(cores, N), np.broadcast_to(x, (cores, N)))
    assert report.values_computed and report.findings == []
    out = capfd.readouterr().out
    assert sorted(line for line in out.splitlines() if "starts" in line) == [
        f"[block {i}] core {i} starts" for i in range(cores)]


def test_a_launch_whose_cores_read_their_own_lines_runs_once(soc_910b1, passes):
    cores = 8
    x = np.arange(N * cores, dtype=np.float32)
    y = np.zeros(N * cores, np.float32)
    _copy_from[cores](x, y, N, False)
    assert passes == ["_copy_from"]
    np.testing.assert_array_equal(y, x)


def test_a_gm_checkpoint_rewinds_to_the_inputs_and_keeps_the_first_results():
    memory = DeviceMemory()
    host = np.arange(16, dtype=np.uint8)
    untouched = memory.alloc(16, "x", initial=host)
    touched = memory.alloc(16, "y")
    touched.data[:16] = 7  # written before the checkpoint: copied
    checkpoint = memory.checkpoint()
    untouched.data[:16] = 1
    touched.data[:16] = 2
    memory.alloc(64, "workspace")  # made by the run: dropped on rewind
    checkpoint.rewind()
    assert len(memory.buffers) == 2
    np.testing.assert_array_equal(untouched.data[:16], host)
    np.testing.assert_array_equal(touched.data[:16], np.full(16, 7))
    untouched.data[:16] = 3  # the second run's writes are not kept
    checkpoint.keep_results()
    np.testing.assert_array_equal(untouched.data[:16], np.full(16, 1))
    np.testing.assert_array_equal(touched.data[:16], np.full(16, 2))


def test_a_kept_launch_holds_the_timing_passs_timelines(soc_910b1):
    with SESSION.collect(launches=True) as run:
        report = _read_shared[soc_910b1.aiv_count](np.arange(4 * N, dtype=np.float32), 4 * N)
    (launch,) = run.launches
    assert launch.hbm_sharing["AIV"] > 40  # 48 readers of every line
    # The trace draws the cores' timelines: the same ends as the report's.
    for core, timed in zip(launch.cores, report.cores, strict=True):
        assert soc_910b1.cycles_to_us(core.end_time()) == pytest.approx(timed.end_us)
        assert core.instrs
