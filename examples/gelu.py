"""GELU, tanh approximation: y = x/2 · (1 + tanh(√(2/π) · (x + 0.044715·x³))).

The argument of tanh is rewritten as x · (k + k·c·x²) with k = √(2/π), c = 0.044715, which costs
one multiply fewer than evaluating x³ on its own. Intermediate values live in one TBuf scratch
tile; consecutive vector instructions that read what the previous one wrote are separated by
``pipe_barrier(PIPE_V)``. The tile loop is a runtime loop (``asc.range``) and the queues are
double-buffered.

Run it with ``ascsim run examples/gelu.py -r Model -v Ascend910B1``.
"""

import math

import asc
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch
from example_cli import platform_from_cli

BUFFER_NUM = 2
DEFAULT_LENGTH = 8 * 2048
DEFAULT_CORES = 8
DEFAULT_TILE = 512  # elements per tile (2 KiB of fp32)

CUBIC = 0.044715
TANH_SCALE = math.sqrt(2.0 / math.pi)


@asc.jit
def gelu_tile(x_ub, y_ub, scratch, n: asc.ConstExpr[int]):
    """y = x/2 · (1 + tanh(x·(k + k·c·x²))), all on UB tiles of ``n`` elements."""
    asc.mul(scratch, x_ub, x_ub, count=n)                    # x²
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.muls(scratch, scratch, TANH_SCALE * CUBIC, count=n)  # k·c·x²
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.adds(scratch, scratch, TANH_SCALE, count=n)          # k + k·c·x²
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.mul(scratch, scratch, x_ub, count=n)                 # the tanh argument
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.adv.tanh(scratch, scratch, count=n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.adds(scratch, scratch, 1.0, count=n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.mul(scratch, scratch, x_ub, count=n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.muls(y_ub, scratch, 0.5, count=n)


@asc.jit(kernel_type=config.KernelType.AIV_ONLY)
def gelu_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, per_core: asc.ConstExpr[int],
                tile: asc.ConstExpr[int]):
    first = asc.get_block_idx() * per_core
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + first, per_core)
    y_gm.set_global_buffer(y + first, per_core)

    pipe = asc.TPipe()
    x_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    y_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    scratch_buf = asc.TBuf(asc.TPosition.VECCALC)
    tile_bytes = tile * x.dtype.sizeof()
    pipe.init_buffer(que=x_in, num=BUFFER_NUM, len=tile_bytes)
    pipe.init_buffer(que=y_out, num=BUFFER_NUM, len=tile_bytes)
    pipe.init_buffer(buf=scratch_buf, len=tile_bytes)
    scratch = scratch_buf.get(x.dtype)

    for step in asc.range(per_core // tile):
        x_ub = x_in.alloc_tensor(x.dtype)
        asc.data_copy(x_ub, x_gm[step * tile:], count=tile)
        x_in.enque(x_ub)

        x_ub = x_in.deque(x.dtype)
        y_ub = y_out.alloc_tensor(y.dtype)
        gelu_tile(x_ub, y_ub, scratch, tile)
        y_out.enque(y_ub)
        x_in.free_tensor(x_ub)

        y_ub = y_out.deque(y.dtype)
        asc.data_copy(y_gm[step * tile:], y_ub, count=tile)
        y_out.free_tensor(y_ub)


def gelu(x: torch.Tensor, cores: int = DEFAULT_CORES, tile: int = DEFAULT_TILE):
    """GELU of a flat fp32 tensor (zero-padded to whole tiles); returns (y, launch report)."""
    total = x.numel()
    chunk = cores * tile
    padded = -(-total // chunk) * chunk
    x_pad = torch.zeros(padded, dtype=x.dtype)
    x_pad[:total] = x.reshape(-1)
    y_pad = torch.zeros_like(x_pad)
    report = gelu_kernel[cores, rt.current_stream()](x_pad, y_pad, padded // cores, tile)
    return y_pad[:total].reshape(x.shape), report


def gelu_reference(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(TANH_SCALE * (x + CUBIC * x ** 3)))


def run(platform=None, length: int = DEFAULT_LENGTH, cores: int = DEFAULT_CORES,
        tile: int = DEFAULT_TILE):
    """Simulate GELU on ``platform`` (default: the runner's), check it, return the report."""
    config.set_platform(config.Backend.Model, platform)
    x = torch.rand(length, dtype=torch.float32) * 4.0 - 2.0
    y, report = gelu(x, cores, tile)
    expected = gelu_reference(x)
    if not torch.allclose(y, expected, atol=1e-3):
        worst = (y - expected).abs().max().item()
        raise AssertionError(f"gelu: result off by up to {worst:.3g} (atol 1e-3)")
    return report


if __name__ == "__main__":
    report = run(platform_from_cli(__doc__))
    print(f"gelu: matches the torch reference on {report.soc}, "
          f"{report.device_time_us:.2f} us simulated")
