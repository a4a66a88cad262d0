"""The CATLASS basic matmul calibration kernel: the right product under both block schedulers
(tails in M and N, split last rounds), and clear errors for bad knobs."""

from __future__ import annotations

import pytest

from ascsim.calib import catlass_matmul
from ascsim.session import SESSION

SOC = "Ascend950PR_9589"


@pytest.mark.parametrize("scheduler", ["swizzle", "aswt"])
@pytest.mark.parametrize("mnk", [(600, 520, 256), (592, 528, 256), (256, 256, 128)])
def test_the_product_matches_torch(scheduler, mnk):
    with SESSION.using_soc(SOC):
        (report,) = catlass_matmul.run_catlass_matmul(mnk, scheduler=scheduler)
    assert report.device_time_us > 0
    # A block whose rows or columns are not whole 16-row fractals reads the padding rows of
    # its NZ strips in L1 (as on the device, where they hold whatever was there): the only
    # findings allowed.
    assert all(f.category == "uninitialized-read" and f.details["buffer"].startswith("L1")
               for f in report.findings)


def test_whole_fractal_blocks_read_nothing_unwritten():
    with SESSION.using_soc(SOC):
        (report,) = catlass_matmul.run_catlass_matmul((592, 528, 256), scheduler="swizzle")
    assert not report.findings


def test_aswt_spreads_a_small_problem_over_more_cores_than_the_swizzle():
    with SESSION.using_soc(SOC):
        (swizzle,) = catlass_matmul.run_catlass_matmul((512, 512, 256), scheduler="swizzle")
        (aswt,) = catlass_matmul.run_catlass_matmul((512, 512, 256), scheduler="aswt")
    assert swizzle.block_num == 4 and aswt.block_num > 4


def test_bad_knobs_are_refused():
    with SESSION.using_soc(SOC):
        with pytest.raises(ValueError, match="scheduler must be one of"):
            catlass_matmul.run_catlass_matmul((256, 256, 128), scheduler="zigzag")
        with pytest.raises(ValueError, match="whole L0 tiles"):
            catlass_matmul.run_catlass_matmul((256, 256, 128), l0_k=96)
