"""Waves of cores (ascsim/sim/wave.py): one Python run for a wave, results, times and findings
exactly those of the per-core run, and a sound fall-back to per-core wherever lanes diverge."""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.session import SESSION
from ascsim.sim import wave

TILE = 64


@contextlib.contextmanager
def waves(mode: str):
    before = SESSION.waves
    SESSION.waves = mode
    try:
        yield
    finally:
        SESSION.waves = before


@asc.jit
def add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
               per_core: asc.ConstExpr[int], branch: asc.ConstExpr[int],
               scalar_read: asc.ConstExpr[int], bad: asc.ConstExpr[int]):
    first = asc.get_block_idx() * per_core
    xg, yg, zg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x + first, per_core)
    yg.set_global_buffer(y + first, per_core)
    zg.set_global_buffer(z + first, per_core)
    pipe = asc.TPipe()
    qx, qy = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECIN, 2)
    qz = asc.TQue(asc.TPosition.VECOUT, 2)
    for q in (qx, qy, qz):
        pipe.init_buffer(que=q, num=2, len=TILE * 4)
    steps = per_core // TILE
    if scalar_read:
        # A scalar read of GM: the same value on every lane (y's first element) or each
        # lane's own (x at the lane's offset).
        whole_y = asc.GlobalTensor()
        whole_y.set_global_buffer(y)
        value = whole_y.get_value(0) if scalar_read == 1 else xg.get_value(0)
        steps = steps if value >= 0 else 0
    if branch and asc.get_block_idx() == 1:
        steps = 1  # block 1 does less: the lanes run different Python from here
    for i in range(steps):
        a, b = qx.alloc_tensor(asc.float32), qy.alloc_tensor(asc.float32)
        asc.data_copy(a, xg[i * TILE:], TILE - bad)  # bad: not whole blocks, a finding
        asc.data_copy(b, yg[i * TILE:], TILE)
        qx.enque(a)
        qy.enque(b)
        a, b, c = qx.deque(asc.float32), qy.deque(asc.float32), qz.alloc_tensor(asc.float32)
        asc.add(c, a, b, TILE)
        qz.enque(c)
        qx.free_tensor(a)
        qy.free_tensor(b)
        c = qz.deque(asc.float32)
        asc.data_copy(zg[i * TILE:], c, TILE)
        qz.free_tensor(c)


def launch(mode: str, cores=4, per_core=2 * TILE, branch=0, scalar_read=0, x=None, bad=0):
    rng = np.random.default_rng(7)
    x = rng.random(cores * per_core, dtype=np.float32) if x is None else x
    y = rng.random(cores * per_core, dtype=np.float32)
    z = np.zeros_like(x)
    with waves(mode):
        report = add_kernel[cores](x, y, z, per_core, branch, scalar_read, bad)
    return x, y, z, report


def _facts(report):
    """What a per-core run and a wave must agree on."""
    return (report.device_time_us, report.cores, report.bytes_moved,
            [repr(f) for f in report.findings])


def test_a_wave_runs_every_instruction_and_gives_the_per_core_results():
    x, y, z_off, off = launch("off")
    _, _, z_on, on = launch("on")
    np.testing.assert_array_equal(z_off, x + y)
    np.testing.assert_array_equal(z_on, z_off)
    assert _facts(on) == _facts(off)
    assert off.waved_instructions == 0
    assert on.waved_instructions == sum(c.instructions for c in on.cores) > 0


def test_verify_runs_both_ways_and_compares():
    x, y, z, report = launch("verify", cores=3)
    np.testing.assert_array_equal(z, x + y)
    assert report.waved_instructions == sum(c.instructions for c in report.cores)


def test_a_branch_on_the_block_index_falls_back_to_per_core_and_is_remembered():
    x, y, z_off, off = launch("off", branch=1)
    _, _, z_on, on = launch("on", branch=1)
    np.testing.assert_array_equal(z_on, z_off)
    assert _facts(on) == _facts(off)
    assert on.waved_instructions == 0
    # The signature is remembered: the next launch does not try (and still runs per core).
    assert any("condition" in why for why in wave._CANNOT_WAVE.values())
    _, _, z_again, again = launch("verify", branch=1)
    np.testing.assert_array_equal(z_again, z_off)
    assert again.waved_instructions == 0


def test_a_scalar_read_waves_when_every_lane_reads_the_same_value_only():
    _, _, z_same, same = launch("verify", scalar_read=1)
    assert same.waved_instructions > 0
    x = np.arange(4 * 2 * TILE, dtype=np.float32) - 200  # lane 0 reads < 0, the others >= 0
    _, _, z_off, off = launch("off", scalar_read=2, x=x)
    _, _, z_on, on = launch("on", scalar_read=2, x=x)
    np.testing.assert_array_equal(z_on, z_off)
    assert _facts(on) == _facts(off) and on.waved_instructions == 0


def test_findings_come_from_the_per_core_run():
    _, _, z_off, off = launch("off", cores=3, bad=1)
    _, _, z_on, on = launch("on", cores=3, bad=1)
    assert off.findings
    np.testing.assert_array_equal(z_on, z_off)
    assert _facts(on) == _facts(off) and on.waved_instructions == 0


def test_compare_names_the_first_difference():
    _, _, _, report = launch("off", cores=2)
    other = dataclasses.replace(report, device_time_us=report.device_time_us + 1)
    with pytest.raises(wave.WaveMismatch, match="device time"):
        wave.compare("k", report, other, [], [])
    with pytest.raises(wave.WaveMismatch, match="GM allocation 0"):
        wave.compare("k", report, report, [np.zeros(4, np.uint8)], [np.ones(4, np.uint8)])


def test_an_unknown_mode_is_refused():
    from ascsim.sim.launch import LaunchOptions
    with pytest.raises(ValueError, match="must be one of"):
        LaunchOptions(waves="sometimes")


def test_a_wave_keeps_the_writer_log_of_the_per_core_run():
    """The provenance log (on by default under ``ascsim run``) does not stop a wave, and the
    writers a wave records are the per-core run's."""
    from ascsim.sim import provenance

    def writer_runs(mode):
        before = SESSION.provenance
        SESSION.provenance = True
        try:
            x, y, z, report = launch(mode)
        finally:
            SESSION.provenance = before
        return z, report, provenance.lookup(z)

    z_off, off, found_off = writer_runs("off")
    z_on, on, found_on = writer_runs("on")
    np.testing.assert_array_equal(z_on, z_off)
    assert on.waved_instructions == sum(c.instructions for c in on.cores) > 0
    assert found_off is not None and found_on is not None
    assert found_on.writers.runs(4, z_on.size) == found_off.writers.runs(4, z_off.size)
    assert found_on.writers.writers == found_off.writers.writers
