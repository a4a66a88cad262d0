"""RMSNorm over the last dimension with a learned scale: y = x / sqrt(mean(x²) + eps) · gamma.

Host side: the rows (all dimensions but the last) are dealt out in equal contiguous runs to as
many vector cores as useful; the input is zero-padded to a whole number of runs (a zero row
normalises to zero, so padding is harmless).

Kernel side: each core loads gamma into a TBuf once and waits for that copy with an explicit
``MTE2_V`` event (gamma lives outside the queues, so nothing else would order it). Its rows then
stream through double-buffered VECIN/VECOUT queues in chunks of up to ``chunk_rows`` rows; the
``RmsNormTiling`` describing a chunk is built inside the kernel. Full chunks whose shape allows it
use the basic-block fast path; a shorter last chunk uses the general one.

Run it with ``ascsim run examples/rmsnorm.py -r Model -v Ascend910B1``.
"""

from dataclasses import dataclass

import asc
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch
from asc.lib.runtime.support import DeviceInfoType, DeviceModuleType
from example_cli import platform_from_cli

BUFFER_NUM = 2
CHUNK_BYTES = 16 * 1024  # UB budget for one chunk of rows
MAX_CHUNK_ROWS = 8
BLOCK_BYTES = 32         # the UB data block; per-row statistics are aligned to it
EPS = 1e-6
DEFAULT_SHAPE = (2, 8, 256)


@asc.jit
def chunk_tiling(rows: asc.ConstExpr[int], hidden: asc.ConstExpr[int],
                 stat_align: asc.ConstExpr[int]):
    """The RmsNormTiling of one chunk: ``rows`` rows of ``hidden`` elements, one pass."""
    return asc.adv.RmsNormTiling(
        b_length=1, s_length=rows, h_length=hidden, original_h_length=hidden,
        reciprocal_of_h_length=1.0 / hidden, main_bsh_length=rows * hidden,
        main_bs_length=rows, main_bs_length_align=-(-rows // stat_align) * stat_align,
        loop_round=1, input_tail_pos=rows * hidden, tail_bsh_length=0, tail_bs_length=0)


@asc.jit
def normalise_chunk(first_row, rows: asc.ConstExpr[int], hidden: asc.ConstExpr[int],
                    x_gm: asc.GlobalTensor, y_gm: asc.GlobalTensor, x_in: asc.TQue,
                    y_out: asc.TQue, gamma_ub, eps: asc.ConstExpr[float],
                    basic_block: asc.ConstExpr[bool]):
    at = first_row * hidden
    count = rows * hidden
    x_ub = x_in.alloc_tensor(x_gm.dtype)
    asc.data_copy(x_ub, x_gm[at:], count=count)
    x_in.enque(x_ub)

    x_ub = x_in.deque(x_gm.dtype)
    y_ub = y_out.alloc_tensor(y_gm.dtype)
    tiling = chunk_tiling(rows, hidden, BLOCK_BYTES // x_gm.dtype.sizeof())
    asc.adv.rmsnorm(y_ub, x_ub, gamma_ub, eps, tiling, basic_block=basic_block)
    x_in.free_tensor(x_ub)
    y_out.enque(y_ub)

    y_ub = y_out.deque(y_gm.dtype)
    asc.data_copy(y_gm[at:], y_ub, count=count)
    y_out.free_tensor(y_ub)


@asc.jit(kernel_type=config.KernelType.AIV_ONLY)
def rmsnorm_kernel(x: asc.GlobalAddress, gamma: asc.GlobalAddress, y: asc.GlobalAddress,
                   rows_per_core: asc.ConstExpr[int], hidden: asc.ConstExpr[int],
                   chunk_rows: asc.ConstExpr[int], eps: asc.ConstExpr[float],
                   basic_block: asc.ConstExpr[bool]):
    first = asc.get_block_idx() * rows_per_core * hidden
    x_gm, gamma_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + first, rows_per_core * hidden)
    y_gm.set_global_buffer(y + first, rows_per_core * hidden)
    gamma_gm.set_global_buffer(gamma, hidden)

    pipe = asc.TPipe()
    x_in = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    y_out = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    gamma_buf = asc.TBuf(asc.TPosition.VECCALC)
    chunk_bytes = chunk_rows * hidden * x.dtype.sizeof()
    pipe.init_buffer(que=x_in, num=BUFFER_NUM, len=chunk_bytes)
    pipe.init_buffer(que=y_out, num=BUFFER_NUM, len=chunk_bytes)
    pipe.init_buffer(buf=gamma_buf, len=hidden * gamma.dtype.sizeof())

    gamma_ub = gamma_buf.get(gamma.dtype, len=hidden)
    asc.data_copy(gamma_ub, gamma_gm, count=hidden)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)

    full_chunks = rows_per_core // chunk_rows
    for chunk in asc.range(full_chunks):
        normalise_chunk(chunk * chunk_rows, chunk_rows, hidden, x_gm, y_gm, x_in, y_out,
                        gamma_ub, eps, basic_block)
    last_rows = rows_per_core % chunk_rows
    if last_rows:
        normalise_chunk(full_chunks * chunk_rows, last_rows, hidden, x_gm, y_gm, x_in, y_out,
                        gamma_ub, eps, False)


@dataclass(frozen=True)
class RmsNormPlan:
    """How ``rows`` rows of ``hidden`` elements are spread over the vector cores."""

    cores: int
    rows_per_core: int
    chunk_rows: int
    basic_block: bool

    def __post_init__(self):
        if min(self.cores, self.rows_per_core, self.chunk_rows) < 1:
            raise ValueError(f"inconsistent RMSNorm plan {self}")


def plan_rmsnorm(rows: int, hidden: int, element_bytes: int, max_cores: int) -> RmsNormPlan:
    cores = max(1, min(rows, max_cores))
    rows_per_core = -(-rows // cores)
    cores = -(-rows // rows_per_core)  # drop cores that would get no rows
    chunk_rows = max(1, min(MAX_CHUNK_ROWS, CHUNK_BYTES // (hidden * element_bytes),
                            rows_per_core))
    # The basic-block path needs 64-aligned rows shorter than 2048 and chunks of 8k rows.
    basic_block = hidden % 64 == 0 and hidden < 2048 and chunk_rows % 8 == 0
    return RmsNormPlan(cores, rows_per_core, chunk_rows, basic_block)


def rmsnorm(x: torch.Tensor, gamma: torch.Tensor, eps: float = EPS):
    """RMSNorm of ``x`` over its last dimension; returns (y, launch report)."""
    hidden = x.shape[-1]
    rows = x.numel() // hidden
    cores = int(rt.device_info(DeviceModuleType.RT_MODULE_TYPE_VECTOR_CORE,
                               DeviceInfoType.INFO_TYPE_CORE_NUM))
    plan = plan_rmsnorm(rows, hidden, x.element_size(), cores)
    padded_rows = plan.cores * plan.rows_per_core
    x_pad = torch.zeros(padded_rows * hidden, dtype=x.dtype)
    x_pad[:x.numel()] = x.reshape(-1)
    y_pad = torch.empty_like(x_pad)
    report = rmsnorm_kernel[plan.cores, rt.current_stream()](
        x_pad, gamma, y_pad, plan.rows_per_core, hidden, plan.chunk_rows, eps, plan.basic_block)
    return y_pad[:x.numel()].reshape(x.shape), report


def rmsnorm_reference(x: torch.Tensor, gamma: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * gamma


def run(platform=None, shape=DEFAULT_SHAPE):
    """Simulate RMSNorm on ``platform`` (default: the runner's), check it, return the report."""
    config.set_platform(config.Backend.Model, platform)
    x = torch.randn(*shape, dtype=torch.float32)
    gamma = torch.rand(shape[-1], dtype=torch.float32) + 0.5
    y, report = rmsnorm(x, gamma)
    expected = rmsnorm_reference(x, gamma)
    if not torch.allclose(y, expected, atol=1e-3):
        worst = (y - expected).abs().max().item()
        raise AssertionError(f"rmsnorm: result off by up to {worst:.3g} (atol 1e-3)")
    return report


if __name__ == "__main__":
    report = run(platform_from_cli(__doc__))
    print(f"rmsnorm: matches the torch reference on {report.soc} ({report.block_num} cores), "
          f"{report.device_time_us:.2f} us simulated")
