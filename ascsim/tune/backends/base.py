"""The interface every backend implements."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from ascsim.tune.measure import Outcome
from ascsim.tune.trial import TrialSpec


class BackendError(RuntimeError):
    """The backend cannot run trials at all (not a trial's failure): the message says why."""


class Backend(Protocol):
    """Runs trials of one search; ``start`` once, ``run`` per batch, ``close`` at the end."""

    name: str
    workers: int

    def start(self, spec: TrialSpec) -> None: ...

    def run(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, Outcome]]: ...

    def close(self) -> None: ...
