"""The unit of work a backend ships to a worker: the run function and how to measure it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ascsim.tune.measure import Outcome, evaluate


@dataclass(frozen=True)
class TrialSpec:
    """Everything a worker needs besides the configuration (sent once per worker)."""

    run_fn: Callable[..., Any]
    objective: str
    infeasible_findings: frozenset[str]
    soc: str | None  # the SoC the trials simulate (None: the run function chooses)

    def run(self, config: Mapping[str, Any]) -> Outcome:
        if self.soc is not None:
            from ascsim.session import SESSION

            SESSION.request_soc(self.soc)
        return evaluate(self.run_fn, config, self.objective, self.infeasible_findings)


def death_reason(what: str, detail: str) -> str:
    """The reason recorded for a trial whose worker died twice."""
    return f"{what} died during the trial twice (retried once): {detail}"
