"""FixPipe's writes to GM whose rows start off a 32-byte boundary (the 950's FixPipe does not
realign them as the MTE DMA does)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ascsim.hw import get_soc
from ascsim.sim.cost import cost_table
from ascsim.sim.l2 import L2Cache

ROWS, ROW_BYTES = 256, 1024  # a 256 x 256 fp32 block


def _core(kind: str):
    cache = L2Cache(1 << 26, lambda buffer_id: 1 << 24)
    launch = SimpleNamespace(l2=cache, l2_lines={}, wave_cores={kind: 1}, wave_l2_lines=0,
                             hbm_cycles={}, hbm_free={}, hbm_sharing={})
    return SimpleNamespace(launch=launch, kind=kind, core_id=0, start_time=0.0,
                           ub_conflicts=(), copy_floor_clock=0.0, copy_run_end=0.0)


def _busy(soc_name: str, kind: str, path: str, pitch: int) -> float:
    costs = cost_table(get_soc(soc_name))
    src, dst = path.split("->")
    route = costs.route(kind, src, dst)
    starts = np.arange(ROWS, dtype=np.int64) * pitch
    busy, _ = costs.transfer(_core(kind), route, ROWS * ROW_BYTES, ROWS,
                             (0, starts, starts + ROW_BYTES), 0.0)
    return busy - route.startup - (ROWS - 1) * route.burst_gap


def test_misaligned_fixpipe_rows_cost_three_and_a_half_times_on_the_950():
    aligned = _busy("Ascend950PR_9589", "AIC", "L0C->GM", 2048 * 4)
    misaligned = _busy("Ascend950PR_9589", "AIC", "L0C->GM", 2038 * 4)  # every other row off
    # 2038 fp32 = 8152 B: rows start on 32 B boundaries one time in four.
    assert misaligned == pytest.approx(aligned * (1 + 0.75 * 2.5))


def test_the_mte_dma_and_the_910b_fixpipe_keep_the_extra_request_rule():
    soc = get_soc("Ascend950PR_9589")
    aligned = _busy("Ascend950PR_9589", "AIV", "UB->GM", 2048 * 4)
    misaligned = _busy("Ascend950PR_9589", "AIV", "UB->GM", 2038 * 4)
    assert misaligned == pytest.approx(
        aligned * (1 + 0.75 * ROWS * soc.timing.gm_misaligned_extra_bytes / (ROWS * ROW_BYTES)))
    b1 = get_soc("Ascend910B1")
    assert b1.timing.fixpipe_gm_misaligned_row_factor == 0
    aligned = _busy("Ascend910B1", "AIC", "L0C->GM", 2048 * 4)
    misaligned = _busy("Ascend910B1", "AIC", "L0C->GM", 2038 * 4)
    assert misaligned == pytest.approx(
        aligned * (1 + 0.75 * ROWS * b1.timing.gm_misaligned_extra_bytes / (ROWS * ROW_BYTES)))


def test_a_narrow_misaligned_read_pays_its_extra_requests_not_a_multiple_of_its_line_fills():
    # 33 rows of 2 bytes (one column of a bf16 matrix 129 wide): every row but the first
    # starts off a 32 B boundary, and every row fills a whole 512 B line from HBM. The 32
    # extra requests cost 32 x 512 B more, not the line fills times (1 + 32 x 512 / 66).
    soc = get_soc("Ascend910B1")
    costs = cost_table(soc)
    route = costs.route("AIC", "GM", "L1")

    def busy(pitch: int) -> float:
        starts = 256 + np.arange(33, dtype=np.int64) * pitch
        cycles, _ = costs.transfer(_core("AIC"), route, 66, 33, (0, starts, starts + 2), 0.0)
        return cycles

    aligned, misaligned = busy(512), busy(514)
    extra = 32 * soc.timing.gm_misaligned_extra_bytes
    assert aligned < misaligned < aligned + 2 * extra / min(route.rate, 16)
