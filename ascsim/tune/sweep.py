"""``search``: find the configuration of least simulated time.

How a search runs, and why it gives the same answer on every backend and worker count:
the sampler is asked for a batch of ``batch_size`` configurations (a fixed number, not the
number of workers), one after the other in this process; the backend evaluates the batch in
parallel; the outcomes are told to the study in the order the configurations were asked. The
sampler therefore sees the same history at every ask whatever ran where, and the simulator's
times do not depend on where a trial ran.

Small spaces (the whole grid fits the budget) are searched exhaustively with optuna's grid
sampler; larger ones with TPE, seeded per batch from ``seed``. The grid's order does not
depend on any result, so a grid search asks for all of it in one batch (no worker waits for
a batch's slowest trial). A configuration the sampler proposes again is not run again: its
result is reused and it does not count against the budget.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ascsim.tune import study as studies
from ascsim.tune.backends import BACKENDS, Backend, make_backend
from ascsim.tune.measure import INFEASIBLE_FINDINGS, Outcome
from ascsim.tune.results import TrialRecord, TuneResult
from ascsim.tune.space import Space, as_space
from ascsim.tune.trial import TrialSpec

#: Configurations asked of the sampler per round (fixed, so results do not depend on workers).
BATCH_SIZE = 8
#: Proposals of already-measured configurations tolerated in a row before a round gives up
#: asking (TPE on a nearly exhausted categorical space).
MAX_REPEATS = 64


class SearchError(ValueError):
    """Bad arguments to ``search``; the message names the argument."""


ProgressFn = Callable[[TrialRecord, "TuneResult"], None]


def _backend(backend: str | Backend | None, workers: int | None, ray_address: str) -> Backend:
    if backend is None or isinstance(backend, str):
        kind = backend or "pool"
        if kind not in BACKENDS:
            raise SearchError(f"backend {kind!r} is not one of {BACKENDS}")
        return make_backend(kind, workers, ray_address)
    return backend


class _Run:
    """The state of one search between rounds."""

    def __init__(self, space: Space, study, spec: TrialSpec, backend: Backend, budget: int,
                 seed: int, use_grid: bool, on_trial: ProgressFn | None, meta: dict):
        self.space, self.study, self.spec, self.backend = space, study, spec, backend
        self.budget, self.seed, self.use_grid, self.on_trial = budget, seed, use_grid, on_trial
        self.meta = meta
        self.records: list[TrialRecord] = []
        self.known: dict[str, Outcome] = {}
        for t in study.get_trials(deepcopy=False):
            rec = studies.record_of(t, space)
            if rec is not None:
                self.records.append(rec)
                if not rec.repeat:
                    self.known[studies.config_key(rec.config)] = Outcome(
                        rec.status, rec.value, rec.reason, rec.device_time_us, rec.wall_s)
        self.t0 = time.perf_counter()
        self.start_s = 0.0

    @property
    def evaluated(self) -> int:
        return sum(1 for r in self.records if not r.repeat)

    def result(self, interrupted: bool = False) -> TuneResult:
        return TuneResult(space=self.space, trials=tuple(self.records),
                          interrupted=interrupted, wall_s=time.perf_counter() - self.t0,
                          start_s=self.start_s, **self.meta)

    def _add(self, trial, outcome: Outcome, repeat: bool) -> None:
        studies.tell(self.study, trial, outcome, repeat)
        rec = TrialRecord(trial.number, dict(trial.params), outcome.status, outcome.value,
                          outcome.reason, outcome.device_time_us, outcome.wall_s, repeat)
        self.records.append(rec)
        if not repeat:
            self.known[studies.config_key(rec.config)] = outcome
        if self.on_trial is not None:
            self.on_trial(rec, self.result())

    def _ask(self):
        trial = self.study.ask()
        config = {name: trial.suggest_categorical(name, list(values))
                  for name, values in self.space.knobs}
        return trial, config

    def next_batch(self, size: int) -> list[tuple[Any, dict]]:
        """Up to ``size`` new configurations; repeats are told at once from what is known."""
        if not self.use_grid:
            self.study.sampler = studies.tpe_sampler(self.seed, len(self.study.trials),
                                                     self.budget)
        batch: list[tuple[Any, dict]] = []
        fresh: set[str] = set()
        repeats = 0
        try:
            while len(batch) < size and repeats < MAX_REPEATS:
                if len(self.known) + len(fresh) >= self.space.grid_size:
                    break  # every configuration is measured or about to be
                trial, config = self._ask()
                key = studies.config_key(config)
                if key in self.known:
                    self._add(trial, self.known[key], repeat=True)
                    repeats += 1
                elif key in fresh:
                    studies.interrupt(self.study, trial)  # asked twice in one round: drop it
                    repeats += 1
                else:
                    fresh.add(key)
                    batch.append((trial, config))
        except BaseException:  # Ctrl-C while asking: nothing of this round has run
            for trial, _ in batch:
                studies.interrupt(self.study, trial)
            raise
        return batch

    def run_batch(self, batch: list[tuple[Any, dict]]) -> None:
        """Evaluate ``batch`` on the backend; tell outcomes in order as the prefix completes.
        On Ctrl-C the unfinished trials are marked interrupted and the interrupt goes on."""
        done: dict[int, Outcome] = {}
        told = 0
        try:
            for index, outcome in self.backend.run([c for _, c in batch]):
                done[index] = outcome
                while told in done:
                    self._add(batch[told][0], done.pop(told), repeat=False)
                    told += 1
        except BaseException:
            for index in range(told, len(batch)):
                if index in done:
                    self._add(batch[index][0], done[index], repeat=False)
                else:
                    studies.interrupt(self.study, batch[index][0])
            raise


@studies.optuna_quiet()
def search(run_fn: Callable[..., Any], space: Space | Mapping[str, Any] | str, *,
           budget: int = 64, workers: int | None = None, seed: int = 0,
           objective: str = "device_time_us", storage: str | os.PathLike | None = None,
           study_name: str = "ascsim-tune", backend: str | Backend | None = "pool",
           ray_address: str = "auto", soc: str | None = None,
           infeasible_findings: Collection[str] = INFEASIBLE_FINDINGS,
           batch_size: int = BATCH_SIZE, first: list[Mapping[str, Any]] = (),
           on_trial: ProgressFn | None = None) -> TuneResult:
    """Search ``space`` for the configuration whose run has the least ``objective``.

    ``run_fn(**config)`` runs one configuration and returns its report (see
    :mod:`ascsim.tune.measure` for what it may return). ``budget`` caps the configurations
    evaluated; ``workers`` the parallel trials (default: one per core); ``seed`` makes the
    search reproducible; ``storage`` (a SQLite file path or an optuna URL) keeps the study so a
    second call with the same arguments resumes it; ``backend`` is "pool" (local processes),
    "ray" (``ray_address``: "auto" starts a local cluster, else the cluster to join),
    "inline" (this process: no isolation, for run functions that cannot be pickled) or a
    backend object (kept open afterwards, so several searches can share its workers; the
    caller closes it). ``soc`` selects the simulated SoC for every trial. ``first`` lists
    configurations to evaluate before the sampler's (e.g. the defaults, to compare against).
    Ctrl-C stops the search cleanly: the result says ``interrupted`` and the stored study
    resumes later.
    """
    space = as_space(space)
    if not isinstance(budget, int) or budget < 1:
        raise SearchError(f"budget must be a positive integer, got {budget!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise SearchError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not callable(run_fn):
        raise SearchError(f"run_fn must be callable, got {type(run_fn).__name__}")
    if soc is not None:
        from ascsim.hw import get_soc

        soc = get_soc(soc).name
    use_grid = space.grid_size <= budget
    url = studies.storage_url(storage)
    study = studies.open_study(space, storage=url, study_name=study_name, seed=seed,
                               objective=objective, use_grid=use_grid)
    engine = _backend(backend, workers, ray_address)
    owned = engine is not backend
    spec = TrialSpec(run_fn, objective, frozenset(infeasible_findings), soc)
    meta = {"objective": objective, "sampler": "grid" if use_grid else "tpe",
            "backend": engine.name, "workers": engine.workers, "seed": seed,
            "budget": budget, "study_name": study_name, "storage": url}
    run = _Run(space, study, spec, engine, min(budget, space.grid_size), seed, use_grid,
               on_trial, meta)
    for config in first:
        space.check(config)
    queued: set[str] = set()
    for config in [*studies.leftovers(study, space), *first]:
        key = studies.config_key(config)
        if key not in run.known and key not in queued:
            queued.add(key)
            study.enqueue_trial(dict(config))
    interrupted = False
    try:
        engine.start(spec)
        run.start_s = time.perf_counter() - run.t0
        meta["workers"] = engine.workers
        meta["backend"] = engine.name  # now that it knows how its workers started
        while run.evaluated < run.budget:
            left = run.budget - run.evaluated
            batch = run.next_batch(left if use_grid else min(batch_size, left))
            if not batch:
                break
            run.run_batch(batch)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if owned:
            engine.close()
    return run.result(interrupted)
