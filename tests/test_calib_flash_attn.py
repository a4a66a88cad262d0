"""The FALite flash attention calibration kernel (cann-samples flash_attn_lite_story v0 / v1
on the Ascend950PR): O against torch's scaled_dot_product_attention, the v1 path skipping the
GM round trips of S and ΔO, and clear errors for bad knobs."""

from __future__ import annotations

import pytest
import torch

from ascsim.calib import flash_attn as fa
from ascsim.calib.kernels import knob_problem
from ascsim.session import SESSION

SOC = "Ascend950PR_9589"


def _run(version, seq, cores, **knobs):
    with SESSION.using_soc(SOC), SESSION.values(True):
        p = fa.plan(version, seq, cores=cores, **knobs)
        q, k, v = fa.operands(p.batch, p.seq, p.d, seed=3)
        o, report = fa.flash_attn(q, k, v, p)
    return o, fa.reference(q, k, v), report


@pytest.mark.parametrize("version", fa.VERSIONS)
def test_attention_matches_torch(version):
    # S = 512: four Q tiles on two AICs (two tasks each), four KV tiles per task.
    o, expected, report = _run(version, 512, 2)
    fa.check_result(o, expected)
    assert not report.findings and not report.failed
    assert report.block_num == 2
    # Not a constant or zero output: the rows differ as the reference's do.
    assert o.float().std() > 0.01


def test_batches_and_odd_kv_tile_counts_match_torch():
    # Two batches of S = 384: three KV tiles per task (an odd fold count), six tasks on four
    # cores (the task loop wraps), the v1 path.
    o, expected, report = _run("v1", 384, 4, batch=2)
    fa.check_result(o, expected)
    assert not report.findings


def test_v1_skips_the_gm_round_trips_of_s_and_delta_o():
    _, _, r0 = _run("v0", 256, 1)
    _, _, r1 = _run("v1", 256, 1)
    assert r0.bytes_moved["L0C->GM"] > 0 and "L0C->GM" not in r1.bytes_moved
    assert r1.bytes_moved["L0C->UB"] == r0.bytes_moved["L0C->GM"]
    assert r1.device_time_us < r0.device_time_us


def test_a_wrong_result_is_reported():
    q, k, v = fa.operands(1, 128, 128)
    expected = fa.reference(q, k, v)
    fa.check_result(expected.to(torch.bfloat16), expected)
    with pytest.raises(AssertionError, match="wrong result"):
        fa.check_result((expected * 1.1).to(torch.bfloat16), expected)


def test_the_timing_only_mode_runs_without_values():
    with SESSION.using_soc(SOC), SESSION.values(False):
        (report,) = fa.run_flash_attn("v0", 256, cores=28)
    assert report.block_num == 2 and report.device_time_us > 0


def test_bad_knobs_are_refused():
    with SESSION.using_soc(SOC):
        with pytest.raises(ValueError, match="version must be one of"):
            fa.plan("v2", 512)
        with pytest.raises(ValueError, match="whole Q tiles"):
            fa.plan("v0", 500)
        with pytest.raises(ValueError, match="Br must be a multiple"):
            fa.plan("v0", 512, br=48)
        with pytest.raises(ValueError, match="cores asked"):
            fa.plan("v0", 512, cores=1000)
        with pytest.raises(ValueError, match="at least D"):
            fa.plan("v0", 512, bc=64)
        with pytest.raises(ValueError, match="bfloat16"):
            p = fa.plan("v0", 256)
            fa.flash_attn(*(torch.zeros(1, 1, 256, 128),) * 3, p)
    with SESSION.using_soc("Ascend910B1"):
        with pytest.raises(ValueError, match="L0C -> UB"):
            fa.plan("v1", 512)


def test_the_points_knobs_fit_the_registered_runner():
    assert knob_problem("flash_attn", {"version": "v0", "seq": 32768, "cores": 28}) is None
    assert "unknown" in knob_problem("flash_attn", {"version": "v0", "seq": 1, "heads": 2})
