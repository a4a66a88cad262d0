"""Vector-only calibration kernels: the published streaming samples re-expressed in pyasc.

Each kernel follows the algorithm of a published sample (docs/cost-model.md, "Published points")
and exposes that sample's knobs as parameters; the host functions below plan the launch,
run it and check the result against torch.

- ``add``: z = x + y (asc-devkit ``add_high_performance``): cores, elements per copy
  (``copy_len``), single or double buffer, L2 bypass hint on the read-once inputs, a gap
  between the UB buffers (the bank-conflict-free layout).
- ``gelu``: the tanh form through exp and div, y = x / (1 + exp(-2k(x + c·x³))) (asc-devkit
  ``matmul_gelu``'s GELU alone, ``gelu_high_performance``, cann-samples one-core GELU);
  ``vf``: the chain as one vector function (the cann-samples one-core GELU is a RegBase VF),
  written as pyasc writes one: element-wise calls on tensors, compiled with ``vf_fusion``.
- ``relu``: y = max(x, 0) (cann-samples ``cv_datapath``'s separate ReLU).
- ``softmax``: row softmax over the last axis, rows dealt to the cores (cann-samples
  ``softmax_regbase_story``), ``rows_per_copy`` rows per DMA.
"""

from __future__ import annotations

import math

import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.session import SESSION
from ascsim.sim.l2_carry import carried_l2

GELU_K = math.sqrt(2.0 / math.pi)
GELU_C = 0.044715


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def split_evenly(total: int, cores: int, align: int) -> int:
    """Elements per core: ``total / cores`` rounded up to ``align`` elements (32-byte starts)."""
    return _ceil_div(_ceil_div(total, cores), align) * align


# ------------------------------------------------------------------------------------- add
@asc.jit(kernel_type=KernelType.AIV_ONLY)
def add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, total: int,
               chunk: int, copy_len: asc.ConstExpr[int], buffers: asc.ConstExpr[int],
               l2_bypass: asc.ConstExpr[bool], ub_gap: asc.ConstExpr[int],
               out_buffers: asc.ConstExpr[int]):
    """z[i] = x[i] + y[i]; block b streams [b·chunk, (b+1)·chunk) in ``copy_len`` copies."""
    begin = asc.get_block_idx() * chunk
    count = min(chunk, total - begin)
    x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + begin)
    y_gm.set_global_buffer(y + begin)
    z_gm.set_global_buffer(z + begin)
    if l2_bypass:  # read once: do not keep the inputs in L2
        x_gm.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_DISABLE)
        y_gm.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_DISABLE)

    pipe = asc.TPipe()
    x_in = asc.TQue(asc.TPosition.VECIN, buffers)
    y_in = asc.TQue(asc.TPosition.VECIN, buffers)
    z_out = asc.TQue(asc.TPosition.VECOUT, out_buffers)
    size = copy_len * x.dtype.sizeof() + ub_gap
    pipe.init_buffer(que=x_in, num=buffers, len=size)
    pipe.init_buffer(que=y_in, num=buffers, len=size)
    pipe.init_buffer(que=z_out, num=out_buffers, len=size)
    dtype = x.dtype
    for t in asc.range(_ceil_div(count, copy_len)):
        at = t * copy_len
        n = min(copy_len, count - at)
        x_ub = x_in.alloc_tensor(dtype)
        y_ub = y_in.alloc_tensor(dtype)
        asc.data_copy(x_ub, x_gm[at:], count=n)
        asc.data_copy(y_ub, y_gm[at:], count=n)
        x_in.enque(x_ub)
        y_in.enque(y_ub)
        x_ub = x_in.deque(dtype)
        y_ub = y_in.deque(dtype)
        z_ub = z_out.alloc_tensor(dtype)
        asc.add(z_ub, x_ub, y_ub, count=n)
        z_out.enque(z_ub)
        x_in.free_tensor(x_ub)
        y_in.free_tensor(y_ub)
        z_ub = z_out.deque(dtype)
        asc.data_copy(z_gm[at:], z_ub, count=n)
        z_out.free_tensor(z_ub)


def run_add(shape, dtype: torch.dtype, cores: int, copy_len: int, buffers: int = 1,
            l2_bypass: bool = False, ub_gap: int = 0, out_buffers: int | None = None):
    """Launch the add over ``cores`` vector cores, check it; returns the launch reports.

    ``buffers`` per input queue, ``out_buffers`` for the output queue (default: the same);
    ``ub_gap`` bytes of padding after every UB buffer."""
    total = math.prod(shape)
    # Rows split evenly: a core's last copy may be shorter (e.g. 48 copies + 4096 elements).
    chunk = split_evenly(total, cores, 128)
    used = _ceil_div(total, chunk)
    x = torch.rand(total, dtype=torch.float32).to(dtype)
    y = torch.rand(total, dtype=torch.float32).to(dtype)
    z = torch.empty_like(x)
    report = add_kernel[used](x, y, z, total, chunk, copy_len, buffers, l2_bypass, ub_gap,
                              out_buffers or buffers)
    if SESSION.timing_only:  # no values computed: nothing to check
        return [report]
    expected = x + y
    if not torch.equal(z, expected):
        raise AssertionError(f"calibration add: wrong sum (max abs error "
                             f"{(z.float() - expected.float()).abs().max().item():.3g})")
    return [report]


# ------------------------------------------------------------------------------ gelu, relu
@asc.jit
def gelu_tile(y_ub, x_ub, t_ub, n):
    """y = x / (1 + exp(-2k·(x + c·x³))): the tanh form through exp and div."""
    asc.mul(t_ub, x_ub, x_ub, count=n)                     # x²
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.muls(t_ub, t_ub, -2.0 * GELU_K * GELU_C, count=n)  # -2k·c·x²
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.adds(t_ub, t_ub, -2.0 * GELU_K, count=n)           # -2k - 2k·c·x²
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.mul(t_ub, t_ub, x_ub, count=n)                     # -2k(x + c·x³)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.exp(t_ub, t_ub, count=n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.adds(t_ub, t_ub, 1.0, count=n)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.div(y_ub, x_ub, t_ub, count=n)


@asc.jit(kernel_type=KernelType.AIV_ONLY)
def activation_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, chunk: int,
                      act: asc.ConstExpr[str], tile: asc.ConstExpr[int],
                      buffers: asc.ConstExpr[int]):
    """y = act(x) (fp32), block b over [b·chunk, (b+1)·chunk) in ``tile``-element tiles."""
    begin = asc.get_block_idx() * chunk
    count = min(chunk, total - begin)
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + begin)
    y_gm.set_global_buffer(y + begin)
    pipe = asc.TPipe()
    x_in = asc.TQue(asc.TPosition.VECIN, buffers)
    y_out = asc.TQue(asc.TPosition.VECOUT, buffers)
    scratch = asc.TBuf(asc.TPosition.VECCALC)
    size = tile * x.dtype.sizeof()
    pipe.init_buffer(que=x_in, num=buffers, len=size)
    pipe.init_buffer(que=y_out, num=buffers, len=size)
    pipe.init_buffer(buf=scratch, len=size)
    t_ub = scratch.get(x.dtype)
    dtype = x.dtype
    for t in asc.range(_ceil_div(count, tile)):
        at = t * tile
        n = min(tile, count - at)
        x_ub = x_in.alloc_tensor(dtype)
        asc.data_copy(x_ub, x_gm[at:], count=n)
        x_in.enque(x_ub)
        x_ub = x_in.deque(dtype)
        y_ub = y_out.alloc_tensor(dtype)
        if act == "gelu":
            gelu_tile(y_ub, x_ub, t_ub, n)
        else:
            asc.relu(y_ub, x_ub, count=n)
        y_out.enque(y_ub)
        x_in.free_tensor(x_ub)
        y_ub = y_out.deque(dtype)
        asc.data_copy(y_gm[at:], y_ub, count=n)
        y_out.free_tensor(y_ub)


@asc.jit(kernel_type=KernelType.AIV_ONLY, vf_fusion=True)
def gelu_vf_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, chunk: int,
                   tile: asc.ConstExpr[int], buffers: asc.ConstExpr[int]):
    """y = gelu(x) (fp32) with the whole chain in one vector function per tile.

    pyasc fuses only element-wise calls on tensors of one length (no scalar forms), so the
    constants are tensors filled once; y holds every intermediate, so the function loads x and
    the constants and stores y only."""
    begin = asc.get_block_idx() * chunk
    count = min(chunk, total - begin)
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + begin)
    y_gm.set_global_buffer(y + begin)
    pipe = asc.TPipe()
    x_in = asc.TQue(asc.TPosition.VECIN, buffers)
    y_out = asc.TQue(asc.TPosition.VECOUT, buffers)
    consts = asc.TBuf(asc.TPosition.VECCALC)
    size = tile * x.dtype.sizeof()
    pipe.init_buffer(que=x_in, num=buffers, len=size)
    pipe.init_buffer(que=y_out, num=buffers, len=size)
    pipe.init_buffer(buf=consts, len=3 * size)
    dtype = x.dtype
    all_consts = consts.get(dtype)
    cube_k, lin_k, one = all_consts[0:], all_consts[tile:], all_consts[2 * tile:]
    asc.duplicate(cube_k, -2.0 * GELU_K * GELU_C, count=tile)
    asc.duplicate(lin_k, -2.0 * GELU_K, count=tile)
    asc.duplicate(one, 1.0, count=tile)
    for t in asc.range(_ceil_div(count, tile)):
        at = t * tile
        n = min(tile, count - at)
        x_ub = x_in.alloc_tensor(dtype)
        asc.data_copy(x_ub, x_gm[at:], count=n)
        x_in.enque(x_ub)
        x_ub = x_in.deque(dtype)
        y_ub = y_out.alloc_tensor(dtype)
        asc.mul(y_ub, x_ub, x_ub, count=n)     # x²
        asc.mul(y_ub, y_ub, cube_k, count=n)   # -2k·c·x²
        asc.add(y_ub, y_ub, lin_k, count=n)    # -2k - 2k·c·x²
        asc.mul(y_ub, y_ub, x_ub, count=n)     # -2k(x + c·x³)
        asc.exp(y_ub, y_ub, count=n)
        asc.add(y_ub, y_ub, one, count=n)
        asc.div(y_ub, x_ub, y_ub, count=n)
        y_out.enque(y_ub)
        x_in.free_tensor(x_ub)
        y_ub = y_out.deque(dtype)
        asc.data_copy(y_gm[at:], y_ub, count=n)
        y_out.free_tensor(y_ub)


def gelu_reference(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x, approximate="tanh")


ACTIVATIONS = {"gelu": gelu_reference, "relu": torch.relu}


def run_activation(shape, act: str, cores: int, tile: int, buffers: int = 2, vf: bool = False,
                   warm_l2: bool = False):
    """y = act(x) over an fp32 tensor of ``shape`` on ``cores`` vector cores, checked;
    ``vf``: the GELU as one vector function per tile (:func:`gelu_vf_kernel`); ``warm_l2``:
    time a launch that follows an identical one on the same buffers with L2 not flushed in
    between (a sample that launches its kernel several times in a row), instead of a cold one."""
    if act not in ACTIVATIONS:
        raise ValueError(f"activation {act!r}: expected one of {sorted(ACTIVATIONS)}")
    if vf and act != "gelu":
        raise ValueError(f"activation {act!r}: the vector-function form exists for gelu only")
    total = math.prod(shape)
    chunk = split_evenly(total, cores, 8)
    used = _ceil_div(total, chunk)
    x = torch.rand(total, dtype=torch.float32) * 6.0 - 3.0
    y = torch.empty_like(x)
    def launch():
        if vf:
            return gelu_vf_kernel[used](x, y, total, chunk, tile, buffers)
        return activation_kernel[used](x, y, total, chunk, act, tile, buffers)

    if warm_l2:
        with carried_l2():
            launch()  # leaves x and y in L2, as the device's previous launch does
            report = launch()
    else:
        report = launch()
    if SESSION.timing_only:  # no values computed: nothing to check
        return [report]
    expected = ACTIVATIONS[act](x)
    if not torch.allclose(y, expected, atol=2e-3, rtol=1e-3):
        raise AssertionError(f"calibration {act}: off by up to "
                             f"{(y - expected).abs().max().item():.3g}")
    return [report]


# --------------------------------------------------------------------------------- softmax
@asc.jit(kernel_type=KernelType.AIV_ONLY)
def softmax_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, rows_per_core: int,
                   cols: asc.ConstExpr[int], rows_per_copy: asc.ConstExpr[int]):
    """Row softmax: per copy of ``rows_per_copy`` rows, per row max, exp(x - max), sum, scale."""
    first = asc.get_block_idx() * rows_per_core * cols
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + first)
    y_gm.set_global_buffer(y + first)
    pipe = asc.TPipe()
    x_in = asc.TQue(asc.TPosition.VECIN, 2)
    y_out = asc.TQue(asc.TPosition.VECOUT, 2)
    work = asc.TBuf(asc.TPosition.VECCALC)
    red = asc.TBuf(asc.TPosition.VECCALC)
    size = rows_per_copy * cols * 4
    pipe.init_buffer(que=x_in, num=2, len=size)
    pipe.init_buffer(que=y_out, num=2, len=size)
    pipe.init_buffer(buf=work, len=cols * 4)
    pipe.init_buffer(buf=red, len=32)
    work_ub = work.get(asc.float32)
    red_ub = red.get(asc.float32)
    for c in asc.range(rows_per_core // rows_per_copy):
        at = c * rows_per_copy * cols
        x_ub = x_in.alloc_tensor(asc.float32)
        asc.data_copy(x_ub, x_gm[at:], count=rows_per_copy * cols)
        x_in.enque(x_ub)
        x_ub = x_in.deque(asc.float32)
        y_ub = y_out.alloc_tensor(asc.float32)
        for r in range(rows_per_copy):
            row_x = x_ub[r * cols:]
            row_y = y_ub[r * cols:]
            asc.reduce_max(red_ub, row_x, work_ub, count=cols)
            row_max = red_ub.get_value(0)
            asc.adds(row_y, row_x, -row_max, count=cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.exp(row_y, row_y, count=cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.reduce_sum(red_ub, row_y, work_ub, count=cols)
            row_sum = red_ub.get_value(0)
            asc.muls(row_y, row_y, 1.0 / row_sum, count=cols)
        y_out.enque(y_ub)
        x_in.free_tensor(x_ub)
        y_ub = y_out.deque(asc.float32)
        asc.data_copy(y_gm[at:], y_ub, count=rows_per_copy * cols)
        y_out.free_tensor(y_ub)


def run_softmax(shape, cores: int, rows_per_copy: int = 1):
    """Softmax over the last axis of an fp32 [rows, cols] tensor, rows split over the cores."""
    rows, cols = shape
    if rows % cores or (rows // cores) % rows_per_copy:
        raise ValueError(f"softmax: {rows} rows do not split into {cores} cores x whole "
                         f"copies of {rows_per_copy} rows")
    x = torch.rand(rows, cols, dtype=torch.float32) * 4.0 - 2.0
    y = torch.empty_like(x)
    report = softmax_kernel[cores](x, y, rows // cores, cols, rows_per_copy)
    if SESSION.timing_only:  # no values computed: nothing to check
        return [report]
    expected = torch.softmax(x, dim=-1)
    if not torch.allclose(y, expected, atol=1e-6, rtol=1e-4):
        raise AssertionError(f"calibration softmax: off by up to "
                             f"{(y - expected).abs().max().item():.3g}")
    return [report]
