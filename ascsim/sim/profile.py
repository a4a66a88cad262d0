"""Per-kernel profile in the spirit of msprof's pipeline detail, computed from a finished launch.

What it measures (all times in µs; "span" is the time the cores run, i.e. the kernel's device time
without the fixed launch overhead; achieved rates are taken over the span, as msprof takes them
over the AI Core time):

- per pipe (Scalar, Vector, Cube, MTE1, MTE2, MTE3, FixPipe): the busy time of the core busiest
  on that pipe and the mean over the cores of the kinds that have that pipe (Vector: AIV; Cube,
  MTE1, FixPipe: AIC; Scalar, MTE2, MTE3: both), each also as a share of the span. A core that
  runs several waves of blocks is one physical core: its waves' busy times add up.
- the bound (see :func:`classify_bound`),
- bytes moved per data path, GM bytes and the achieved GM bandwidth against the SoC's,
- cube FLOP/s against the cube peak and vector bytes/s against the vector peak, and a roofline
  point (:class:`Roofline`).

The work of an instruction is read from the instruction record it executed (``Instr.record``,
:mod:`ascsim.isa.instr`): an :class:`~ascsim.isa.instr.Mmad` did 2·m·n·k FLOPs of its input
dtype; a copy, fractal load or FixPipe moved its bytes along its path (:func:`instr_transfer`);
a vector instruction processed the bytes it wrote (its ``writes`` access records). A core
adds up its FLOPs and vector bytes as it places its instructions (:mod:`ascsim.sim.work`), so
the profile reads two totals per core rather than every instruction of the launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ascsim.hw.spec import PATH_PIPE, dtype_key
from ascsim.isa.instr import Copy, FixPipe, IndexedCopy
from ascsim.sim.core import PIPES
from ascsim.sim.report import PIPE_LABELS

# The work of one instruction (re-exported: the profile's definitions).
from ascsim.sim.work import DEFAULT_CUBE_DTYPE, instr_flops, instr_vector_bytes  # noqa: F401

BOUNDS = ("scalar", "vector", "cube", "memory", "launch")

#: Which bound each pipe stands for. FixPipe moves results out of L0C, so it is data movement.
PIPE_GROUP = MappingProxyType({
    "S": "scalar", "V": "vector", "M": "cube",
    "MTE1": "memory", "MTE2": "memory", "MTE3": "memory", "FIX": "memory",
})  # fmt: skip

#: Core kinds that have each pipe (split architecture): the population a pipe's mean is over.
PIPE_KINDS = MappingProxyType({
    "S": ("AIC", "AIV"), "V": ("AIV",), "M": ("AIC",), "MTE1": ("AIC",),
    "MTE2": ("AIC", "AIV"), "MTE3": ("AIC", "AIV"), "FIX": ("AIC",),
})  # fmt: skip

#: On equal shares the bound goes to the first of these: the data-path and compute units
#: before the scalar unit, whose time is mostly issuing the others' instructions.
TIE_ORDER = ("memory", "cube", "vector", "scalar")

#: Display order of data paths: the table order of :data:`PATH_PIPE` (MTE2, MTE3, MTE1, FixPipe).
PATH_ORDER = tuple(PATH_PIPE)

# Floating-point slack for "share <= 1" (busy and span are sums of float cycle counts).
_EPS = 1e-9


def _require(ok: bool, message: str, *args) -> None:
    """ValueError(``message.format(*args)``) unless ``ok``: the message is formatted only when
    it is raised (every launch's report builds these records, so the checks must cost little)."""
    if not ok:
        raise ValueError(message.format(*args) if args else message)


@dataclass(frozen=True, kw_only=True)
class PipeStat:
    """One pipe's busy time.

    Fields:
        pipe: pipe name ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX").
        max_us: busy µs of the core that is busiest on this pipe.
        max_share: ``max_us`` / span.
        mean_us: mean busy µs over the cores of the kinds that have this pipe.
        mean_share: ``mean_us`` / span.
        cores: how many (physical) cores the mean is over.
    """

    pipe: str
    max_us: float
    max_share: float
    mean_us: float
    mean_share: float
    cores: int

    def __post_init__(self):
        _require(self.pipe in PIPES, "unknown pipe {!r}", self.pipe)
        _require(0.0 <= self.mean_us <= self.max_us + _EPS,
                 "{}: need 0 <= mean_us <= max_us, got {}, {}", self.pipe, self.mean_us,
                 self.max_us)
        for name in ("max_share", "mean_share"):
            value = getattr(self, name)
            _require(0.0 <= value <= 1.0 + 1e-6, "{}: {} {} outside [0, 1]", self.pipe, name,
                     value)

    @property
    def label(self) -> str:
        return PIPE_LABELS[self.pipe]

    def to_json(self) -> dict:
        return {"pipe": self.pipe, "label": self.label, "max_us": self.max_us,
                "max_share": self.max_share, "mean_us": self.mean_us,
                "mean_share": self.mean_share, "cores": self.cores}


@dataclass(frozen=True, kw_only=True)
class Roofline:
    """A roofline point: work per GM byte against achieved work per second.

    For a kernel with cube work, work is FLOPs and the compute roof is the cube peak; otherwise
    work is bytes processed by vector instructions and the roof is the vector peak (256 B/cycle
    per AIV). The memory roof is the SoC's GM bandwidth.

    Fields:
        unit: "FLOP" or "B" (vector bytes).
        work: total work in ``unit``.
        gm_bytes: bytes moved to and from GM.
        intensity: ``work / gm_bytes``.
        achieved_per_s: ``work`` / span.
        peak_per_s: the compute roof.
        gm_peak_bytes_per_s: the memory roof.
    """

    unit: str
    work: float
    gm_bytes: int
    intensity: float
    achieved_per_s: float
    peak_per_s: float
    gm_peak_bytes_per_s: float

    def __post_init__(self):
        _require(self.unit in ("FLOP", "B"), "roofline unit must be FLOP or B, got {}", self.unit)
        _require(self.gm_bytes > 0, "a roofline point needs GM traffic")
        _require(self.peak_per_s > 0 and self.gm_peak_bytes_per_s > 0, "roofs must be positive")
        _require(self.work >= 0 and self.achieved_per_s >= 0, "work must be non-negative")

    @property
    def ridge(self) -> float:
        """Intensity where the memory roof meets the compute roof (``unit`` per GM byte)."""
        return self.peak_per_s / self.gm_peak_bytes_per_s

    @property
    def attainable_per_s(self) -> float:
        """What the roofline allows at this intensity: min(compute roof, intensity x GM BW)."""
        return min(self.peak_per_s, self.intensity * self.gm_peak_bytes_per_s)

    @property
    def regime(self) -> str:
        """"memory" left of the ridge, "compute" right of it."""
        return "memory" if self.intensity < self.ridge else "compute"

    def to_json(self) -> dict:
        return {"unit": self.unit, "work": self.work, "gm_bytes": self.gm_bytes,
                "intensity": self.intensity, "achieved_per_s": self.achieved_per_s,
                "peak_per_s": self.peak_per_s, "gm_peak_bytes_per_s": self.gm_peak_bytes_per_s,
                "ridge": self.ridge, "attainable_per_s": self.attainable_per_s,
                "regime": self.regime}


@dataclass(frozen=True, kw_only=True)
class KernelProfile:
    """The profile of one launch (see the module docstring for what each number means).

    Fields:
        total_us: device time (launch overhead + span).
        launch_overhead_us: the fixed per-launch cost included in ``total_us``.
        startup_us: fixed scalar start-up work of the busiest core (all its waves), part of its
            Scalar busy time; the bound rule counts it as a launch cost.
        span_us: time the cores run, from the first start to the last end.
        pipes: one :class:`PipeStat` per pipe, in :data:`PIPES` order.
        bound: one of :data:`BOUNDS`, by :func:`classify_bound`.
        bytes_by_path: bytes moved per data path ("GM->UB", "L1->L0A", ...).
        gm_bytes: bytes read from or written to GM.
        hbm_bytes: of those, the bytes that went between L2 and HBM (L2 misses and write-backs)
            when the launch has an L2 model; else ``gm_bytes``.
        gm_peak_bytes_per_s: the SoC's GM bandwidth.
        cube_flops: FLOPs of the cube instructions.
        cube_dtype: input dtype of most of those FLOPs (fp16 when there are none).
        cube_peak_flops_per_s: cube peak of the whole chip for ``cube_dtype``.
        cube_util: achieved fraction of the cube peak (per instruction dtype), over the span.
        vector_bytes: bytes processed by vector instructions.
        vector_peak_bytes_per_s: vector peak of the whole chip (AIV x 256 B/cycle x clock).
        aic_used, aiv_used: physical cores of each kind that ran.
        aic_count, aiv_count: the SoC's cores of each kind (the chip peaks count all of them).
        roofline: the roofline point, or None without GM traffic or work.
    """

    total_us: float
    launch_overhead_us: float
    span_us: float
    startup_us: float
    pipes: tuple[PipeStat, ...]
    bound: str
    bytes_by_path: Mapping[str, int]
    gm_bytes: int
    hbm_bytes: float
    gm_peak_bytes_per_s: float
    cube_flops: float
    cube_dtype: str
    cube_peak_flops_per_s: float
    cube_util: float
    vector_bytes: int
    vector_peak_bytes_per_s: float
    aic_used: int
    aiv_used: int
    aic_count: int
    aiv_count: int
    roofline: Roofline | None = field(default=None)

    def __post_init__(self):
        object.__setattr__(self, "pipes", tuple(self.pipes))
        object.__setattr__(self, "bytes_by_path", MappingProxyType(
            {str(p): int(n) for p, n in self.bytes_by_path.items()}))
        _require(self.bound in BOUNDS, "bound must be one of {}, got {!r}", BOUNDS, self.bound)
        _require(tuple(p.pipe for p in self.pipes) == PIPES, "pipes must list every pipe in order")
        _require(min(self.span_us, self.launch_overhead_us, self.startup_us, self.hbm_bytes) >= 0,
                 "times and byte counts must be >= 0")
        _require(abs(self.total_us - self.span_us - self.launch_overhead_us) < 1e-6,
                 "total_us must be span_us + launch_overhead_us")
        _require(self.gm_bytes == sum(n for p, n in self.bytes_by_path.items() if _touches_gm(p)),
                 "gm_bytes must be the sum of the GM paths")
        _require(self.gm_peak_bytes_per_s > 0 and self.cube_peak_flops_per_s > 0
                 and self.vector_peak_bytes_per_s > 0, "peaks must be positive")
        _require(0.0 <= self.cube_util <= 1.0 + 1e-6, "cube_util {} outside [0, 1]", self.cube_util)
        _require(0 <= self.aic_used <= self.aic_count and 0 <= self.aiv_used <= self.aiv_count,
                 "more cores used than the SoC has")

    # ------------------------------------------------------------------ derived rates
    def pipe(self, name: str) -> PipeStat:
        return self.pipes[PIPES.index(name)]

    @property
    def gm_bandwidth_bytes_per_s(self) -> float:
        """Achieved GM bandwidth: GM bytes / span."""
        return self.gm_bytes / (self.span_us * 1e-6) if self.span_us > 0 else 0.0

    @property
    def gm_util(self) -> float:
        """GM bandwidth / the SoC's; above 1 only when L2 hits serve part of the traffic."""
        return self.gm_bandwidth_bytes_per_s / self.gm_peak_bytes_per_s

    @property
    def hbm_us(self) -> float:
        """The least time the HBM traffic takes at the chip's whole HBM bandwidth."""
        return self.hbm_bytes / self.gm_peak_bytes_per_s * 1e6

    @property
    def cube_flops_per_s(self) -> float:
        return self.cube_flops / (self.span_us * 1e-6) if self.span_us > 0 else 0.0

    @property
    def vector_bytes_per_s(self) -> float:
        return self.vector_bytes / (self.span_us * 1e-6) if self.span_us > 0 else 0.0

    @property
    def vector_util(self) -> float:
        return self.vector_bytes_per_s / self.vector_peak_bytes_per_s

    @property
    def cube_util_used(self) -> float:
        """Cube utilisation of the AICs that ran (a 1-block kernel can reach 1/AIC of the chip)."""
        return self.cube_util * self.aic_count / self.aic_used if self.aic_used else 0.0

    @property
    def vector_util_used(self) -> float:
        """Vector utilisation of the AIVs that ran."""
        return self.vector_util * self.aiv_count / self.aiv_used if self.aiv_used else 0.0

    def to_json(self) -> dict:
        return {
            "total_us": self.total_us, "launch_overhead_us": self.launch_overhead_us,
            "span_us": self.span_us, "startup_us": self.startup_us, "bound": self.bound,
            "pipes": [p.to_json() for p in self.pipes],
            "bytes_by_path": dict(self.bytes_by_path), "gm_bytes": self.gm_bytes,
            "hbm_bytes": self.hbm_bytes, "hbm_us": self.hbm_us,
            "gm_bandwidth_bytes_per_s": self.gm_bandwidth_bytes_per_s,
            "gm_peak_bytes_per_s": self.gm_peak_bytes_per_s, "gm_util": self.gm_util,
            "cube_flops": self.cube_flops, "cube_dtype": self.cube_dtype,
            "cube_flops_per_s": self.cube_flops_per_s,
            "cube_peak_flops_per_s": self.cube_peak_flops_per_s, "cube_util": self.cube_util,
            "vector_bytes": self.vector_bytes, "vector_bytes_per_s": self.vector_bytes_per_s,
            "vector_peak_bytes_per_s": self.vector_peak_bytes_per_s,
            "vector_util": self.vector_util, "cube_util_used": self.cube_util_used,
            "vector_util_used": self.vector_util_used, "aic_used": self.aic_used,
            "aiv_used": self.aiv_used, "aic_count": self.aic_count, "aiv_count": self.aiv_count,
            "roofline": self.roofline.to_json() if self.roofline else None,
        }


# ---------------------------------------------------------------------- instruction work
def _touches_gm(path: str) -> bool:
    return "GM" in path.split("->")


def _copy_transfer(rec) -> tuple[str, int]:
    path = rec.path or f"{rec.src.mem.space}->{rec.dst.mem.space}"
    return path, rec.bursts.nbytes


def _indexed_transfer(rec) -> tuple[str, int]:
    return f"{rec.src.mem.space}->{rec.dst.mem.space}", rec.nbytes


def _fixpipe_transfer(rec) -> tuple[str, int]:
    if rec.src is None:  # block form: m x n elements of the result type
        path = rec.path or f"L0C->{rec.dst.mem.space}"
        return path, rec.m * rec.n * np.dtype(rec.dtype).itemsize
    return f"L0C->{rec.dst.mem.space}", rec.nd_num * rec.m * rec.n * rec.dst.dtype.itemsize


#: Record type -> (path, bytes) it moved.
TRANSFERS = {Copy: _copy_transfer, IndexedCopy: _indexed_transfer, FixPipe: _fixpipe_transfer}


def instr_transfer(instr) -> tuple[str, int] | None:
    """(path, bytes) of a data-movement instruction, else None."""
    decode = TRANSFERS.get(type(instr.record))
    return decode(instr.record) if decode is not None else None


def cube_peak_flops_per_s(soc, dtype: str) -> float:
    """Whole-chip cube peak: AIC x (16 x 16 x k_step[dtype]) MAC/cycle x 2 FLOP x clock."""
    cube = soc.cube
    key = dtype_key(dtype)
    k_step = cube.k_step.get(key, cube.k_step.get(DEFAULT_CUBE_DTYPE))
    macs = cube.m_step * cube.n_step * k_step
    return soc.aic_count * macs * 2.0 * soc.clock_mhz * 1e6


def vector_peak_bytes_per_s(soc) -> float:
    """Whole-chip vector peak: AIV x one 256-byte repeat per cycle x clock."""
    return soc.aiv_count * soc.vector_repeat_bytes * soc.clock_mhz * 1e6


# ---------------------------------------------------------------------- the bound
def classify_bound(pipes: tuple[PipeStat, ...], launch_overhead_us: float, hbm_us: float = 0.0,
                   span_us: float = 0.0, startup_us: float = 0.0) -> str:
    """The bound of a kernel, from its pipes' busiest-core busy times and its HBM time.

    ``startup_us`` is the fixed scalar work with which every core starts (argument loading,
    set-up; ``TimingParams.kernel_start_cycles`` per wave it runs): a cost of launching, not of
    the kernel's own code, so it is taken out of the Scalar busy time here.

    Rule:
    1. "launch" when the fixed costs (launch overhead + ``startup_us``) are longer than every
       pipe's busiest-core busy time and than ``hbm_us``: starting the kernel outweighs all the
       work on any unit.
    2. Otherwise each pipe counts for its group (:data:`PIPE_GROUP`: Scalar -> scalar, Vector
       -> vector, Cube -> cube, MTE1/MTE2/MTE3/FixPipe -> memory); a group's share is the
       largest ``max_share`` among its pipes (pipes of a group run in parallel, so the slowest
       one is the group's time). The memory share is at least ``hbm_us / span_us``, the share
       of the span the chip's HBM needs for the launch's traffic (the cores together can
       saturate HBM while no single core's MTE pipe is full). The bound is the group with the
       largest share; ties go to the first of :data:`TIE_ORDER` (memory, cube, vector, scalar).
    """
    def own_share(p: PipeStat) -> float:
        if p.pipe != "S" or startup_us <= 0:
            return p.max_share
        return max(0.0, p.max_us - startup_us) / span_us if span_us > 0 else 0.0

    def own_us(p: PipeStat) -> float:
        return max(0.0, p.max_us - startup_us) if p.pipe == "S" else p.max_us

    busiest = max((own_us(p) for p in pipes), default=0.0)
    if launch_overhead_us + startup_us > max(busiest, hbm_us):
        return "launch"
    share = dict.fromkeys(TIE_ORDER, 0.0)
    if span_us > 0:
        share["memory"] = hbm_us / span_us
    for p in pipes:
        group = PIPE_GROUP[p.pipe]
        share[group] = max(share[group], own_share(p))
    return max(TIE_ORDER, key=lambda g: (share[g], -TIE_ORDER.index(g)))


# ---------------------------------------------------------------------- building
def _physical_cores(cores) -> dict[tuple[str, int], list]:
    """Core records grouped by the physical core they ran on (waves of one core add up)."""
    groups: dict[tuple[str, int], list] = {}
    for core in cores:
        groups.setdefault((core.kind, getattr(core, "physical", core.core_id)), []).append(core)
    return groups


def _pipe_stats(soc, cores, span_cycles: float) -> tuple[PipeStat, ...]:
    # (kind, busy cycles per pipe) of each physical core: its waves' cores added up.
    busy = [(kind, group[0].busy if len(group) == 1
             else {p: sum(c.busy[p] for c in group) for p in PIPES})
            for (kind, _), group in _physical_cores(cores).items()]
    stats = []
    for pipe in PIPES:
        kinds = PIPE_KINDS[pipe]
        values = [b[pipe] for kind, b in busy if kind in kinds]
        top = max(values, default=0.0)
        mean = sum(values) / len(values) if values else 0.0
        mean = min(mean, top)  # float rounding of the mean must not exceed the max
        stats.append(PipeStat(
            pipe=pipe, max_us=soc.cycles_to_us(top), mean_us=soc.cycles_to_us(mean),
            max_share=top / span_cycles if span_cycles > 0 else 0.0,
            mean_share=mean / span_cycles if span_cycles > 0 else 0.0, cores=len(values)))
    return tuple(stats)


def _ordered_paths(bytes_by_path: Mapping[str, int]) -> dict[str, int]:
    rank = {p: i for i, p in enumerate(PATH_ORDER)}
    return {p: bytes_by_path[p]
            for p in sorted(bytes_by_path, key=lambda p: (rank.get(p, len(rank)), p))}


def build_profile(launch, end_cycles: float = 0.0) -> KernelProfile:
    """The :class:`KernelProfile` of a finished :class:`~ascsim.sim.launch.Launch`.

    ``end_cycles`` is the launch's end as the report has it, when something besides the cores'
    timelines (the chip's HBM bandwidth) makes it later than the last core's end.
    """
    soc = launch.soc
    cores = launch.cores
    span_cycles = max(end_cycles, max((c.end_time() for c in cores), default=0.0))
    span_us = soc.cycles_to_us(span_cycles)
    overhead = launch.overhead_us()
    pipes = _pipe_stats(soc, cores, span_cycles)
    physical = _physical_cores(cores)
    waves = max((len(group) for group in physical.values()), default=0)
    startup_us = soc.cycles_to_us(getattr(soc.timing, "kernel_start_cycles", 0) * waves)

    moved: dict[str, int] = {}
    for core in cores:
        for path, n in core.bytes_moved.items():
            # int(): counts may be kernel-side RuntimeInts, whose "/" divides like C.
            moved[path] = moved.get(path, 0) + int(n)
    moved = _ordered_paths(moved)
    gm_bytes = sum(n for p, n in moved.items() if _touches_gm(p))
    l2 = getattr(launch, "l2_cache", None)
    hbm_bytes = float(l2.hbm_bytes()) if l2 is not None else float(gm_bytes)
    hbm_us = hbm_bytes / soc.gm_bandwidth_bytes_per_s * 1e6

    # Each core's running totals (ascsim.sim.work.CoreWork): whole numbers, so adding them core
    # by core gives what adding every instruction's in launch order gives.
    flops_by_dtype: dict[str, float] = {}
    vector_bytes = 0
    for core in cores:
        work = core.work
        for dtype, flops in work.flops_by_dtype.items():
            flops_by_dtype[dtype] = flops_by_dtype.get(dtype, 0.0) + flops
        vector_bytes += work.vector_bytes
    cube_flops = sum(flops_by_dtype.values())
    cube_dtype = max(flops_by_dtype, key=flops_by_dtype.get) if cube_flops else DEFAULT_CUBE_DTYPE
    span_s = span_us * 1e-6
    # Mixed dtypes: the fraction of chip cube time their FLOPs needed at each dtype's own peak.
    cube_util = (sum(f / cube_peak_flops_per_s(soc, d) for d, f in flops_by_dtype.items())
                 / span_s) if span_s > 0 else 0.0

    cube_peak = cube_peak_flops_per_s(soc, cube_dtype)
    vector_peak = vector_peak_bytes_per_s(soc)
    gm_peak = soc.gm_bandwidth_bytes_per_s
    roofline = None
    if gm_bytes > 0 and span_s > 0 and (cube_flops > 0 or vector_bytes > 0):
        unit, work, peak = (("FLOP", cube_flops, cube_peak) if cube_flops > 0
                            else ("B", float(vector_bytes), vector_peak))
        roofline = Roofline(unit=unit, work=work, gm_bytes=gm_bytes, intensity=work / gm_bytes,
                            achieved_per_s=work / span_s, peak_per_s=peak,
                            gm_peak_bytes_per_s=gm_peak)

    return KernelProfile(
        total_us=span_us + overhead, launch_overhead_us=overhead, span_us=span_us,
        startup_us=startup_us, pipes=pipes,
        bound=classify_bound(pipes, overhead, hbm_us, span_us, startup_us),
        bytes_by_path=moved, gm_bytes=gm_bytes, hbm_bytes=hbm_bytes, gm_peak_bytes_per_s=gm_peak,
        cube_flops=cube_flops,
        cube_dtype=cube_dtype, cube_peak_flops_per_s=cube_peak, cube_util=min(cube_util, 1.0),
        vector_bytes=vector_bytes, vector_peak_bytes_per_s=vector_peak,
        aic_used=sum(1 for kind, _ in physical if kind == "AIC"),
        aiv_used=sum(1 for kind, _ in physical if kind == "AIV"), aic_count=soc.aic_count,
        aiv_count=soc.aiv_count, roofline=roofline)
