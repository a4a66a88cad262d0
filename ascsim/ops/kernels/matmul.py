"""Matmul kernels of the operator library: C = A·B + bias, alone or with LeakyReLU fused in.

Both are MIX kernels driven from the AIVs through the Matmul high-level API: each AIV owns one
``single_core_m x single_core_n`` region of C (M-first over the cores, tails allowed), its AIC
computes the blocks. ``matmul_bias_kernel`` writes the region straight to GM with
``iterate_all``; ``matmul_leaky_relu_kernel`` pulls every block into UB with ``get_tensor_c``,
applies LeakyReLU on the vector unit and writes the block to its place in C.
"""

from __future__ import annotations

import ascsim.asc as asc

C0_BYTES = 32


@asc.jit
def region(tiling):
    """(row offset, col offset, rows, cols) of this AIV's region of C."""
    core = asc.get_block_idx()
    regions_down = tiling.m.ceildiv(tiling.single_core_m)
    row0 = core % regions_down * tiling.single_core_m
    col0 = core // regions_down * tiling.single_core_n
    rows = min(tiling.single_core_m, tiling.m - row0)
    cols = min(tiling.single_core_n, tiling.n - col0)
    return row0, col0, rows, cols


@asc.jit
def bind_region(mm, a, b, bias, c, tiling):
    """Point ``mm`` at this AIV's region (A rows, B and bias columns, its tail); returns the
    region's rows and cols and C's GM tensor from the region's first element."""
    row0, col0, rows, cols = region(tiling)
    a_gm, b_gm, bias_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a + row0 * tiling.k_a)
    b_gm.set_global_buffer(b + col0)
    bias_gm.set_global_buffer(bias + col0)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    mm.set_bias(bias_gm)
    mm.set_tail(rows, cols)
    c_gm = asc.GlobalTensor()
    c_gm.set_global_buffer(c + row0 * tiling.n + col0)
    return rows, cols, c_gm


@asc.jit
def make_matmul(a, b, c, bias, c_position: asc.ConstExpr[int]):
    return asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b.dtype),
        c=asc.adv.MatmulType(c_position, asc.CubeFormat.ND, c.dtype),
        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bias.dtype),
    )


@asc.jit
def matmul_bias_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, bias: asc.GlobalAddress,
                       c: asc.GlobalAddress, tiling: asc.adv.TCubeTiling,
                       workspace: asc.GlobalAddress):
    """C = A·B + bias (fp32 C in GM)."""
    pipe = asc.TPipe()
    mm = make_matmul(a, b, c, bias, asc.TPosition.GM)
    asc.adv.register_matmul(pipe, workspace, mm, tiling)
    if asc.get_block_idx() < tiling.used_core_num:
        _, _, c_gm = bind_region(mm, a, b, bias, c, tiling)
        mm.iterate_all(c_gm)
        mm.end()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


@asc.jit
def matmul_leaky_relu_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress,
                             bias: asc.GlobalAddress, c: asc.GlobalAddress, alpha: float,
                             tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress):
    """C = LeakyReLU(A·B + bias) in one kernel: every C block is finished in UB."""
    block_elems = tiling.base_m * tiling.base_n
    pipe = asc.TPipe()
    out_queue = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=out_queue, num=2, len=block_elems * c.dtype.sizeof())
    mm = make_matmul(a, b, c, bias, asc.TPosition.VECCALC)
    asc.adv.register_matmul(pipe, workspace, mm, tiling)
    if asc.get_block_idx() < tiling.used_core_num:
        rows, cols, c_gm = bind_region(mm, a, b, bias, c, tiling)
        blocks_down = rows.ceildiv(tiling.base_m)
        size = c.dtype.sizeof()
        with mm.iterate() as count:
            bi, bj = count % blocks_down, count // blocks_down
            block_rows = min(tiling.base_m, rows - bi * tiling.base_m)
            block_cols = min(tiling.base_n, cols - bj * tiling.base_n)
            block = out_queue.alloc_tensor(c.dtype)
            if block_cols < tiling.base_n:
                # The block lands at a pitch of base_n: zero the columns it does not fill so
                # the activation below never reads stale bytes.
                asc.duplicate(block, 0.0, block_rows * tiling.base_n)
                # The block is written next by MTE2 (910B) or the AIC's FixPipe (950): the
                # scalar unit must not send the request before the vector unit is done.
                asc.set_flag(asc.HardEvent.V_S, 0)
                asc.wait_flag(asc.HardEvent.V_S, 0)
            mm.get_tensor_c(block, en_sequential_write=True)
            asc.leaky_relu(block, block, alpha, count=block_rows * tiling.base_n)
            out_queue.enque(block)
            block = out_queue.deque(c.dtype)
            at = bi * tiling.base_m * tiling.n + bj * tiling.base_n
            row_bytes = block_cols * size
            padded = (row_bytes + C0_BYTES - 1) // C0_BYTES * C0_BYTES
            params = asc.DataCopyExtParams(
                block_count=block_rows, block_len=row_bytes,
                src_stride=(tiling.base_n * size - padded) // C0_BYTES,
                dst_stride=(tiling.n - block_cols) * size)
            asc.data_copy_pad(c_gm[at:], block, params)
            out_queue.free_tensor(block)
        mm.end()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
