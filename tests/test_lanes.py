"""The lane value of a wave (ascsim/sim/lanes.py): arithmetic lane by lane, one Python value
only where the lanes agree, and a divergence signal everywhere else."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascsim.sim.lanes import Diverged, Lanes, at_lane

lane_ints = st.lists(st.integers(-10_000, 10_000), min_size=1, max_size=8)


@settings(max_examples=60)
@given(lane_ints, st.integers(-50, 50).filter(lambda v: v != 0))
def test_arithmetic_is_lane_by_lane_with_c_division(values, k):
    lanes = Lanes(values)
    cases = {
        "+": (lanes + k, [v + k for v in values]),
        "r-": (k - lanes, [k - v for v in values]),
        "*": (lanes * k, [v * k for v in values]),
        "//": (lanes // k, [v // k for v in values]),
        "%": (lanes % k, [v % k for v in values]),
        # The kernel language's ``/`` between integers truncates toward zero, as C does.
        "/": (lanes / k, [int(v / k) for v in values]),
        "ceildiv": (lanes.ceildiv(k), [-(-v // k) for v in values]),
        "lanes+lanes": (lanes + lanes, [2 * v for v in values]),
    }
    for name, (got, want) in cases.items():
        assert [got.at(i) for i in range(len(values))] == want, name


def test_uses_that_need_one_value_take_it_when_the_lanes_agree():
    same = Lanes([3, 3, 3])
    assert int(same) == 3
    assert list(range(same)) == [0, 1, 2]
    assert {same: "x"}[3] == "x"
    assert bool(same > 2) and not bool(same < 2)
    assert f"{same}" == "3"
    assert [10, 20, 30, 40][same] == 40


@pytest.mark.parametrize("use", [
    bool, int, float, str, hash, lambda v: range(v), lambda v: [0, 1, 2, 3][v],
    lambda v: {v: 1}, lambda v: bool(v < 2), lambda v: np.zeros(4)[v], lambda v: np.asarray(v),
    lambda v: v.cast("int32"), lambda v: v + 1.5, lambda v: v + None,
])
def test_uses_that_need_one_value_diverge_when_the_lanes_differ(use):
    with pytest.raises(Diverged):
        use(Lanes.arange(0, 4))


def test_divergence_is_not_an_exception_a_kernel_could_catch():
    with pytest.raises(Diverged):
        try:
            int(Lanes.arange(0, 2))
        except Exception:  # noqa: BLE001 - what a kernel's own handler would do
            pytest.fail("Diverged was caught as an Exception")


def test_forms_and_lane_values():
    assert Lanes.arange(5, 4, 3).affine() == (5, 3)
    assert Lanes([7, 7]).affine() == (7, 0)
    assert Lanes([0, 1, 5]).affine() is None
    v = Lanes.arange(2, 3) * 4 + 1
    assert [at_lane(v, i) for i in range(3)] == [9, 13, 17]
    assert at_lane(11, 2) == 11
    assert "lane" in repr(v)
    with pytest.raises(ValueError):
        Lanes([])
    with pytest.raises(TypeError):
        Lanes([1.5, 2.0])
