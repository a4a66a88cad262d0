"""Operands as the machine touches them: numpy views of regions, with the bounds rules applied.

The rules are those of :mod:`ascsim.isa.operands`: bytes outside a local memory are a fault; bytes
past a local allocation's end are a ``local-overflow`` finding, past a GM allocation's true size
a ``gm-out-of-bounds`` finding, and the access goes ahead as on the device. A GM access beyond
the allocation's padding is a ``gm-out-of-bounds`` finding too: as on the device, a read gets
whatever lies at those addresses (the next allocation's bytes, the fill byte past all of
them), and the bytes of a write that lie there are dropped -- it never changes another
allocation behind the kernel's back, while its bytes within the allocation are stored. Gates
(the buffer hand-over of queue slots, :class:`ascsim.sim.sync.Gate`) order the instructions
that touch a gated region; :func:`gates_ready` and :func:`gates_done` apply them.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.operands import Region


def view(core, region: Region, start: int, count: int, loc) -> np.ndarray:
    """A numpy view of ``count`` elements of ``region`` from element ``start``."""
    mem = region.mem
    np_dtype = region.dtype
    size = np_dtype.itemsize
    lo = region.offset + start * size
    hi = lo + count * size
    if lo < 0 or hi > mem.capacity:
        return _outside(core, mem, lo, hi, loc).view(np_dtype)
    if mem.space == "GM":
        if hi > mem.nbytes:
            _past_gm_end(core, mem, lo, hi, loc)
        return mem.data[lo:hi].view(np_dtype)
    end = region.end
    if end is not None and hi > end:
        _past_local_end(core, mem, lo, hi, end, loc)
    if not lo % size:
        typed = mem.typed(np_dtype)
        if typed is not None:
            return typed[lo // size:hi // size]
    return mem.data[lo:hi].view(np_dtype)


def check_bytes(core, region: Region, lo: int, hi: int, loc) -> None:
    """The bounds rules of :func:`raw_bytes` without touching the bytes (a timing-only run)."""
    mem = region.mem
    a, b = region.offset + lo, region.offset + hi
    if a < 0 or b > mem.capacity:
        _outside(core, mem, a, b, loc, read=False)
    elif mem.space == "GM":
        if b > mem.nbytes:
            _past_gm_end(core, mem, a, b, loc)
    elif region.end is not None and b > region.end:
        _past_local_end(core, mem, a, b, region.end, loc)


def check_accesses(core, pairs, loc) -> None:
    """The bounds rules for ``(region, access record)`` pairs, touching no bytes (what a
    timing-only run checks where a full run takes views)."""
    for region, record in pairs:
        if record[2] > record[1]:
            check_bytes(core, region, record[1] - region.offset, record[2] - region.offset, loc)


def raw_bytes(core, region: Region, lo: int, hi: int, loc) -> np.ndarray:
    """Bytes ``[lo, hi)`` counted from ``region``'s offset, with the same rules as :func:`view`."""
    mem = region.mem
    a, b = region.offset + lo, region.offset + hi
    if a < 0 or b > mem.capacity:
        return _outside(core, mem, a, b, loc)
    if mem.space == "GM":
        if b > mem.nbytes:
            _past_gm_end(core, mem, a, b, loc)
    elif region.end is not None and b > region.end:
        _past_local_end(core, mem, a, b, region.end, loc)
    return mem.data[a:b]


def write_back(region: Region, lo: int, written: np.ndarray) -> None:
    """After a write into :func:`raw_bytes` ``[lo, ...)`` of a GM region that ran past the
    allocation's padding (``written`` is then a copy, not a view): store the bytes that lie
    within the allocation, as the device does, and drop the rest (they would land in memory
    the kernel does not own)."""
    mem = region.mem
    if mem.space != "GM":
        return
    a = region.offset + lo
    if a >= 0 and a + written.size <= mem.capacity:
        return  # within the buffer: raw_bytes gave a view, written in place
    first = max(a, 0)
    stop = min(a + written.size, mem.capacity)
    if first < stop:
        mem.data[first:stop] = written[first - a:stop - a]


def span(core, region: Region, idx: np.ndarray, loc) -> tuple[np.ndarray, tuple | None]:
    """(view of ``region`` covering every element index in ``idx`` from element 0, access
    record of the touched hull), or (an empty view, None) when ``idx`` is empty."""
    if not idx.size:
        return view(core, region, 0, 0, loc), None
    lo, hi = int(idx.min()), int(idx.max()) + 1
    return view(core, region, 0, hi, loc), region.access(lo, hi - lo)


def index_access(region: Region, idx: np.ndarray) -> tuple:
    """The access record of the byte hull that element indices ``idx`` of ``region`` cover."""
    if not idx.size:
        return region.access(0, 0)
    lo = int(idx.min())
    return region.access(lo, int(idx.max()) + 1 - lo)


#: How a write combines with what the destination holds (atomic stores). The A2/A3 MTE3
#: combines by add, max and min (Ascend C SetAtomicAdd/Max/Min); ``and``, ``or``, ``xor`` and
#: ``xchg`` (replace) are not DMA modes: they stand for triton-ascend's lowering of
#: ``tl.atomic_and/or/xor/xchg/cas`` (a scalar atomic loop, its architecture_design doc), one
#: indivisible update per element, so that the Triton front-end gives it as one record.
ATOMIC_OPS = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
              "or": np.bitwise_or, "xor": np.bitwise_xor, "xchg": lambda old, new: new}


def write_rows(core, dst: Region, rows: int, cols: int, stride: int, values: np.ndarray,
               atomic: str | None, loc) -> None:
    """Store ``values`` (rows x cols) into ``dst`` rows ``stride`` elements apart, combined with
    what is there by ``atomic`` (None: overwrite)."""
    if rows <= 0 or cols <= 0:
        return
    flat = view(core, dst, 0, (rows - 1) * stride + cols, loc)
    size = flat.itemsize
    target = np.ndarray((rows, cols), flat.dtype, buffer=flat, strides=(stride * size, size))
    op = ATOMIC_OPS.get(atomic) if atomic else None
    if op is None:
        np.copyto(target, values, casting="unsafe")  # one cast, straight into the view
    else:
        target[...] = op(target.astype(np.float32), values.astype(np.float32)).astype(
            target.dtype)
    stored(dst, flat)


def stored(region: Region, written: np.ndarray) -> None:
    """After a write into ``written``, a :func:`view` of ``region`` from its element 0: when
    the view ran past the memory (it is then a copy, not the memory's bytes), store the bytes
    that lie within the allocation and drop the rest, as :func:`write_back` does."""
    lo = region.offset
    if lo < 0 or lo + written.nbytes > region.mem.capacity:
        write_back(region, 0, written.view(np.uint8))


def gates_ready(regions) -> float:
    """The earliest cycle an instruction touching ``regions`` may start (their gates)."""
    ready = 0.0
    for region in regions:
        if region is not None:
            gate = region.gate
            if gate is not None and gate.ready > ready:
                ready = gate.ready
    return ready


def gates_done(regions, done: float) -> None:
    """An instruction touching ``regions`` completes at ``done``: their gates' last use."""
    for region in regions:
        if region is not None:
            gate = region.gate
            if gate is not None and done > gate.last_done:
                gate.last_done = done


def check_alignment(core, op: str, regions, loc) -> None:
    """An ``alignment`` finding for every local operand off its buffer's boundary."""
    rules = core.costs.alignment
    for region in regions:
        if region is None:
            continue
        space = region.mem.space
        align = rules[space]
        if region.offset % align:
            core.launch.findings.report(
                "alignment", f"{op}: {space} address {region.offset} is not {align}-byte "
                "aligned", loc, hint=core.launch.hint("alignment", space=space, align=align),
                core=core.core_id)


def _outside(core, mem, lo: int, hi: int, loc, read: bool = True) -> np.ndarray | None:
    """Bytes ``[lo, hi)`` of a memory that lie (partly) outside it: a fault for a core's own
    buffer; for GM a finding, and a copy of what the addresses hold (writes to it are lost)."""
    if mem.space != "GM":
        raise KernelError(f"access to bytes [{lo}, {hi}) of {mem.name} is outside the buffer "
                          f"({mem.capacity} B on this SoC)", loc)
    core.launch.findings.report(
        "gm-out-of-bounds",
        f"access to bytes [{lo}, {hi}) of '{mem.name}' runs past its allocation ({mem.nbytes} B, "
        f"{mem.capacity} B with allocator padding): the device reads whatever lies there (here "
        "the next allocation's bytes, 0xFF past all of them) and a write stores only its bytes "
        "within the allocation",
        loc, hint="check the offset and length arithmetic, or pad the tensor on the host",
        core=core.core_id, buffer=mem.name, start=lo, stop=hi, size=mem.nbytes)
    return core.launch.memory.read_span(mem.address + lo, hi - lo) if read else None


def _past_gm_end(core, mem, lo: int, hi: int, loc) -> None:
    core.launch.findings.report(
        "gm-out-of-bounds",
        f"access to bytes [{lo}, {hi}) of '{mem.name}' runs past its end "
        f"({mem.nbytes} B); only the allocator's padding keeps this from faulting",
        loc, hint="check the offset and length arithmetic, or pad the tensor on the host",
        core=core.core_id, buffer=mem.name, start=lo, stop=hi, size=mem.nbytes)


def _past_local_end(core, mem, lo: int, hi: int, end: int, loc) -> None:
    core.launch.findings.report(
        "local-overflow",
        f"access to {mem.name} bytes [{lo}, {hi}) runs past the end of its "
        f"allocation (byte {end})", loc,
        hint="the element count exceeds the tensor: check count/len arguments",
        core=core.core_id, buffer=mem.name, start=lo, stop=hi, alloc_end=end)
