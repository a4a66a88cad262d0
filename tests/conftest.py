"""Test-wide set-up: the Hypothesis profiles.

- ``dev`` (the default): no per-example deadline. Examples run whole kernels on the simulator,
  whose time varies with the machine's load; a deadline would fail a correct test on a busy host.
- ``ci``: the same, derandomized (every run tries the same examples, so a CI result is
  reproducible and a red run is red again locally with ``CI=true``) and without the example
  database (a CI checkout starts empty anyway).

``CI=true`` (as CI services set it, and ``.ci/run``) selects ``ci``; ``HYPOTHESIS_PROFILE``
names a profile explicitly. A test's own ``@settings`` (``max_examples``) builds on the profile.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI", "").lower() == "true" else "dev"))


@pytest.fixture
def per_core_launches():
    """Launches run per core, whatever ``ASCSIM_WAVES`` says: for tests that count how often
    the machine runs a launch's passes (``verify`` runs each launch twice, sim/wave.py)."""
    from ascsim.session import SESSION

    before, SESSION.waves = SESSION.waves, "off"
    try:
        yield
    finally:
        SESSION.waves = before
