"""What a search found: every trial, in order, and the best configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascsim.tune.space import Space


@dataclass(frozen=True)
class TrialRecord:
    """One trial of the study.

    ``repeat``: the sampler proposed a configuration the study had already measured; its
    result was reused (the simulator is deterministic) and it does not count against the
    budget.
    """

    number: int
    config: dict[str, Any]
    status: str  # "ok" | "infeasible" | "failed" (see ascsim.tune.measure.STATUSES)
    value: float | None
    reason: str
    device_time_us: float | None
    wall_s: float
    repeat: bool = False

    def to_json(self) -> dict:
        return {"number": self.number, "config": self.config, "status": self.status,
                "value": self.value, "reason": self.reason,
                "device_time_us": self.device_time_us, "wall_s": self.wall_s,
                "repeat": self.repeat}


def best_of(trials: tuple[TrialRecord, ...] | list[TrialRecord]) -> TrialRecord | None:
    """The measured trial of least value; ties go to the earliest (deterministic)."""
    measured = [t for t in trials if t.status == "ok"]
    return min(measured, key=lambda t: (t.value, t.number)) if measured else None


@dataclass(frozen=True)
class TuneResult:
    """A finished (or interrupted) search."""

    space: Space
    objective: str
    sampler: str  # "grid" or "tpe"
    backend: str
    workers: int
    seed: int
    budget: int
    trials: tuple[TrialRecord, ...]
    study_name: str
    storage: str | None
    interrupted: bool
    wall_s: float
    start_s: float = 0.0  # of wall_s, starting the backend's workers (or joining a cluster)

    @property
    def best(self) -> TrialRecord | None:
        return best_of(self.trials)

    @property
    def config(self) -> dict[str, Any] | None:
        """The best configuration (None when no trial was feasible)."""
        return None if self.best is None else dict(self.best.config)

    @property
    def value(self) -> float | None:
        return None if self.best is None else self.best.value

    def evaluated(self) -> list[TrialRecord]:
        """Trials that ran (repeats left out)."""
        return [t for t in self.trials if not t.repeat]

    def infeasible(self) -> list[TrialRecord]:
        return [t for t in self.evaluated() if t.status != "ok"]

    def top(self, n: int = 10) -> list[TrialRecord]:
        """The ``n`` best distinct measured configurations."""
        measured = sorted((t for t in self.evaluated() if t.status == "ok"),
                          key=lambda t: (t.value, t.number))
        return measured[:n]

    def to_json(self) -> dict:
        best = self.best
        return {"space": self.space.to_json(), "objective": self.objective,
                "sampler": self.sampler, "backend": self.backend, "workers": self.workers,
                "seed": self.seed, "budget": self.budget, "study_name": self.study_name,
                "storage": self.storage, "interrupted": self.interrupted,
                "wall_s": self.wall_s, "start_s": self.start_s,
                "best": None if best is None else best.to_json(),
                "trials": [t.to_json() for t in self.trials]}
