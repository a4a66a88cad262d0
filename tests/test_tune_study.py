"""What the search relies on in optuna, pinned: the grid sampler under ask/tell in batches, and
optuna's logging left as the process had it."""

from __future__ import annotations

import logging

import optuna
import pytest
import tune_helpers as h
from optuna.samplers import GridSampler

from ascsim.tune import search
from ascsim.tune.study import BatchGridSampler, optuna_quiet

GRID = {"x": [1, 2, 3], "y": ["a", "b"]}


def _ask_and_tell_the_grid_in_one_batch(sampler) -> list[tuple]:
    """Ask for every grid point before telling any (as a batch of parallel trials does)."""
    study = optuna.create_study(sampler=sampler)
    trials = [study.ask() for _ in range(6)]
    points = [(t.suggest_categorical("x", GRID["x"]), t.suggest_categorical("y", GRID["y"]))
              for t in trials]
    for t, (x, _) in zip(trials, points):
        study.tell(t, float(x))
    return points


def test_batch_grid_sampler_proposes_each_point_once_under_ask_and_tell():
    with optuna_quiet():
        points = _ask_and_tell_the_grid_in_one_batch(BatchGridSampler(GRID, seed=0))
    assert sorted(points) == [(x, y) for x in GRID["x"] for y in GRID["y"]]


def test_optunas_own_grid_sampler_still_stops_the_study_from_its_trial_hook():
    """Why BatchGridSampler overrides ``after_trial``: optuna's grid sampler calls
    ``study.stop()`` there when the grid is done, which fails outside ``study.optimize``. If a
    new optuna changes this hook, this test says so (and the override may go)."""
    with optuna_quiet(), pytest.raises(RuntimeError, match="Study.stop"):
        _ask_and_tell_the_grid_in_one_batch(GridSampler(GRID, seed=0))


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_search_leaves_optunas_verbosity_as_it_was():
    before = optuna.logging.get_verbosity()
    records = _Records()
    logging.getLogger("optuna").addHandler(records)
    optuna.logging.set_verbosity(optuna.logging.INFO)
    try:
        search(h.synthetic, h.SPACE, budget=3, seed=0, backend="inline")
        assert optuna.logging.get_verbosity() == optuna.logging.INFO
        optuna.create_study()  # the caller's INFO level is in force again
    finally:
        optuna.logging.set_verbosity(before)
        logging.getLogger("optuna").removeHandler(records)
    # quiet during the search (no "A new study created" from it), the caller's level after
    assert sum("A new study created" in m for m in records.messages) == 1
