"""Executors of the data-movement records: :class:`Copy`, :class:`IndexedCopy` and the scalar
unit's loads and stores (semantics and costs: :mod:`ascsim.isa.instr`).

A copy moves its bytes with one numpy assignment (a strided view on each side for many equal
blocks), records one access per side (a strided record when the blocks are apart, so cores
writing interleaved rows of one matrix are not taken for overlapping writers), counts the bytes
on its path, and is priced at its true start, so the L2 model sees each GM transfer when it
really happens.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import Copy, IndexedCopy, ScalarLoad, ScalarStore
from ascsim.isa.operands import Bursts, Region
from ascsim.sim.access import ByteRows, strided
from ascsim.sim.numerics import convert
from ascsim.sim.views import (
    ATOMIC_OPS,
    check_accesses,
    check_alignment,
    check_bytes,
    gates_done,
    gates_ready,
    index_access,
    raw_bytes,
    span,
    stored,
    view,
    write_back,
    write_rows,
)


def route(core, src: Region, dst: Region, loc):
    """The :class:`~ascsim.sim.cost.PathCost` of a move from ``src`` to ``dst``, or a clear
    error when the SoC has no such path or the core cannot reach one of the memories."""
    src_mem, dst_mem = src.mem, dst.mem
    cost = core.costs.route(core.kind, src_mem.space, dst_mem.space)
    if cost is None:
        raise KernelError(f"there is no {src_mem.space}->{dst_mem.space} data path on "
                          f"{core.soc.name}", loc)
    me = core.core_id
    if getattr(src_mem, "core_id", me) != me or (
            getattr(dst_mem, "core_id", me) != me
            and not _reaches(core, cost.path, dst_mem.core_id)):
        # An AIC names its AIVs' UB only as a FixPipe destination, an AIV its AIC's L1 only
        # as an UB->L1 destination (ascend-hw §2.4).
        raise KernelError(f"{cost.path}: the {core.kind} cannot reach another core's "
                          "local memory (only FixPipe L0C->UB writes an AIV's UB, and only "
                          "UB->L1 writes the group AIC's L1)", loc)
    return cost


#: Paths that write into a memory of another core of the group: path -> that core's kind.
CROSS_CORE_PATHS = {"L0C->UB": "AIV", "UB->L1": "AIC"}
#: The index arrays of an executed IndexedCopy's kept record (see :func:`_indexed_place`).
NO_INDEX = np.empty(0, dtype=np.int64)
NO_INDEX.flags.writeable = False


def _reaches(core, path: str, other_id: int) -> bool:
    """Whether ``path`` from ``core`` may write the memory of core ``other_id`` (a core of
    its own group of the kind the path leads to)."""
    kind = CROSS_CORE_PATHS.get(path)
    if kind is None:
        return False
    if kind == "AIV":
        return True  # FixPipe names its AIV by sub-block; the record chose the memory
    partner = core.launch.partner(core, kind)
    return partner is not None and partner.core_id == other_id


def _move_bursts(dst_bytes: np.ndarray, src_bytes: np.ndarray, bursts: Bursts) -> None:
    """Move the blocks between the raw byte spans of their hulls."""
    width = bursts.width
    if bursts.count == 1:
        dst_bytes[:width] = src_bytes[:width]
        return
    # One (blocks x width) strided view on each side; the hulls end at the last block, so the
    # views fit the spans exactly.
    shape = (bursts.count, width)
    np.ndarray(shape, np.uint8, dst_bytes, 0, (bursts.dst_pitch, 1))[...] = (
        np.ndarray(shape, np.uint8, src_bytes, 0, (bursts.src_pitch, 1)))


def _combine_bursts(dst_bytes: np.ndarray, src_bytes: np.ndarray, bursts: Bursts, dtype,
                    atomic: str, loc) -> None:
    """An atomic store: each block's elements (of ``dtype``) combined with the destination's by
    ``atomic`` ("add", "max", "min"), computed in fp32 for floats, rounded once."""
    size = dtype.itemsize
    if bursts.width % size or bursts.dst_pitch % size or bursts.src_pitch % size:
        raise KernelError(f"atomic {atomic}: blocks of {bursts.width} B are not whole "
                          f"{dtype.name} elements", loc)
    shape = (bursts.count, bursts.width)
    dst_rows = np.ndarray(shape, np.uint8, dst_bytes, 0, (bursts.dst_pitch, 1))
    src_rows = np.ndarray(shape, np.uint8, src_bytes, 0, (bursts.src_pitch, 1))
    old = np.ascontiguousarray(dst_rows).view(dtype)
    new = np.ascontiguousarray(src_rows).view(dtype)
    wide = np.float32 if dtype.kind in "fV" else np.int64
    with np.errstate(all="ignore"):
        combined = ATOMIC_OPS[atomic](old.astype(wide), new.astype(wide))
    if dtype.kind in "iu":  # integer atomics wrap like the integer adder
        combined = combined.astype(dtype)
    dst_rows[...] = np.asarray(combined, dtype=dtype).view(np.uint8)


def _block_access(region: Region, bursts: Bursts, side: int, lo: int, hi: int) -> tuple:
    first, pitch = bursts.side(side)
    key, base = region.mem.key, region.offset
    if bursts.count == 1 or pitch == bursts.width:
        return (key, base + lo, base + hi)
    return strided(key, base + first, bursts.width, pitch, bursts.count)


def _gm_rows(region: Region, bursts: Bursts, side: int):
    """``(buffer id, ByteRows)`` of the GM side of a copy, for the L2 model."""
    first, pitch = bursts.side(side)
    return region.mem.id, ByteRows(region.offset + first, bursts.width, pitch, bursts.count)


def execute_copy(core, rec: Copy):
    src, dst, bursts, loc = rec.src, rec.dst, rec.bursts, rec.loc
    if src is None or dst is None:
        return _cost_only_copy(core, rec)
    cost = route(core, src, dst, loc)
    check_alignment(core, rec.op, (dst, src), loc)
    total = bursts.nbytes
    values = core.launch.values
    if bursts.count == 1 and rec.atomic is None:
        # One plain block (most copies): the general case below, spelled out.
        s_lo, d_lo = bursts.src, bursts.dst
        s_hi, d_hi = s_lo + total, d_lo + total
        if values:
            target = raw_bytes(core, dst, d_lo, d_hi, loc)  # (destination first, as below)
            target[:total] = raw_bytes(core, src, s_lo, s_hi, loc)
            write_back(dst, d_lo, target)
        else:
            check_bytes(core, dst, d_lo, d_hi, loc)
            check_bytes(core, src, s_lo, s_hi, loc)
        s_lo += src.offset
        d_lo += dst.offset
        reads = ((src.mem.key, s_lo, s_lo + total),)
        writes = ((dst.mem.key, d_lo, d_lo + total),)
        ub_span = (d_lo, d_lo + total)
        gm = ((src.mem.id, ByteRows(s_lo, total, bursts.src_pitch, 1)) if cost.reads_gm else
              (dst.mem.id, ByteRows(d_lo, total, bursts.dst_pitch, 1)) if cost.touches_gm
              else None)
    elif total:
        s_lo, s_hi = bursts.hull(0)
        d_lo, d_hi = bursts.hull(1)
        if values:
            written = raw_bytes(core, dst, d_lo, d_hi, loc)
            if rec.atomic is None:
                _move_bursts(written, raw_bytes(core, src, s_lo, s_hi, loc), bursts)
            else:
                _combine_bursts(written, raw_bytes(core, src, s_lo, s_hi, loc), bursts,
                                dst.dtype, rec.atomic, loc)
            write_back(dst, d_lo, written)
        else:
            check_bytes(core, dst, d_lo, d_hi, loc)
            check_bytes(core, src, s_lo, s_hi, loc)
        reads = (_block_access(src, bursts, 0, s_lo, s_hi),)
        writes = (_block_access(dst, bursts, 1, d_lo, d_hi),)
        ub_span = (dst.offset + d_lo, dst.offset + d_hi)
        gm = (_gm_rows(src, bursts, 0) if cost.reads_gm else
              _gm_rows(dst, bursts, 1) if cost.touches_gm else None)
    else:
        reads = writes = ()
        gm = ub_span = None
    if rec.pad is not None and values:
        where, value = rec.pad
        view(core, dst, 0, int(where.max()) + 1, loc)[where] = value
    core.count_bytes(cost.path, total)
    ready = gates_ready((src, dst))
    start = core.begin(cost.pipe, ready if ready > rec.after else rec.after)
    busy, latency = core.costs.transfer(core, cost, total, bursts.count, gm, start, ub_span)
    instr = core.place(cost.pipe, rec.op, start, busy, latency, loc, reads, writes, rec)
    gates_done((src, dst), instr.done)
    return instr


def _cost_only_copy(core, rec: Copy):
    """A copy one side of which the model does not hold: priced and recorded, nothing moved."""
    cost = core.costs.path(core.kind, rec.path)
    if cost is None:
        raise KernelError(f"there is no {rec.path} data path on {core.soc.name}", rec.loc)
    if rec.src is None and rec.dst is None:
        return _unnamed_copy(core, rec, cost)
    bursts = rec.bursts
    total = bursts.nbytes
    reads = writes = ()
    if rec.values is not None and rec.dst is not None and total and core.launch.values:
        size = rec.dst.dtype.itemsize
        write_rows(core, rec.dst.at(bursts.dst // size), bursts.count, bursts.width // size,
                   bursts.dst_pitch // size, rec.values, rec.atomic, rec.loc)
    if total:
        if rec.src is not None:
            reads = (_block_access(rec.src, bursts, 0, *bursts.hull(0)),)
        if rec.dst is not None:
            writes = (_block_access(rec.dst, bursts, 1, *bursts.hull(1)),)
    gm = rec.gm
    if gm == ():
        gm = None
    elif gm is None and total and cost.touches_gm:
        side = rec.src if cost.reads_gm else rec.dst
        if side is not None:
            gm = _gm_rows(side, bursts, 0 if cost.reads_gm else 1)
    core.count_bytes(cost.path, total)
    regions = (rec.src, rec.dst)
    ready = gates_ready(regions)
    start = core.begin(cost.pipe, ready if ready > rec.after else rec.after)
    busy, latency = core.costs.transfer(core, cost, total, rec.runs or bursts.count, gm, start)
    instr = core.place(cost.pipe, rec.op, start, busy, latency, rec.loc, reads, writes, rec)
    gates_done(regions, instr.done)
    return instr


def _unnamed_copy(core, rec: Copy, cost):
    """A cost-only copy that names neither side (the Matmul API's operand loads, most of its
    records): :func:`_cost_only_copy` without what needs a region -- no values, no accesses,
    no gates; its GM bytes for the L2 model are ``rec.gm`` alone (``()`` or None: none)."""
    bursts = rec.bursts
    total = bursts.nbytes
    core.count_bytes(cost.path, total)
    after = rec.after
    start = core.begin(cost.pipe, 0.0 if 0.0 > after else after)
    busy, latency = core.costs.transfer(core, cost, total, rec.runs or bursts.count,
                                        rec.gm or None, start)
    return core.place(cost.pipe, rec.op, start, busy, latency, rec.loc, (), (), rec)


def execute_indexed_copy(core, rec: IndexedCopy):
    src, dst, loc = rec.src, rec.dst, rec.loc
    cost = route(core, src, dst, loc)
    check_alignment(core, rec.op, (dst, src), loc)
    if rec.nibbles:
        return _nibble_copy(core, rec, cost)
    src_idx = rec.src_index.reshape(-1)
    valid = src_idx >= 0
    complete = bool(valid.all())
    if not core.launch.values:
        return _indexed_timing(core, rec, cost, src_idx if complete else src_idx[valid])
    src_view, read = span(core, src, src_idx if complete else src_idx[valid], loc)
    if rec.dst_index is None:  # the first elements, in order: a slice, not a scatter
        dst_idx = slice(0, src_idx.size)
        dst_view = view(core, dst, 0, src_idx.size, loc)
        write = dst.access(0, src_idx.size) if src_idx.size else None
    else:
        dst_idx = rec.dst_index.reshape(-1)
        dst_view, write = span(core, dst, dst_idx, loc)
        if rec.dst_runs is not None and write is not None:
            write = _runs_access(dst, rec.dst_runs)
    if src_idx.size and rec.convert:
        values = np.full(src_idx.shape, rec.fill, dtype=dst.dtype)
        values[valid] = convert(src_view[src_idx[valid]], dst.dtype, "rint")
        dst_view[dst_idx] = values
    elif src_idx.size:
        if complete:
            dst_view[dst_idx] = src_view[src_idx].view(dst.dtype)
        else:
            # Rows that end mid-fractal (the DMA zero-fills the rest of the 32-byte block), or
            # a Load3D's padding positions.
            values = np.full(src_idx.shape, rec.fill, dtype=dst.dtype)
            values[valid] = src_view[src_idx[valid]].view(dst.dtype)
            dst_view[dst_idx] = values
    stored(dst, dst_view)
    return _indexed_place(core, rec, cost, read, write)


def _nibble_copy(core, rec: IndexedCopy, cost):
    """An :class:`IndexedCopy` of 4-bit codes packed two to a byte: the source's codes
    gathered, each destination byte rewritten in the half its code goes to."""
    src, dst, loc = rec.src, rec.dst, rec.loc
    src_idx = rec.src_index.reshape(-1)
    valid = src_idx >= 0
    taken = src_idx[valid]
    dst_idx = (np.arange(src_idx.size, dtype=np.int64) if rec.dst_index is None
               else rec.dst_index.reshape(-1))
    if not core.launch.values:
        read = index_access(src, taken >> 1) if taken.size else None
        write = index_access(dst, dst_idx >> 1) if dst_idx.size else None
        check_accesses(core, [(r, a) for r, a in ((src, read), (dst, write)) if a is not None],
                       loc)
        return _indexed_place(core, rec, cost, read, write)
    src_view, read = span(core, src, taken >> 1, loc)
    codes = np.zeros(src_idx.shape, dtype=np.uint8)
    codes[valid] = (src_view.view(np.uint8)[taken >> 1] >> ((taken & 1) << 2).astype(np.uint8)
                    ) & 0xF
    dst_view, write = span(core, dst, dst_idx >> 1, loc)
    out = dst_view.view(np.uint8)
    for half, keep in ((0, 0xF0), (1, 0x0F)):  # within a half, each byte appears once
        sel = (dst_idx & 1) == half
        at = dst_idx[sel] >> 1
        out[at] = (out[at] & keep) | (codes[sel] << (4 * half))
    stored(dst, dst_view)
    return _indexed_place(core, rec, cost, read, write)


def _runs_access(region: Region, runs: tuple) -> tuple:
    """The access record of ``(first, run, pitch, count)`` element runs of ``region``."""
    first, run, pitch, count = runs
    size = region.dtype.itemsize
    return strided(region.mem.key, region.offset + first * size, run * size, pitch * size,
                   count)


def _indexed_timing(core, rec: IndexedCopy, cost, src_idx: np.ndarray):
    """A fractal load in a timing-only run: its accesses and cost, no bytes moved."""
    src, dst, loc = rec.src, rec.dst, rec.loc
    read = index_access(src, src_idx) if src_idx.size else None
    if rec.dst_index is None:
        write = dst.access(0, rec.src_index.size) if rec.src_index.size else None
    elif rec.dst_runs is not None and rec.dst_index.size:
        write = _runs_access(dst, rec.dst_runs)
    else:
        write = index_access(dst, rec.dst_index.reshape(-1)) if rec.dst_index.size else None
    check_accesses(core, [(r, a) for r, a in ((src, read), (dst, write)) if a is not None], loc)
    return _indexed_place(core, rec, cost, read, write)


def _indexed_place(core, rec: IndexedCopy, cost, read, write):
    src, dst, loc = rec.src, rec.dst, rec.loc
    core.count_bytes(cost.path, rec.nbytes)
    gm = None
    if rec.gm_rows is not None and cost.touches_gm:
        first, row = rec.gm_rows
        side = src if cost.reads_gm else dst
        size = side.dtype.itemsize
        starts = side.offset + np.asarray(first).reshape(-1).astype(np.int64) * size
        if starts.size:
            gm = (side.mem.id, starts, starts + row * size)
    ready = gates_ready((src, dst))
    start = core.begin(cost.pipe, ready if ready > rec.after else rec.after)
    busy, latency = core.costs.transfer(core, cost, rec.nbytes, rec.bursts, gm, start)
    # The launch keeps every instruction's record until its report is made; the index arrays
    # (about 1 MB for a 256 x 256 fractal copy) are needed only above, so the kept record goes
    # without them (a long hand-written cube pipeline would otherwise fill the host's memory).
    kept = rec._replace(src_index=NO_INDEX, dst_index=None, gm_rows=None, dst_runs=None)
    instr = core.place(cost.pipe, rec.op, start, busy, latency, loc,
                       (read,) if read else (), (write,) if write else (), kept)
    gates_done((src, dst), instr.done)
    return instr


def _on_scalar_unit(core, instr) -> None:
    """A local scalar load or store is the scalar unit's own work: the scalar unit goes on once
    it is done (so a flag set from pipe S after it covers it, and its cycles are not counted
    twice against the scalar unit's time)."""
    core.block_pipe("S", instr.end, (core.core_id, "S", instr.end))


#: How many of a core's latest pipe instructions a scalar load looks through for the one that
#: wrote the value it reads (an older writer has long completed in any kernel that loops).
PRODUCER_WINDOW = 256


def last_write_done(core, access: tuple) -> float:
    """When the latest pipe instruction writing the bytes of ``access`` (key, lo, hi) completes
    (0: none among the core's last :data:`PRODUCER_WINDOW` instructions)."""
    key, lo, hi = access
    instrs = core.instrs
    for instr in reversed(instrs[-PRODUCER_WINDOW:]):
        for write in instr.writes:  # (key, lo, hi) or, for lane accesses, more fields
            w_key, w_lo, w_hi = write[0], write[1], write[2]
            if w_key == key and w_lo < hi and lo < w_hi:
                return instr.done
    return 0.0


def execute_scalar_load(core, rec: ScalarLoad):
    src, loc = rec.src, rec.loc
    if src.mem.space == "GM":
        core.scalar_work(core.timing.gm_read_latency_cycles)  # the scalar unit stalls
        return view(core, src, 0, 1, loc)[0]
    # The scalar unit needs the value itself: it waits for the pipe instruction that writes it
    # (pyasc's automatic synchronisation puts a flag from that pipe to S before the read).
    read = src.access(0, 1)
    ready = max(gates_ready((src,)), last_write_done(core, read))
    _on_scalar_unit(core, core.issue("S", rec.op, core.timing.scalar_ld_st_cycles, 0, loc,
                                     reads=(read,), ready=ready, record=rec))
    return view(core, src, 0, 1, loc)[0].item()


def execute_scalar_store(core, rec: ScalarStore):
    dst, loc = rec.dst, rec.loc
    if dst.mem.space == "GM":
        core.scalar_work(core.timing.gm_write_latency_cycles)
    else:
        _on_scalar_unit(core, core.issue("S", rec.op, core.timing.scalar_ld_st_cycles, 0, loc,
                                         writes=(dst.access(0, 1),), ready=gates_ready((dst,)),
                                         record=rec))
    view(core, dst, 0, 1, loc)[0] = rec.value


EXECUTORS = {Copy: execute_copy, IndexedCopy: execute_indexed_copy,
             ScalarLoad: execute_scalar_load, ScalarStore: execute_scalar_store}
