"""Executors of the vector records (semantics and costs: :mod:`ascsim.isa.instr`) and THE vector
op table.

Every element-wise op is one row of :data:`VECTOR_OPS`: the numpy function that computes it,
the cost class it is priced by (a row of the SoC's vector cost table), and whether it also reads
its destination. Values are computed in fp32 for fp16/bf16 operands (as the vector unit's
datapath does) and rounded once to the destination type; a scalar operand has its source's type.
One numpy call per operand per instruction, whatever the form: a mask/repeat instruction's lanes
are plain index arrays (built by the front-end with :func:`ascsim.isa.operands.repeat_indices`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import (
    Vector,
    VectorCompare,
    VectorGather,
    VectorReduce,
    VectorSelect,
    VectorSequence,
)
from ascsim.isa.operands import BLOCK_BYTES, REPEAT_BYTES, Region, count_repeats
from ascsim.sim import dequant
from ascsim.sim.access import from_indices
from ascsim.sim.exec_registers import cmp_mask_bytes, set_cmp_mask_bits
from ascsim.sim.numerics import compute_dtype, convert
from ascsim.sim.views import check_accesses, gates_done, gates_ready, index_access, view


def _relu(x):
    return np.maximum(x, 0)


def _leaky_relu(x, alpha):
    scaled = x * alpha
    if 0 < alpha <= 1:  # then max(x, alpha*x) is x where x >= 0 and alpha*x below: one pass
        return np.maximum(x, scaled, out=scaled)  # and one array fewer than np.where
    return np.where(x >= 0, x, scaled)


def _identity(x):
    return x


def _store_cast(dst_view, index, result, source: np.dtype, rec: Vector) -> None:
    """A cast's store: the engine widened fp16/bf16 sources to fp32 (exactly); narrow them back
    so the conversion sees the true source type (fp16 -> fp16 rounds to an integral value).
    ``rec.attrs``: (rounding mode, the front-end's name for it)."""
    mode, label = rec.attrs
    try:
        dst_view[index] = convert(np.asarray(result).astype(source), dst_view.dtype, mode)
    except ValueError as exc:
        raise KernelError(f"cast {source.name} -> {dst_view.dtype.name} with {label}: {exc}",
                          rec.loc) from None


class VectorOp(NamedTuple):
    """One row of the op table. ``fn`` takes the sources (then the scalars, then the destination
    when ``reads_dst``); None is a fill with the one scalar. ``store``: how the result reaches
    the destination when it is not a plain rounding assignment."""

    fn: Any
    cost: str
    reads_dst: bool = False
    store: Any = None


VECTOR_OPS: dict[str, VectorOp] = {
    # binary
    "add": VectorOp(np.add, "add"),
    "sub": VectorOp(np.subtract, "sub"),
    "mul": VectorOp(np.multiply, "mul"),
    "div": VectorOp(np.divide, "div"),
    "max": VectorOp(np.maximum, "max"),
    "min": VectorOp(np.minimum, "min"),
    "and": VectorOp(np.bitwise_and, "add"),
    "or": VectorOp(np.bitwise_or, "add"),
    "xor": VectorOp(np.bitwise_xor, "add"),
    "rem": VectorOp(np.fmod, "div"),
    "add_relu": VectorOp(lambda a, b: _relu(a + b), "add"),
    "sub_relu": VectorOp(lambda a, b: _relu(a - b), "sub"),
    "expdif": VectorOp(lambda a, b: np.exp(a - b), "exp"),  # exp(a - b) in one pass
    # with a scalar
    "adds": VectorOp(np.add, "adds"),
    "muls": VectorOp(np.multiply, "muls"),
    "maxs": VectorOp(np.maximum, "maxs"),
    "mins": VectorOp(np.minimum, "mins"),
    "subs": VectorOp(np.subtract, "adds"),
    "rsubs": VectorOp(lambda a, s: s - a, "adds"),
    "divs": VectorOp(np.divide, "div"),
    "rdivs": VectorOp(lambda a, s: s / a, "div"),
    "ands": VectorOp(np.bitwise_and, "adds"),
    "ors": VectorOp(np.bitwise_or, "adds"),
    "xors": VectorOp(np.bitwise_xor, "adds"),
    "rems": VectorOp(np.fmod, "div"),
    "leaky_relu": VectorOp(_leaky_relu, "leaky_relu"),
    "shl": VectorOp(np.left_shift, "adds"),
    "shr": VectorOp(np.right_shift, "adds"),
    # unary
    "abs": VectorOp(np.abs, "abs"),
    "exp": VectorOp(np.exp, "exp"),
    "ln": VectorOp(np.log, "ln"),
    "relu": VectorOp(_relu, "relu"),
    "sqrt": VectorOp(np.sqrt, "sqrt"),
    "rsqrt": VectorOp(lambda x: 1 / np.sqrt(x), "rsqrt"),
    "reciprocal": VectorOp(lambda x: 1 / x, "reciprocal"),
    "not": VectorOp(np.invert, "abs"),
    "neg": VectorOp(np.negative, "muls"),
    # reading the destination too
    "axpy": VectorOp(lambda src, alpha, dst: src * alpha + dst, "axpy", reads_dst=True),
    "fused_mul_add": VectorOp(lambda a, b, dst: a * dst + b, "mul", reads_dst=True),
    "mul_add_dst": VectorOp(lambda a, b, dst: a * b + dst, "mul", reads_dst=True),
    "fused_mul_add_relu": VectorOp(lambda a, b, dst: _relu(a * dst + b), "mul", reads_dst=True),
    # moves and conversions
    "duplicate": VectorOp(None, "duplicate"),
    "copy": VectorOp(_identity, "copy"),
    "cast": VectorOp(_identity, "cast", store=_store_cast),
    # fused casts and dequantisation (ascsim.sim.dequant has their arithmetic)
    "add_relu_cast": VectorOp(lambda a, b: _relu(a + b), "add", store=dequant.store_fused_cast),
    "sub_relu_cast": VectorOp(lambda a, b: _relu(a - b), "sub", store=dequant.store_fused_cast),
    "mul_cast": VectorOp(np.multiply, "mul", store=dequant.store_fused_cast),
    "add_deq_relu": VectorOp(dequant.add_wide, "add", store=dequant.store_dequant),
    "dequant": VectorOp(_identity, "cast", store=dequant.store_dequant),
    "dequant_table": VectorOp(dequant.dequant_table, "cast", store=dequant.store_bytes),
}

#: Comparison name -> numpy function (VectorCompare.cmp).
COMPARISONS = {"lt": np.less, "gt": np.greater, "eq": np.equal, "le": np.less_equal,
               "ge": np.greater_equal, "ne": np.not_equal}

#: VectorReduce.how -> (numpy reduction, arg-reduction or None, cost class).
REDUCTIONS = {"sum": (np.sum, None, "reduce"), "max": (np.max, np.argmax, "reduce_max"),
              "min": (np.min, np.argmin, "reduce_min")}

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _check_operands(op: str, regions, loc) -> int:
    """Fail unless every operand is in UB; returns the widest element size."""
    widest = 0
    for region in regions:
        space = region.mem.space
        if space != "UB":
            raise KernelError(f"{op}: vector instructions work on UB tensors, got a tensor in "
                              f"{space}", loc)
        size = region.dtype.itemsize
        if size > widest:
            widest = size
    return widest


def _place(core, rec, regions, busy: float, latency: float, reads, writes):
    """Issue a vector instruction touching ``regions`` on the V pipe."""
    ready = gates_ready(regions)
    start = core.begin("V", ready if ready > rec.after else rec.after)
    instr = core.place("V", rec.op, start, busy, latency, rec.loc, reads, writes, rec)
    gates_done(regions, instr.done)
    return instr


def _hull_view(core, region: Region, idx: np.ndarray, loc) -> np.ndarray:
    """A view of ``region`` covering every element index in ``idx`` (from element 0)."""
    return view(core, region, 0, int(idx.max()) + 1 if idx.size else 0, loc)


_LANE_RUNS: dict = {}  # (id of a read-only index array, region) -> (the array, its records)


def lane_accesses(region: Region, idx: np.ndarray) -> tuple:
    """The access records of the elements ``idx`` of ``region``: the runs they form, not their
    hull, so that the gaps a windowed instruction skips (the columns past a tile's valid
    window) are neither read nor written."""
    if not idx.size:
        return (region.access(0, 0),)
    if idx.flags.writeable:
        return _gather_reads(region.mem.key, region.offset, region.dtype.itemsize, idx)
    # A read-only index array (a front-end's cached window) cannot change: look it up by
    # identity first -- hashing its bytes costs more than the instruction's own numpy work.
    # A view as large as its base holds the base's elements, which is all the runs depend on.
    owner = idx.base if idx.base is not None and idx.size == idx.base.size else idx
    key = (id(owner), region.mem.key, region.offset, region.dtype.itemsize)
    hit = _LANE_RUNS.get(key)
    if hit is not None and hit[0] is owner:
        return hit[1]
    records = _gather_reads(region.mem.key, region.offset, region.dtype.itemsize, idx)
    if len(_LANE_RUNS) > 1024:
        _LANE_RUNS.clear()
    _LANE_RUNS[key] = (owner, records)  # holds the owner, so its id is not reused meanwhile
    return records


def _paired(regions, records) -> list:
    """``(region, record)`` pairs of regions that have several records each (for the checks
    of a timing-only run)."""
    return [(r, rec) for r, recs in zip(regions, records) for rec in recs]


# ------------------------------------------------------------------------- vector functions
#: The element-wise ops pyasc's ``vf_fusion`` puts into a vector function (its FuseVFBlock
#: pass: binary add/sub/mul/div/max/min/and/or/mul-add, unary abs/exp/ln/neg/not/relu/sqrt,
#: exp of a difference); the forms with a scalar operand (adds, muls, ...) are not among them.
VF_FUSIBLE = frozenset({"add", "sub", "mul", "div", "max", "min", "and", "or", "mul_add_dst",
                        "abs", "exp", "ln", "neg", "not", "relu", "sqrt", "expdif"})


class VectorFunctionRun:
    """A vector function being built on a core: a run of fusible element-wise records of one
    element count and type with no other record between them (pyasc fuses exactly such runs).

    ``seq``: the core's record number of the last member; ``produced``/``loaded``: the UB
    tensors (memory key, offset) the function has written / read from UB so far."""

    __slots__ = ("count", "dtype", "seq", "produced", "loaded")

    def __init__(self, count: int, dtype, seq: int, produced: set, loaded: set):
        self.count = count
        self.dtype = dtype
        self.seq = seq
        self.produced = produced
        self.loaded = loaded


def _key(region: Region) -> tuple:
    return region.mem.key, region.offset


def _continue_function(core, rec: Vector, spec: VectorOp, repeats: int, reads, writes):
    """Price ``rec`` as the next instruction of the core's vector function, or return None
    when it does not continue one (then it starts a new run, priced on its own).

    The first instruction of a run costs what it costs alone (its loads and its store are in
    that cost). Each further one issues beside the others (``vector_function_issue_width`` per
    cycle), adding its own issue cycles and a load for each UB tensor the function has not
    read or written yet and a store for each new destination (every destination is counted,
    though pyasc drops the stores of those used only inside the function); it waits only for
    the tensors the function has not produced itself, which stay in registers."""
    dst = rec.dst
    run = core.vf_group
    seq = core.executed
    if (run is None or run.seq != seq - 1 or run.count != dst.count
            or run.dtype != dst.dtype):
        core.vf_group = VectorFunctionRun(dst.count, dst.dtype, seq, {_key(dst)},
                                          {_key(s) for s in rec.srcs})
        return None
    run.seq = seq
    produced, loaded = run.produced, run.loaded
    moves = 0
    outside = []
    for src in rec.srcs:
        key = _key(src)
        if key not in produced:
            outside.append(src)
            if key not in loaded:
                loaded.add(key)
                moves += 1
    dst_key = _key(dst)
    if dst_key not in produced:
        produced.add(dst_key)
        outside.append(dst)
        moves += 1
    busy, latency = core.costs.vector_function_step(spec.cost, dst.dtype, repeats, moves)
    ready = gates_ready(outside)
    start = core.begin("V", ready if ready > rec.after else rec.after)
    instr = core.place("V", rec.op, start, busy, latency, rec.loc, reads, writes, rec)
    gates_done((dst, *rec.srcs), instr.done)
    return instr


# ------------------------------------------------------------------------------ element-wise
def execute_vector(core, rec: Vector):
    spec = VECTOR_OPS.get(rec.op)
    loc = rec.loc
    if spec is None:
        raise KernelError(f"the vector unit has no op {rec.op!r}", loc)
    dst, srcs = rec.dst, rec.srcs
    regions = (dst, *srcs)
    widest = _check_operands(rec.op, regions, loc)
    if rec.lanes is None:
        n = dst.count
        repeats = count_repeats(n, widest)
        per_src = [(s.access(0, n),) for s in srcs]
        writes = (dst.access(0, n),)
    else:
        repeats = rec.repeats
        per_src = [lane_accesses(s, i) for s, i in zip(srcs, rec.lanes[1:])]
        writes = lane_accesses(dst, rec.lanes[0])
    reads = [r for recs in per_src for r in recs]
    if core.launch.values:
        _compute_vector(core, rec, spec)
    else:
        check_accesses(core, _paired((*srcs, dst), (*per_src, writes)), loc)
    if spec.reads_dst:
        reads.extend(writes)
    if core.launch.vector_functions and rec.lanes is None and rec.op in VF_FUSIBLE:
        instr = _continue_function(core, rec, spec, repeats, tuple(reads), writes)
        if instr is not None:
            return instr
    src_dtype = srcs[0].dtype if srcs else dst.dtype
    costs = core.costs
    busy, latency = costs.vector(spec.cost, src_dtype, repeats)
    if costs.bank_groups and len(srcs) + spec.reads_dst > 1:
        sources = {s.offset for s in srcs}
        if spec.reads_dst:
            sources.add(dst.offset)
        conflict = costs.bank_read_cycles(tuple(sources)) * max(1, repeats)
        if conflict > busy:
            instr = _place(core, rec, regions, conflict, latency, tuple(reads), writes)
            banks = 0
            for src in (*srcs, dst) if spec.reads_dst else srcs:
                banks |= costs.ub_banks(src.offset, src.offset + src.nbytes)
            core.ub_conflicts.append((instr.start, instr.end, conflict - busy, banks))
            return instr
    return _place(core, rec, regions, busy, latency, tuple(reads), writes)


def _compute_vector(core, rec: Vector, spec: VectorOp) -> None:
    """The effect of an element-wise instruction on its destination."""
    dst, srcs, loc = rec.dst, rec.srcs, rec.loc
    if rec.lanes is None:
        n = dst.count
        dst_view = view(core, dst, 0, n, loc)
        dst_index = slice(None)
        operands = [compute_dtype(view(core, s, 0, n, loc)) for s in srcs]
    else:
        dst_index, *src_index = rec.lanes
        dst_view = _hull_view(core, dst, dst_index, loc)
        operands = [compute_dtype(_hull_view(core, s, i, loc)[i]) for s, i in zip(srcs, src_index)]
    src_dtype = srcs[0].dtype if srcs else dst.dtype
    # A scalar operand has the source's type on the device; round it there first.
    work = operands[0].dtype if operands else src_dtype
    consts = [np.asarray(s, dtype=src_dtype).astype(work) for s in rec.scalars]
    if spec.reads_dst:
        operands.append(compute_dtype(dst_view[dst_index]))
    with np.errstate(all="ignore"):
        if spec.fn is None:  # a fill: the one scalar is the value
            result = np.broadcast_to(consts[0], np.shape(dst_view[dst_index]))
        else:
            result = spec.fn(*operands[:len(srcs)], *consts, *operands[len(srcs):])
    if spec.store is not None:
        spec.store(dst_view, dst_index, result, src_dtype, rec)
    else:
        # No intermediate copy when the result already has the destination's type: the
        # assignment copies (numpy buffers it when the result overlaps the destination).
        dst_view[dst_index] = np.asarray(result).astype(dst.dtype, copy=False)


# ------------------------------------------------------------------------------ compare/select
def _bits_view(core, region: Region, nbits: int, loc) -> np.ndarray:
    """The bytes of ``region`` holding its first ``nbits`` bits (bit masks are byte arrays)."""
    return view(core, region._replace(dtype=np.dtype(np.uint8)), 0, -(-nbits // 8), loc)


def _bits_access(region: Region, nbits: int) -> tuple:
    return (region.mem.key, region.offset, region.offset + -(-nbits // 8))


def execute_compare(core, rec: VectorCompare):
    loc = rec.loc
    srcs = rec.srcs
    dst = rec.dst  # None: the compare-mask register
    _check_operands(rec.op, srcs if dst is None else (dst, *srcs), loc)
    bits = rec.bits
    nbits = int(bits.max()) + 1 if bits.size else 0
    per_src = [lane_accesses(s, i) for s, i in zip(srcs, rec.lanes)]
    reads = tuple(r for recs in per_src for r in recs)
    writes = () if dst is None else (_bits_access(dst, nbits),)
    if core.launch.values:
        operands = [compute_dtype(_hull_view(core, s, i, loc)[i])
                    for s, i in zip(srcs, rec.lanes)]
        if rec.scalar is not None:
            operands.append(np.asarray(rec.scalar, dtype=srcs[0].dtype).astype(
                operands[0].dtype))
        if dst is None:
            set_cmp_mask_bits(core, bits, COMPARISONS[rec.cmp](*operands))
        else:
            packed = _bits_view(core, dst, nbits, loc)
            unpacked = np.unpackbits(packed, bitorder="little")
            # Lanes the mask disables keep their old bit: the vector unit does not write them.
            unpacked[bits] = COMPARISONS[rec.cmp](*operands)
            packed[:] = np.packbits(unpacked, bitorder="little")
    else:
        regions = srcs if dst is None else (*srcs, dst)
        records = per_src if dst is None else (*per_src, writes)
        check_accesses(core, _paired(regions, records), loc)
    busy, latency = core.costs.vector("compare", srcs[0].dtype, rec.repeats)
    return _place(core, rec, (dst, *srcs), busy, latency, reads, writes)


def execute_select(core, rec: VectorSelect):
    loc = rec.loc
    dst, srcs, mask = rec.dst, rec.srcs, rec.mask  # mask None: the compare-mask register
    _check_operands(rec.op, (dst, *srcs) if mask is None else (dst, mask, *srcs), loc)
    bits = rec.bits
    nbits = int(bits.max()) + 1 if bits.size else 0
    dst_index, *src_index = rec.lanes
    per_src = [lane_accesses(s, i) for s, i in zip(srcs, src_index)]
    mask_reads = [] if mask is None else [_bits_access(mask, nbits)]
    reads = [r for recs in per_src for r in recs] + mask_reads
    writes = lane_accesses(dst, dst_index)
    if core.launch.values:
        packed = (cmp_mask_bytes(core) if mask is None else
                  _bits_view(core, mask, nbits, loc))
        chosen = np.unpackbits(packed, bitorder="little")[bits]
        a = _hull_view(core, srcs[0], src_index[0], loc)[src_index[0]]
        if len(srcs) > 1:
            b = _hull_view(core, srcs[1], src_index[1], loc)[src_index[1]]
        else:
            b = np.asarray(rec.scalar, dtype=dst.dtype)
        _hull_view(core, dst, dst_index, loc)[dst_index] = np.where(chosen.astype(bool), a, b)
    else:
        masks = () if mask is None else (mask,)
        check_accesses(core, _paired((*srcs, *masks, dst),
                                     (*per_src, *[(r,) for r in mask_reads], writes)), loc)
    busy, latency = core.costs.vector("select", dst.dtype, rec.repeats)
    return _place(core, rec, (dst, mask, *srcs), busy, latency, tuple(reads), writes)


# ------------------------------------------------------------------------------ reductions
def execute_reduce(core, rec: VectorReduce):
    loc = rec.loc
    src, dst = rec.src, rec.dst
    reduce, arg, cost = REDUCTIONS[rec.how]
    if rec.lanes.size == 0:
        raise KernelError(f"{rec.op}: nothing to reduce (count 0)", loc)
    read = index_access(src, rec.lanes)
    write = dst.access(0, 2 if rec.index else 1)
    if core.launch.values:
        values = compute_dtype(_hull_view(core, src, rec.lanes, loc)[rec.lanes])
        out = view(core, dst, 0, 2 if rec.index else 1, loc)
        out[0] = reduce(values.astype(np.float64) if rec.how == "sum" else values)
        if rec.index and arg is not None:
            out.view(_UINT_OF_SIZE[dst.dtype.itemsize])[1] = rec.lane_numbers[arg(values)]
    else:
        check_accesses(core, ((src, read), (dst, write)), loc)
    # A full reduction is a first pass over the repeats, then passes over the partial results.
    passes = 1 + int(np.ceil(np.log(max(rec.repeats, 1)) / np.log(REPEAT_BYTES // BLOCK_BYTES)))
    busy, latency = core.costs.vector(cost, src.dtype, rec.repeats)
    regions = (dst, src) if rec.work is None else (dst, src, rec.work)
    return _place(core, rec, regions, busy + latency * (passes - 1), latency, (read,), (write,))


# ------------------------------------------------------------------------------ gather
_GATHER_READS: dict = {}  # (space, base, size, index bytes) -> access records


def _gather_reads(space, base: int, size: int, idx: np.ndarray) -> tuple:
    """``from_indices`` of a gather, cached: kernels gather with the same offset table over and
    over, and finding its runs (a sort) costs more than the gather itself."""
    key = (space, base, size, idx.tobytes())
    reads = _GATHER_READS.get(key)
    if reads is None:
        if len(_GATHER_READS) > 512:
            _GATHER_READS.clear()
        reads = _GATHER_READS[key] = from_indices(space, base, size, idx)
    return reads


def execute_gather(core, rec: VectorGather):
    if rec.dst_lanes is not None:
        return _execute_lane_gather(core, rec)
    loc, src, dst = rec.loc, rec.src, rec.dst
    n = rec.count
    size = src.dtype.itemsize
    if core.launch.values:
        offsets = view(core, rec.offsets, 0, n, loc).astype(np.int64) + rec.base
        if n and (offsets % size).any():
            bad = int(offsets[(offsets % size) != 0][0])
            raise KernelError(f"gather: byte offset {bad} is not a multiple of the element "
                              f"size {size}", loc)
        idx = offsets // size
        dst_view = view(core, dst, 0, n, loc)
        if n:
            dst_view[:] = _hull_view(core, src, idx, loc)[idx]
        # Record the elements actually gathered, not their hull: a gather that picks rows out
        # of a pitched buffer never reads the gaps between them.
        gathered = _gather_reads(src.mem.key, src.offset, size, idx)
    else:  # the offsets are data, which a timing-only run does not have: the whole source
        gathered = (src.access(),)
        check_accesses(core, ((rec.offsets, rec.offsets.access(0, n)), (dst, dst.access(0, n))),
                       loc)
    reads = (rec.offsets.access(0, n),) + gathered
    busy, latency = core.costs.vector("transpose", src.dtype, max(1, -(-n * size // 256)))
    return _place(core, rec, (dst, src, rec.offsets), busy, latency, reads, (dst.access(0, n),))


def _gather_indices(rec: VectorGather, byte_offsets: np.ndarray) -> np.ndarray:
    """Element indices of ``src`` that byte offsets (from ``rec.base``) name."""
    size = rec.src.dtype.itemsize
    offsets = byte_offsets.astype(np.int64) + rec.base
    bad = (offsets % size != 0) | (offsets < 0)
    if bad.any():
        raise KernelError(f"{rec.op}: byte offset {int(offsets[bad][0])} is not a non-negative "
                          f"multiple of the element size {size}", rec.loc)
    return offsets // size


def _execute_lane_gather(core, rec: VectorGather):
    """The mask/repeat form: each enabled lane has its own destination element and offset."""
    loc, src, dst = rec.loc, rec.src, rec.dst
    size = src.dtype.itemsize
    lanes, table = rec.dst_lanes, rec.offset_lanes
    offset_reads = from_indices(rec.offsets.mem.key, rec.offsets.offset, 4, table)
    writes = from_indices(dst.mem.key, dst.offset, size, lanes)
    if core.launch.values and lanes.size:
        offsets = view(core, rec.offsets, 0, int(table.max()) + 1, loc)[table]
        idx = _gather_indices(rec, offsets)
        values = _hull_view(core, src, idx, loc)[idx]
        view(core, dst, 0, int(lanes.max()) + 1, loc)[lanes] = values
        gathered = _gather_reads(src.mem.key, src.offset, size, idx)
    else:  # the offsets are data, which a timing-only run does not have: the whole source
        gathered = (src.access(),) if lanes.size else ()
        if lanes.size:
            check_accesses(core, ((rec.offsets, rec.offsets.access(0, int(table.max()) + 1)),
                                  (dst, dst.access(0, int(lanes.max()) + 1))), loc)
    busy, latency = core.costs.vector("transpose", src.dtype, max(1, rec.repeats))
    return _place(core, rec, (dst, src, rec.offsets), busy, latency,
                  (*offset_reads, *gathered), writes)


# ------------------------------------------------------------------------------ sequences
def execute_sequence(core, rec: VectorSequence):
    loc = rec.loc
    outputs = (rec.dst,) if isinstance(rec.dst, Region) else rec.dst
    if rec.lanes is None:  # one record per operand (list comprehensions: no generator frames)
        writes = tuple([r.access() for r in outputs])
        reads = tuple([r.access() for r in (*rec.srcs, *rec.extra)])
        pairs = (*outputs, *rec.srcs, *rec.extra), (*writes, *reads)
    else:
        touched = [lane_accesses(r, i) for r, i in zip((*outputs, *rec.srcs), rec.lanes)]
        touched += [(r.access(),) for r in rec.extra]
        reads = tuple(r for recs in touched[len(outputs):] for r in recs)
        writes = tuple(r for recs in touched[:len(outputs)] for r in recs)
        pairs = None
    if core.launch.values:
        _compute_sequence(core, rec, outputs)
    elif pairs is not None:
        check_accesses(core, list(zip(*pairs)), loc)
    else:
        check_accesses(core, _paired((*outputs, *rec.srcs, *rec.extra), touched), loc)
    steps = rec.steps
    busy, latency = _sequence_cost(core.costs, steps, rec.dtype, rec.repeats)
    # The library routine computes and issues each further step itself.
    core.scalar_work(core.timing.scalar_cycles_per_library_step * (len(steps) - 1))
    return _place(core, rec, (*outputs, *rec.srcs, *rec.extra, *rec.scratch), busy, latency,
                  reads, writes)


#: (cost table, steps, type name, repeats) -> (busy, latency) of a sequence: a kernel's loop
#: issues the same library routine on the same tile size over and over.
_SEQUENCE_COSTS: dict = {}
SEQUENCE_CACHE_LIMIT = 4096


def _sequence_cost(costs, steps, dtype: str, repeats: int) -> tuple[float, float]:
    key = (costs, steps, dtype, repeats)
    try:
        cost = _SEQUENCE_COSTS.get(key)
    except TypeError:  # a step given as a list: not a key, and not worth one
        return costs.sequence(steps, dtype, repeats)
    if cost is None:
        if len(_SEQUENCE_COSTS) >= SEQUENCE_CACHE_LIMIT:
            _SEQUENCE_COSTS.clear()
        cost = _SEQUENCE_COSTS[key] = costs.sequence(steps, dtype, repeats)
    return cost


def _compute_sequence(core, rec: VectorSequence, outputs) -> None:
    loc = rec.loc
    inputs = [view(core, s, 0, s.count, loc) for s in rec.srcs]
    with np.errstate(all="ignore"):
        results = rec.fn(*inputs)
    if isinstance(rec.dst, Region):  # one destination, one result
        results = (results,)
    # Every result is computed before any is stored: outputs may alias inputs.
    for region, result in zip(outputs, results):
        index = slice(None)
        if isinstance(result, tuple):  # (element indices, values): only those are written
            index, result = result
        view(core, region, 0, region.count, loc)[index] = np.asarray(result).reshape(-1).astype(
            region.dtype, copy=False)


EXECUTORS = {Vector: execute_vector, VectorCompare: execute_compare, VectorSelect: execute_select,
             VectorReduce: execute_reduce, VectorGather: execute_gather,
             VectorSequence: execute_sequence}
