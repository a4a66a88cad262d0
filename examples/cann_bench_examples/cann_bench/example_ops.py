"""The wrappers: metadata checks, an exact split of the work over blocks, one launch."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import asc.lib.runtime as rt
import torch
from asc.lib.runtime.support import DeviceInfoType, DeviceModuleType

EXAMPLES = Path(__file__).resolve().parents[2]   # examples/, holding rmsnorm.py and gelu.py
GELU_TILES = (512, 256, 128, 64)                 # elements per UB tile, largest first


@cache
def _example(name: str):
    """examples/<name>.py imported once (its kernels with it); it imports example_cli."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"ascsim_example_{name}",
                                                  EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _vector_cores() -> int:
    return int(rt.device_info(DeviceModuleType.RT_MODULE_TYPE_VECTOR_CORE,
                              DeviceInfoType.INFO_TYPE_CORE_NUM))


def _blocks(units: int, most: int) -> int:
    """The largest block count <= ``most`` that divides ``units`` exactly."""
    return max(b for b in range(1, min(units, most) + 1) if units % b == 0)


def rms_norm(x: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension with examples/rmsnorm.py's kernel (fp32)."""
    if x.dtype != torch.float32 or gamma.dtype != torch.float32:
        raise ValueError(f"examples/rmsnorm.py's kernel is fp32 only; got {x.dtype}")
    if not x.is_contiguous() or gamma.shape != (x.shape[-1],):
        raise ValueError("rms_norm needs a contiguous x and gamma of shape (x.shape[-1],)")
    ex = _example("rmsnorm")
    hidden = x.shape[-1]
    if hidden * x.element_size() % ex.BLOCK_BYTES:
        # Unaligned rows come out non-finite from the example's kernel (cann-bench rms_norm
        # case 14, hidden 373): refused rather than scored.
        raise ValueError(f"examples/rmsnorm.py's kernel needs rows of whole "
                         f"{ex.BLOCK_BYTES}-byte blocks; hidden {hidden} is not")
    rows = x.numel() // hidden
    cores = _blocks(rows, _vector_cores())
    plan = ex.plan_rmsnorm(rows, hidden, x.element_size(), cores)
    if plan.cores * plan.rows_per_core != rows:
        raise ValueError(f"{rows} rows do not split evenly over {plan.cores} blocks")
    y = torch.empty(x.shape, dtype=x.dtype)
    ex.rmsnorm_kernel[plan.cores, rt.current_stream()](
        x, gamma, y, plan.rows_per_core, hidden, plan.chunk_rows, float(epsilon),
        plan.basic_block)
    return y


def gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    """GELU with examples/gelu.py's kernel: its tanh approximation, fp32."""
    if approximate != "tanh":
        raise ValueError(f"examples/gelu.py computes the tanh approximation only; the case "
                         f"asks for approximate={approximate!r}")
    if x.dtype != torch.float32 or not x.is_contiguous():
        raise ValueError(f"examples/gelu.py's kernel takes contiguous fp32; got {x.dtype}")
    total = x.numel()
    tile = next((t for t in GELU_TILES if total % t == 0), None)
    if tile is None:
        raise ValueError(f"{total} elements are no whole number of {GELU_TILES[-1]}-element "
                         "tiles (the example pads such tensors on the host)")
    cores = _blocks(total // tile, _vector_cores())
    y = torch.empty(x.shape, dtype=x.dtype)
    _example("gelu").gelu_kernel[cores, rt.current_stream()](x, y, total // cores, tile)
    return y
