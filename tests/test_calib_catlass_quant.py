"""The CATLASS int8 quant matmul calibration kernel (12_quant_matmul, 44 full-load A on the
910B1): the dequantised product against torch under both variants (block, K and epilogue tails,
blocks sharing A's row, more blocks than cores), the hand-off through the workspace, and clear
errors for bad knobs."""

from __future__ import annotations

import pytest
import torch

from ascsim.calib import catlass_quant_matmul as qmm
from ascsim.session import SESSION

SOC = "Ascend910B1"
SMALL = {"l1_tile": (64, 128, 64), "l0_k": 32, "epi_tile": (16, 64)}


def _run(mnk, variant, **knobs):
    with SESSION.using_soc(SOC), SESSION.values(True):
        (report,) = qmm.run_catlass_quant_matmul(mnk, variant, **knobs)
    return report


@pytest.mark.parametrize("variant", qmm.VARIANTS)
@pytest.mark.parametrize("mnk", [(144, 288, 160), (64, 1024, 96), (256, 256, 64)])
def test_small_tiles_give_the_dequantised_product(variant, mnk):
    # (144, 288, 160): tails of 16 rows, 32 columns and 32 K; (64, 1024, 96): one block row
    # (44 bypasses L2 for B) and more blocks than a core's two workspace slots on few cores.
    report = _run(mnk, variant, **SMALL)
    assert report.device_time_us > 0 and not report.failed
    # A tail block's epilogue tiles convert whole UB tiles, partly never loaded (as the
    # sample does): the only findings allowed.
    assert all(f.category == "uninitialized-read" and f.details["buffer"].startswith("UB")
               for f in report.findings)


@pytest.mark.parametrize("variant", qmm.VARIANTS)
def test_the_published_tiles_give_the_dequantised_product(variant):
    report = _run((256, 512, 1024), variant)  # 2 x 2 blocks of 128 x 256, two K tiles each
    assert not report.findings
    assert report.block_num == (24 if variant == "12" else 4)


def test_a_wrong_result_is_reported():
    a, b, scale, token = qmm.operands(32, 64, 64)
    expected = qmm.reference(a, b, scale, token)
    qmm.check_result(expected, expected)
    with pytest.raises(AssertionError, match="wrong result"):
        qmm.check_result(expected * 1.1, expected)


def test_the_reference_is_the_scaled_integer_product():
    a = torch.tensor([[1, -2]], dtype=torch.int8)
    b = torch.tensor([[3, 1], [4, -5]], dtype=torch.int8)
    got = qmm.reference(a, b, torch.tensor([0.5, 0.25]), torch.tensor([2.0]))
    assert got.tolist() == [[-5.0, 5.5]]  # [1*3-2*4, 1*1+2*5] x [0.5, 0.25] x 2


def test_the_timing_only_mode_runs_the_published_shape_slice():
    with SESSION.using_soc(SOC), SESSION.values(False):
        (r12,) = qmm.run_catlass_quant_matmul((512, 1024, 1024), "12")
        (r44,) = qmm.run_catlass_quant_matmul((512, 1024, 1024), "44")
    assert r12.device_time_us > 0 and r44.device_time_us > 0
    assert r12.block_num == 24 and r44.block_num == 16


def test_the_schedulers_follow_the_samples():
    def sched(variant, mnk):
        with SESSION.using_soc(SOC):
            return qmm.plan(variant, mnk).scheduler
    assert sched("12", (512, 4096, 1024)) == "swizzle<3,1>"
    assert sched("12", (4096, 512, 1024)) == "swizzle<3,0>"
    assert sched("44", (512, 4096, 1024)) == "l1_full_load<1,0>"
    assert sched("44", (128, 16384, 1024)) == "swizzle<3,0>"


def test_bad_knobs_are_refused():
    with SESSION.using_soc(SOC):
        with pytest.raises(ValueError, match="variant must be one of"):
            qmm.plan("13", (128, 256, 512))
        with pytest.raises(ValueError, match="whole int8 fractals"):
            qmm.plan("12", (128, 250, 512))
        with pytest.raises(ValueError, match="cannot be full loaded"):
            qmm.plan("44", (128, 256, 4096))  # A's 128 x 4096 row is all of L1
        with pytest.raises(ValueError, match="whole L0 tiles"):
            qmm.plan("12", (128, 256, 512), l0_k=96)
        with pytest.raises(ValueError, match="epilogue tile"):
            qmm.plan("12", (128, 256, 512), epi_tile=(32, 200))
        a, b, scale, token = qmm.operands(32, 64, 64)
        p = qmm.plan("12", (32, 64, 64))
        with pytest.raises(ValueError, match="int8"):
            qmm.quant_matmul(a.float(), b, scale, token, p)
        with pytest.raises(ValueError, match="do not match"):
            qmm.quant_matmul(a, b.T.contiguous(), scale, token, qmm.plan("12", (32, 64, 128)))
