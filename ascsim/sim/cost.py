"""The machine's one cost model: what each instruction record costs, in core cycles.

:func:`cost_table` compiles the SoC table (:mod:`ascsim.hw`) once per SoC into a
:class:`CostTable` that the executors ask:

* **vector** -- ``busy = max(ceil(repeats * bytes_per_repeat / bytes_per_cycle) *
  throughput_factor, repeats * cycles_per_repeat_min) * vector_ub_bank_conflict_factor``, and the
  op's ``latency`` (``VectorCost.cycles``); a chain of dependent steps (a library routine) adds
  each step's issue time, the previous step's latency and ``vector_step_cycles``.
* **transfer** (MTE1, MTE2, MTE3, FixPipe) -- ``busy = startup(pipe) + nbytes / rate + (bursts -
  1) * burst_gap`` occupies the pipe; the result is ready ``latency`` cycles later.

  - ``rate`` is the path's per-core engine rate from the SoC table (ini ``*_rate``). A path that
    reads or writes GM is further capped by the core's L2 port (ini ``l2_read_rate`` /
    ``l2_write_rate`` [S7]): all MTE traffic to GM goes through L2 [S1], so a core streams at its
    L2 port rate whether the lines hit or are being filled from HBM. What HBM limits is the chip
    as a whole: the launch's HBM traffic (read misses, writes L2 cannot keep) at the chip's HBM
    bandwidth bounds the launch time (see :mod:`ascsim.sim.l2` and ``Launch._report``). That is
    how the GM bandwidth is shared by the cores running at once: each core at its port rate, all
    of them together no faster than HBM.
  - A GM burst whose first byte is not 32-byte aligned costs ``gm_misaligned_extra_bytes``
    more bytes of transfer time (one more DMA request) [S17].
  - The bytes a read brings from HBM (whole 512-byte lines, :mod:`ascsim.sim.l2`) stream at
    the core's share of HBM: the chip's HBM bandwidth divided by the cores streaming at the
    same time (and for a vector core at most the AIC's ini ``ddr_read_rate``), estimated from
    the core's own fraction of time with a request in HBM, latency included
    (:meth:`CostTable.hbm_share`).
  - HBM carries writes too: the dirty lines a transfer's insertions evict from a full L2, and
    bypassed writes, go to HBM in the same share as the core's line fills
    (:meth:`CostTable.hbm_cycles`, :func:`_writeback`); a core's transfers take turns on its
    share (:func:`_book_hbm`).
  - ``latency`` for a GM read is the L2 hit latency when every line is already in L2 and the
    HBM read latency when some line is read for the first time (:meth:`L2Cache.read`), asked at
    the instruction's true start; for a GM write it is the write-completion latency. Paths
    between local buffers have no latency beyond their startup.
  - A GM->L1 transfer takes at least ``gm_to_l1_copy_cycles + rows * gm_to_l1_row_cycles``
    (rows: its bursts): the ND2NZ conversion has a cost per copy and moves narrow rows no
    faster than that, whatever their bytes cost. The floor holds for a run of back-to-back
    copies as a whole (:func:`copy_floor_wait`): a copy that waits on HBM beyond its floor
    lets the next ones catch up.
* **cube** -- ``CubeCost.mmad_cycles``; FixPipe cannot outrun its L0C read port
  (``L0C->L1`` rate of the AIC).
* **Matmul API bookkeeping** (:class:`~ascsim.isa.instr.MatmulBookkeeping`) -- scalar cycles
  per K step and per GM->L1 slab load (``matmul_*_scalar_cycles``), a share of them with a
  constant tiling.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ascsim.hw import SocSpec
from ascsim.hw.spec import BUFFER_NAMES, PATH_PIPE
from ascsim.isa.instr import MATMUL_EVENTS
from ascsim.isa.operands import REPEAT_BYTES, required_alignment
from ascsim.sim.l2 import LINE_BYTES

#: The TimingParams field with each pipe's fixed start-up cycles per transfer instruction.
STARTUP_FIELD = {"MTE1": "mte1_startup_cycles", "MTE2": "mte2_startup_cycles",
                 "MTE3": "mte3_startup_cycles", "FIX": "fixpipe_startup_cycles"}

#: Paths whose transfers take at least ``head + rows * row`` cycles (rows: bursts), as the
#: TimingParams fields (head, row): the ND2NZ conversion of GM->L1.
COPY_FLOOR_FIELDS = {"GM->L1": ("gm_to_l1_copy_cycles", "gm_to_l1_row_cycles")}

#: The TimingParams field with the scalar cycles of each Matmul API bookkeeping event.
MATMUL_SCALAR_FIELD = {"k_step": "matmul_k_step_scalar_cycles",
                       "l1_load": "matmul_l1_load_scalar_cycles"}
assert set(MATMUL_SCALAR_FIELD) == set(MATMUL_EVENTS)

#: A GM burst starting off this boundary pays ``gm_misaligned_extra_bytes`` [S17].
MISALIGN_BYTES = 32

#: Distinct (op, type, repeats) combinations a table remembers before it starts afresh; kernels
#: issue the same few over and over, so this only bounds pathological kernels.
VECTOR_CACHE_LIMIT = 1 << 14


class PathCost:
    """What the cost of a transfer on one path of one kind of core depends on, read from the SoC
    table once: the pipe, its start-up cycles, the per-core rate (capped by the L2 port when
    one side is GM) and the timing constants of GM transfers."""

    __slots__ = ("path", "pipe", "startup", "rate", "burst_gap", "floor_head", "floor_row",
                 "reads_gm", "touches_gm", "reads_ub", "writes_ub", "misaligned_extra",
                 "misaligned_row_factor", "l2_hit_latency", "read_latency", "write_latency")

    def __init__(self, soc: SocSpec, core_kind: str, path: str):
        timing = soc.timing
        self.path = path
        self.pipe = PATH_PIPE[path]
        src, dst = path.split("->")
        self.startup = getattr(timing, STARTUP_FIELD[self.pipe], 0) \
            if self.pipe in STARTUP_FIELD else 0
        self.reads_gm = src == "GM"
        self.touches_gm = src == "GM" or dst == "GM"
        self.reads_ub = src == "UB"
        self.writes_ub = dst == "UB"
        bw = soc.core_bw("aic" if core_kind == "AIC" else "aiv")
        self.rate = bw.for_path(path, l2_hit=True) if self.touches_gm else bw.for_path(path)
        self.burst_gap = timing.burst_gap_cycles
        head_field, row_field = COPY_FLOOR_FIELDS.get(path, (None, None))
        self.floor_head = getattr(timing, head_field) if head_field else 0.0
        self.floor_row = getattr(timing, row_field) if row_field else 0.0
        self.misaligned_extra = timing.gm_misaligned_extra_bytes
        self.misaligned_row_factor = (timing.fixpipe_gm_misaligned_row_factor
                                      if path == "L0C->GM" else 0.0)
        self.l2_hit_latency = timing.l2_hit_latency_cycles
        self.read_latency = timing.gm_read_latency_cycles
        self.write_latency = timing.gm_write_latency_cycles


class CostTable:
    """The cost model of one SoC, compiled once (see :func:`cost_table`)."""

    def __init__(self, soc: SocSpec):
        self.soc = soc
        #: An Mmad's latency: its cube pipeline's drain (hw.spec.CubeCost.drain_cycles).
        self.mmad_drain = soc.cube.drain_cycles
        timing = soc.timing
        self.bank_factor = timing.vector_ub_bank_conflict_factor
        self.step_cycles = timing.vector_step_cycles
        self.scalar_per_call = timing.scalar_cycles_per_call
        self.vf_width = timing.vector_function_issue_width
        self.bank_groups = timing.ub_bank_groups
        self._bank_rows = (timing.ub_bank_row_bytes, timing.ub_bank_group_reads_per_cycle)
        self._bank_cycles: dict = {}
        # Bytes of one UB bank across its groups (a bank's rows in every group).
        self._bank_span = max(1, soc.ub_bank_groups * soc.ub_bank_bytes)
        self._vector: dict = {}
        self._paths: dict = {}
        #: Required operand alignment by memory space (a plain dict: looked up per operand).
        self.alignment = {space: required_alignment(soc.alignment, space)
                          for space in (*BUFFER_NAMES, "GM")}
        self._routes: dict = {}
        self._read_port = {kind: soc.core_bw(kind.lower()).for_path("L0C->L1")
                           for kind in ("AIC",)}
        # A vector core alone draws from HBM no more than the AIC's ini ddr_read_rate (the 950
        # ini gives the AIV lower GM rates than the AIC; its AIV ddr_read_rate is the 64-way
        # share of the chip, which hbm_share applies by itself). A cube core is not capped:
        # the small 910B4 linear points stream their operands well above that rate.
        self._hbm_aiv_rate = soc.bw.gm_read
        share = timing.matmul_const_tiling_scalar_share
        self._matmul_scalar = {(event, const): getattr(timing, field) * (share if const else 1)
                               for event, field in MATMUL_SCALAR_FIELD.items()
                               for const in (False, True)}

    # ------------------------------------------------------------------ data paths
    def path(self, core_kind: str, path: str) -> PathCost | None:
        """The :class:`PathCost` of ``path`` on ``core_kind``, or None when the SoC lacks it."""
        key = (core_kind, path)
        cost = self._paths.get(key, False)
        if cost is False:
            cost = None
            if path in PATH_PIPE and self.soc.has_path(path):
                cost = PathCost(self.soc, core_kind, path)
            self._paths[key] = cost
        return cost

    def route(self, core_kind: str, src_space: str, dst_space: str) -> PathCost | None:
        """:meth:`path` of the move from ``src_space`` to ``dst_space`` (one dict look-up)."""
        key = (core_kind, src_space, dst_space)
        cost = self._routes.get(key, False)
        if cost is False:
            cost = self._routes[key] = self.path(core_kind, f"{src_space}->{dst_space}")
        return cost

    def transfer(self, core, cost: PathCost, nbytes: int, bursts: int, gm, start: float,
                 ub_span: tuple[int, int] | None = None):
        """(busy, latency) of moving ``nbytes`` in ``bursts`` bursts along ``cost``'s path,
        starting at cycle ``start``.

        ``gm``: the GM bytes the transfer touches (offsets within the buffer), for the L2
        model: ``(buffer_id, starts, ends)`` with one range per burst, or ``(buffer_id, rows)``
        with a :class:`~ascsim.sim.access.ByteRows` of at least one row. Without it a GM read
        is costed as a miss.

        A GM read streams the bytes L2 holds at the path's rate and the whole lines it brings
        from HBM at the core's share of HBM (:meth:`hbm_cycles`). A burst whose GM start is not
        32-byte aligned costs ``gm_misaligned_extra_bytes`` more, at the transfer's own rate.
        On a path with a copy floor (GM->L1) the transfer waits for it (:func:`copy_floor_wait`).
        A transfer into or out of UB waits for the UB ports the core's bank-conflicted vector
        instructions hold beside it (:func:`ub_port_stall`); ``ub_span`` is the UB byte range
        it writes (None: not known, taken to share every bank).
        """
        bursts = max(1, bursts)
        fixed = cost.startup + (bursts - 1) * cost.burst_gap
        if not cost.touches_gm:
            busy, latency = nbytes / cost.rate + fixed, 0.0
        else:
            busy, latency = self._gm_transfer(core, cost, nbytes, bursts, fixed, gm, start)
            if cost.floor_head or cost.floor_row:
                busy += copy_floor_wait(core, cost.floor_head + bursts * cost.floor_row, start,
                                        busy)
        if core.ub_conflicts and (cost.reads_ub or cost.writes_ub):
            banks = -1 if cost.reads_ub or ub_span is None else self.ub_banks(*ub_span)
            busy += ub_port_stall(core.ub_conflicts, start, busy, banks)
        return busy, latency

    def _gm_transfer(self, core, cost: PathCost, nbytes: int, bursts: int, fixed: float, gm,
                     start: float):
        """:meth:`transfer` of a path that reads or writes GM, before any copy floor."""
        misaligned = _misaligned_bursts(gm)
        if not misaligned:
            slow = 1.0
        elif cost.misaligned_row_factor:
            slow = 1.0 + misaligned / bursts * (cost.misaligned_row_factor - 1.0)
        else:
            slow = 1.0 + misaligned * cost.misaligned_extra / max(1, nbytes)
        cache = core.launch.l2
        if cost.reads_gm:
            if gm is None:
                cache.unknown_read(nbytes)
                latency, hit, hbm = float(cost.read_latency), 0.0, float(nbytes)
            else:
                latency, hit, hbm = _l2_read(cache, gm, start, cost, core.core_id)
            # Hits stream at the path's rate, the misaligned bursts' extra requests with them.
            cycles = nbytes * hit / cost.rate * slow
            writeback = _writeback(core, cache)
            if hbm or writeback:
                from_hbm = self.hbm_cycles(core, cost, start, hbm, writeback)
                # A misaligned burst's extra request occupies HBM too: its bytes on top of what
                # HBM carries (whole lines; a narrow strided read fills many times its own
                # bytes, which its extra requests do not multiply). The request is in the
                # memory system from its issue until its data arrive, its latency included;
                # waiting for the core's earlier HBM transfers is not slowed by misalignment.
                on_hbm = from_hbm * (1.0 + (slow - 1.0) * nbytes / (hbm + writeback))
                cycles += on_hbm + _book_hbm(core, start, on_hbm,
                                             on_hbm + (latency if hbm else 0.0))
            return cycles + fixed, latency
        busy = nbytes * slow / cost.rate + fixed
        if gm is not None:
            _l2_write(cache, gm, start + busy)
            writeback = _writeback(core, cache)
            if writeback:
                # The write lands in L2 at the port rate while the lines it pushes out go to
                # HBM at the core's share: whichever takes longer.
                to_hbm = self.hbm_cycles(core, cost, start, 0.0, writeback)
                busy = max(busy, to_hbm + _book_hbm(core, start, to_hbm) + fixed)
        return busy, float(cost.write_latency)

    def hbm_cycles(self, core, cost: PathCost, start: float, fills: float,
                   writeback: float) -> float:
        """Cycles a transfer starting at ``start`` spends on HBM: ``fills`` bytes it reads
        from HBM (line fills, bypassed reads) and ``writeback`` bytes it sends there (dirty
        lines its insertions evict from a full L2, bypassed writes).

        HBM's bandwidth is one for both directions, so the core's share of it
        (:meth:`hbm_share`) carries fills and write-backs together; its own reads are further
        held to the path's rate and, on a vector core, the AIC's ini ``ddr_read_rate`` (the
        950 ini gives the AIV lower GM rates than the AIC; its AIV ``ddr_read_rate`` is the
        64-way share of the chip, which the share applies by itself)."""
        share = self.hbm_share(core, start)
        own = min(cost.rate, self._hbm_aiv_rate) if core.kind == "AIV" else cost.rate
        return max(fills / own if fills else 0.0, (fills + writeback) / share)

    def hbm_share(self, core, start: float) -> float:
        """Bytes per cycle of the chip's HBM bandwidth one core gets at cycle ``start``.

        How many cores stream at once is estimated from the core's own history, as the cores
        of one kind in a wave run the same program: each has a request in HBM for the same
        fraction of its time as this one has so far (``duty``: its HBM transfer cycles plus
        its reads' HBM latency, the time their requests wait in the memory system), so
        ``1 + (n - 1) * duty`` share the chip, ``n`` the cores of this kind in the wave (the
        other kind of a MIX launch runs another program, mostly on L2 hits, and is not
        counted). A core that streams all the time gets the chip's bandwidth / n; one that
        mostly computes, or reads L2 hits, gets more.
        """
        launch = core.launch
        elapsed = start - core.start_time
        streamed = launch.hbm_cycles.get(core.core_id, 0.0)
        duty = min(1.0, streamed / elapsed) if elapsed > 0 else 0.0
        sharing = 1.0 + ((launch.wave_cores.get(core.kind, 1) - 1) * duty
                         / launch.hbm_sharing.get(core.kind, 1.0))
        return self.soc.gm_bandwidth_bytes_per_cycle / sharing

    def l0c_read_cycles(self, nbytes: int) -> float:
        """FixPipe's floor: the L0C bytes it reads through its read port, plus its start-up."""
        return nbytes / self._read_port["AIC"] + self.soc.timing.fixpipe_startup_cycles

    # ------------------------------------------------------------------ vector unit
    def vector(self, op_class: str, dtype, repeats: int,
               bytes_per_repeat: int = REPEAT_BYTES) -> tuple[float, float]:
        """(busy, latency) of ``repeats`` repeats of a vector instruction of ``op_class`` on
        ``dtype`` (a numpy dtype or a type name)."""
        key = (op_class, dtype, repeats, bytes_per_repeat)
        entry = self._vector.get(key)
        if entry is None:
            if len(self._vector) >= VECTOR_CACHE_LIMIT:
                self._vector.clear()
            name = dtype if isinstance(dtype, str) else dtype.name
            busy, latency = self.soc.vector_cost(op_class, name).cycles(
                max(1, repeats), bytes_per_repeat)
            entry = self._vector[key] = (busy * self.bank_factor, latency)
        return entry

    def ub_banks(self, lo: int, hi: int) -> int:
        """The UB banks (a bit mask) that the bytes ``[lo, hi)`` lie in: the high bits of a UB
        address above its rows, groups and row bytes [S18]."""
        span = self._bank_span
        return ((1 << ((max(hi, lo + 1) - 1) // span + 1)) - 1) & ~((1 << (lo // span)) - 1)

    def bank_read_cycles(self, offsets: tuple) -> int:
        """Cycles a 256 B repeat needs to read its sources at UB byte ``offsets`` (distinct
        tensors) through the bank groups: each source reads consecutive rows from the group
        its offset falls in; a group delivers ``ub_bank_group_reads_per_cycle`` rows a cycle.
        1 when the SoC has no bank-group rule."""
        groups = self.bank_groups
        if not groups or len(offsets) < 2:
            return 1
        row, reads = self._bank_rows
        key = tuple(sorted((o // row) % groups for o in offsets))
        cycles = self._bank_cycles.get(key)
        if cycles is None:
            load = [0] * groups
            for first in key:
                for r in range(REPEAT_BYTES // row):
                    load[(first + r) % groups] += 1
            cycles = self._bank_cycles[key] = -(-max(load) // reads)
        return cycles

    def vector_function_step(self, op_class: str, dtype, repeats: int,
                             moves: int) -> tuple[float, float]:
        """(busy, latency) of an instruction that continues a vector function: its own issue
        cycles plus one per 256 B register for each of ``moves`` UB loads or stores it adds,
        issued ``vector_function_issue_width`` at a time beside the function's other
        instructions (its operands stay in registers: no wait for the previous result)."""
        busy, latency = self.vector(op_class, dtype, repeats)
        return (busy + max(1, repeats) * moves) / self.vf_width, latency

    def sequence(self, steps, dtype_name: str, repeats: int) -> tuple[float, float]:
        """(busy, latency) of dependent vector steps, each over ``repeats`` repeats (or its own
        count: a ``(cost class, repeats)`` pair): each step waits for the previous one's
        result and pays the barrier's bubble before it issues."""
        busy = 0.0
        latency = 0.0
        step_cycles = self.step_cycles
        for step in steps:
            op, n = (step, repeats) if isinstance(step, str) else step
            b, lat = self.vector(op, dtype_name, n)
            busy += latency + step_cycles + b
            latency = lat
        return busy, latency

    # ------------------------------------------------------------------ cube unit
    # ------------------------------------------------------------------ SIMT unit
    def simt_warp_rounds(self, threads: int) -> float:
        """Cycles for each warp scheduler to issue one instruction to each of the warps of
        ``threads`` threads: ``ceil(threads / simt_warp_size) / simt_warp_schedulers``."""
        timing = self.soc.timing
        warps = -(-max(int(threads), 1) // timing.simt_warp_size)
        return warps / timing.simt_warp_schedulers

    def simt_access(self, segments: int, gm: bool, store: bool) -> tuple[float, float]:
        """(busy, latency) of a SIMT memory access touching ``segments`` access segments
        (``simt_access_bytes`` each, counted per warp): one issue slot each over the warp
        schedulers; a GM access waits the GM read or write latency."""
        timing = self.soc.timing
        busy = max(segments, 1) / timing.simt_warp_schedulers
        if not gm:
            return busy, 0.0
        return busy, float(timing.gm_write_latency_cycles if store
                           else timing.gm_read_latency_cycles)

    def mmad(self, m: int, n: int, k: int, dtype_name: str) -> float:
        return self.soc.cube.mmad_cycles(m, n, k, dtype_name)

    def matmul_scalar(self, event: str, const_tiling: bool) -> float | None:
        """Scalar cycles of one Matmul API bookkeeping ``event`` (None: not an event)."""
        return self._matmul_scalar.get((event, bool(const_tiling)))


@lru_cache(maxsize=32)
def cost_table(soc: SocSpec) -> CostTable:
    """The compiled cost model of ``soc`` (one per SoC for the life of the process)."""
    return CostTable(soc)


def _writeback(core, cache) -> float:
    """Bytes the core's last L2 access sends to HBM besides its own line fills: its bypassed
    writes, and the write-back of the dirty lines its insertions evict once L2 is full.

    Cores run one after the other in the simulation but together on the chip, so whether L2
    is full is judged as if the cores of the core's kind in the wave inserted lines at its own
    pace (they run the same program, the assumption :meth:`CostTable.hbm_share` makes too):
    L2 fills after its capacity over their number of the core's own insertions, from the lines
    inserted before the wave. Which lines leave, the insertion count does not record; they are
    taken to be dirty in the proportion in which the core has inserted dirty lines so far:
    exact for a stream that reads and writes at a steady ratio (a binary element-wise kernel
    evicts one output line for every two input lines), nothing while it has written none."""
    inserted, dirtied, through = cache.take_changes()
    if not inserted:
        if dirtied:
            _own_lines(core)[1] += dirtied
        return through
    launch = core.launch
    own = _own_lines(core)
    cores = launch.wave_cores.get(core.kind, 1)
    before = launch.wave_l2_lines + own[0] * cores
    after = before + inserted * cores
    capacity = cache.capacity_lines
    evicted = (max(0, after - capacity) - max(0, before - capacity)) / cores
    dirty = min(1.0, own[1] / own[0]) if own[0] else 0.0
    own[0] += inserted
    own[1] += dirtied
    return through + evicted * dirty * LINE_BYTES


def _own_lines(core) -> list:
    """[lines inserted, lines made dirty] by ``core`` so far in its launch."""
    own = core.launch.l2_lines.get(core.core_id)
    if own is None:
        own = core.launch.l2_lines[core.core_id] = [0, 0]
    return own


def copy_floor_wait(core, floor: float, start: float, busy: float) -> float:
    """Cycles a GM->L1 copy of ``busy`` cycles starting at ``start`` waits for the copy floor
    (``floor`` cycles for this copy).

    The floor holds for a run of copies that follow each other on the pipe, not for each one:
    the run's k-th copy ends no earlier than the run's start plus the floors of its first k
    copies. A copy that waits on HBM longer than its floor lets the next ones catch up, as
    the device does: the 950's ND2NZ copies of 64 rows of 128 B spend 378 cycles each when
    their lines are in L2 (Matmul API case 0) and 346 when every fourth one fills its 512 B
    lines from HBM and the others find them (DataCopy GM->L1 s1), where a floor per copy
    would put the latter above the former."""
    base = core.copy_floor_clock if start <= core.copy_run_end else start
    clock = core.copy_floor_clock = base + floor
    wait = clock - start - busy
    if wait < 0.0:
        wait = 0.0
    core.copy_run_end = start + busy + wait
    return wait


def _book_hbm(core, start: float, cycles: float, in_hbm: float | None = None) -> float:
    """Book ``cycles`` of the core's HBM share for a transfer starting at ``start`` and add
    ``in_hbm`` cycles (default ``cycles``) to its time with a request in HBM (its duty,
    :meth:`CostTable.hbm_share`);
    returns how long it waits for the core's earlier HBM transfers (a core's reads and
    write-backs share one share of HBM: its MTE2 and MTE3 do not each get one)."""
    launch, cid = core.launch, core.core_id
    launch.hbm_cycles[cid] = launch.hbm_cycles.get(cid, 0.0) + (cycles if in_hbm is None
                                                                 else in_hbm)
    free = launch.hbm_free
    wait = max(0.0, free.get(cid, 0.0) - start)
    free[cid] = start + wait + cycles
    return wait


def ub_port_stall(conflicts, start: float, busy: float, banks: int) -> float:
    """Cycles a transfer into or out of UB over ``[start, start + busy)`` waits for the UB
    ports while vector instructions with bank conflicts run beside it.

    ``conflicts`` holds the core's latest such instructions as ``(start, end, extra, source
    banks)``: ``extra`` is the cycles its read conflict added (:meth:`CostTable.
    bank_read_cycles`), in which its bank groups serve the second read of a row. A DMA access
    in those cycles waits when it conflicts with that read [S18]: a read of UB always (two
    reads conflict in one bank group, and both sweep the groups), a write into UB when it lies
    in a bank the instruction reads (a read and a write conflict in one bank); ``banks`` is
    the bit mask of the banks the transfer writes, -1 for a read. The transfer loses each such
    instruction's extra cycles in the proportion of that instruction's time it overlaps.
    Only instructions issued before the transfer are known to it (the simulation runs in
    program order). A conflict-free layout (the published Add's last step [S1]) leaves the
    transfer alone."""
    end = start + busy
    stall = 0.0
    for v_start, v_end, extra, v_banks in conflicts:
        overlap = min(end, v_end) - max(start, v_start)
        if overlap > 0 and banks & v_banks:
            stall += extra * overlap / (v_end - v_start)
    return stall


def _misaligned_bursts(gm) -> float:
    """How many of ``gm``'s bursts start off a 32-byte boundary."""
    if gm is None:
        return 0.0
    if len(gm) == 2:
        rows = gm[1]
        first, pitch, count = rows.first, rows.pitch, rows.count
        if count == 1 or pitch % MISALIGN_BYTES == 0:
            return float(count) if first % MISALIGN_BYTES else 0.0
        # Row starts step through the residues of gcd(pitch, 32): one row in 32 / gcd lands
        # on a boundary, and only if the first start is on that grid.
        step = math.gcd(pitch, MISALIGN_BYTES)
        aligned = count * step / MISALIGN_BYTES if first % step == 0 else 0.0
        return count - aligned
    starts = np.asarray(gm[1])
    return float(np.count_nonzero(starts % MISALIGN_BYTES))


def _l2_read(cache, gm, t: float, cost: PathCost, reader: int) -> tuple[float, float, float]:
    """(latency, hit fraction, HBM bytes) of a GM read by core ``reader`` through the
    launch's L2."""
    if len(gm) == 2:
        return cache.read_rows_cost(gm[0], gm[1], t, cost.l2_hit_latency, cost.read_latency,
                                    reader)
    return cache.read_cost(gm[0], gm[1], gm[2], t, cost.l2_hit_latency, cost.read_latency,
                           reader)


def _l2_write(cache, gm, t: float) -> None:
    if len(gm) == 2:
        cache.write_rows(gm[0], gm[1], t)
    else:
        cache.write(gm[0], gm[1], gm[2], t)
