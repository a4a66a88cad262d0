"""The optuna side of a search: the study (in memory or SQLite), its samplers, and the records
kept on each trial.

Every trial's outcome lives in the study: a measured trial is COMPLETE with its value; an
infeasible or failed one is FAIL with the reason in its user attributes, so optuna's samplers
never take it for a good point and a resumed study knows it. Trials cut short by Ctrl-C are
FAIL with status "interrupted": they do not count, and a resumed study runs their
configurations first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

import optuna
from optuna.samplers import GridSampler, TPESampler
from optuna.trial import TrialState

from ascsim.tune.measure import Outcome
from ascsim.tune.results import TrialRecord
from ascsim.tune.space import Space

INTERRUPTED = "interrupted"


class StudyError(ValueError):
    """The stored study does not belong to this search (other space, objective or seed)."""


class BatchGridSampler(GridSampler):
    """Optuna's grid sampler for ask/tell in batches: the search, not the sampler, decides
    when the grid is done (optuna's version stops the study from ``after_trial``, which only
    works inside ``study.optimize``)."""

    def after_trial(self, study, trial, state, values) -> None:
        return None


def storage_url(storage: str | os.PathLike | None) -> str | None:
    """None (in memory), an optuna URL as given, or a file path -> its SQLite URL."""
    if storage is None:
        return None
    text = os.fspath(storage)
    if "://" in text:
        return text
    return "sqlite:///" + os.path.abspath(text)


def tpe_sampler(seed: int, told: int, budget: int) -> TPESampler:
    """A TPE sampler seeded from the search's seed and the number of trials already in the
    study, so a batch's proposals depend only on the study's history (not on the workers,
    nor on whether the study was resumed)."""
    digest = hashlib.sha256(f"{seed}:{told}".encode()).digest()
    return TPESampler(seed=int.from_bytes(digest[:4], "little"),
                      n_startup_trials=max(4, min(16, budget // 4)), constant_liar=True,
                      multivariate=True)


@contextlib.contextmanager
def optuna_quiet() -> Iterator[None]:
    """Optuna's INFO line per trial off for the block (ascsim shows its own progress); the
    verbosity the process had is back afterwards (optuna's logging is process-wide)."""
    before = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        yield
    finally:
        optuna.logging.set_verbosity(before)


def open_study(space: Space, *, storage: str | None, study_name: str, seed: int,
               objective: str, use_grid: bool) -> optuna.Study:
    """Create the study, or load it to resume when the storage already holds it."""
    sampler = BatchGridSampler(space.to_json(), seed=seed) if use_grid else \
        tpe_sampler(seed, 0, 1)
    study = optuna.create_study(storage=storage, study_name=study_name, direction="minimize",
                                sampler=sampler, load_if_exists=storage is not None)
    # A resumed study may get a larger budget (and so another sampler), not another problem.
    identity = {"space": space.fingerprint(), "objective": objective, "seed": seed}
    stored = study.user_attrs.get("ascsim_identity")
    if stored is None:
        study.set_user_attr("ascsim_identity", identity)
        study.set_user_attr("ascsim_space", space.to_json())
    elif stored != identity:
        differs = [k for k in identity if stored.get(k) != identity[k]]
        raise StudyError(f"the study {study_name!r} in {storage} was made by another search "
                         f"(its {', '.join(differs)} differ{'s' if len(differs) == 1 else ''};"
                         f" stored {({k: stored.get(k) for k in differs})}); use another "
                         "--study name or storage file")
    return study


def config_key(config: Mapping[str, Any]) -> str:
    return json.dumps(dict(config), sort_keys=True)


def record_of(trial: optuna.trial.FrozenTrial, space: Space) -> TrialRecord | None:
    """The record of a finished trial (None for running or interrupted ones)."""
    attrs = trial.user_attrs
    status = attrs.get("status")
    if status is None or status == INTERRUPTED or not trial.state.is_finished():
        return None
    config = {name: trial.params[name] for name in space.names if name in trial.params}
    return TrialRecord(number=trial.number, config=config, status=status,
                       value=trial.value if status == "ok" else None,
                       reason=attrs.get("reason", ""),
                       device_time_us=attrs.get("device_time_us"),
                       wall_s=attrs.get("wall_s", 0.0), repeat=attrs.get("repeat", False))


def tell(study: optuna.Study, trial: optuna.Trial, outcome: Outcome,
         repeat: bool = False) -> None:
    """Store ``outcome`` on ``trial`` and finish it."""
    trial.set_user_attr("status", outcome.status)
    trial.set_user_attr("reason", outcome.reason)
    trial.set_user_attr("device_time_us", outcome.device_time_us)
    trial.set_user_attr("wall_s", outcome.wall_s)
    trial.set_user_attr("repeat", repeat)
    if outcome.status == "ok":
        study.tell(trial, outcome.value)
    else:
        study.tell(trial, state=TrialState.FAIL)


def interrupt(study: optuna.Study, trial: optuna.Trial) -> None:
    trial.set_user_attr("status", INTERRUPTED)
    study.tell(trial, state=TrialState.FAIL)


def leftovers(study: optuna.Study, space: Space) -> list[dict]:
    """Configurations of trials that never finished (Ctrl-C, a killed search): run them first.

    Trials left RUNNING by a search that was killed outright are closed as interrupted."""
    out, seen = [], set()
    for t in study.get_trials(deepcopy=False):
        stuck = t.state == TrialState.RUNNING
        if stuck:
            study.tell(t.number, state=TrialState.FAIL)
        if stuck or t.user_attrs.get("status") == INTERRUPTED:
            config = {name: t.params[name] for name in space.names if name in t.params}
            if len(config) == len(space.names) and config_key(config) not in seen:
                seen.add(config_key(config))
                out.append(config)
    return out
