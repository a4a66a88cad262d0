"""The CATLASS basic matmul calibration kernel: the right product under both block schedulers
(tails in M, N and K, split last rounds) and both epilogues (FixPipe to GM, FixPipe to both
AIVs' UBs and DataCopyPad to GM), and clear errors for bad knobs."""

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


def _only_l1_padding_reads(report) -> bool:
    return all(f.category == "uninitialized-read" and f.details["buffer"].startswith("L1")
               for f in report.findings)


# K = 143 ends in a 15-deep L1 tile (as 399 = 3 x 128 + 15); K = 40 is one short tile; rows
# 300 and 567 leave odd-height last blocks (the dual destination's uneven halves).
@pytest.mark.parametrize("epilogue", ["fixpipe", "ub_dual"])
@pytest.mark.parametrize("mnk, scheduler", [((300, 280, 143), "aswt"),
                                             ((567, 488, 40), "swizzle")])
def test_a_k_tail_and_both_epilogues_give_the_product(mnk, scheduler, epilogue):
    with SESSION.using_soc(SOC):
        (report,) = catlass_matmul.run_catlass_matmul(mnk, scheduler=scheduler,
                                                      epilogue=epilogue)
    # The tail's last 16-deep strip in L1 holds only the K columns left: its padding column is
    # loaded into L0 (never summed, the Mmad takes the true K), as a 16-row strip's padding
    # rows are.
    assert _only_l1_padding_reads(report)
    m, n, _ = mnk
    assert report.kernel_type == ("MIX" if epilogue == "ub_dual" else "AIC_ONLY")
    if epilogue == "ub_dual":  # every C byte leaves through an AIV, none by FixPipe to GM
        assert report.bytes_moved["UB->GM"] == m * n * 4
        assert "L0C->GM" not in report.bytes_moved


def test_a_k_tail_on_the_910b_load3d_path():
    with SESSION.using_soc("Ascend910B1"):
        (report,) = catlass_matmul.run_catlass_matmul((300, 280, 143), l1_tile=(128, 128, 128),
                                                      scheduler="swizzle")
    assert _only_l1_padding_reads(report)


def test_the_dual_destination_halves_and_ub_stages():
    assert [catlass_matmul.aiv_rows(55, sub) for sub in (0, 1)] == [(0, 28), (28, 27)]
    assert [catlass_matmul.aiv_rows(256, sub) for sub in (0, 1)] == [(0, 128), (128, 128)]
    assert [catlass_matmul.aiv_rows(1, sub) for sub in (0, 1)] == [(0, 1), (1, 0)]
    # CATLASS's stage: (round / cores) & 1 -- stage 0 until a core has more rounds than cores.
    assert [catlass_matmul.ub_stage(r, 32) for r in (0, 5, 31, 32, 63, 64)] == [0, 0, 0, 1, 1, 0]


def test_bad_knobs_are_refused():
    with SESSION.using_soc(SOC):
        with pytest.raises(ValueError, match="scheduler must be one of"):
            catlass_matmul.run_catlass_matmul((256, 256, 128), scheduler="zigzag")
        with pytest.raises(ValueError, match="whole L0 tiles"):
            catlass_matmul.run_catlass_matmul((256, 256, 128), l0_k=96)
        with pytest.raises(ValueError, match="epilogue must be one of"):
            catlass_matmul.run_catlass_matmul((256, 256, 128), epilogue="gm_relay")
    with SESSION.using_soc("Ascend910B1"):
        with pytest.raises(ValueError, match="needs FixPipe's L0C -> UB path"):
            catlass_matmul.run_catlass_matmul((256, 256, 128), l1_tile=(128, 128, 128),
                                              epilogue="ub_dual")
