"""What the runner collects across the launches of one script: reports, and who observes them.

A script may launch many kernels; ``ascsim run`` prints a report for each at the end and writes
one trace for all of them. Library users can read :data:`SESSION.reports` directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ascsim.sim.checks import default_observers


@dataclass
class Session:
    """Settings that apply to every launch, and the reports of the launches so far."""

    reports: list = field(default_factory=list)
    # Callables ``factory(launch) -> observer`` (or None); each launch gets fresh observers.
    # The kernel checks (ascsim.sim.checks) are registered by default.
    observer_factories: list = field(default_factory=lambda: [default_observers])
    # The dynamic kernel checks (races, uninitialised reads, ...); benchmarks may turn them off.
    checks: bool = True
    strict: bool = False
    keep_launches: bool = False
    launches: list = field(default_factory=list)

    def clear(self) -> None:
        self.reports.clear()
        self.launches.clear()


SESSION = Session()
