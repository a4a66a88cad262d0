"""One kernel launch on the simulated device: builds the cores, runs them, collects the report.

Block layout follows the hardware: an AIV_ONLY (AIC_ONLY) launch of n blocks runs n AIVs (AICs);
a MIX launch of n blocks runs n groups of 1 AIC + 2 AIV, the AIVs numbered 2·i and 2·i+1. Blocks
beyond the physical core count run in later waves on the same cores. Cores that run at the same
time share the chip's GM bandwidth through the L2 model: each streams at its own L2 port rate, and
the launch's HBM traffic at the chip's HBM bandwidth bounds the launch time (see
:mod:`ascsim.sim.transfer` and :mod:`ascsim.sim.l2`).

What to launch is a :class:`LaunchConfig`; how to run it (checks, strict mode, observers) is a
:class:`LaunchOptions` the launcher passes in. The machine reads no process-wide settings.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ascsim.hw import SocSpec
from ascsim.isa.errors import KernelError
from ascsim.sim import execute as _execute  # noqa: F401 - fills Core.execute's dispatch table
from ascsim.sim import l2_carry
from ascsim.sim import wave as waves
from ascsim.sim.checks import KernelChecks
from ascsim.sim.core import PIPES, Core
from ascsim.sim.findings import FindingLog
from ascsim.sim.l2 import L2Cache
from ascsim.sim.memory import DeviceMemory, LocalMemory
from ascsim.sim.placements import Placements
from ascsim.sim.profile import build_profile
from ascsim.sim.report import CoreReport, KernelReport
from ascsim.sim.scheduler import Scheduler
from ascsim.sim.sync import CrossCoreState
from ascsim.sim.threads import launch_threads


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off.

    A launch keeps every instruction record (and its operands) until it ends, so each
    collection during the launch walks a growing set of objects that are all alive: measured on
    SwiGLU (2, 1024, 1024), young collections every 50 000 allocations (the previous policy;
    Python's default is every 700) still cost 0.25 s and the full collection they led to 0.8 s,
    of a 3.2 s run. The records hold no cycles; the few cycles a launch makes are collected
    after it, and the launcher drops the launch's records when it ends (``Launch.release``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()



KERNEL_KINDS = ("AIV_ONLY", "AIC_ONLY", "MIX")

#: Above how many cores per filled line (L2Cache.sharing) a launch is timed again with its
#: cores' shared HBM fills (Launch.run): below it, the first pass's HBM shares are within
#: a few per cent of the shared ones, and a second pass would cost a whole run.
SHARING_RETIME = 1.1

#: The machine's own wording of the advice that goes with its findings; a front-end passes its
#: own (``Launch(hints=...)``) so that the advice names its language's calls.
DEFAULT_HINTS = {
    "alignment": "start {space} operands on a {align}-byte boundary (offset views by whole "
                 "blocks)",
    "flag-set-twice": "wait for an event once before raising the same event id again",
    "flag-wait-unset": "raise event {event_id} from {src} to {dst} before waiting for it",
    "race-pipes": "order the {first} write and the {second} access with an event from {first} "
                  "to {second} (set after the first, wait before the second)",
    "race-cores": "give each core its own GM range, or combine the writes atomically",
    "race-cross-core": "raise a cross-core flag after the producer's copy-out and wait for it "
                       "before the consumer reads (or put a barrier of all cores between them)",
    "gate-held": "give every buffer back before the kernel returns",
    "cross-core-pending": "wait for the flag on the receiving core before setting it again",
    "deadlock": "every wait needs a matching set on another running core",
    "barrier-impossible": "launch at most as many blocks as the chip has cores when they meet "
                          "at a barrier, and have every core enter it with the same participants",
    "use-after-free": "take a new buffer for new data and stop using the old one once it is "
                      "given back",
    "view-superseded": "make views of a buffer again after it is placed again",
    "stale-read": "write every byte the instruction reads since the buffer was taken (or read "
                  "fewer elements)",
    "placement-overlap": "place the tensor outside the bytes the other owner holds",
    "placement-outside": "place the tensor inside the memory (address + size <= capacity)",
    "mutex-relock": "unlock a buffer token before the same pipe locks it again",
    "mutex-unlock": "unlock a buffer token on the pipe that locked it",
    "flag-wrong-id": "wait for the event id that the matching set raises",
    "cross-core-wrong-pipe": "raise the cross-core flag on {pipe}, the pipe whose write the "
                             "other core reads",
}


@dataclass(frozen=True, kw_only=True)
class LaunchConfig:
    """What to launch: ``block_num`` blocks of ``kind`` on ``soc``.

    ``vector_functions``: the kernel was compiled with its consecutive element-wise vector
    instructions fused into vector functions (pyasc's ``vf_fusion``); the machine prices such
    runs as one pass (:func:`ascsim.sim.exec_vector.execute_vector`). Only on a SoC that has
    vector functions (``vector_function_issue_width`` > 0)."""

    kernel: str
    soc: SocSpec
    block_num: int
    kind: str = "AIV_ONLY"
    vector_functions: bool = False
    #: The launch's memory arguments as (name, "dtype[d0,d1,...]") in call order
    #: (:func:`ascsim.sim.host.describe`): they go into the report, where a budget file
    #: (ascsim/budget.py) tells launches of one kernel on different shapes apart.
    arguments: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if self.block_num <= 0:
            raise ValueError(f"block_num must be positive, got {self.block_num}")
        if self.kind not in KERNEL_KINDS:
            raise ValueError(f"kernel kind must be one of {KERNEL_KINDS}, got {self.kind!r}")
        if self.vector_functions and not self.soc.timing.vector_function_issue_width:
            raise ValueError(f"kernel {self.kernel}: vf_fusion needs vector functions, which "
                             f"{self.soc.name} does not have (the Ascend950 does)")


@dataclass(frozen=True, kw_only=True)
class LaunchOptions:
    """How to run a launch, decided by whoever launches it (for pyasc kernels, the launcher,
    from the process's session settings).

    * ``checks``: run the dynamic kernel checks (:class:`ascsim.sim.checks.KernelChecks`) as the
      launch's first observer.
    * ``strict``: the first finding raises :class:`ascsim.sim.errors.CheckError`.
    * ``observers``: more observer factories, ``factory(launch)`` returning an observer (the
      hooks: :class:`ascsim.sim.observer.Observer`) or None; called in order while the launch
      is built, so every observer sees the whole launch.
    * ``keep``: the launch is kept after it ends (a trace reads its instructions). The launcher
      then leaves its GM buffers alone instead of handing their bytes back to the pool.
    * ``hints``: the front-end's wording of the advice that goes with the machine's findings,
      by finding kind (:data:`DEFAULT_HINTS` fills the rest).
    * ``timing_only``: the executors compute no values and move no bytes; timing, the L2 model
      and the address-level checks (bounds, alignment, races, uninitialised reads, gates) are
      exactly as in a full run. Scalar loads still read real values (kernels branch on them).
      The report says the outputs were not computed.
    * ``record_causes``: the cores record why each instruction started when it did and how
      long each wait held (:class:`ascsim.sim.causes.CausalCore`), for the critical path
      (:mod:`ascsim.sim.critical_path`); the timing is the same.
    * ``dropped_syncs``: (file, line) of synchronisation calls left out of the run (a what-if
      of deleting them, :mod:`ascsim.what_if`); needs no other option.
    * ``buffer_scale``: (file, line) of a queue's ``init_buffer`` -> how many times its buffer
      count to give it (the what-if of double buffering; the pyasc front-end reads it).
    """

    checks: bool = True
    strict: bool = False
    observers: tuple[Callable[[Launch], object], ...] = ()
    keep: bool = False
    hints: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    timing_only: bool = False
    #: ``off``, ``on`` or ``verify``: run the cores of a wave as one Python run where the
    #: kernel allows it (:mod:`ascsim.sim.wave`); ``verify`` also runs the launch per core
    #: and raises on any difference.
    waves: str = "off"
    record_causes: bool = False
    dropped_syncs: frozenset = frozenset()
    buffer_scale: Mapping[tuple[str, int], int] = field(
        default_factory=lambda: MappingProxyType({}))

    def __post_init__(self):
        if self.waves not in waves.MODES:
            raise ValueError(f"waves (ASCSIM_WAVES) must be one of {waves.MODES}, got "
                             f"{self.waves!r}")


def _block_cores(kind: str, block: int) -> list[tuple[str, int, int]]:
    """(core kind, block idx seen by that core, sub-block idx) for one launch block."""
    if kind == "AIV_ONLY":
        return [("AIV", block, 0)]
    if kind == "AIC_ONLY":
        return [("AIC", block, 0)]
    return [("AIC", block, 0), ("AIV", 2 * block, 0), ("AIV", 2 * block + 1, 1)]


class Launch:
    """Runs a kernel body on every core of a launch and produces a :class:`KernelReport`."""

    def __init__(self, config: LaunchConfig, memory: DeviceMemory,
                 options: LaunchOptions = LaunchOptions()):
        self.config = config
        self.options = options
        # No values computed, no bytes moved (LaunchOptions.timing_only): the executors ask this.
        self.values = not options.timing_only
        # Runs of element-wise vector instructions are priced as vector functions.
        self.vector_functions = config.vector_functions
        # The front-end's advice for the machine's findings, by finding kind (see :meth:`hint`).
        self.hints = {**DEFAULT_HINTS, **options.hints}
        self.soc = config.soc
        self.memory = memory
        self.kind = config.kind
        # The front-end's own per-launch bookkeeping (its frameworks' objects, registers, ...);
        # the machine's state has attributes of its own.
        self.shared: dict = {}
        # How many cores of each kind read each line one of them fills from HBM (L2Cache.
        # sharing), measured by the launch's first pass: their fills are one HBM stream, not
        # one each (sim/cost.py). Empty (1 for every kind) in the first pass.
        self.hbm_sharing: dict[str, float] = {}
        # Whether the front-end's console output is shown (not in the timing pass, which
        # runs the kernel a second time).
        self.quiet = False
        self.findings = FindingLog(strict=options.strict)
        self._begin(options.checks, options.observers)

    def _begin(self, checks: bool, observer_factories) -> None:
        """The state one pass of the launch builds up from nothing."""
        self.cores: list[Core] = []
        self.l2_cache: L2Cache | None = None  # made on the first GM transfer (see l2)
        # Cores of each kind in the wave running now: they share the chip's HBM bandwidth
        # (sim/cost.py), and the id of the wave's first core (L2Cache.sharing).
        self.wave_cores: dict[str, int] = {}
        self.wave_first_core = 0
        # Cycles each core (by id) has spent streaming bytes from HBM (its duty, sim/cost.py).
        self.hbm_cycles: dict[int, float] = {}
        # Cycle until which each core's share of HBM is taken by its earlier transfers: a
        # core's reads and write-backs take turns on it (sim/cost.py).
        self.hbm_free: dict[int, float] = {}
        # L2 lines each core has inserted and made dirty ([inserted, dirtied], by id), and the
        # lines inserted before the running wave: the write-back estimate of sim/cost.py.
        self.l2_lines: dict[int, list] = {}
        self.wave_l2_lines = 0
        # Cross-core flag counters and gathers, and every buffer gate made in the launch.
        self.cross_core = CrossCoreState()
        self.gates: list = []
        # Who holds which bytes of each local memory (front-ends register their placements).
        self.placements = Placements(self)
        self._partners: dict = {}  # (group, kind, sub-block) -> core, see partner()
        # Cross-core hand-offs for the trace: (src core id, src pipe, t_set, dst core id,
        # dst pipe, t_wait, loc), times in cycles. See :meth:`record_cross_edge`.
        self.cross_edges: list[tuple] = []
        # Instructions that ran in waves (sim/wave.py), and whether this pass runs waves.
        self.waved_instructions = 0
        self.waving = False
        # Built last: an observer may read any of the above from the launch it is given.
        self.observers: list = [KernelChecks(self)] if checks else []
        for factory in observer_factories:
            observer = factory(self)
            if observer is not None:
                self.observers.append(observer)

    def say(self, text: str) -> None:
        """Show a kernel's console output (its printf, dumps): the front-ends' debug calls
        print through here, so that the launch's timing pass does not print it again."""
        if not self.quiet:
            sys.stdout.write(text)
            sys.stdout.flush()

    def record_cross_edge(self, src_core, src_pipe: str, t_set: float, dst_core, dst_pipe: str,
                          t_wait: float, loc=None) -> None:
        """Record that ``dst_core``'s ``dst_pipe`` waited until ``t_wait`` (cycles) for what
        ``src_core``'s ``src_pipe`` signalled at ``t_set``; cores are Core objects or ids."""
        self.cross_edges.append((getattr(src_core, "core_id", src_core), src_pipe, float(t_set),
                                 getattr(dst_core, "core_id", dst_core), dst_pipe, float(t_wait),
                                 loc))

    @property
    def l2(self) -> L2Cache:
        """The launch's L2 model (made on the first GM transfer)."""
        if self.l2_cache is None:
            buffers = self.memory.buffers
            carry = l2_carry.active()
            prior = None
            if carry is not None:
                keys = self.memory.host_keys

                def prior(bid, n_lines):
                    return carry.prior(keys.get(bid), n_lines)
            self.l2_cache = L2Cache(self.soc.l2_bytes, lambda bid: buffers[bid].capacity,
                                    prior)
            self.l2_cache.wave_first = self.wave_first_core
        return self.l2_cache

    def ssbuf(self, core, loc):
        """The SSBuffer ``core`` addresses (see ``SocSpec.ssbuf_bytes``): in a MIX launch the
        one its AI Core's three cores share (it lives with the AIC), otherwise its own third.
        Made on first use."""
        size = self.soc.ssbuf_bytes
        if not size:
            raise KernelError(f"{self.soc.name} has no SSBuffer", loc)
        if self.kind == "MIX":
            owner = core if core.kind == "AIC" else self.partner(core, "AIC")
        else:
            owner, size = core, size // 3
        mem = owner.mem.get("SSBUF")
        if mem is None:
            mem = owner.mem["SSBUF"] = LocalMemory("SSBUF", size, owner.core_id)
        return mem

    def partner(self, core, kind: str, sub_block: int = 0):
        """The core of ``kind`` (the AIV of ``sub_block``) in ``core``'s group, or None."""
        key = (core.group, kind, sub_block if kind == "AIV" else 0)
        found = self._partners.get(key)
        if found is None:
            for other in self.cores:
                if (other.kind == kind and other.group == core.group
                        and (kind != "AIV" or other.sub_block_idx == sub_block)):
                    found = self._partners[key] = other
                    break
        return found

    def hint(self, kind: str, **fields) -> str:
        """The advice that goes with a finding of ``kind``, in the words of the front-end that
        launched the kernel (a pyasc hint names that language's event calls), with ``fields``
        filled in."""
        text = self.hints.get(kind, "")
        return text.format(**fields) if fields else text

    def blocks_per_wave(self) -> int:
        soc = self.soc
        per_kind = {"AIV_ONLY": soc.aiv_count, "AIC_ONLY": soc.aic_count, "MIX": soc.aic_count}
        return per_kind[self.kind]

    def run(self, body: Callable[[Core], None],
            reset: Callable[[], None] | None = None) -> KernelReport:
        """Run ``body(core)`` on every core and return the report.

        A wave whose cores read the same GM lines (L2Cache.sharing above
        :data:`SHARING_RETIME`) shares those lines' HBM fills, which the first pass, running
        the cores one after another, charges to whichever core came first: the launch is then
        timed again from the same inputs with the measured sharing (sim/cost.py), without
        values, checks or observers (a timing-only pass). The results, findings and console
        output are the first pass's; the times, profile and timelines the second's.
        ``reset()``: the front-end's own state, outside ``shared``, back to the start.
        """
        with launch_threads():  # see ascsim.sim.threads for why
            gm = self.memory.checkpoint()
            preset = dict(self.shared)
            mode = self.options.waves
            if mode == "off" or not waves.can_wave(self, body):
                return self._passes(body, reset, gm, preset)
            # What the launch's L2 starts from (l2_carry): a second run starts from it too.
            carry = l2_carry.active()
            preset_l2 = None if carry is None else dict(carry.lines)
            try:
                self.waving = True
                waved = self._passes(body, reset, gm, preset)
            except (Exception, waves.Diverged) as exc:  # the per-core run below tells which
                waves.remember(self, body, getattr(exc, "why", None) or repr(exc))
            else:
                if mode == "on":
                    return waved
                waved_gm = waves.gm_bytes(self.memory)
                self._restart(gm, reset, preset, carry, preset_l2)
                report = self._passes(body, reset, gm, preset)
                waves.compare(self.config.kernel, waved, report, waved_gm,
                             waves.gm_bytes(self.memory))
                report.waved_instructions = waved.waved_instructions
                return report
            self._restart(gm, reset, preset, carry, preset_l2)
            return self._passes(body, reset, gm, preset)

    def _passes(self, body, reset, gm, preset: dict) -> KernelReport:
        """The launch's first pass and, where its cores share HBM fills, its timing pass."""
        report = self._run(body)
        sharing = self._measured_sharing()
        if not sharing:
            return report
        return self._retime(body, reset, gm, preset, sharing, report)

    def _restart(self, gm, reset, preset: dict, carry, preset_l2) -> None:
        """Everything back to the start of the launch, for a run per core after a wave
        attempt (sim/wave.py): GM, the front-end's state, the L2 lines carried in."""
        if carry is not None:
            carry.lines = dict(preset_l2)
        self.release()
        gm.rewind()
        if reset is not None:
            reset()
        self.shared = dict(preset)
        self.hbm_sharing = {}
        self.values, self.quiet = not self.options.timing_only, False
        self.findings = FindingLog(strict=self.options.strict)
        self._begin(self.options.checks, self.options.observers)

    def _measured_sharing(self) -> dict[str, float]:
        """Per core kind, how many of the kind's cores of a wave read each line one of them
        filled (L2Cache.sharing), where that is more than :data:`SHARING_RETIME` and the
        kind ran more than one core at a time; empty when no kind qualifies."""
        cache = self.l2_cache
        if cache is None:
            return {}
        per_wave = self.blocks_per_wave()
        measured = {}
        for kind in ("AIC", "AIV"):
            ids = [core.core_id for core in self.cores if core.kind == kind]
            if min(len(ids), per_wave) < 2:
                continue
            shared_by = cache.sharing(ids)
            if shared_by > SHARING_RETIME:
                measured[kind] = shared_by
        return measured

    def _retime(self, body, reset, gm, preset: dict, sharing: dict,
                first: KernelReport) -> KernelReport:
        """The timing pass of :meth:`run`."""
        findings, values = self.findings, self.values
        self.release()  # the first pass's records and observers go now
        gm.rewind()
        if reset is not None:
            reset()
        self.shared = dict(preset)
        self.hbm_sharing = sharing
        self.values, self.quiet = False, True
        self.findings = FindingLog(strict=False)
        waving = self.waving
        self._begin(checks=False, observer_factories=())
        self.waving = waving
        try:
            report = self._run(body)
        finally:
            gm.keep_results()
            self.findings, self.values, self.quiet = findings, values, False
        report.findings = first.findings
        report.values_computed = first.values_computed
        return report

    def _run(self, body: Callable[[Core], None]) -> KernelReport:
        cfg = self.config
        wave = self.blocks_per_wave()
        previous_end: dict[int, float] = {}
        core_class = Core
        if self.options.record_causes or self.options.dropped_syncs:
            from ascsim.sim.causes import CausalCore as core_class
        for first in range(0, cfg.block_num, wave):
            blocks = range(first, min(first + wave, cfg.block_num))
            wave_cores = []
            for block in blocks:
                for slot, (kind, idx, sub) in enumerate(_block_cores(self.kind, block)):
                    physical = (block - first) * 3 + slot
                    core = core_class(self, len(self.cores), kind, idx, sub,
                                start_time=previous_end.get(physical, 0.0))
                    core.physical = physical
                    core.group = block
                    # Argument loading, TPipe set-up, tiling copy-in before the first API call.
                    core.scalar_work(self.soc.timing.kernel_start_cycles)
                    wave_cores.append(core)
                    self.cores.append(core)
            self.wave_cores = {}
            self.wave_first_core = wave_cores[0].core_id
            if self.l2_cache is not None:
                self.l2_cache.wave_first = self.wave_first_core
            self.wave_l2_lines = self.l2_cache.inserted if self.l2_cache is not None else 0
            for core in wave_cores:
                self.wave_cores[core.kind] = self.wave_cores.get(core.kind, 0) + 1
            for observer in self.observers:
                observer.on_wave_start(self, wave_cores)
            if self.waving:
                waves.Wave(self, wave_cores).run(body)
            else:
                Scheduler(wave_cores, body).run()
            for core in wave_cores:
                previous_end[core.physical] = core.end_time()
        for observer in self.observers:
            observer.on_launch_end(self)
        carry = l2_carry.active()
        if carry is not None and self.l2_cache is not None:
            carry.after_launch(self.l2_cache, self.memory.host_keys)
        return self._report()

    def release(self) -> None:
        """Drop the launch's instruction records and observers (after its report is made):
        they are then freed at once, by reference counting."""
        for observer in self.observers:
            release = getattr(observer, "release", None)
            if release is not None:
                release()
        self.observers = []
        for core in self.cores:
            core.instrs = []
            core.flag_edges = []
            core.release_memories()
        self.cross_edges = []

    def partial_report(self) -> KernelReport:
        """The report of a launch that stopped with an error: its findings and the timing of
        whatever ran before the error (``failed`` is set)."""
        report = self._report()
        report.failed = True
        return report

    def overhead_us(self) -> float:
        """The launch's device time outside its cores' timelines: the per-launch overhead and,
        for a MIX launch, the share of the full-core MIX head that its AI cores make up."""
        timing = self.soc.timing
        overhead = timing.launch_overhead_us
        if self.kind == "MIX" and timing.mix_launch_head_us:
            used = min(self.config.block_num, self.soc.aic_count) / self.soc.aic_count
            overhead += timing.mix_launch_head_us * used
        return overhead

    def _report(self) -> KernelReport:
        soc = self.soc
        overhead = self.overhead_us()
        core_reports = []
        bytes_moved: dict[str, int] = {}
        end = 0.0
        for core in self.cores:
            core_end = core.end_time()
            end = max(end, core_end)
            core_reports.append(CoreReport(
                core_id=core.core_id, kind=core.kind, block_idx=core.block_idx,
                start_us=soc.cycles_to_us(core.start_time), end_us=soc.cycles_to_us(core_end),
                pipe_busy_us={p: soc.cycles_to_us(core.busy[p]) for p in PIPES if core.busy[p]},
                instructions=len(core.instrs)))
            for path, n in core.bytes_moved.items():
                bytes_moved[path] = bytes_moved.get(path, 0) + n
        l2 = self.l2_cache
        if l2 is not None:
            # All cores together move no more than the chip's HBM bandwidth (sim/l2.py).
            end = max(end, l2.hbm_bound_cycles(soc.gm_bandwidth_bytes_per_cycle))
        return KernelReport(
            kernel=self.config.kernel, soc=soc.name, kernel_type=self.kind,
            block_num=self.config.block_num,
            device_time_us=soc.cycles_to_us(end) + overhead, launch_overhead_us=overhead,
            cores=core_reports, findings=list(self.findings), bytes_moved=bytes_moved,
            profile=build_profile(self, end), values_computed=self.values,
            arguments=tuple(self.config.arguments), waved_instructions=self.waved_instructions)
