"""Helpers of the kernel-check tests: ``# mark: NAME`` comments (the lines a finding must point
at), fp32 inputs, and a session with every check on."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ascsim.session import SESSION


class SourceMarks:
    """The marked lines of one source file, and the lines of a finding in that file."""

    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        with open(self.path) as fh:
            self._lines = fh.read().splitlines()

    def mark(self, name: str) -> int:
        """The line number of the statement carrying ``# mark: name`` (exactly one)."""
        tag = f"# mark: {name}"
        hits = [i + 1 for i, text in enumerate(self._lines) if text.rstrip().endswith(tag)]
        assert len(hits) == 1, f"marker {name!r} found {len(hits)} times"
        return hits[0]

    def lines_of(self, finding) -> list[int]:
        """The lines of ``finding`` that are in this file, in its order."""
        return [line for path, line in finding.locations if os.path.abspath(path) == self.path]


def f32(n: int, start: float = 0.0) -> np.ndarray:
    """``n`` consecutive fp32 values from ``start``: inputs whose every element differs."""
    return np.arange(start, start + n, dtype=np.float32)


@pytest.fixture
def checks_on_not_strict():
    """Run a test with every check on and strict mode off, whatever the session had."""
    saved = (SESSION.strict, SESSION.checks)
    SESSION.strict, SESSION.checks = False, True
    yield
    SESSION.strict, SESSION.checks = saved
