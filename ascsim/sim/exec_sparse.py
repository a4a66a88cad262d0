"""4:2 structured-sparse matrix multiply: the Cube's sparsity-index buffer
(:class:`~ascsim.isa.instr.SparseIndexLoad`) and the sparse :class:`~ascsim.isa.instr.Mmad`.

Source: Ascend C's LoadDataWithSparse and MmadWithSparse pages. Each group of four original
K positions of A keeps two: for dense B rows ``2g`` and ``2g + 1`` with 2-bit indices ``i0``
and ``i1`` (of the same column), row ``2g`` multiplies A's element ``4g + i0`` and row
``2g + 1`` A's element ``4g + max(1 + i1, i0)`` -- the page's selection table (i0 is the
first non-zero among elements 0..2, i1 the second's place among elements 1..3; where i1
points at or before i0 both picks are element i0). Products of int8 are summed exactly in
int32, as a dense int8 Mmad.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import Mmad, SparseIndexLoad
from ascsim.sim import fractal
from ascsim.sim.exec_copy import route
from ascsim.sim.views import check_accesses, gates_done, gates_ready, view

INDEX_BITS = 2
PER_BYTE = 8 // INDEX_BITS
#: Architectures whose Cube has the sparse path (the pages list the 910B / 910_93 only).
SPARSE_ARCHS = {2201}


def index_buffer(core) -> np.ndarray:
    """The core's sparsity-index buffer: a quarter of L0B, zero at the start of a launch."""
    buf = getattr(core, "sparse_index_buffer", None)
    if buf is None:
        buf = core.sparse_index_buffer = np.zeros(core.soc.l0b_bytes // PER_BYTE, np.uint8)
    return buf


def require_sparse(core, op: str, loc) -> None:
    if core.soc.npu_arch not in SPARSE_ARCHS:
        raise KernelError(f"{op}: {core.soc.name} has no 4:2 sparse Cube path (the 910B / "
                          "910_93 generation has it)", loc)


def execute_sparse_index_load(core, rec: SparseIndexLoad):
    loc = rec.loc
    require_sparse(core, rec.op, loc)
    if rec.src.mem.space != "L1" or rec.b.mem.space != "L0B":
        raise KernelError(f"{rec.op}: the indices come from L1 and belong to L0B data", loc)
    cost = route(core, rec.src, rec.b, loc)
    first = rec.b.offset // PER_BYTE
    buf = index_buffer(core)
    if first + rec.nbytes > buf.size:
        raise KernelError(f"{rec.op}: {rec.nbytes} index bytes at buffer byte {first} pass the "
                          f"end of the {buf.size}-byte index buffer", loc)
    src_bytes = rec.src._replace(dtype=np.dtype(np.uint8))
    read = (rec.src.mem.key, rec.src.offset + rec.start, rec.src.offset + rec.start + rec.nbytes)
    if core.launch.values:
        buf[first:first + rec.nbytes] = view(core, src_bytes, rec.start, rec.nbytes, loc)
    else:
        check_accesses(core, ((src_bytes, read),), loc)
    core.count_bytes(cost.path, rec.nbytes)
    start = core.begin(cost.pipe, max(gates_ready((rec.src,)), rec.after))
    busy, latency = core.costs.transfer(core, cost, rec.nbytes, 1, None, start)
    instr = core.place(cost.pipe, rec.op, start, busy, latency, loc, (read,), (), rec)
    gates_done((rec.src,), instr.done)
    return instr


def unpack_indices(packed: np.ndarray) -> np.ndarray:
    """2-bit indices, four to a byte, least significant bits first."""
    shifts = np.arange(PER_BYTE, dtype=np.uint8) * INDEX_BITS
    return ((packed[:, None] >> shifts) & 3).reshape(-1).astype(np.int64)


def selected_positions(idx: np.ndarray) -> np.ndarray:
    """K positions of A that dense B rows ``j`` (axis 0) multiply, per column."""
    rows = idx.shape[0]
    pos = np.empty_like(idx)
    group = 4 * (np.arange(rows) // 2)[:, None]
    i0 = idx[0::2]
    pos[0::2] = group[0::2] + i0
    pos[1::2] = group[1::2] + np.maximum(1 + idx[1::2], i0[: idx[1::2].shape[0]])
    return pos


def selected_product(a: np.ndarray, b: np.ndarray, idx: np.ndarray, loc) -> np.ndarray:
    """int32 ``m x n`` product of int8 ``a`` (``m x k``) with the dense ``k/2 x n`` ``b`` whose
    elements' 2-bit indices are ``idx`` (``k/2 x n``): each B element multiplies the A element
    its index selects (:func:`selected_positions`), summed exactly."""
    k, kd = a.shape[1], b.shape[0]
    if k % 4 or kd != k // 2 or idx.shape != b.shape:
        raise KernelError(f"4:2 sparse product: A is {a.shape[0]}x{k} (k a multiple of 4), so "
                          f"B must be {k // 2}x{b.shape[1]} and so must its indices; got B "
                          f"{b.shape[0]}x{b.shape[1]}, indices {idx.shape[0]}x{idx.shape[1]}",
                          loc)
    pos = selected_positions(idx.astype(np.int64))
    if (pos >= k).any():
        raise KernelError(f"4:2 sparse product: an index selects a K position past k={k}", loc)
    picked = a.astype(np.int64)[:, pos]  # m x kd x n
    return np.einsum("mjn,jn->mn", picked, b.astype(np.int64)).astype(np.int32)


def sparse_product(core, rec: Mmad, loc) -> None:
    """Compute a sparse Mmad's C (see the module docstring)."""
    a, b, dst = rec.a, rec.b, rec.dst
    m, n, k = rec.m, rec.n, rec.k
    c0 = fractal.c0_of(a.dtype)
    kd = k // 2
    mp, np_ = -(-m // 16) * 16, -(-n // 16) * 16
    kp, kdp = -(-k // c0) * c0, -(-kd // c0) * c0
    a_flat = view(core, a, 0, mp * kp, loc)
    if core.soc.l0a_layout == "NZ":
        a_nd = fractal.nz_to_nd(a_flat, mp, kp, c0)[:m, :k]
    else:
        a_nd = fractal.zz_to_nd(a_flat, mp, kp, c0)[:m, :k]
    b_nd = fractal.zn_to_nd(view(core, b, 0, kdp * np_, loc), kdp, np_, c0)[:kd, :n]
    first = b.offset // PER_BYTE
    packed = index_buffer(core)[first:first + kdp * np_ // PER_BYTE]
    idx = fractal.zn_to_nd(unpack_indices(packed), kdp, np_, c0)[:kd, :n]
    product = selected_product(a_nd, b_nd, idx, loc).astype(np.int64)
    c_flat = view(core, dst, 0, mp * np_, loc)
    if rec.accumulate:
        product += fractal.nz_to_nd(c_flat, mp, np_, fractal.L0C_C0)[:m, :n]
    full = np.zeros((mp, np_), np.int64)
    full[:m, :n] = product
    c_flat[:] = fractal.nd_to_nz(full.astype(np.int32), fractal.L0C_C0).reshape(-1)


EXECUTORS = {SparseIndexLoad: execute_sparse_index_load}
