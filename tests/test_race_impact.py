"""Race impact (issue 35 part 2): every race kernel of the kernel-check tests re-simulated in
the other order, and each known to be harmful (the other order changes the output, or the
test's own check) or harmless (both orders compute the same)."""

from __future__ import annotations

import numpy as np
import pytest
from source_marks import checks_on_not_strict, f32  # noqa: F401 - a fixture
from test_checks import N, add_flags, aiv_pair, each_core_writes, gm_round_trip, hand_over
from test_checks_mirror import TILES, doubled
from test_checks_mirror import N as MN
from test_provenance import T, hand_back

from ascsim.race_impact import RaceSite, assess, format_impacts

pytestmark = pytest.mark.usefixtures("checks_on_not_strict")


def judged(work):
    impacts = assess(work)
    assert impacts, "no race found"
    assert all(i.note == "" for i in impacts), [i.describe() for i in impacts]
    return impacts


def test_copy_in_read_by_vector_without_wait_is_harmful():
    x, y = f32(N), f32(N, 100)

    def work():
        z = np.zeros(N, np.float32)
        add_flags[1](x, y, z, False)
        np.testing.assert_array_equal(z, x + y)

    impacts = judged(work)
    assert len(impacts) == 2  # tx and ty are both read before their copies are waited for
    assert all(i.harmful and i.site.hazard == "RAW" for i in impacts)
    assert all(i.changed == {"z": N} and i.check_flips for i in impacts)


def test_gm_read_back_into_an_unused_tile_is_harmless():
    def work():
        gm_round_trip[1](f32(N), np.zeros(N, np.float32), False)

    (impact,) = judged(work)
    assert impact.site.space == ("GM", "y") and impact.site.hazard == "RAW"
    assert impact.harmful is False and impact.changed == {}


def test_two_cores_storing_the_same_values_is_harmless():
    def work():
        y = np.zeros(2 * N, np.float32)
        each_core_writes[2](f32(N), y, True)
        np.testing.assert_array_equal(y[:N], f32(N))

    (impact,) = judged(work)
    assert impact.site.hazard == "WAW" and impact.site.finding.category == "cross-core-race"
    assert impact.harmful is False and not impact.check_flips


@pytest.mark.parametrize(("bug", "hazard"), [("race", "RAW"), ("neighbour", "WAW"),
                                          ("back", "WAW")])
def test_mirror_kernels_bugs_are_harmful(bug, hazard):
    """test_checks_mirror's races: a copy-out not waiting for its compute (RAW), a block's
    last tile stored over its neighbour's first (WAW), over the block before's (WAW)."""
    blocks, per = 4, TILES * MN

    def work():
        x = f32(blocks * per, 1)
        y = np.zeros(2 * blocks * per, np.float32)
        doubled[blocks](x, y, TILES, 2, bug)
        np.testing.assert_array_equal(y[:blocks * per], 2 * x)

    impacts = judged(work)
    assert [i.site.hazard for i in impacts] == [hazard]
    assert impacts[0].harmful and impacts[0].changed.get("y", 0) > 0


def test_workspace_read_before_the_producer_waits_is_harmful():
    def work():
        x, ws, y = f32(N, 1), np.zeros(N, np.float32), np.zeros(N, np.float32)
        hand_over[2](x, ws, y, False)
        np.testing.assert_array_equal(y, x)

    (impact,) = judged(work)
    assert impact.site.hazard == "RAW"
    assert impact.harmful and impact.changed == {"y": N} and impact.check_flips
    assert not impact.check_after


def test_mix_sub_block_hand_over_without_flag_is_harmful():
    def work():
        x, ws, y = f32(N, 1), np.zeros(N, np.float32), np.zeros(N, np.float32)
        aiv_pair[1](x, ws, y, False)
        np.testing.assert_array_equal(y, x)

    (impact,) = judged(work)
    assert impact.harmful and impact.changed.get("y") == N


def test_consumer_running_first_is_harmful_and_its_flip_passes():
    def work():
        x, ws, y = f32(T, 1), np.zeros(T, np.float32), np.zeros(T, np.float32)
        hand_back[2](x, ws, y, False)
        np.testing.assert_array_equal(y, x)

    (impact,) = judged(work)
    assert impact.site.hazard == "WAR"
    assert impact.harmful and impact.changed == {"y": T}
    assert (impact.check_before, impact.check_after) == (False, True)


def test_a_synchronised_kernel_has_nothing_to_judge():
    assert assess(lambda: hand_over[2](f32(N), np.zeros(N, np.float32),
                                       np.zeros(N, np.float32), True)) == []


def test_report_lists_harmful_and_harmless_apart():
    x, y = f32(N), f32(N, 100)

    def work():
        add_flags[1](x, y, np.zeros(N, np.float32), False)
        gm_round_trip[1](f32(N), np.zeros(N, np.float32), False)

    impacts = judged(work)
    assert [i.site.launch for i in impacts] == [0, 0, 1]
    text = format_impacts(impacts)
    harmful, harmless = text.index("harmful races"), text.index("harmless races")
    assert harmful < text.index("add_flags") < harmless < text.index("gm_round_trip")
    assert "changes 64 elements of 'z'" in text


def test_site_of_a_finding_without_a_memory_is_none():
    from ascsim.sim.findings import Finding

    odd = Finding("race", "m", (("k.py", 1), ("k.py", 2)), details={"buffer": "?"})
    assert RaceSite.of(0, "k", odd) is None


def test_cross_core_flag_on_the_wrong_pipe_is_harmful():
    from test_checks_reuse import pair_hand_over

    def work():
        x, ws, y = f32(N, 1), np.zeros(N, np.float32), np.zeros(N, np.float32)
        pair_hand_over[1](x, ws, y, "PIPE_V")

    (impact,) = judged(work)
    assert impact.site.hazard == "RAW" and impact.harmful and impact.changed == {"y": N}


def test_one_overlapping_strided_row_changes_exactly_that_row():
    from test_checks_strided import COLS, ROWS, column_blocks

    def work():
        x, c = np.arange(ROWS * 8, dtype=np.float32), np.zeros(2 * ROWS * COLS, np.float32)
        column_blocks[2](x, c, True)

    (impact,) = judged(work)
    assert impact.site.hazard == "WAW" and impact.harmful
    assert impact.changed == {"c": 8}  # row 3, columns 0..7: the one both cores store


@pytest.fixture
def soc_950():
    from ascsim.session import SESSION

    with SESSION.using_soc("Ascend950PR_9579"):
        yield


def test_pypto_pro_kernel_without_auto_mutex_races_harmfully(soc_950):
    import torch
    from test_pto_core import add_rows

    import ascsim.pto.language as pl

    unsynced = pl.jit(auto_mutex=False)(add_rows.fn)

    def work():
        a, b = torch.randn(32, 64), torch.randn(32, 64)
        out = torch.zeros(32, 64)
        unsynced[None, 1](a, b, out)
        torch.testing.assert_close(out, (a + b) * 0.5)

    impacts = judged(work)
    assert len(impacts) == 3  # load a -> add, load b -> add, mul -> store
    assert all(i.harmful and i.site.hazard == "RAW" for i in impacts)
    assert all(i.changed == {"out": 32 * 64} for i in impacts)
    assert all((i.check_before, i.check_after) == (True, False) for i in impacts)


def test_pypto_pro_store_not_waiting_for_the_matmul_is_harmful(soc_950):
    import torch
    from test_pto_cube import K, M, phase_kernel
    from test_pto_cube import N as CN

    import ascsim.pto.language as pl

    def work():
        a = torch.randn(M, K, dtype=torch.float16)
        b = torch.randn(K, CN, dtype=torch.float16)
        phase_kernel(a, b, torch.zeros(M, CN), int(pl.AccPhase.Final), 0, 1)

    (impact,) = judged(work)
    assert impact.site.space == ("local", "L0C") and impact.harmful
    assert impact.changed == {"c": M * CN}
