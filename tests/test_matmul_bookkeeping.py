"""What the Matmul high-level API costs beyond its pipes: its scalar bookkeeping per K step and
per GM->L1 slab load, the ND2NZ copy floor of GM->L1, the L0C hand-over to FixPipe and UnitFlag.

Each effect is measured as the difference between the SoC as shipped and the same SoC with that
one constant switched off, on small calibration kernels that check their product against torch.
"""

from __future__ import annotations

import dataclasses

import pytest

from ascsim.calib import datacopy, matmul
from ascsim.hw import DEFAULT_SOC, TimingParams, get_soc
from ascsim.session import SESSION
from ascsim.sim.cost import copy_floor_wait, cost_table
from ascsim.sim.observer import Observer

SOC = "Ascend910B1"


@pytest.fixture(autouse=True)
def restore_soc():
    yield
    SESSION.request_soc(DEFAULT_SOC)


def _with_timing(name: str, **changes):
    spec = get_soc(name)
    return dataclasses.replace(spec, timing=dataclasses.replace(spec.timing, **changes))


def _aic_cycles(spec, reports, pipe: str) -> float:
    """Busy cycles of ``pipe`` on the busiest AIC ("time": the AIC's whole run)."""
    return max(spec.us_to_cycles(c.time_us if pipe == "time" else c.pipe_busy_us.get(pipe, 0.0))
               for r in reports for c in r.cores if c.kind == "AIC")


def _mm(spec, **knobs):
    """A NORM matmul on one core: 256x256 C in 64x64 blocks, 4 K steps of 64 each."""
    args = dict(mnk=(256, 256, 256), split=(1, 1), base=(64, 64, 64))
    args.update(knobs)
    with SESSION.using_soc(spec):
        return matmul.run_matmul_api(**args)


def test_bookkeeping_costs_per_k_step_and_per_slab_load():
    spec = get_soc(SOC)
    t = spec.timing
    plain = _with_timing(SOC, matmul_k_step_scalar_cycles=0, matmul_l1_load_scalar_cycles=0)
    extra = _aic_cycles(spec, _mm(spec), "S") - _aic_cycles(plain, _mm(plain), "S")
    # 16 blocks x 4 K steps; NORM (step 1) loads a new A and B slab at every K step.
    k_steps, loads = 16 * 4, 16 * 4 * 2
    expected = k_steps * t.matmul_k_step_scalar_cycles + loads * t.matmul_l1_load_scalar_cycles
    assert extra == pytest.approx(expected, rel=1e-6)


def test_mdl_steps_load_fewer_slabs_and_constant_tiling_keeps_a_share():
    spec = get_soc(SOC)
    t = spec.timing
    plain = _with_timing(SOC, matmul_k_step_scalar_cycles=0, matmul_l1_load_scalar_cycles=0)
    knobs = dict(template="mdl", depth_a1=4, depth_b1=4, step_ka=2, step_kb=4)
    for const, share in ((False, 1.0), (True, t.matmul_const_tiling_scalar_share)):
        extra = (_aic_cycles(spec, _mm(spec, const_tiling=const, **knobs), "S")
                 - _aic_cycles(plain, _mm(plain, const_tiling=const, **knobs), "S"))
        # A slab every 2 K steps (2 per block), B holds all of K and stays for a column of
        # blocks (4 loads in all, one per block column).
        k_steps, loads = 16 * 4, 16 * 2 + 4
        expected = (k_steps * t.matmul_k_step_scalar_cycles
                    + loads * t.matmul_l1_load_scalar_cycles) * share
        assert extra == pytest.approx(expected, rel=1e-6)


def test_cost_table_prices_the_bookkeeping_events():
    spec = get_soc(SOC)
    t = spec.timing
    costs = cost_table(spec)
    assert costs.matmul_scalar("k_step", False) == t.matmul_k_step_scalar_cycles
    assert costs.matmul_scalar("l1_load", True) == pytest.approx(
        t.matmul_l1_load_scalar_cycles * t.matmul_const_tiling_scalar_share)
    assert costs.matmul_scalar("tiling_walk", False) is None


@pytest.mark.parametrize("share", [0.0, 1.5])
def test_constant_tiling_share_must_be_a_fraction(share):
    with pytest.raises(ValueError, match="matmul_const_tiling_scalar_share"):
        dataclasses.replace(get_soc(SOC).timing, matmul_const_tiling_scalar_share=share)
    assert isinstance(get_soc(SOC).timing, TimingParams)


def _l1_copy(spec, tile):
    with SESSION.using_soc(spec):
        return datacopy.run_datacopy((64, 1024), tile, 1, "gm_to_l1")


def test_narrow_nd2nz_rows_are_paced_by_the_row_floor():
    spec = get_soc(SOC)
    floor = spec.timing.gm_to_l1_row_cycles
    assert floor > 0
    free = _with_timing(SOC, gm_to_l1_row_cycles=0.0)
    # 16 tiles of 64 rows of 128 B: each copy takes at least 64 rows x the floor.
    narrow = _aic_cycles(spec, _l1_copy(spec, (64, 64)), "MTE2")
    assert narrow >= 16 * 64 * floor
    assert narrow > _aic_cycles(free, _l1_copy(free, (64, 64)), "MTE2")
    # Rows of 512 B are bound by their bytes: the floor changes nothing.
    wide, wide_free = (_aic_cycles(s, _l1_copy(s, (64, 256)), "MTE2") for s in (spec, free))
    assert wide == pytest.approx(wide_free)


def test_the_950_pays_a_cost_per_copy_on_top_of_its_rows():
    spec = get_soc("Ascend950PR_9589")
    t = spec.timing
    assert t.gm_to_l1_copy_cycles > 0 and t.gm_to_l1_row_cycles > 0
    free = _with_timing(spec.name, gm_to_l1_copy_cycles=0.0, gm_to_l1_row_cycles=0.0)
    # 16 tiles of 64 rows of 128 B, back to back on one core, their lines in L2 after the
    # first: the floor sets their pace.
    narrow = _aic_cycles(spec, _l1_copy(spec, (64, 64)), "MTE2")
    floor = t.gm_to_l1_copy_cycles + 64 * t.gm_to_l1_row_cycles
    assert narrow >= 16 * floor
    assert narrow > _aic_cycles(free, _l1_copy(free, (64, 64)), "MTE2")


class _Clocks:
    """The two clocks copy_floor_wait keeps on a core."""

    def __init__(self):
        self.copy_floor_clock = 0.0
        self.copy_run_end = 0.0


def _run(copies, floor):
    """Busy cycles of copies given as (gap before it, busy without the floor), each started
    when the previous one ends plus its gap."""
    core, t, out = _Clocks(), 0.0, []
    for gap, busy in copies:
        t += gap
        busy += copy_floor_wait(core, floor, t, busy)
        out.append(busy)
        t += busy
    return out


def test_the_copy_floor_holds_for_a_run_not_for_each_copy():
    # Back to back, cheap copies each take the floor.
    assert _run([(0, 100)] * 4, 300) == [300] * 4
    # A copy that waits on HBM (900) lets the three after it catch up: the run takes
    # max(sum of busy, sum of floors), as a pipe that prepares copies while a fill is in flight.
    assert sum(_run([(0, 900), (0, 100), (0, 100), (0, 100)], 300)) == pytest.approx(1200)
    assert sum(_run([(0, 900), (0, 100), (0, 100), (0, 100)], 100)) == pytest.approx(1200)
    # An idle pipe ends the run: the next copy pays its own floor again.
    assert _run([(0, 900), (1000, 100)], 300) == [900, 300]


class _CubeTimeline(Observer):
    """An observer keeping the Mmad and FixPipe instructions of a launch, in issue order."""

    seen: list = []

    def __init__(self, launch):
        _CubeTimeline.seen = []

    def on_instr(self, core, instr):
        if instr.pipe in ("M", "FIX"):
            _CubeTimeline.seen.append(instr)


@pytest.fixture
def cube_timeline():
    SESSION.observer_factories.append(_CubeTimeline)
    yield _CubeTimeline
    SESSION.observer_factories.remove(_CubeTimeline)


def test_next_block_waits_for_fixpipe_to_read_l0c_and_unit_flag_overlaps_it(cube_timeline):
    spec = get_soc(SOC)
    # Two blocks of 128x128 (64 KiB of fp32 each: one L0C buffer at a time), K 64: one Mmad
    # per block, so FixPipe's read-out is a large part of each block.
    knobs = dict(mnk=(256, 128, 64), base=(128, 128, 64))
    without = _mm(spec, unit_flag=False, **knobs)
    first_mmad, first_fix, second_mmad, _ = (
        sorted(cube_timeline.seen, key=lambda i: i.start))
    assert (first_mmad.pipe, first_fix.pipe, second_mmad.pipe) == ("M", "FIX", "M")
    # Without UnitFlag FixPipe starts once the Mmad is done, and the next block's Mmad (into
    # the same L0C buffer) once FixPipe has read it out.
    assert first_fix.start >= first_mmad.done
    assert second_mmad.start >= first_fix.end
    with_flag = _mm(spec, unit_flag=True, **knobs)
    first_mmad = next(i for i in cube_timeline.seen if i.pipe == "M")
    first_fix = next(i for i in cube_timeline.seen if i.pipe == "FIX")
    # With it FixPipe starts when the scalar unit issues it (one K step: with the Mmad) and
    # holds its pipe while the Mmad writes, draining unit by unit: it ends after the Mmad.
    assert first_fix.start < first_mmad.done <= first_fix.end
    assert first_fix.end - first_fix.start > first_mmad.done - first_mmad.start
    assert with_flag[0].device_time_us < without[0].device_time_us
    # NORM's default (CFG_NORM) is UnitFlag on, as the samples run it.
    assert _mm(spec, **knobs)[0].device_time_us == with_flag[0].device_time_us


def test_unit_flag_fixpipe_is_held_for_the_steps_the_scalar_runs_ahead(cube_timeline):
    """With UnitFlag the FixPipe is issued right after the block's last Mmad, which the
    scalar unit reaches as far ahead as the MTE1 queue lets it (32 entries, 4 per K step):
    FIX is busy for about the last 8 K steps of the block, not for one."""
    spec = get_soc(SOC)
    _mm(spec, mnk=(64, 64, 64 * 24), base=(64, 64, 64), unit_flag=True)
    mmads = [i for i in cube_timeline.seen if i.pipe == "M"]
    fix = next(i for i in cube_timeline.seen if i.pipe == "FIX")
    assert len(mmads) == 24
    # The FixPipe starts with the MTE1 load of step 24 - 1 - 8 = 15, so no earlier than the
    # Mmad of step 14 and no later than the Mmad of step 15 begins.
    assert mmads[14].start <= fix.start <= mmads[15].start
    assert fix.end >= mmads[-1].done
