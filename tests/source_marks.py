"""``# mark: NAME`` comments in a test file: the lines a finding must point at."""

from __future__ import annotations

import os


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
