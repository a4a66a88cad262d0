"""Re-simulation: a script run again with one change, in a fresh process, and what came out.

The critical path proves a wait redundant by running the script without it
(:mod:`ascsim.critical`), and ``ascsim run --what-if`` shows what a change buys
(:mod:`ascsim.what_if`); both go through :func:`run_with`. A change is a :class:`Change`; the
fresh process applies it (:func:`apply_change`, behind ``ascsim run --apply CHANGE``) before
the script runs, so that nothing of the first run (compiled kernels, the L2 carried between
launches, the session's SoC) leaks into the second. What comes back is an :class:`Outcome`:
the exit status, every launch's report (``KernelReport.to_json``) and a digest of the GM bytes
each launch left behind (:class:`OutputDigests`), so "the same outputs" is a comparison of
bytes, launch by launch, not of what the script chose to check.

Changes (the text form, as ``--what-if`` takes it):

* ``drop=FILE:LINE[,FILE:LINE...]``: leave the synchronisation calls at those lines out of the
  run (``wait_flag`` / ``set_flag``, ``pipe_barrier``, cross-core flags, core barriers);
* ``buffers=FILE:LINE[xN]``: the queue initialised at that line (``pipe.init_buffer(que, num,
  len)``) gets N times its buffers (default 2: double buffering);
* ``soc=NAME``: another SoC;
* ``cores=N``: the SoC with N AI cores (N AIC and 2N AIV) and everything else unchanged.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from ascsim.sim.observer import Observer

#: The kinds of change, with what their value is.
CHANGE_KINDS = {"drop": "FILE:LINE[,FILE:LINE...]", "buffers": "FILE:LINE[xN]",
                "soc": "NAME", "cores": "N"}


class ChangeError(ValueError):
    """A change that cannot be made: its text names what is wrong."""


def _site(text: str, what: str) -> tuple[str, int]:
    path, sep, line = text.rpartition(":")
    if not sep or not line.isdigit() or not path:
        raise ChangeError(f"{what}: {text!r} is not FILE:LINE")
    if not os.path.isfile(path):
        raise ChangeError(f"{what}: no such file {path!r}")
    return (os.path.realpath(path), int(line))


@dataclass(frozen=True)
class Change:
    """One change to a run. ``kind``: a key of :data:`CHANGE_KINDS`; ``sites``: the (real
    path, line) it applies to (``drop``, ``buffers``); ``value``: the factor (``buffers``),
    the SoC name (``soc``) or the AI core count (``cores``)."""

    kind: str
    sites: tuple[tuple[str, int], ...] = ()
    value: str | int | None = None

    def __post_init__(self):
        if self.kind not in CHANGE_KINDS:
            raise ChangeError(f"unknown change {self.kind!r}: one of "
                              + ", ".join(f"{k}={v}" for k, v in CHANGE_KINDS.items()))

    @classmethod
    def parse(cls, text: str) -> Change:
        """A change from its text form (see the module docstring)."""
        kind, sep, value = text.partition("=")
        kind = kind.strip()
        if not sep or not value:
            forms = ", ".join(f"{k}={v}" for k, v in CHANGE_KINDS.items())
            raise ChangeError(f"a change is KIND=VALUE ({forms}), got {text!r}")
        if kind == "drop":
            return cls("drop", tuple(_site(part, "drop") for part in value.split(",")))
        if kind == "buffers":
            found = re.fullmatch(r"(.*:\d+)(?:x(\d+))?", value)
            n = int(found.group(2) or 2) if found else 0
            if n < 2:
                raise ChangeError(f"buffers: the factor of {value!r} must be a whole number "
                                  "of at least 2")
            return cls("buffers", (_site(found.group(1), "buffers"),), n)
        if kind == "soc":
            from ascsim.hw import get_soc

            try:
                return cls("soc", (), get_soc(value).name)
            except ValueError as exc:
                raise ChangeError(f"soc: {exc}") from None
        if kind == "cores":
            if not value.isdigit() or int(value) < 1:
                raise ChangeError(f"cores: {value!r} is not a positive whole number")
            return cls("cores", (), int(value))
        return cls(kind)  # refused by __post_init__

    def text(self) -> str:
        """The text form, which :meth:`parse` reads back."""
        if self.kind == "drop":
            return "drop=" + ",".join(f"{p}:{n}" for p, n in self.sites)
        if self.kind == "buffers":
            (path, line), = self.sites
            return f"buffers={path}:{line}x{self.value}"
        return f"{self.kind}={self.value}"

    def describe(self) -> str:
        """In words, for the tables."""
        where = ", ".join(f"{os.path.relpath(p)}:{n}" for p, n in self.sites)
        return {"drop": f"without the sync at {where}",
                "buffers": f"{self.value}x the buffers of the queue at {where}",
                "soc": f"on {self.value}",
                "cores": f"with {self.value} AI cores"}[self.kind]


def seed_generators() -> None:
    """Seed Python's, numpy's and torch's random generators with 0: a run and its
    re-simulation then draw the same inputs, unless the script seeds them itself (both runs of
    ``--critical-path`` / ``--what-if`` do this before the script starts)."""
    import random

    import numpy as np
    import torch

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)


def apply_change(change: Change) -> None:
    """Make ``change`` for every launch of this process (the fresh process of
    :func:`run_with`, before the script runs)."""
    from ascsim.session import SESSION

    if change.kind == "drop":
        SESSION.dropped_syncs = frozenset(change.sites)
    elif change.kind == "buffers":
        SESSION.buffer_scale = {change.sites[0]: int(change.value)}
    elif change.kind == "soc":
        SESSION.request_soc(str(change.value))
    elif change.kind == "cores":
        _with_core_count(int(change.value))


@contextlib.contextmanager
def changes_undone():
    """Undo, when the block ends, what :func:`apply_change`, the recording of
    ``--critical-path`` and the run's provenance setting set in this process (the session's
    fields, the SoC table): for a
    caller that runs ``ascsim.cli.main`` in its own process, such as a test."""
    from ascsim.hw import socs
    from ascsim.session import SESSION

    saved = (SESSION.record_causes, SESSION.dropped_syncs, dict(SESSION.buffer_scale),
             list(SESSION.observer_factories), dict(socs._LOOKUP), SESSION.provenance)
    try:
        yield
    finally:
        (SESSION.record_causes, SESSION.dropped_syncs, SESSION.buffer_scale, factories,
         table, SESSION.provenance) = saved
        SESSION.observer_factories[:] = factories
        socs._LOOKUP.clear()
        socs._LOOKUP.update(table)


def _with_core_count(n: int) -> None:
    """Every SoC of the table with ``n`` AIC and ``2n`` AIV (in this process only): the what-if
    of a chip with more or fewer AI cores, its buffers, clock and bandwidths as they are."""
    from ascsim.hw import socs
    from ascsim.session import SESSION

    for key, spec in list(socs._LOOKUP.items()):
        socs._LOOKUP[key] = dataclasses.replace(spec, aic_count=n, aiv_count=2 * n)
    SESSION.request_soc(SESSION.requested_soc)


# ============================================================================ outputs
class OutputDigests:
    """An observer factory that keeps, per launch, a digest of every GM buffer the launch
    touched, taken when it ends (the values pass: its timing pass computes none)."""

    def __init__(self):
        self.digests: list[str] = []

    def __call__(self, launch):
        return _DigestObserver(self.digests)


class _DigestObserver(Observer):
    def __init__(self, into: list):
        self.into = into

    def on_launch_end(self, launch) -> None:
        h = hashlib.sha1()
        for buf in launch.memory.buffers:
            if buf.touched:
                h.update(buf.name.encode())
                h.update(buf.data[: buf.nbytes].tobytes())
        self.into.append(h.hexdigest())


# ============================================================================ running
@dataclass(frozen=True)
class Outcome:
    """One run of a script: its exit ``status``, its launches' ``reports``
    (``KernelReport.to_json`` dicts, in launch order), ``outputs`` (the GM digest of each
    launch that ended, in order) and the last line of its ``error`` (None when it ran
    through)."""

    status: int
    reports: tuple[dict, ...]
    outputs: tuple[str, ...]
    error: str | None = None

    @property
    def device_time_us(self) -> float:
        return sum(r["device_time_us"] for r in self.reports)


def _error_line(stderr: str) -> str | None:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if not line.startswith(("WARNING", "warnings.warn")):
            return line
    return None


def run_with(script: str, args: Sequence[str], change: Change | None,
             timing_only: bool = False) -> Outcome:
    """Run ``script`` with ``args`` in a fresh ``ascsim run`` process with ``change`` made."""
    fd, path = tempfile.mkstemp(prefix="ascsim-resim-", suffix=".json")
    os.close(fd)
    try:
        cmd = [sys.executable, "-m", "ascsim", "run", "--quiet", "--json", path]
        if change is not None:
            cmd += ["--apply", change.text()]
        if timing_only:
            cmd.append("--timing-only")
        proc = subprocess.run([*cmd, script, *args], capture_output=True, text=True)
        try:
            with open(path) as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            data = {}
    finally:
        os.unlink(path)
    return Outcome(proc.returncode, tuple(data.get("reports", ())),
                   tuple(data.get("outputs", ())),
                   _error_line(proc.stderr) if proc.returncode else None)


def same_results(a: Outcome, b: Outcome) -> tuple[bool, str]:
    """Whether two runs came out the same -- exit status, launches, GM bytes after each
    launch, findings -- and if not, what differs first."""
    from ascsim.diff import finding_key

    if a.status != b.status:
        return False, f"the script exits {b.status} instead of {a.status}" + (
            f" ({b.error})" if b.error else "")
    if [r["kernel"] for r in a.reports] != [r["kernel"] for r in b.reports]:
        return False, "the script launches other kernels"
    for ra, rb in zip(a.reports, b.reports):
        new = {finding_key(f) for f in rb["findings"]} - {finding_key(f) for f in ra["findings"]}
        if new:
            category, lines = sorted(new)[0]
            at = ", ".join(f"{os.path.basename(f)}:{n}" for f, n in lines)
            return False, f"a new {category} finding in {rb['kernel']} ({at})"
    if a.outputs != b.outputs:
        n = sum(x != y for x, y in zip(a.outputs, b.outputs)) + abs(len(a.outputs) -
                                                                    len(b.outputs))
        return False, f"the outputs of {n} launch(es) differ"
    return True, "same outputs and findings"
