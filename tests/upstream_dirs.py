"""Where the public upstream suites are on this machine (they are not in the repository).

``ASCSIM_UPSTREAM_PYASC`` names a folder holding hicann/pyasc's ``python/`` and
compiler-team-ru/pyasc's ``examples/`` (docs/upstream.md says how to fetch them); tests that
need them skip when it is not set, as in CI.
"""

from __future__ import annotations

import os
from pathlib import Path

PYASC_DIR = os.environ.get("ASCSIM_UPSTREAM_PYASC")
#: Folders under ASCSIM_UPSTREAM_PYASC that hold pyasc's example scripts.
EXAMPLE_FOLDERS = ("python/tutorials", "examples")


def pyasc_example(relative: str) -> Path | None:
    """The upstream pyasc example ``relative`` (e.g. ``"06_gelu/gelu.py"``), or None."""
    if not PYASC_DIR:
        return None
    for folder in EXAMPLE_FOLDERS:
        path = Path(PYASC_DIR) / folder / relative
        if path.is_file():
            return path
    return None
