"""The Hypothesis profiles of tests/conftest.py: no deadline; CI=true derandomizes."""

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import settings

SHOW = ("import conftest; from hypothesis import settings; s = settings.default; "
        "print(s.deadline, s.derandomize, s.database is None)")


def _profile_under(env: dict) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")} | env
    done = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).parent, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_this_session_runs_without_a_deadline():
    assert settings.default.deadline is None


def test_ci_selects_the_derandomized_profile():
    assert _profile_under({}) == ["None", "False", "False"]
    assert _profile_under({"CI": "true"}) == ["None", "True", "True"]
    assert _profile_under({"CI": "false", "HYPOTHESIS_PROFILE": "ci"})[1] == "True"
