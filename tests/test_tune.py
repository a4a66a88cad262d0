"""The search: known optimum, infeasible trials, reproducibility, resume, bad input."""

from __future__ import annotations

import pytest
import tune_helpers as h

from ascsim.tune import Space, SpaceError, load_space, search
from ascsim.tune.study import StudyError
from ascsim.tune.sweep import SearchError


def test_grid_search_finds_the_known_optimum():
    result = search(h.synthetic, h.SPACE, budget=64, workers=2, seed=3)
    assert result.sampler == "grid"
    assert result.config == h.OPTIMUM
    assert result.value == pytest.approx(h.bowl(**h.OPTIMUM))
    assert len(result.evaluated()) == Space.from_mapping(h.SPACE).grid_size
    assert sorted(map(str, (t.config for t in result.trials))) == \
        sorted(map(str, Space.from_mapping(h.SPACE).grid()))


def test_tpe_search_is_reproducible_and_close_to_the_optimum():
    runs = [search(h.synthetic, h.SPACE, budget=16, seed=7, backend="inline") for _ in range(2)]
    assert runs[0].sampler == "tpe"
    assert [t.config for t in runs[0].trials] == [t.config for t in runs[1].trials]
    assert runs[0].config == runs[1].config
    assert len(runs[0].evaluated()) == 16
    # 16 of 24 configurations, the optimum's neighbours are within 1 µs of it.
    assert runs[0].value <= h.bowl(**h.OPTIMUM) + 1.0


def test_first_configurations_run_first():
    first = {"a": 1, "b": 7, "mode": "slow"}
    result = search(h.synthetic, h.SPACE, budget=6, seed=0, backend="inline", first=[first])
    assert result.trials[0].config == first


def test_infeasible_trials_have_reasons_and_are_never_best():
    result = search(h.with_infeasible, h.SPACE, budget=64, workers=2)
    assert result.config == h.OPTIMUM  # (1, 7, fast) reports 1 µs but overflows UB
    reasons = {(t.config["a"], t.config["b"]): t.reason for t in result.infeasible()}
    assert all(t.status == "infeasible" for t in result.infeasible())
    assert "ValueError: no tiling fits a=4" in reasons[(4, 2)]
    assert "tune_helpers.py:" in reasons[(4, 2)]  # where the run function raised
    assert "local-overflow" in reasons[(1, 7)] and "kernel.py:12" in reasons[(1, 7)]
    assert len(result.infeasible()) == 3 * 2 + 3 * 2  # a=4 (6), or b=7 with a < 4 (6)


def test_objective_may_be_any_report_field():
    # launch_overhead_us is 1.0 everywhere: the earliest measured trial wins the tie.
    result = search(h.with_infeasible, h.SPACE, budget=64, backend="inline",
                    objective="launch_overhead_us")
    assert result.value == 1.0
    assert result.best.device_time_us == pytest.approx(h.bowl(**result.config))
    bad = search(h.with_infeasible, h.SPACE, budget=3, backend="inline", objective="nope")
    assert bad.best is None
    assert any("objective 'nope'" in t.reason for t in bad.infeasible())


def test_a_stored_study_resumes_without_repeating_trials(tmp_path):
    db = tmp_path / "study.db"
    first = search(h.synthetic, h.SPACE, budget=5, seed=2, storage=db, backend="inline")
    assert len(first.evaluated()) == 5
    resumed = search(h.synthetic, h.SPACE, budget=12, seed=2, storage=db, backend="inline")
    assert len(resumed.evaluated()) == 12
    assert [t.config for t in resumed.trials[:5]] == [t.config for t in first.trials]
    configs = [str(t.config) for t in resumed.evaluated()]
    assert len(set(configs)) == len(configs)
    again = search(h.synthetic, h.SPACE, budget=12, seed=2, storage=db, backend="inline")
    assert len(again.evaluated()) == 12  # the budget is spent: nothing runs
    with pytest.raises(StudyError, match="seed"):
        search(h.synthetic, h.SPACE, budget=12, seed=3, storage=db, backend="inline")


def test_ctrl_c_stops_cleanly_and_the_study_resumes(tmp_path):
    db = tmp_path / "study.db"
    h.ARMED[0] = True
    stopped = search(h.interrupts_at, h.SPACE, budget=64, storage=db, backend="inline")
    assert stopped.interrupted
    done = len(stopped.evaluated())
    assert 0 < done < 24
    h.ARMED[0] = False
    resumed = search(h.interrupts_at, h.SPACE, budget=64, storage=db, backend="inline")
    assert not resumed.interrupted
    assert len(resumed.evaluated()) == 24  # the interrupted configurations ran too
    assert resumed.config == h.OPTIMUM


def test_bad_spaces_and_arguments_are_named(tmp_path):
    with pytest.raises(SpaceError, match="knob 'a' has no values"):
        Space.from_mapping({"a": []})
    with pytest.raises(SpaceError, match="lists a value twice"):
        Space.from_mapping({"a": [1, 1]})
    with pytest.raises(SpaceError, match="not a Python identifier"):
        Space.from_mapping({"base-m": [1]})
    with pytest.raises(SpaceError, match="not an int, float"):
        Space.from_mapping({"a": [[1]]})
    assert Space.from_mapping({"n": {"start": 16, "stop": 64, "step": 16}}).values("n") == \
        (16, 32, 48, 64)
    bad = tmp_path / "space.yaml"
    bad.write_text("a: [1, 2\n")
    with pytest.raises(SpaceError, match="not valid YAML"):
        load_space(bad)
    with pytest.raises(SearchError, match="budget"):
        search(h.synthetic, h.SPACE, budget=0)
    with pytest.raises(SearchError, match="backend 'gpu' is not one of"):
        search(h.synthetic, h.SPACE, backend="gpu")
