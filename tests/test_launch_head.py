"""The device time outside the cores' timelines: the per-launch overhead and the MIX head."""

from __future__ import annotations

import pytest

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.hw import get_soc
from ascsim.session import SESSION


@asc.jit
def _empty():
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def _launch(soc_name: str, blocks: int, kind: KernelType):
    with SESSION.using_soc(get_soc(soc_name)):
        return _empty[blocks](kernel_type=kind)


def test_an_empty_full_core_mix_launch_on_the_910b_takes_the_published_head():
    soc = get_soc("Ascend910B1")
    report = _launch("Ascend910B1", soc.aic_count, KernelType.MIX_AIC_1_2)
    # CATLASS's guide: about 20-21 µs for an empty full-core kernel on Atlas A2.
    assert report.device_time_us == pytest.approx(20.5, abs=0.01)
    assert report.launch_overhead_us == pytest.approx(
        soc.timing.launch_overhead_us + soc.timing.mix_launch_head_us)
    assert report.profile.launch_overhead_us == report.launch_overhead_us


def test_the_mix_head_follows_the_ai_cores_a_launch_uses():
    soc = get_soc("Ascend910B1")
    half = _launch("Ascend910B1", soc.aic_count // 2, KernelType.MIX_AIC_1_2)
    assert half.launch_overhead_us == pytest.approx(
        soc.timing.launch_overhead_us + soc.timing.mix_launch_head_us / 2)
    more = _launch("Ascend910B1", 2 * soc.aic_count, KernelType.MIX_AIC_1_2)  # two waves
    assert more.launch_overhead_us == pytest.approx(
        soc.timing.launch_overhead_us + soc.timing.mix_launch_head_us)


@pytest.mark.parametrize("kind", [KernelType.AIV_ONLY, KernelType.AIC_ONLY])
def test_single_kind_launches_and_the_950_pay_no_mix_head(kind):
    b1 = get_soc("Ascend910B1")
    assert _launch("Ascend910B1", 24, kind).launch_overhead_us == b1.timing.launch_overhead_us
    a5 = get_soc("Ascend950PR_9589")
    mix = _launch("Ascend950PR_9589", a5.aic_count, KernelType.MIX_AIC_1_2)
    assert mix.launch_overhead_us == a5.timing.launch_overhead_us
