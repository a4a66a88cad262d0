"""The per-launch constants fit (ascsim/calib/fit.py) and the fused conv calibration kernel."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ascsim.calib import fit
from ascsim.calib.kernels import KERNELS
from ascsim.calib.points import DEFAULT_POINTS, Point, load_points
from ascsim.hw import DEFAULT_SOC, get_soc
from ascsim.session import SESSION

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(autouse=True)
def restore_soc():
    yield
    SESSION.request_soc(DEFAULT_SOC)


def test_solve_l2_is_the_least_squares_of_relative_errors():
    # base + 1 * x against published 10 and 20: relative errors (x - 8)/10 and (x - 16)/20.
    x = fit.solve([2.0, 4.0], [1.0, 1.0], [10.0, 20.0], "l2")
    assert x == pytest.approx((8 / 100 + 16 / 400) / (1 / 100 + 1 / 400))


def test_solve_l1_is_a_weighted_median_that_ignores_an_outlier():
    # Alone, the points want x = 10, 9 and 40 (equal weights).
    base, slope, published = [0.0, 1.0, -30.0], [1.0, 1.0, 1.0], [10.0, 10.0, 10.0]
    assert fit.solve(base, slope, published, "l1") == 10.0
    assert fit.solve(base, slope, published, "l2") == pytest.approx(59 / 3)


def test_solve_refuses_bad_input():
    with pytest.raises(ValueError, match="loss 'l3'"):
        fit.solve([1.0], [1.0], [1.0], "l3")
    with pytest.raises(ValueError, match="all slopes are 0"):
        fit.solve([1.0], [0.0], [1.0], "l2")


def _p(pid, soc="Ascend950PR_9589", us=5.0, holdout=False, pipes=None, reference=False):
    return Point(pid, "add", soc, {}, us, "test", holdout, pipes or {}, reference=reference)


def test_fit_points_keeps_small_fit_points_of_the_family():
    points = [_p("a"), _p("b", holdout=True), _p("c", us=None), _p("d", us=500.0),
              _p("e", soc="Ascend910B1"), _p("f", soc="Ascend950PR_9579", us=3.0),
              _p("g", reference=True)]
    assert [p.id for p in fit.fit_points(points, "Ascend950")] == ["a", "f"]


def test_trial_timing_changes_every_soc_of_the_family_and_restores_them():
    before = {n: get_soc(n).timing for n in ("Ascend950PR_9579", "Ascend950DT_9582",
                                              "Ascend910B1")}
    with fit.trial_timing("Ascend950", launch_overhead_us=9.5):
        assert get_soc("Ascend950PR_9579").timing.launch_overhead_us == 9.5
        assert get_soc("Ascend950DT_9582").timing.launch_overhead_us == 9.5
        assert get_soc("Ascend910B1").timing == before["Ascend910B1"]
    assert {n: get_soc(n).timing for n in before} == before
    with pytest.raises(ValueError, match="no SoC name starts with 'Ascend123'"):
        with fit.trial_timing("Ascend123", launch_overhead_us=1.0):
            raise AssertionError("an unknown family must fail before the block runs")


@dataclass
class _Result:
    total_us: float
    pipes_us: dict
    launches: int


def test_fit_launch_recovers_the_constants_of_a_linear_model():
    """A stand-in for the simulator whose numbers are linear in the two constants: the fit must
    give back the constants that reproduce the published numbers exactly."""
    clock = get_soc("Ascend950PR_9589").clock_mhz
    true_start_us, true_overhead = 0.4, 0.9
    work = {"a": (2.0, 0.3, 1), "b": (5.0, 0.1, 2), "c": (7.5, 0.6, 1)}  # span, scalar, n

    def fake_measure(points):
        timing = get_soc("Ascend950PR_9589").timing
        start = timing.kernel_start_cycles / clock
        out = []
        for p in points:
            span, scalar, n = work[p.id]
            out.append(_Result(n * (span + start + timing.launch_overhead_us),
                               {"scalar": scalar + start}, n))
        return out

    points = [_p(pid, us=n * (span + true_start_us + true_overhead),
                 pipes={"scalar": scalar + true_start_us})
              for pid, (span, scalar, n) in work.items()]
    result = fit.fit_launch(points, "Ascend950", clock, fake_measure, "l2")
    assert result.kernel_start_cycles == round(true_start_us * clock, -1)
    assert result.launch_overhead_us == pytest.approx(true_overhead, abs=0.01)
    assert set(result.per_point_us) == set(work)


def test_calibration_fit_with_points_needs_one_soc_family(capsys):
    spec = importlib.util.spec_from_file_location("ascsim_benchmarks_calibration_fit",
                                                  BENCHMARKS / "calibration.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    assert module.main(["--points", str(DEFAULT_POINTS), "--fit"]) == 2
    assert "needs exactly one --soc" in capsys.readouterr().err


def test_seed_points_are_in_the_shipped_file():
    points = [p for p in load_points(DEFAULT_POINTS).points if p.kernel == "conv_act"]
    assert len(points) == 6 and all(p.soc == "Ascend950PR_9579" for p in points)
    assert sorted(p.published_us for p in points) == [3.4, 3.8, 5.3, 6.1, 20.9, 29.8]
    assert sum(p.holdout for p in points) == 3


@pytest.mark.parametrize("design, launches", [("semi", 2), ("fused", 1)])
def test_conv_act_kernel_runs_the_package_and_checks_its_result(design, launches):
    with SESSION.using_soc("Ascend950PR_9579"):
        reports = KERNELS["conv_act"].run(x=[1, 16, 8, 8], filter=[16, 16, 3, 3],
                                          stride=[1, 1], pads=[1, 1, 1, 1], dilation=[1, 1],
                                          dtype="float16", act="tanh", design=design)
    assert len(reports) == launches and all(r.device_time_us > 0 for r in reports)


def test_conv_act_kernel_refuses_bad_knobs():
    with pytest.raises(ValueError, match="design 'both'"):
        KERNELS["conv_act"].run(x=[1, 16, 8, 8], filter=[16, 16, 3, 3], stride=[1, 1],
                                pads=[1, 1, 1, 1], dilation=[1, 1], dtype="float16",
                                design="both")
    with pytest.raises(ValueError, match="act 'relu'"):
        KERNELS["conv_act"].run(x=[1, 16, 8, 8], filter=[16, 16, 3, 3], stride=[1, 1],
                                pads=[1, 1, 1, 1], dilation=[1, 1], dtype="float16",
                                act="relu")
