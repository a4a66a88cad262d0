"""Vector add, z = x + y, with the TPipe/TQue framework doing the pipe synchronisation.

Same computation as ``vector_add_flags.py``, written the usual Ascend C way: a VECIN queue per
input and a VECOUT queue for the result, each with two buffers so that loading the next tile
overlaps adding and storing the current one. ``enque``/``deque`` carry the MTE2→V and V→MTE3
dependencies and ``alloc_tensor``/``free_tensor`` the buffer reuse, so no event appears here.
The three stages are separate ``@asc.jit`` helpers, inlined into the kernel.

Run it with ``ascsim run examples/vector_add_queues.py -r Model -v Ascend910B1``.
"""


import asc
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch
from example_cli import platform_from_cli

BUFFER_NUM = 2  # buffers per queue: double buffering
DEFAULT_LENGTH = 8 * 2048
DEFAULT_CORES = 8
DEFAULT_TILE = 128  # elements per tile


@asc.jit
def load_tile(step, x_gm: asc.GlobalTensor, y_gm: asc.GlobalTensor, x_in: asc.TQue,
              y_in: asc.TQue, tile: asc.ConstExpr[int]):
    x_ub = x_in.alloc_tensor(x_gm.dtype)
    y_ub = y_in.alloc_tensor(y_gm.dtype)
    asc.data_copy(x_ub, x_gm[step * tile:], tile)
    asc.data_copy(y_ub, y_gm[step * tile:], tile)
    x_in.enque(x_ub)
    y_in.enque(y_ub)


@asc.jit
def add_tile(dtype, x_in: asc.TQue, y_in: asc.TQue, z_out: asc.TQue, tile: asc.ConstExpr[int]):
    x_ub = x_in.deque(dtype)
    y_ub = y_in.deque(dtype)
    z_ub = z_out.alloc_tensor(dtype)
    asc.add(z_ub, x_ub, y_ub, tile)
    z_out.enque(z_ub)
    x_in.free_tensor(x_ub)
    y_in.free_tensor(y_ub)


@asc.jit
def store_tile(step, z_gm: asc.GlobalTensor, z_out: asc.TQue, tile: asc.ConstExpr[int]):
    z_ub = z_out.deque(z_gm.dtype)
    asc.data_copy(z_gm[step * tile:], z_ub, tile)
    z_out.free_tensor(z_ub)


@asc.jit
def add_with_queues(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                    per_core: asc.ConstExpr[int], tile: asc.ConstExpr[int]):
    first = asc.get_block_idx() * per_core
    x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + first, per_core)
    y_gm.set_global_buffer(y + first, per_core)
    z_gm.set_global_buffer(z + first, per_core)

    pipe = asc.TPipe()
    x_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    y_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    z_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    tile_bytes = tile * x.dtype.sizeof()
    pipe.init_buffer(que=x_in, num=BUFFER_NUM, len=tile_bytes)
    pipe.init_buffer(que=y_in, num=BUFFER_NUM, len=tile_bytes)
    pipe.init_buffer(que=z_out, num=BUFFER_NUM, len=tile_bytes)

    for step in range(per_core // tile):
        load_tile(step, x_gm, y_gm, x_in, y_in, tile)
        add_tile(z_gm.dtype, x_in, y_in, z_out, tile)
        store_tile(step, z_gm, z_out, tile)


def vector_add(x: torch.Tensor, y: torch.Tensor, cores: int = DEFAULT_CORES,
               tile: int = DEFAULT_TILE):
    """Launch the kernel on ``cores`` cores; returns (z, launch report)."""
    total = x.numel()
    if total % (cores * tile):
        raise ValueError(f"{total} elements do not split into {cores} cores x whole "
                         f"{tile}-element tiles")
    z = torch.zeros_like(x)
    report = add_with_queues[cores, rt.current_stream()](x, y, z, total // cores, tile)
    return z, report


def run(platform=None, length: int = DEFAULT_LENGTH, cores: int = DEFAULT_CORES,
        tile: int = DEFAULT_TILE):
    """Simulate one add on ``platform`` (default: the runner's), check it, return the report."""
    config.set_platform(config.Backend.Model, platform)
    x = torch.rand(length, dtype=torch.float32)
    y = torch.rand(length, dtype=torch.float32)
    z, report = vector_add(x, y, cores, tile)
    if not torch.allclose(z, x + y):
        worst = (z - (x + y)).abs().max().item()
        raise AssertionError(f"vector_add_queues: wrong sum (max abs error {worst:.3g})")
    return report


if __name__ == "__main__":
    report = run(platform_from_cli(__doc__))
    print(f"vector_add_queues: z = x + y correct on {report.soc}, "
          f"{report.device_time_us:.2f} us simulated")
