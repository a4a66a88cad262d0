"""A test submission package in cann-bench's layout: ``exp`` (y = exp(scale * x + shift)) as
one pyasc vector kernel, for fp32 and fp16 tensors whose size is a multiple of 256 elements.

Each block takes an equal contiguous run of the elements and streams it through UB in tiles
of 256: scale, shift, exp, store. The host wrapper only checks the arguments, allocates the
output and launches.
"""

import asc
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch

TILE = 256
MAX_BLOCKS = 8


@asc.jit(kernel_type=config.KernelType.AIV_ONLY)
def exp_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, per_block: asc.ConstExpr[int],
               scale: asc.ConstExpr[float], shift: asc.ConstExpr[float]):
    first = asc.get_block_idx() * per_block
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + first, per_block)
    y_gm.set_global_buffer(y + first, per_block)
    pipe = asc.TPipe()
    x_in = asc.TQue(asc.TPosition.VECIN, 2)
    y_out = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=x_in, num=2, len=TILE * x.dtype.sizeof())
    pipe.init_buffer(que=y_out, num=2, len=TILE * x.dtype.sizeof())
    for step in asc.range(per_block // TILE):
        x_ub = x_in.alloc_tensor(x.dtype)
        asc.data_copy(x_ub, x_gm[step * TILE:], count=TILE)
        x_in.enque(x_ub)
        x_ub = x_in.deque(x.dtype)
        y_ub = y_out.alloc_tensor(y.dtype)
        asc.muls(y_ub, x_ub, scale, count=TILE)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.adds(y_ub, y_ub, shift, count=TILE)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.exp(y_ub, y_ub, count=TILE)
        y_out.enque(y_ub)
        x_in.free_tensor(x_ub)
        y_ub = y_out.deque(y.dtype)
        asc.data_copy(y_gm[step * TILE:], y_ub, count=TILE)
        y_out.free_tensor(y_ub)


def exp(x, base=-1.0, scale=1.0, shift=0.0):
    """exp(scale * x + shift) of a contiguous fp32/fp16 tensor of 256·k elements."""
    if base != -1.0:
        raise ValueError("this package implements base e (base=-1) only")
    if x.dtype not in (torch.float32, torch.float16) or x.numel() % TILE:
        raise ValueError("this package implements fp32/fp16 tensors of 256·k elements only")
    tiles = x.numel() // TILE
    blocks = max(b for b in range(1, MAX_BLOCKS + 1) if tiles % b == 0)
    y = torch.empty(x.shape, dtype=x.dtype)
    exp_kernel[blocks, rt.current_stream()](x, y, x.numel() // blocks, float(scale),
                                            float(shift))
    return y


__all__ = ["exp"]
