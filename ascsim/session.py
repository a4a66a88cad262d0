"""The run state of the process: which machine is simulated, how launches run, who keeps reports.

pyasc keeps the SoC choice in its runtime library (``rt.set_soc_version``); ascsim keeps it in
:data:`SESSION`, so that the host tiling API, the runtime shim and the launchers all agree on one
machine. The session also holds the run options every launch gets (strict mode, the dynamic
checks, extra observers); a launcher turns them into a :class:`ascsim.sim.launch.LaunchOptions`
(:meth:`Session.launch_options`) and hands that to the machine, which never reads the session.

Reports are kept only where someone asked for them. A launch returns its report, and the
operators return theirs in their info, so a library user needs no history: the session keeps
just the latest report (:attr:`Session.last_report`, for the runtime's elapsed-time query). A
caller that wants every report of a stretch of work — ``ascsim run`` prints all of a script's
launches, the demo writes one trace for all of them — opens a collector::

    with SESSION.collect(launches=True) as run:
        run_script(path, args)
    print_reports(run.reports); write_trace(path, run.launches, run.reports)

Collectors nest; each receives the launches made while it is open, and none outlives its block.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import MappingProxyType

from ascsim.hw import DEFAULT_SOC, SocSpec, get_soc
from ascsim.sim.launch import Launch, LaunchOptions
from ascsim.sim.provenance import writer_log
from ascsim.sim.report import KernelReport


@dataclass(eq=False)  # collectors are told apart by identity (see Session.collect)
class Collection:
    """The reports of every launch made while a collector was open, in launch order, and the
    launches themselves when ``keep_launches`` (a trace needs their instructions; a kept
    launch's GM is not handed back to the byte pool)."""

    keep_launches: bool = False
    reports: list[KernelReport] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)


class Session:
    """The settings every launch gets, the simulated SoC and backend, and the open collectors.

    Attributes set freely by callers:

    * ``strict``: the first finding of a launch raises (``ascsim check --strict``).
    * ``checks``: run the dynamic kernel checks (races, uninitialised reads, ...); benchmarks
      turn them off to measure their cost.
    * ``observer_factories``: more launch observers, as callables ``factory(launch)`` returning
      an observer or None, called when each launch is built (after the checks).
    * ``timing_only``: launches are timed and checked at the address level but compute no
      values (``ascsim run --timing-only``; ``ASCSIM_TIMING_ONLY=1`` sets it at start-up).
    * ``waves``: ``off``, ``on`` or ``verify`` (``ASCSIM_WAVES`` sets it at start-up): run a
      wave of cores as one Python run where the kernel allows it (:mod:`ascsim.sim.wave`).
    * ``provenance``: launches keep who wrote each GM element (:mod:`ascsim.sim.provenance`),
      which a failed comparison of an output then explains (:mod:`ascsim.explain`); on under
      ``ascsim run`` / ``check``, ``ASCSIM_PROVENANCE=1`` sets it at start-up.
    * ``record_causes``, ``dropped_syncs``, ``buffer_scale``: the critical path's recording
      and the what-if changes (``ascsim run --critical-path / --what-if``), as in
      :class:`~ascsim.sim.launch.LaunchOptions`.
    """

    def __init__(self) -> None:
        # A program may select SoCs and launch from several threads: the SoC, backend and
        # collector fields change under a lock.
        self._lock = threading.Lock()
        self._soc: SocSpec | None = None
        self._backend = "Model"
        # The SoC asked for on the command line (``ascsim run -v``); scripts that call
        # ``set_platform(backend)`` without a platform get this one.
        self._requested = DEFAULT_SOC
        # Whether a SoC was chosen (by a script, the command line or ASCSIM_SOC): a front-end
        # whose language runs on one family only (PyPTO Pro: the 950) picks its default then.
        self._chosen = False
        self.strict = False
        self.checks = True
        self.timing_only = os.environ.get("ASCSIM_TIMING_ONLY", "") not in ("", "0")
        self.waves = os.environ.get("ASCSIM_WAVES", "") or "off"
        self.observer_factories: list[Callable] = []
        self.provenance = os.environ.get("ASCSIM_PROVENANCE", "") not in ("", "0")
        self.record_causes = False
        self.dropped_syncs: frozenset = frozenset()
        self.buffer_scale: dict = {}
        self.last_report: KernelReport | None = None
        self._collectors: list[Collection] = []

    # ------------------------------------------------------------------ the simulated SoC
    @property
    def soc(self) -> SocSpec:
        """The SoC being simulated (Ascend910B1 unless a script or the runner chose another)."""
        with self._lock:
            if self._soc is None:
                self._soc = get_soc(DEFAULT_SOC)
            return self._soc

    def set_soc(self, name_or_spec: str | SocSpec) -> SocSpec:
        """Select the simulated SoC by name (``"Ascend910B4"``) or by spec; returns the spec."""
        spec = name_or_spec if isinstance(name_or_spec, SocSpec) else get_soc(name_or_spec)
        with self._lock:
            self._soc = spec
            self._chosen = True
        return spec

    def prefer_soc(self, name: str) -> SocSpec:
        """Simulate ``name`` unless a SoC was chosen already (``ASCSIM_SOC``, ``ascsim run
        --soc`` / ``-v``, or the script); returns the SoC now simulated."""
        env = os.environ.get("ASCSIM_SOC")
        with self._lock:
            chosen = self._chosen
        if chosen:
            return self.soc
        if env:
            return self.request_soc(env)
        spec = get_soc(name)
        with self._lock:
            self._soc = spec
            self._requested = spec.name
        return spec

    @contextlib.contextmanager
    def using_soc(self, name_or_spec: str | SocSpec | None) -> Iterator[SocSpec]:
        """Simulate ``name_or_spec`` (the current SoC when None) inside the block, then restore
        the SoC that was selected before."""
        previous = self.soc
        spec = previous if name_or_spec is None else self.set_soc(name_or_spec)
        try:
            yield spec
        finally:
            self.set_soc(previous)

    @contextlib.contextmanager
    def values(self, computed: bool) -> Iterator[None]:
        """Launches inside the block compute values (True) or are timing-only (False)."""
        previous, self.timing_only = self.timing_only, not computed
        try:
            yield
        finally:
            self.timing_only = previous

    @property
    def requested_soc(self) -> str:
        """The SoC asked for on the command line, the default for scripts that name none."""
        with self._lock:
            return self._requested

    def request_soc(self, name: str) -> SocSpec:
        """Make ``name`` the default SoC (and the current one) for scripts run by the runner."""
        spec = get_soc(name)
        with self._lock:
            self._soc = spec
            self._requested = spec.name
            self._chosen = True
        return spec

    @property
    def backend(self) -> str:
        """The backend a script selected (``"Model"``, or ``"NPU"``, which runs on the simulated
        chip too)."""
        with self._lock:
            return self._backend

    def set_backend(self, name: str) -> None:
        with self._lock:
            self._backend = name

    # ------------------------------------------------------------------ launches
    def launch_options(self) -> LaunchOptions:
        """The options of the next launch, from the current settings and open collectors."""
        with self._lock:
            keep = any(c.keep_launches for c in self._collectors)
        observers = tuple(self.observer_factories)
        if self.provenance:
            observers += (writer_log,)
        return LaunchOptions(checks=self.checks, strict=self.strict, observers=observers,
                             keep=keep, timing_only=self.timing_only, waves=self.waves,
                             record_causes=self.record_causes,
                             dropped_syncs=self.dropped_syncs,
                             buffer_scale=MappingProxyType(dict(self.buffer_scale)))

    def record(self, report: KernelReport, launch: Launch) -> None:
        """A launch ended (or failed with ``report`` partial): hand it to the open collectors."""
        with self._lock:
            self.last_report = report
            for collection in self._collectors:
                collection.reports.append(report)
                if collection.keep_launches:
                    collection.launches.append(launch)

    @contextlib.contextmanager
    def collect(self, *, launches: bool = False) -> Iterator[Collection]:
        """Keep the report (and with ``launches`` the launch) of every launch made inside the
        block, in the :class:`Collection` it yields."""
        collection = Collection(keep_launches=launches)
        with self._lock:
            self._collectors.append(collection)
        try:
            yield collection
        finally:
            with self._lock:
                self._collectors.remove(collection)


SESSION = Session()

__all__ = ["SESSION", "Collection", "Session"]
