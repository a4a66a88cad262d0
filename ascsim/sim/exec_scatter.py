"""Executors of the data-dependent block gather and element scatter records
(:class:`~ascsim.isa.instr.VectorBlockGather`, :class:`~ascsim.isa.instr.VectorScatter`).

The addresses are data: a full run reads the offsets and records exactly the elements moved;
a timing-only run, which holds no values, records the whole data-side region instead.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import VectorBlockGather, VectorScatter
from ascsim.isa.operands import BLOCK_BYTES, BLOCKS_PER_REPEAT
from ascsim.sim.access import from_indices
from ascsim.sim.views import check_accesses, gates_done, gates_ready, view


def _check_ub(op: str, regions, loc) -> None:
    for region in regions:
        if region.mem.space != "UB":
            raise KernelError(f"{op}: operands must be UB tensors, got a tensor in "
                              f"{region.mem.space}", loc)


def _place(core, rec, regions, repeats: int, dtype, reads, writes):
    busy, latency = core.costs.vector("transpose", dtype, max(1, repeats))
    start = core.begin("V", max(gates_ready(regions), rec.after))
    instr = core.place("V", rec.op, start, busy, latency, rec.loc, reads, writes, rec)
    gates_done(regions, instr.done)
    return instr


def _bytes(region):
    return region._replace(dtype=np.dtype(np.uint8))


def execute_block_gather(core, rec: VectorBlockGather):
    loc = rec.loc
    _check_ub(rec.op, (rec.dst, rec.src, rec.offsets), loc)
    n = rec.repeats * BLOCKS_PER_REPEAT
    blk = rec.blk_stride or 1  # a block stride of 0 counts as 1 (Ascend C's Gatherb page)
    r, j = np.divmod(np.arange(n), BLOCKS_PER_REPEAT)
    dst_blocks = r * rec.rep_stride + j * blk
    within = np.arange(BLOCK_BYTES)
    dst_idx = (dst_blocks[:, None] * BLOCK_BYTES + within).reshape(-1)
    offsets_read = rec.offsets.access(0, n)
    dst_b, src_b = _bytes(rec.dst), _bytes(rec.src)
    if core.launch.values:
        offsets = view(core, rec.offsets, 0, n, loc).astype(np.int64)
        if n and (offsets % BLOCK_BYTES).any():
            bad = int(offsets[offsets % BLOCK_BYTES != 0][0])
            raise KernelError(f"{rec.op}: block offset {bad} is not a multiple of 32 bytes", loc)
        src_idx = (offsets[:, None] + within).reshape(-1)
        if n:
            data = view(core, src_b, 0, int(src_idx.max()) + 1, loc)[src_idx]
            view(core, dst_b, 0, int(dst_idx.max()) + 1, loc)[dst_idx] = data
        gathered = from_indices(rec.src.mem.key, rec.src.offset, 1, src_idx)
    else:
        gathered = (rec.src.access(),)
        check_accesses(core, ((rec.offsets, offsets_read),), loc)
    writes = from_indices(rec.dst.mem.key, rec.dst.offset, 1, dst_idx)
    return _place(core, rec, (rec.dst, rec.src, rec.offsets), rec.repeats, rec.src.dtype,
                  (offsets_read, *gathered), writes)


def execute_scatter(core, rec: VectorScatter):
    loc = rec.loc
    _check_ub(rec.op, (rec.dst, rec.src, rec.offsets), loc)
    size = rec.dst.dtype.itemsize
    src_reads = from_indices(rec.src.mem.key, rec.src.offset, rec.src.dtype.itemsize,
                             rec.src_lanes)
    offset_reads = from_indices(rec.offsets.mem.key, rec.offsets.offset, 4, rec.offset_lanes)
    if core.launch.values and rec.src_lanes.size:
        table = view(core, rec.offsets, 0, int(rec.offset_lanes.max()) + 1, loc)
        byte = table[rec.offset_lanes].astype(np.int64) + rec.base
        if (byte % size).any() or (byte < 0).any():
            bad = int(byte[(byte % size != 0) | (byte < 0)][0])
            raise KernelError(f"{rec.op}: destination byte offset {bad} is not a non-negative "
                              f"multiple of the element size {size}", loc)
        dst_idx = byte // size
        values = view(core, rec.src, 0, int(rec.src_lanes.max()) + 1, loc)[rec.src_lanes]
        view(core, rec.dst, 0, int(dst_idx.max()) + 1, loc)[dst_idx] = values
        writes = from_indices(rec.dst.mem.key, rec.dst.offset, size, dst_idx)
    else:
        writes = (rec.dst.access(),)
        check_accesses(core, ((rec.dst, writes[0]),), loc)
    return _place(core, rec, (rec.dst, rec.src, rec.offsets), rec.repeats, rec.src.dtype,
                  (*src_reads, *offset_reads), writes)


EXECUTORS = {VectorBlockGather: execute_block_gather, VectorScatter: execute_scatter}
