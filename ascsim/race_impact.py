"""Does a race change the result? Each race finding re-simulated in the other order.

The machine executes every core's instructions in program order and the cores one after
another, so a race finding (two accesses to the same bytes with no synchronisation between
them, :mod:`ascsim.sim.checks.races`) names an order the hardware may also run the other way.
:func:`assess` re-runs the work (a script, a test's launch) twice per race finding:

1. *recording*: the launch runs as before while every instance of the race's two source lines
   records the bytes of the race's memory it reads and writes -- and, for a write, the bytes
   before and after it;
2. *flipped*: the launch runs again with the other order of each pair of instances: for a
   read after a write (RAW) the read sees the bytes as they were before the write; for a
   write after a read (WAR) the read sees the bytes the write stores; for two writes (WAW) the
   earlier write's bytes are the ones left. The instance paired with each is the nearest
   overlapping one of the other line (the latest write before a read, the first write after
   it).

It then compares the flipped launch's GM outputs with the original ones, element by element,
and whether the work's own check (it raised or not) gives the same verdict. A race that
changes no element and no verdict is *harmless* (both orders compute the same); one that
changes either is *harmful*. The work must be repeatable: the random generators of Python,
numpy and torch are seeded before each run, and a work whose original outputs differ between
two runs is reported as such instead of judged.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ascsim.session import SESSION
from ascsim.sim.findings import Finding
from ascsim.sim.observer import Observer

RACE_CATEGORIES = ("race", "cross-core-race")
#: The seed every run of the work starts from.
SEED = 0

_GM = re.compile(r"^GM '(.*)'$")
_LOCAL = re.compile(r"^(\w+) of core \d+$")


@dataclass(frozen=True)
class RaceSite:
    """One race finding as the re-simulation needs it: the launch it is in (its index in the
    work's launches), the hazard (RAW, WAR or WAW, earlier access first), the source lines of
    the earlier and the later access, and the memory: ``("GM", buffer name)`` or ``("local",
    buffer name)`` (each core's own buffer of that name)."""

    launch: int
    kernel: str
    hazard: str
    first: tuple
    second: tuple
    space: tuple
    finding: Finding = field(compare=False)

    @classmethod
    def of(cls, launch: int, kernel: str, finding: Finding) -> RaceSite | None:
        """The site of a race finding (None for a finding of another kind, or one whose
        memory or lines cannot be told)."""
        if finding.category not in RACE_CATEGORIES or len(finding.locations) < 2:
            return None
        described = str(finding.details.get("buffer", ""))
        gm, local = _GM.match(described), _LOCAL.match(described)
        if gm:
            space = ("GM", gm.group(1))
        elif local:
            space = ("local", local.group(1))
        else:
            return None
        hazard = finding.details.get("hazard")
        if hazard not in ("RAW", "WAR", "WAW"):
            return None
        first, second = finding.locations[-2], finding.locations[-1]
        return cls(launch, kernel, hazard, tuple(first), tuple(second), space, finding)


@dataclass(frozen=True)
class RaceImpact:
    """What the other order changed: elements of each GM buffer of the launch
    (``changed``: buffer name -> count; buffers that did not change are left out), and the
    work's own check before and after (True: it passed). ``note`` says why a race could not be
    judged (then ``harmful`` is None)."""

    site: RaceSite
    changed: dict[str, int]
    check_before: bool
    check_after: bool
    note: str = ""

    @property
    def harmful(self) -> bool | None:
        """Whether the other order changes the result (None: not judged, see ``note``)."""
        if self.note:
            return None
        return bool(self.changed) or self.check_before != self.check_after

    @property
    def check_flips(self) -> bool:
        return self.check_before != self.check_after

    def describe(self) -> str:
        """One line: the race, and what the other order did."""
        f, s = self.site.first, self.site.second
        where = f"{self.site.kernel}: {self.site.finding.category} {self.site.hazard} " \
                f"{f[0]}:{f[1]} -> {s[0]}:{s[1]}"
        if self.note:
            return f"{where}: not judged ({self.note})"
        changed = ", ".join(f"{n} element{'s' if n != 1 else ''} of '{name}'"
                            for name, n in self.changed.items()) or "no element"
        verdict = _verdict(self.check_before)
        check = (f"its own check {verdict} -> {_verdict(self.check_after)}"
                 if self.check_flips else f"its own check {verdict} either way")
        return f"{where}: the other order changes {changed}; {check}"


def _verdict(passed: bool) -> str:
    return "passes" if passed else "fails"


def assess(work: Callable[[], object], findings: list | None = None) -> list[RaceImpact]:
    """Run ``work`` (a callable that launches kernels and may raise: its own check) and judge
    each race finding of its launches (see the module docstring). ``findings``: the
    ``(launch index, kernel, Finding)`` to judge, when a run that found them has been made
    already; by default the baseline run's race findings."""
    base = _run(work, checks=True)
    sites = [RaceSite.of(i, k, f) for i, k, f in (findings if findings is not None
                                                  else base.race_findings())]
    sites = [s for s in sites if s is not None]
    if not sites:
        return []
    again = _run(work, checks=False)
    steady = {i for i, (a, b) in enumerate(zip(base.outputs, again.outputs)) if a == b}
    out = []
    for site in sites:
        if site.launch not in steady or site.launch >= len(base.outputs):
            out.append(RaceImpact(site, {}, base.passed, base.passed,
                                  note="the launch's outputs differ from run to run"))
            continue
        recorder = _Flip(site, plan=None)
        _run(work, checks=False, flip=recorder)
        if not recorder.events:
            out.append(RaceImpact(site, {}, base.passed, base.passed,
                                  note="the re-run did not reach the race's lines"))
            continue
        flipper = _Flip(site, plan=_plan(site, recorder.events))
        flipped = _run(work, checks=False, flip=flipper)
        if site.launch >= len(flipped.outputs):
            out.append(RaceImpact(site, {}, base.passed, flipped.passed,
                                  note="the flipped run stopped before the launch ended"))
            continue
        changed = _changed(base.outputs[site.launch], flipped.outputs[site.launch])
        out.append(RaceImpact(site, changed, base.passed, flipped.passed))
    return out


@dataclass
class _Outcome:
    passed: bool
    outputs: list  # per launch: {buffer name: (dtype, bytes)}
    reports: list

    def race_findings(self) -> list:
        return [(i, r.kernel, f) for i, r in enumerate(self.reports) for f in r.findings
                if f.category in RACE_CATEGORIES]


def _run(work: Callable[[], object], checks: bool, flip=None) -> _Outcome:
    """One quiet run of ``work`` from the fixed seed, its launches' GM outputs kept."""
    outputs: list = []
    counter = [0]

    def observers(launch):
        index = counter[0]
        counter[0] += 1
        return _Outputs(launch, outputs, flip if flip is not None and
                        index == flip.site.launch else None)

    saved = (SESSION.checks, SESSION.strict, SESSION.provenance)
    SESSION.checks, SESSION.strict, SESSION.provenance = checks, False, False
    SESSION.observer_factories.append(observers)
    _seed()
    passed = True
    try:
        with SESSION.collect() as run, contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            try:
                work()
            except SystemExit as exc:
                passed = exc.code in (None, 0)
            except Exception:  # noqa: BLE001 - the work's own check failing is an outcome
                passed = False
    finally:
        SESSION.observer_factories.remove(observers)
        SESSION.checks, SESSION.strict, SESSION.provenance = saved
    return _Outcome(passed, outputs, list(run.reports))


def _seed() -> None:
    random.seed(SEED)
    np.random.seed(SEED)
    import torch

    torch.manual_seed(SEED)


class _Outputs(Observer):
    """Per launch: the flip (if this is the race's launch) and, at its end, a copy of every
    GM buffer's bytes with the element type its argument has."""

    def __init__(self, launch, outputs: list, flip):
        self.launch, self.outputs, self.flip = launch, outputs, flip

    def on_wave_start(self, launch, cores) -> None:
        if self.flip is not None:
            for core in cores:
                self.flip.wrap(launch, core)

    def on_launch_end(self, launch) -> None:
        types = {name: _dtype_of(text) for name, text in launch.config.arguments}
        self.outputs.append({buf.name: (types.get(buf.name, np.dtype(np.uint8)),
                                        bytes(buf.data[:buf.nbytes]))
                             for buf in launch.memory.buffers if buf.touched})


def _dtype_of(text: str) -> np.dtype:
    """The element type of an argument description ``dtype[d0,...]`` (uint8 if unknown)."""
    name = text.split("[", 1)[0]
    try:
        if name == "bfloat16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(name)
    except TypeError:
        return np.dtype(np.uint8)


def _changed(before: dict, after: dict) -> dict[str, int]:
    """Elements that differ (bit for bit) per buffer between two launches' outputs."""
    out = {}
    for name, (dtype, data) in before.items():
        other = after.get(name)
        if other is None or other[1] == data:
            continue
        size = dtype.itemsize if len(data) % dtype.itemsize == 0 else 1
        a = np.frombuffer(data, np.uint8).reshape(-1, size)
        b = np.frombuffer(other[1], np.uint8).reshape(-1, size)
        if a.shape != b.shape:
            out[name] = max(a.shape[0], b.shape[0])
            continue
        n = int((a != b).any(axis=1).sum())
        if n:
            out[name] = n
    return out


@dataclass
class _Event:
    """One execution of a race line's record that touched the race's memory (recording run)."""

    role: str  # "first" or "second" (the race's earlier or later line)
    ordinal: int  # which execution of that line on that core
    core: int
    space: object  # the memory's key
    reads: np.ndarray  # byte indices
    writes: np.ndarray
    before: np.ndarray  # the written bytes before / after the write
    after: np.ndarray


#: A plan action: (when, byte indices, values, bytes the record itself writes).
#: "during": the values replace those bytes while the record runs, then the bytes come back;
#: "after": the values are stored once the record has run.


def _plan(site: RaceSite, events: list[_Event]) -> dict:
    """(role, core, ordinal) -> action for the flipped run (see the module docstring)."""
    plan: dict = {}
    same_line = site.first == site.second
    for i, event in enumerate(events):
        if site.hazard == "RAW" and (event.role == "second" or same_line):
            match = _nearest(events, i, -1, "first", event, event.reads, same_line)
            if match is not None:
                idx = np.intersect1d(event.reads, match.writes)
                plan[(event.role, event.core, event.ordinal)] = (
                    "during", idx, _values(match, idx, match.before), event.writes)
        elif site.hazard == "WAR" and (event.role == "first" or same_line):
            match = _nearest(events, i, +1, "second", event, event.reads, same_line)
            if match is not None:
                idx = np.intersect1d(event.reads, match.writes)
                plan[(event.role, event.core, event.ordinal)] = (
                    "during", idx, _values(match, idx, match.after), event.writes)
        elif site.hazard == "WAW" and (event.role == "second" or same_line):
            match = _nearest(events, i, -1, "first", event, event.writes, same_line)
            if match is not None:
                idx = np.intersect1d(event.writes, match.writes)
                plan[(event.role, event.core, event.ordinal)] = (
                    "after", idx, _values(match, idx, match.after), event.writes)
    return plan


def _nearest(events, i, step, role, event, touched, same_line):
    """The nearest event before (step -1) or after (+1) ``events[i]`` of ``role`` (of either
    role, on another core, when both accesses are one line) in the same memory whose writes
    overlap ``touched``."""
    j = i + step
    while 0 <= j < len(events):
        other = events[j]
        if (other.role == role or same_line) and other.space == event.space and \
                not (same_line and other.core == event.core) and \
                np.intersect1d(touched, other.writes).size:
            return other
        j += step
    return None


def _values(event: _Event, idx: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (one per byte of ``event.writes``) at byte indices ``idx``."""
    return values[np.searchsorted(event.writes, idx)]


class _Flip:
    """The re-simulation's hook on each core of the race's launch: its ``execute`` wrapped so
    that the records of the race's two lines are recorded (``plan`` None) or flipped."""

    def __init__(self, site: RaceSite, plan: dict | None):
        self.site = site
        self.plan = plan
        self.events: list[_Event] = []
        self.roles = {}
        self.roles.setdefault(site.first, "first")
        self.roles.setdefault(site.second, "second")
        self.counts: dict = {}

    def wrap(self, launch, core) -> None:
        execute = core.execute

        def flipped_execute(record):
            role = self.roles.get(getattr(record, "loc", None))
            if role is None:
                return execute(record)
            return self.step(launch, core, execute, record, role)

        core.execute = flipped_execute

    def memory(self, launch, core):
        """The race's memory as ``core`` sees it (None if it has no such buffer)."""
        kind, name = self.site.space
        if kind == "GM":
            return next((b for b in launch.memory.buffers if b.name == name), None)
        return core.mem.get(name)

    def step(self, launch, core, execute, record, role: str):
        key = (role, core.core_id)
        ordinal = self.counts[key] = self.counts.get(key, -1) + 1
        mem = self.memory(launch, core)
        if mem is None:
            return execute(record)
        if self.plan is None:
            return self._record(core, execute, record, role, ordinal, mem)
        action = self.plan.get((role, core.core_id, ordinal))
        if action is None:
            return execute(record)
        when, idx, values, own_writes = action
        data = mem.data
        if when == "during":
            current = data[idx].copy()
            data[idx] = values
            try:
                return execute(record)
            finally:
                keep = ~np.isin(idx, own_writes)
                data[idx[keep]] = current[keep]
        result = execute(record)
        data[idx] = values
        return result

    def _record(self, core, execute, record, role, ordinal, mem):
        data = mem.data
        snapshot = data.copy()
        start = len(core.instrs)
        result = execute(record)
        reads, writes = [], []
        for instr in core.instrs[start:]:
            reads.extend(instr.reads)
            writes.extend(instr.writes)
        r = _byte_index(reads, mem.key, data.size)
        w = _byte_index(writes, mem.key, data.size)
        if r.size or w.size:
            self.events.append(_Event(role, ordinal, core.core_id, mem.key, r, w,
                                      snapshot[w], data[w].copy()))
        return result


def _byte_index(records, key, size: int) -> np.ndarray:
    """Sorted byte indices of ``records`` (access records, :mod:`ascsim.sim.access`) in the
    memory ``key``, within its ``size`` bytes."""
    parts = []
    for record in records:
        if record[0] != key:
            continue
        lo, hi = record[1], record[2]
        if len(record) == 3:
            parts.append(np.arange(lo, hi))
        else:
            row, pitch = record[3], record[4]
            rows = (hi - lo - row) // pitch + 1
            parts.append((lo + pitch * np.arange(rows)[:, None] + np.arange(row)).ravel())
    if not parts:
        return np.zeros(0, dtype=np.int64)
    idx = np.unique(np.concatenate(parts))
    return idx[(idx >= 0) & (idx < size)]


def format_impacts(impacts: list[RaceImpact]) -> str:
    """The race-impact section of ``ascsim check``: harmful races first, then harmless ones,
    then those not judged."""
    groups = (("harmful races (the other order changes the result)", True),
              ("harmless races (both orders compute the same)", False),
              ("races not judged", None))
    out = []
    for title, verdict in groups:
        chosen = [i for i in impacts if i.harmful is verdict]
        if chosen:
            out.append(f"{title}:")
            out.extend(f"  {i.describe()}" for i in chosen)
    return "\n".join(out)
