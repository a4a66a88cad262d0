"""Frozen parameter records describing one Ascend SoC for the machine and cost model.

Nothing here knows a particular chip: the numbers live in :mod:`ascsim.hw.socs`. Every record
is a frozen, keyword-only dataclass validated on construction, so a bad table entry fails at
import time rather than as a wrong cycle count later.

Units: sizes are bytes, rates are bytes per core-clock cycle, latencies are core-clock cycles,
clocks are MHz. Source tags ``[Sx]`` refer to ``shared/reference/ascend-hw.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Generic, Literal, TypeVar

V = TypeVar("V")

#: Every on-chip data path the model knows, spelled ``"SRC->DST"`` (§2.3 of the reference).
ALL_PATHS: frozenset[str] = frozenset(
    {
        "GM->L1", "GM->UB", "UB->GM", "GM->L0A", "GM->L0B", "L1->L0A", "L1->L0B", "L1->BT",
        "L1->FB", "L0C->GM", "L0C->L1", "L0C->UB", "UB->L1", "L1->UB", "L1->GM", "UB->UB",
        "L1->L0AMX", "L1->L0BMX",
    }
)  # fmt: skip

#: The pipe that executes each path (§2.3 [S1, S26]). L0C->UB is FixPipe on 3510 (on 310P it
#: would be PIPE_V, but 310P is not in the table). L1->GM's pipe is not documented; MTE3 is the
#: only pipe that writes GM from a local buffer, so it is assumed.
PATH_PIPE: Mapping[str, str] = MappingProxyType({
    "GM->L1": "MTE2", "GM->UB": "MTE2", "GM->L0A": "MTE2", "GM->L0B": "MTE2",
    "UB->GM": "MTE3", "UB->L1": "MTE3", "L1->GM": "MTE3",
    "L1->L0A": "MTE1", "L1->L0B": "MTE1", "L1->BT": "MTE1", "L1->UB": "MTE1",
    "L1->L0AMX": "MTE1", "L1->L0BMX": "MTE1",
    "L1->FB": "FIX", "L0C->GM": "FIX", "L0C->L1": "FIX", "L0C->UB": "FIX",
    "UB->UB": "V",
})  # fmt: skip

#: Buffer names used as keys of :attr:`SocSpec.alignment`.
#: The vector unit's addressing units, the same on every modelled SoC (ascend-hw §2.2): a
#: DataBlock of 32 bytes, a repeat of 8 DataBlocks, at most 255 repeats per instruction.
DATA_BLOCK_BYTES = 32
VECTOR_REPEAT_BYTES = 256
MAX_REPEAT_TIMES = 255

#: L0AMX / L0BMX are the 950's MX scale buffers beside L0A / L0B (the E8M0 scales of
#: ``mad_mx``; PyPTO Pro's ScaleLeft / ScaleRight, MemorySpace.md).
BUFFER_NAMES: frozenset[str] = frozenset({"UB", "L1", "L0A", "L0B", "L0C", "BT", "FB", "GM",
                                          "L0AMX", "L0BMX"})

#: Vector instruction classes every SoC must price (dtype-specific keys such as
#: ``"exp.float16"`` may be added on top; the bare name is the fallback).
REQUIRED_VECTOR_OPS: frozenset[str] = frozenset(
    {
        "add", "sub", "adds", "mul", "muls", "div", "max", "min", "maxs", "mins", "abs", "relu",
        "leaky_relu", "axpy", "exp", "ln", "sqrt", "rsqrt", "reciprocal", "cast", "duplicate",
        "copy", "compare", "select", "reduce", "reduce_max", "reduce_min",
    }
)  # fmt: skip

#: Spellings of dtype names accepted besides the numpy names.
DTYPE_ALIASES: Mapping[str, str] = MappingProxyType({
    "half": "float16", "fp16": "float16", "float": "float32", "fp32": "float32",
    "bf16": "bfloat16", "s8": "int8", "u8": "uint8",
})  # fmt: skip

CoreKind = Literal["aic", "aiv"]


def dtype_key(dtype: Any) -> str:
    """Canonical dtype name: accepts a string, a numpy dtype or a numpy scalar type."""
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if not isinstance(name, str):
        name = getattr(dtype, "__name__", str(dtype))
    name = name.lower()
    return DTYPE_ALIASES.get(name, name)


class FrozenMap(Mapping[str, V], Generic[V]):
    """A read-only, hashable, picklable ``str -> value`` mapping for the frozen records."""

    def __init__(self, data: Mapping[str, V] | None = None) -> None:
        self._data: dict[str, V] = dict(data or {})

    def __getitem__(self, key: str) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


def _freeze(obj: object, name: str) -> None:
    """Replace mapping field ``name`` of a frozen dataclass by a :class:`FrozenMap`."""
    value = getattr(obj, name)
    if not isinstance(value, FrozenMap):
        object.__setattr__(obj, name, FrozenMap(value))


def _require(ok: bool, owner: str, message: str) -> None:
    if not ok:
        raise ValueError(f"{owner}: {message}")


@dataclass(frozen=True, kw_only=True)
class VectorCost:
    """Cost of one vector instruction class, after Huawei's pypto CA model [S14].

    Fields:
        bytes_per_cycle: the instruction class's "parallel" rate, bytes of one operand
            processed per cycle (256 for a full-rate op; 64 or 128 for transcendental ops).
        latency: cycles from the end of issue until the result is ready in UB; pypto's
            ``delay + vecDelay`` with ``vecDelay = 15``.
        cycles_per_repeat_min: floor on issue cycles per repeat (default 1), so that many
            short repeats never cost less than one cycle each.
        throughput_factor: pypto's ``thrput`` multiplier on the issue time (default 1; the
            pypto table gives 7 for the full reductions vcmax/vcmin).
    """

    bytes_per_cycle: int
    latency: int
    cycles_per_repeat_min: int = 1
    throughput_factor: int = 1

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _require(self.bytes_per_cycle > 0, owner, "bytes_per_cycle must be > 0")
        _require(self.latency >= 0, owner, "latency must be >= 0")
        _require(self.cycles_per_repeat_min >= 1, owner, "cycles_per_repeat_min must be >= 1")
        _require(self.throughput_factor >= 1, owner, "throughput_factor must be >= 1")

    def cycles(self, repeats: int, bytes_per_repeat: int = 256) -> tuple[int, int]:
        """Return ``(issue_cycles, latency)`` for ``repeats`` repeats.

        ``issue = max(ceil(repeats * bytes_per_repeat / bytes_per_cycle) * throughput_factor,
        repeats * cycles_per_repeat_min)``, which with the default 256-byte repeat is exactly
        pypto's ``ceil(repeat * 256 / parallel) * thrput``.
        """
        if repeats < 0 or bytes_per_repeat < 0:
            raise ValueError(
                f"repeats and bytes_per_repeat must be >= 0, got {repeats}, {bytes_per_repeat}"
            )
        streamed = math.ceil(repeats * bytes_per_repeat / self.bytes_per_cycle)
        issue = max(streamed * self.throughput_factor, repeats * self.cycles_per_repeat_min)
        return issue, self.latency


@dataclass(frozen=True, kw_only=True)
class CubeCost:
    """Cost of one ``Mmad`` on the Cube unit, after the pypto CA model [S14].

    Fields:
        k_step: K elements consumed per cycle per 16x16 output fractal, keyed by input dtype
            name ("float16", "bfloat16", "float32", "int8", ...). 16 for fp16 means one
            16x16x16 MAC block per cycle [S3]; fp32 runs at a quarter of that [S10].
        startup_cycles: fixed cycles per Mmad (pypto's ``cubeStateLatency``).
        drain_cycles: cycles from an Mmad's last MAC block to its result in L0C (the cube
            pipeline's depth): the Mmad's latency. An Mmad issued while the one before is
            still draining overlaps its drain, so a run of back-to-back Mmads pays it once,
            and an Mmad that waits for its operands pays it whole (in the M pipe's busy time,
            which runs until the result is in L0C, and before whatever reads that result).
        m_step: output rows per fractal (16).
        n_step: output columns per fractal (16).
    """

    k_step: Mapping[str, int]
    startup_cycles: int
    drain_cycles: int = 0
    m_step: int = 16
    n_step: int = 16

    def __post_init__(self) -> None:
        owner = type(self).__name__
        _freeze(self, "k_step")
        _require(len(self.k_step) > 0, owner, "k_step must not be empty")
        _require(all(v > 0 for v in self.k_step.values()), owner, "k_step values must be > 0")
        _require(self.startup_cycles >= 0, owner, "startup_cycles must be >= 0")
        _require(self.drain_cycles >= 0, owner, "drain_cycles must be >= 0")
        _require(self.m_step > 0 and self.n_step > 0, owner, "m_step and n_step must be > 0")

    def mmad_cycles(self, m: int, n: int, k: int, dtype_name: Any) -> int:
        """Cycles of one Mmad: ``ceil(m/16) * ceil(n/16) * ceil(k/k_step) + startup``."""
        key = dtype_key(dtype_name)
        if key not in self.k_step:
            raise ValueError(
                f"no cube rate for input dtype {key!r}; known: {', '.join(sorted(self.k_step))}"
            )
        if min(m, n, k) < 0:
            raise ValueError(f"m, n, k must be >= 0, got {m}, {n}, {k}")
        blocks = math.ceil(m / self.m_step) * math.ceil(n / self.n_step)
        return blocks * math.ceil(k / self.k_step[key]) + self.startup_cycles


@dataclass(frozen=True, kw_only=True)
class Bandwidths:
    """Per-core peak transfer rates in bytes per cycle (the CANN ini's nominal values).

    A path's value is what its engine can move; whether the path exists on a SoC is
    :attr:`SocSpec.paths`, not this record. Transfers touching GM are further limited by the
    memory side (see :meth:`for_path`). The cost model (``ascsim/sim/cost.py``) streams
    every GM transfer at the L2 port rate (``l2_hit=True``: all GM traffic goes through L2) and
    bounds the launch's HBM traffic by :attr:`SocSpec.gm_bandwidth_bytes_per_cycle`
    (``gm_read`` x AIC count), the chip-wide share when many cores stream at once.

    Fields (bytes/cycle): gm_read, gm_write (HBM side, ini ``ddr_read/write_rate``);
    l2_read, l2_write (L2 side, ini ``l2_read/write_rate``); gm_to_l1, gm_to_ub (MTE2 ingest);
    ub_to_gm, l1_to_gm (MTE3 egress); l1_to_l0a, l1_to_l0b, l1_to_bt (MTE1); l1_to_fb,
    l0c_to_gm, l0c_to_l1, l0c_to_ub (FixPipe); l1_to_ub, ub_to_l1 (UB<->L1 channel);
    ub_to_ub (vector-pipe copy).
    """

    gm_read: float
    gm_write: float
    l2_read: float
    l2_write: float
    gm_to_l1: float
    gm_to_ub: float
    ub_to_gm: float
    l1_to_l0a: float
    l1_to_l0b: float
    l1_to_bt: float
    l1_to_fb: float
    l1_to_gm: float
    l0c_to_gm: float
    l0c_to_l1: float
    l0c_to_ub: float
    l1_to_ub: float
    ub_to_l1: float
    ub_to_ub: float

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            _require(value > 0, type(self).__name__, f"{f.name} must be > 0, got {value}")

    def for_path(self, path: str, *, l2_hit: bool = False) -> float:
        """Effective per-core rate of ``path``: its engine rate, capped by the GM side.

        GM->L0A/GM->L0B use the MTE2 ingest rate of GM->L1 (same engine, no separate figure).
        """
        if path not in _PATH_FIELD:
            raise ValueError(f"unknown path {path!r}; known: {', '.join(sorted(ALL_PATHS))}")
        rate: float = getattr(self, _PATH_FIELD[path])
        src, dst = path.split("->")
        if src == "GM":
            rate = min(rate, self.l2_read if l2_hit else self.gm_read)
        if dst == "GM":
            rate = min(rate, self.l2_write if l2_hit else self.gm_write)
        return rate


_PATH_FIELD: Mapping[str, str] = MappingProxyType({
    "GM->L1": "gm_to_l1", "GM->UB": "gm_to_ub", "GM->L0A": "gm_to_l1", "GM->L0B": "gm_to_l1",
    "UB->GM": "ub_to_gm", "L1->GM": "l1_to_gm", "L1->L0A": "l1_to_l0a", "L1->L0B": "l1_to_l0b",
    "L1->BT": "l1_to_bt", "L1->FB": "l1_to_fb", "L0C->GM": "l0c_to_gm", "L0C->L1": "l0c_to_l1",
    "L0C->UB": "l0c_to_ub", "L1->UB": "l1_to_ub", "UB->L1": "ub_to_l1", "UB->UB": "ub_to_ub",
    # No rate is published for the MX scale loads: they ride the MTE1 engine of L1->L0A/L0B
    # and are priced at its rate.
    "L1->L0AMX": "l1_to_l0a", "L1->L0BMX": "l1_to_l0b",
})  # fmt: skip
assert set(_PATH_FIELD) == ALL_PATHS


@dataclass(frozen=True, kw_only=True)
class TimingParams:
    """Model constants: numbers the cost model needs that no datasheet states.

    They start from Huawei's pypto CA-model settings [S14] or from the published kernel
    times in ``shared/reference/calibration.md`` and are meant to be calibrated; each field's
    comment in :mod:`ascsim.hw.socs` says where its value comes from.

    Fields:
        scalar_cycles_per_call: scalar-unit cycles to issue one API call (address arithmetic,
            parameter packing, dispatch to a pipe queue).
        scalar_cycles_per_loop_iter: scalar cycles of loop control per iteration of a kernel
            loop.
        scalar_cycles_per_queue_op: scalar cycles of one buffer-queue operation (TQue
            alloc/enque/deque/free: a flag set or wait and a pointer update).
        scalar_cycles_per_library_step: scalar cycles a high-level library routine (rmsnorm,
            swiglu, softmax, ...) spends on each further instruction it issues (its loop,
            address arithmetic and per-step parameters), beyond the call itself.
        scalar_ld_st_cycles: cycles of one ``get_value``/``set_value`` on a local tensor,
            including the pipe synchronisation the scalar access implies.
        mte2_startup_cycles, mte3_startup_cycles, mte1_startup_cycles,
        fixpipe_startup_cycles: fixed cycles per transfer instruction on that pipe, paid
            before bytes flow.
        gm_read_latency_cycles: cycles from a GM read request to the first data (HBM side).
        gm_write_latency_cycles: cycles from the last byte of a GM write to its completion.
        l2_hit_latency_cycles: GM read latency when L2 holds the data.
        flag_latency_cycles: cycles from ``set_flag`` in the source pipe to the waiting pipe
            seeing it.
        cross_core_flag_latency_cycles: same for ``cross_core_set_flag`` between cores.
        launch_overhead_us: fixed device time per kernel launch included in the reported
            device time (µs, not cycles: it is not paced by the AI Core clock).
        mix_launch_head_us: more device time of a MIX (AIC + AIV) launch on every AI core, on
            top of ``launch_overhead_us`` (µs): the AIC/AIV group set-up of a MIX launch. A
            launch on fewer AI cores pays the share of them it uses.
        vector_ub_bank_conflict_factor: multiplier (>= 1) on vector issue time to account
            for UB bank conflicts when they are not modelled explicitly.
        gm_misaligned_extra_bytes: bytes of transfer time a GM burst costs on top of its own
            when its GM start is not 32-byte aligned (the DMA issues one more request).
        fixpipe_gm_misaligned_row_factor: how many times its own transfer time a row that
            FixPipe writes from L0C to GM costs when its GM start is not 32-byte aligned (0:
            ``gm_misaligned_extra_bytes`` instead). FixPipe does not realign rows as the MTE
            DMA does: every 32-byte sector of such a row is written in two parts.
        pipe_queue_depth: instructions a pipe's issue queue holds before the scalar unit
            stalls.
        ub_bank_groups: UB bank groups a vector instruction's sources are read from, one
            ``ub_bank_row_bytes`` row per group per cycle (``ub_bank_group_reads_per_cycle``
            rows); consecutive rows lie in consecutive groups. 0: no bank-group rule.
        ub_bank_row_bytes: bytes of one UB bank row.
        ub_bank_group_reads_per_cycle: rows one bank group delivers per cycle.
        vector_function_issue_width: vector instructions a vector function (a fused group of
            element-wise instructions, pyasc's ``vf_fusion``) issues per cycle; 0: the SoC has
            no vector functions, and a kernel compiled with ``vf_fusion`` is refused.
        kernel_start_cycles: scalar cycles every core spends before the kernel body's first
            API call: loading the kernel arguments, TPipe/queue set-up, copying the tiling
            struct in.
        vector_step_cycles: bubble between two dependent vector instructions of a high-level
            API (the PIPE_V barrier's drain and the next instruction's dispatch), on top of the
            previous instruction's latency.
        burst_gap_cycles: extra cycles per additional burst of a multi-burst transfer.
        gm_to_l1_copy_cycles, gm_to_l1_row_cycles: the least MTE2 time of a GM->L1 transfer,
            ``gm_to_l1_copy_cycles + rows * gm_to_l1_row_cycles`` (rows: its bursts): the ND2NZ
            conversion has a cost per copy and moves narrow rows no faster than this however
            few bytes they hold. The floor holds for a run of back-to-back transfers as a
            whole, not for each one (0 and 0: no floor).
        matmul_k_step_scalar_cycles: the Matmul high-level API's own scalar work per K step of
            a base block (its loop, the L0A/L0B load and Mmad parameters, the flag waits it
            issues).
        matmul_l1_load_scalar_cycles: the same per GM->L1 slab load it issues (ND2NZ
            parameters, GM and L1 addresses, the L1 buffer rotation).
        matmul_const_tiling_scalar_share: the share of that bookkeeping left when the tiling
            is a compile-time constant (the tiling fields need not be loaded and checked).
        simt_warp_size: threads of one SIMT warp (0: the SoC has no SIMT unit, and a SIMT
            launch is refused).
        simt_warp_schedulers: warp schedulers of one AIV's SIMT unit: warp instructions it
            issues per cycle.
        simt_access_bytes: the SIMT unit's memory access granularity: one warp access costs
            one issue slot per segment of this many bytes its threads touch.
    """

    scalar_cycles_per_call: int
    scalar_cycles_per_loop_iter: int
    scalar_ld_st_cycles: int
    mte2_startup_cycles: int
    mte3_startup_cycles: int
    mte1_startup_cycles: int
    fixpipe_startup_cycles: int
    gm_read_latency_cycles: int
    gm_write_latency_cycles: int
    l2_hit_latency_cycles: int
    flag_latency_cycles: int
    cross_core_flag_latency_cycles: int
    launch_overhead_us: float
    mix_launch_head_us: float = 0.0
    vector_ub_bank_conflict_factor: float = 1.0
    gm_misaligned_extra_bytes: int = 0
    fixpipe_gm_misaligned_row_factor: float = 0.0
    pipe_queue_depth: int = 32
    ub_bank_groups: int = 0
    ub_bank_row_bytes: int = 32
    ub_bank_group_reads_per_cycle: int = 1
    vector_function_issue_width: int = 0
    kernel_start_cycles: int = 0
    vector_step_cycles: int = 0
    burst_gap_cycles: float = 1.0
    scalar_cycles_per_queue_op: int = 20
    scalar_cycles_per_library_step: int = 20
    gm_to_l1_copy_cycles: float = 0.0
    gm_to_l1_row_cycles: float = 0.0
    matmul_k_step_scalar_cycles: int = 0
    matmul_l1_load_scalar_cycles: int = 0
    matmul_const_tiling_scalar_share: float = 1.0
    simt_warp_size: int = 0
    simt_warp_schedulers: int = 0
    simt_access_bytes: int = 128

    def __post_init__(self) -> None:
        owner = type(self).__name__
        for f in fields(self):
            value = getattr(self, f.name)
            _require(value >= 0, owner, f"{f.name} must be >= 0, got {value}")
        _require(
            self.vector_ub_bank_conflict_factor >= 1.0,
            owner,
            "vector_ub_bank_conflict_factor must be >= 1",
        )
        _require(self.pipe_queue_depth >= 1, owner, "pipe_queue_depth must be >= 1")
        _require(self.ub_bank_groups >= 0, owner, "ub_bank_groups must be >= 0")
        _require(self.ub_bank_row_bytes > 0 and self.ub_bank_group_reads_per_cycle > 0, owner,
                 "ub_bank_row_bytes and ub_bank_group_reads_per_cycle must be > 0")
        _require(self.vector_function_issue_width >= 0, owner,
                 "vector_function_issue_width must be >= 0")
        _require(0 < self.matmul_const_tiling_scalar_share <= 1, owner,
                 "matmul_const_tiling_scalar_share must be in (0, 1]")


@dataclass(frozen=True, kw_only=True)
class SocSpec:
    """Everything the simulator needs to know about one SoC.

    Identity:
        name: SoC version string as CANN and pyasc spell it, e.g. "Ascend910B1".
        family: "Ascend910B", "Ascend910_93" or "Ascend950".
        npu_arch: ``__NPU_ARCH__`` (2201 for 910B/910_93, 3510 for 950).
        ccec_arch: compiler target, "dav-c220" or "dav-c310".

    Chip:
        aic_count: Cube cores (AIC), i.e. "AI Cores" in split mode.
        aiv_count: Vector cores (AIV); 2 per AIC on split architectures.
        cube_vector_split: True for the split (1 AIC : 2 AIV) architecture.
        clock_mhz: AI Core clock in MHz (ini ``cube_freq``; the vector clock is the same).
        hbm_bytes: device memory (GM) capacity in bytes.
        l2_bytes: L2 cache capacity in bytes.
        gm_bandwidth_bytes_per_cycle: whole-chip GM (HBM) bandwidth in bytes per core cycle,
            shared by all cores streaming at once.

    Per-core buffers (bytes): ub_bytes, l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes, bt_bytes,
    and fb_bytes (one entry per Fixpipe buffer fb0, fb1, ...).

    UB banking (for bank-conflict checks): ub_bank_groups, ub_banks_per_group, ub_bank_bytes.

    Data movement:
        paths: the data paths that exist, spelled as in :data:`ALL_PATHS`.
        alignment: required address alignment in bytes per buffer name (:data:`BUFFER_NAMES`);
            "GM" is 1 (no requirement).
        gm_recommended_alignment: GM address alignment in bytes for full transfer bandwidth.
        bw: per-core rates of the AIC (and of the AIV unless ``aiv_bw`` is given).
        aiv_bw: per-core rates of an AIV where the ini gives separate vector-core rates.

    Sync and vector shape:
        event_ids: hardware event ids per HardEvent (0..event_ids-1).
        cross_core_flag_ids: CrossCore flag ids per mode.
        ssbuf_bytes: the SSBuffer, a small scalar-accessed memory the AIC and AIVs of one
            AI Core share (0: none). In a MIX launch the three cores share all of it; in a
            single-kind launch each core has a third.
        data_block_bytes: bytes of one vector DataBlock (32).
        vector_repeat_bytes: bytes per vector repeat (8 DataBlocks).
        max_repeat_times: largest repeatTime of one vector instruction.

    Architecture capabilities (what front-ends and the machine test instead of ``npu_arch``):
        l0a_layout: fractal layout Mmad expects in L0A: "ZZ" (2201) or "NZ" (3510)
            (ascend-hw §2.2).
        l1_to_l0a_transpose: whether MTE1 can transpose on the way into L0A (not on 3510,
            ascend-hw §2.3).
        mte2_dn2nz: whether MTE2 converts DN (column-major) GM matrices to NZ in L1 (3510).
        load3d: whether MTE1 has the Load3D img2col instruction (2201 and 3510).
        load2d_v2: whether MTE1 takes the LoadData2DParamsV2 form (3510).
        vector_scatter: whether the vector unit has the scatter instruction (3510).
        fill_l1_only: whether ``init_const_value`` (Fill) reaches L1 only (3510's Fill page),
            rather than L1, L0A and L0B.
        aipp_destination: where ``load_image_to_local`` writes: "L1" (2201) or "UB" (3510).
        ub_access_watch: whether ``check_local_memory_ia`` (the UB access check) exists (its
            page excludes 3510).
        vf_registers: the register-level vector functions' register file, registers per kind
            (``vector``: 256-byte RegTensors, ``mask``, ``address``, ``unaligned``); empty
            when the SoC has no VF (RegBase) mode.
        vf_op_classes: VF instruction -> the vector cost class (a key of ``vector``) it is
            priced by, one 256-byte repeat each.

    Costs:
        vector: :class:`VectorCost` per instruction class, keyed "op" or "op.dtype".
        cube: :class:`CubeCost`.
        timing: :class:`TimingParams`.
    """

    name: str
    family: str
    npu_arch: int
    ccec_arch: str
    aic_count: int
    aiv_count: int
    clock_mhz: float
    hbm_bytes: int
    l2_bytes: int
    gm_bandwidth_bytes_per_cycle: float
    ub_bytes: int
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    bt_bytes: int
    fb_bytes: tuple[int, ...]
    ub_bank_groups: int
    ub_banks_per_group: int
    ub_bank_bytes: int
    paths: frozenset[str]
    alignment: Mapping[str, int]
    bw: Bandwidths
    vector: Mapping[str, VectorCost]
    cube: CubeCost
    timing: TimingParams
    aiv_bw: Bandwidths | None = None
    cube_vector_split: bool = True
    gm_recommended_alignment: int = 512
    event_ids: int = 8
    cross_core_flag_ids: int = 16
    ssbuf_bytes: int = 0
    data_block_bytes: int = DATA_BLOCK_BYTES
    vector_repeat_bytes: int = VECTOR_REPEAT_BYTES
    max_repeat_times: int = MAX_REPEAT_TIMES
    l0a_layout: Literal["ZZ", "NZ"] = "ZZ"
    l1_to_l0a_transpose: bool = True
    mte2_dn2nz: bool = False
    load3d: bool = True
    load2d_v2: bool = False
    vector_scatter: bool = False
    fill_l1_only: bool = False
    aipp_destination: Literal["L1", "UB"] = "L1"
    ub_access_watch: bool = True
    l0a_mx_bytes: int = 0
    l0b_mx_bytes: int = 0
    vf_registers: Mapping[str, int] = field(default_factory=dict)
    vf_op_classes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        owner = f"SocSpec {self.name!r}"
        _freeze(self, "alignment")
        _freeze(self, "vector")
        _freeze(self, "vf_registers")
        _freeze(self, "vf_op_classes")
        unknown_classes = set(self.vf_op_classes.values()) - {
            k.split(".")[0] for k in self.vector}
        _require(not unknown_classes, owner,
                 f"vf_op_classes name cost classes the vector table lacks: "
                 f"{sorted(unknown_classes)}")
        object.__setattr__(self, "paths", frozenset(self.paths))
        object.__setattr__(self, "fb_bytes", tuple(self.fb_bytes))
        _require(
            bool(self.name) and bool(self.family) and bool(self.ccec_arch),
            owner,
            "name, family and ccec_arch must be non-empty",
        )
        positive = (
            "npu_arch", "aic_count", "aiv_count", "clock_mhz", "hbm_bytes", "l2_bytes",
            "gm_bandwidth_bytes_per_cycle", "ub_bytes", "l1_bytes", "l0a_bytes", "l0b_bytes",
            "l0c_bytes", "bt_bytes", "ub_bank_groups", "ub_banks_per_group", "ub_bank_bytes",
            "gm_recommended_alignment", "event_ids", "cross_core_flag_ids", "data_block_bytes",
            "vector_repeat_bytes", "max_repeat_times",
        )  # fmt: skip
        for name in positive:
            value = getattr(self, name)
            _require(value > 0, owner, f"{name} must be > 0, got {value}")
        _require(
            len(self.fb_bytes) > 0 and all(b > 0 for b in self.fb_bytes),
            owner,
            f"fb_bytes must be non-empty and positive, got {self.fb_bytes}",
        )
        if self.cube_vector_split:
            _require(
                self.aiv_count == 2 * self.aic_count,
                owner,
                f"split architecture needs aiv_count == 2 * aic_count, got "
                f"{self.aiv_count} AIV for {self.aic_count} AIC",
            )
        unknown = self.paths - ALL_PATHS
        _require(not unknown, owner, f"unknown paths {sorted(unknown)}")
        _require(
            set(self.alignment) == BUFFER_NAMES,
            owner,
            f"alignment must have exactly the keys {sorted(BUFFER_NAMES)}",
        )
        for buf, align in self.alignment.items():
            _require(
                align > 0 and align & (align - 1) == 0,
                owner,
                f"alignment[{buf!r}] must be a power of two, got {align}",
            )
        missing = REQUIRED_VECTOR_OPS - set(self.vector)
        _require(not missing, owner, f"vector table lacks fallback entries {sorted(missing)}")

    def __hash__(self) -> int:
        # The mapping fields make the generated field-wise hash costly; identity fields are
        # enough to spread specs over buckets (equal specs still hash equal).
        return hash((self.name, self.family, self.clock_mhz, self.aic_count))

    # --- clock conversions -------------------------------------------------------------

    @property
    def cycle_ns(self) -> float:
        """Length of one AI Core cycle in nanoseconds."""
        return 1000.0 / self.clock_mhz

    def cycles_to_us(self, cycles: float) -> float:
        """Convert AI Core cycles to microseconds."""
        return cycles / self.clock_mhz

    def us_to_cycles(self, us: float) -> float:
        """Convert microseconds to (fractional) AI Core cycles."""
        return us * self.clock_mhz

    @property
    def gm_bandwidth_bytes_per_s(self) -> float:
        """Whole-chip GM bandwidth in bytes per second."""
        return self.gm_bandwidth_bytes_per_cycle * self.clock_mhz * 1e6

    # --- lookups -------------------------------------------------------------------------

    @property
    def fixpipe_buffer_bytes(self) -> int:
        """The fixpipe buffers (fb0, fb1, ...) as one address space of the AIC (FB)."""
        return sum(self.fb_bytes)

    @property
    def arch_version(self) -> int:
        """The ``__NPU_ARCH__`` number a kernel can query (``get_arch_version``)."""
        return self.npu_arch

    def has_path(self, path: str) -> bool:
        """Whether data path ``path`` (e.g. "L0C->UB") exists on this SoC."""
        if path not in ALL_PATHS:
            raise ValueError(f"unknown path {path!r}; known: {', '.join(sorted(ALL_PATHS))}")
        return path in self.paths

    def core_bw(self, kind: CoreKind) -> Bandwidths:
        """Per-core rates of an AIC (``"aic"``) or an AIV (``"aiv"``)."""
        if kind == "aic":
            return self.bw
        if kind == "aiv":
            return self.aiv_bw if self.aiv_bw is not None else self.bw
        raise ValueError(f"core kind must be 'aic' or 'aiv', got {kind!r}")

    def vector_cost(self, op: str, dtype_name: Any) -> VectorCost:
        """Cost of vector op ``op`` on ``dtype_name``: "op.dtype" if listed, else "op"."""
        specific = f"{op}.{dtype_key(dtype_name)}"
        if specific in self.vector:
            return self.vector[specific]
        if op in self.vector:
            return self.vector[op]
        known = sorted({key.split(".", 1)[0] for key in self.vector})
        raise ValueError(
            f"{self.name}: no vector cost for op {op!r}; known ops: {', '.join(known)}"
        )
