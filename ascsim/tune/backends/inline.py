"""Trials in the calling process, one after the other (no isolation: a crash ends the
search). For run functions that cannot be sent to other processes, and for debugging."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ascsim.tune.measure import Outcome
from ascsim.tune.trial import TrialSpec


class InlineBackend:
    name = "inline"
    workers = 1

    def __init__(self) -> None:
        self._spec: TrialSpec | None = None

    def start(self, spec: TrialSpec) -> None:
        self._spec = spec

    def run(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, Outcome]]:
        for index, config in enumerate(configs):
            yield index, self._spec.run(config)

    def close(self) -> None:
        self._spec = None
