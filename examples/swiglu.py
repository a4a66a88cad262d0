"""SwiGLU: y = gate · sigmoid(gate) · up, with the high-level ``asc.adv.swiglu``.

Host side: gate and up are flattened, zero-padded to a whole number of tiles per core and stored
back to back in one GM tensor ``packed = [gate | up]``; the kernel finds ``up`` ``stride``
elements after ``gate``. The launch uses as many vector cores as there are tiles to fill, rounded
up to a power of two and capped at the device's AIV count (asked from the runtime). A tile is
2 KiB of data when the input is at least that large, else 1 KiB.

Kernel side: two VECIN queues (gate, up) and one VECOUT queue, two buffers each, so the loads
of tile i+1 overlap the compute and store of tile i.

Run it with ``ascsim run examples/swiglu.py -r Model -v Ascend910B1``.
"""

from dataclasses import dataclass

import asc
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch
from asc.lib.runtime.support import DeviceInfoType, DeviceModuleType
from example_cli import platform_from_cli

BUFFER_NUM = 2
LARGE_TILE_BYTES = 2048
SMALL_TILE_BYTES = 1024
DEFAULT_SHAPE = (2, 8, 512)


@asc.jit(kernel_type=config.KernelType.AIV_ONLY)
def swiglu_kernel(packed: asc.GlobalAddress, y: asc.GlobalAddress, per_core: asc.ConstExpr[int],
                  tile: asc.ConstExpr[int], stride: asc.ConstExpr[int]):
    first = asc.get_block_idx() * per_core
    gate_gm, up_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gate_gm.set_global_buffer(packed + first, per_core)
    up_gm.set_global_buffer(packed + stride + first, per_core)
    y_gm.set_global_buffer(y + first, per_core)

    pipe = asc.TPipe()
    gate_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    up_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    y_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    tile_bytes = tile * packed.dtype.sizeof()
    pipe.init_buffer(que=gate_in, num=BUFFER_NUM, len=tile_bytes)
    pipe.init_buffer(que=up_in, num=BUFFER_NUM, len=tile_bytes)
    pipe.init_buffer(que=y_out, num=BUFFER_NUM, len=tile_bytes)

    dtype = packed.dtype
    for step in asc.range(per_core // tile):
        at = step * tile
        gate_ub = gate_in.alloc_tensor(dtype)
        up_ub = up_in.alloc_tensor(dtype)
        asc.data_copy(gate_ub, gate_gm[at:], count=tile)
        asc.data_copy(up_ub, up_gm[at:], count=tile)
        gate_in.enque(gate_ub)
        up_in.enque(up_ub)

        gate_ub = gate_in.deque(dtype)
        up_ub = up_in.deque(dtype)
        y_ub = y_out.alloc_tensor(dtype)
        # swiglu(dst, src0, src1) = src0 · swish(src1): the swish input goes second.
        asc.adv.swiglu(y_ub, up_ub, gate_ub, cal_count=tile)
        gate_in.free_tensor(gate_ub)
        up_in.free_tensor(up_ub)
        y_out.enque(y_ub)

        y_ub = y_out.deque(dtype)
        asc.data_copy(y_gm[at:], y_ub, count=tile)
        y_out.free_tensor(y_ub)


@dataclass(frozen=True)
class SwigluPlan:
    """How a SwiGLU of ``total`` elements is spread over the vector cores."""

    cores: int
    tile: int       # elements per tile
    per_core: int   # elements per core: a whole number of tiles

    def __post_init__(self):
        if self.cores < 1 or self.tile < 1 or self.per_core % self.tile:
            raise ValueError(f"inconsistent SwiGLU plan {self}")

    @property
    def padded(self) -> int:
        return self.cores * self.per_core


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def plan_swiglu(total: int, element_bytes: int, max_cores: int) -> SwigluPlan:
    """Tile size, core count (power of two or all cores) and per-core share for ``total``."""
    large = LARGE_TILE_BYTES // element_bytes
    tile = large if total >= large else SMALL_TILE_BYTES // element_bytes
    wanted = min(max_cores, _ceil_div(total, tile))
    cores = 1
    while cores < wanted:
        cores *= 2
    cores = min(cores, max_cores)
    tiles_per_core = max(1, _ceil_div(_ceil_div(total, cores), tile))
    return SwigluPlan(cores, tile, tiles_per_core * tile)


def vector_core_count() -> int:
    return int(rt.device_info(DeviceModuleType.RT_MODULE_TYPE_VECTOR_CORE,
                              DeviceInfoType.INFO_TYPE_CORE_NUM))


def swiglu(gate: torch.Tensor, up: torch.Tensor):
    """SwiGLU of two same-shaped tensors on the simulated device; returns (y, launch report)."""
    total = gate.numel()
    plan = plan_swiglu(total, gate.element_size(), vector_core_count())
    packed = torch.zeros(2 * plan.padded, dtype=gate.dtype)
    packed[:total] = gate.reshape(-1)
    packed[plan.padded:plan.padded + total] = up.reshape(-1)
    y_pad = torch.empty(plan.padded, dtype=gate.dtype)
    report = swiglu_kernel[plan.cores, rt.current_stream()](packed, y_pad, plan.per_core,
                                                            plan.tile, plan.padded)
    return y_pad[:total].reshape(gate.shape), report


def run(platform=None, shape=DEFAULT_SHAPE):
    """Simulate SwiGLU on ``platform`` (default: the runner's), check it, return the report."""
    config.set_platform(config.Backend.Model, platform)
    gate = torch.rand(*shape, dtype=torch.float32) * 4.0 - 2.0
    up = torch.rand(*shape, dtype=torch.float32) * 4.0 - 2.0
    y, report = swiglu(gate, up)
    expected = gate * torch.sigmoid(gate) * up
    if not torch.allclose(y, expected, atol=1e-3):
        worst = (y - expected).abs().max().item()
        raise AssertionError(f"swiglu: result off by up to {worst:.3g} (atol 1e-3)")
    return report


if __name__ == "__main__":
    report = run(platform_from_cli(__doc__))
    print(f"swiglu: matches the torch reference on {report.soc} ({report.block_num} cores), "
          f"{report.device_time_us:.2f} us simulated")
