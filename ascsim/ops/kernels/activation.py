"""Element-wise activation kernel: fp32 in, activation in fp32, one cast to the output type.

This is the vector half of the semi-fused and unfused operators: it reads an fp32 tensor from GM
(a workspace), applies tanh / sigmoid / LeakyReLU on the Vector units and writes the output dtype.
Elements are dealt to the AIV cores in contiguous chunks; each core streams its chunk through a
double-buffered VECIN → compute → VECOUT pipeline. The last tile of a chunk may be partial and
is moved with data_copy_pad (byte-exact), so any element count works.
"""

from __future__ import annotations

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType

TILE = 2048  # elements per tile: 8 KiB of fp32, large enough for full-speed DMA
BUFFERS = 2

ACTIVATIONS = ("tanh", "sigmoid", "leaky_relu", "none")

_ROUND = asc.RoundMode.CAST_RINT


@asc.jit
def _one_over_one_plus_exp(dst, src, scale, n):
    """dst = 1 / (1 + exp(scale * src)): the shared core of the tanh and sigmoid steps."""
    asc.muls(dst, src, scale, n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.exp(dst, dst, n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.adds(dst, dst, 1.0, n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.reciprocal(dst, dst, n)


@asc.jit
def _activate(dst, src, act: asc.ConstExpr[str], alpha, n, narrow: asc.ConstExpr[bool]):
    """dst = act(src) over n fp32 elements (in place allowed); ``narrow``: the result is cast
    to fp16/bf16 afterwards."""
    if act == "tanh" and narrow:
        # tanh(x) = 1 - 2 / (exp(2x) + 1) in six basic steps: without the library routine's
        # clamp (two more steps) and its per-step bookkeeping; exp(2x) overflows to inf for
        # large x and 2 / inf = 0 still gives 1. Near 0 the subtraction cancels (an absolute
        # error of about 1e-7), which the fp16/bf16 result hides but the fp32 precision rule
        # does not: fp32 results take the library routine.
        _one_over_one_plus_exp(dst, src, 2.0, n)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.muls(dst, dst, -2.0, n)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.adds(dst, dst, 1.0, n)
    elif act == "tanh":
        asc.adv.tanh(dst, src, count=n)
    elif act == "sigmoid":
        # sigmoid(x) = 1 / (1 + exp(-x))
        _one_over_one_plus_exp(dst, src, -1.0, n)
    elif act == "leaky_relu":
        asc.leaky_relu(dst, src, alpha, n)
    else:
        asc.adds(dst, src, 0.0, n)


@asc.jit
def _copy_in(dst, src_gm, start, n, full: asc.ConstExpr[bool]):
    if full:
        asc.data_copy(dst, src_gm[start:], n)
    else:
        asc.data_copy_pad(dst, src_gm[start:], asc.DataCopyExtParams(1, n * 4, 0, 0, 0),
                          asc.DataCopyPadExtParams(False, 0, 0, 0))


@asc.jit
def _copy_out(dst_gm, src, start, n, elem_bytes: asc.ConstExpr[int], full: asc.ConstExpr[bool]):
    if full:
        asc.data_copy(dst_gm[start:], src, n)
    else:
        asc.data_copy_pad(dst_gm[start:], src, asc.DataCopyExtParams(1, n * elem_bytes, 0, 0, 0))


@asc.jit(kernel_type=KernelType.AIV_ONLY)
def activation_kernel(src: asc.GlobalAddress, dst: asc.GlobalAddress, total: int, chunk: int,
                      alpha: float, act: asc.ConstExpr[str], tile: asc.ConstExpr[int]):
    """dst[i] = act(src[i]) for i < total; block b handles [b·chunk, (b+1)·chunk)."""
    begin = asc.get_block_idx() * chunk
    count = min(chunk, total - begin)
    src_gm = asc.GlobalTensor()
    dst_gm = asc.GlobalTensor()
    src_gm.set_global_buffer(src + begin)
    dst_gm.set_global_buffer(dst + begin)
    out_bytes = dst.dtype.sizeof()
    cast_needed = dst.dtype != asc.float32

    pipe = asc.TPipe()
    in_q = asc.TQue(asc.TPosition.VECIN, BUFFERS)
    out_q = asc.TQue(asc.TPosition.VECOUT, BUFFERS)
    pipe.init_buffer(que=in_q, num=BUFFERS, len=tile * 4)
    pipe.init_buffer(que=out_q, num=BUFFERS, len=tile * out_bytes)
    tiles = (count + tile - 1) // tile
    for t in asc.range(tiles):
        start = t * tile
        n = min(tile, count - start)
        # Whole 32-byte blocks on both sides let the plain DMA form be used.
        full = n % 16 == 0
        x = in_q.alloc_tensor(asc.float32)
        _copy_in(x, src_gm, start, n, full)
        in_q.enque(x)
        x = in_q.deque(asc.float32)
        y = out_q.alloc_tensor(dst.dtype)
        if cast_needed:
            _activate(x, x, act, alpha, n, True)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.cast(y, x, _ROUND, n)
        else:
            _activate(y, x, act, alpha, n, False)
        in_q.free_tensor(x)
        out_q.enque(y)
        y = out_q.deque(dst.dtype)
        _copy_out(dst_gm, y, start, n, out_bytes, full)
        out_q.free_tensor(y)


def launch_plan(total: int, aiv_count: int, tile: int = TILE) -> tuple[int, int]:
    """(cores, chunk): chunks are whole multiples of 16 elements so every core's start is
    32-byte aligned in both fp32 and 16-bit outputs; small inputs use fewer cores."""
    per_core_min = 1024
    cores = max(1, min(aiv_count, -(-total // per_core_min)))
    chunk = -(-total // cores)
    chunk = -(-chunk // 16) * 16
    cores = -(-total // chunk)
    return cores, chunk
