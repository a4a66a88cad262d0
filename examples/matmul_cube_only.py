"""C = A @ B (+ bias) on the Cube cores alone: an AIC_ONLY kernel with the Matmul API.

With ``matmul_cube_only=True`` the kernel runs on the AIC of each AI Core and no vector core is
started; the AIC both drives and executes the Matmul. Every core takes one
``singleCoreM x singleCoreN`` region of C (clamped at the matrix edges) and computes it with one
``iterate_all``. The default shape, 128 x 64 x 30720, is a wide-and-short product: the split is
over N only, and each core streams its slice of B once.

Run it with ``ascsim run examples/matmul_cube_only.py -r Model -v Ascend910B1``.
"""


import asc
import asc.lib.host as host
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch
from example_cli import platform_from_cli

M, K, N = 128, 64, 30720


@asc.jit
def region_of(tiling: asc.adv.TCubeTiling):
    """Element offsets of this core's A, B, C and bias, and its region's rows and columns."""
    core = asc.get_block_idx()
    regions_down = tiling.m.ceildiv(tiling.single_core_m)
    first_row = core % regions_down * tiling.single_core_m
    first_col = core // regions_down * tiling.single_core_n
    rows = tiling.m - first_row
    if rows > tiling.single_core_m:
        rows = tiling.single_core_m
    cols = tiling.n - first_col
    if cols > tiling.single_core_n:
        cols = tiling.single_core_n
    return (first_row * tiling.k_a, first_col, first_row * tiling.n + first_col, first_col,
            rows, cols)


@asc.jit(matmul_cube_only=True, always_compile=True)
def matmul_cube_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                       bias: asc.GlobalAddress, tiling: asc.adv.TCubeTiling,
                       workspace: asc.GlobalAddress):
    if asc.ascend_is_aic():
        a_at, b_at, c_at, bias_at, rows, cols = region_of(tiling)
        a_gm, b_gm = asc.GlobalTensor(), asc.GlobalTensor()
        c_gm, bias_gm = asc.GlobalTensor(), asc.GlobalTensor()
        a_gm.set_global_buffer(a + a_at)
        b_gm.set_global_buffer(b + b_at)
        c_gm.set_global_buffer(c + c_at)
        bias_gm.set_global_buffer(bias + bias_at)
        pipe = asc.TPipe()
        mm = asc.adv.Matmul(
            a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a.dtype),
            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b.dtype),
            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c.dtype),
            bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bias.dtype),
        )
        asc.adv.register_matmul(pipe, workspace, mm, tiling)
        if asc.get_block_idx() < tiling.used_core_num:
            mm.set_tensor_a(a_gm)
            mm.set_tensor_b(b_gm)
            if tiling.is_bias:
                mm.set_bias(bias_gm)
            mm.set_tail(rows, cols, tiling.k_a)
            mm.iterate_all(c_gm)
            mm.end()
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def plan(m: int, n: int, k: int, cube_cores: int, with_bias: bool) -> asc.adv.TCubeTiling:
    """Host tiling: fp16 A and B, fp32 C and bias, all in GM, over ``cube_cores`` AICs."""
    tiler = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    tiler.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    tiler.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    tiler.set_c_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiler.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiler.set_dim(cube_cores)
    tiler.set_org_shape(m, n, k)
    tiler.set_shape(m, n, k)
    tiler.enable_bias(with_bias)
    tiler.set_buffer_space(-1, -1, -1)
    tiling = asc.adv.TCubeTiling()
    if tiler.get_tiling(tiling) != 0:
        raise RuntimeError(f"no Matmul tiling for {m}x{n}x{k} on {cube_cores} cores")
    return tiling


def run(platform=None, m: int = M, k: int = K, n: int = N, with_bias: bool = False):
    """Simulate C = A @ B (+ bias) on ``platform``, check it, return the launch report."""
    config.set_platform(config.Backend.Model, platform)
    cube_cores = rt.device_info(rt.DeviceModuleType.RT_MODULE_TYPE_AICORE,
                                rt.DeviceInfoType.INFO_TYPE_CORE_NUM)
    a = torch.randint(-5, 5, (m, k)).to(torch.float16)
    b = torch.randint(-5, 5, (k, n)).to(torch.float16)
    bias = torch.randint(-5, 5, (1, n)).to(torch.float32)
    c = torch.zeros((m, n), dtype=torch.float32)
    workspace = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)
    tiling = plan(m, n, k, cube_cores, with_bias)
    report = matmul_cube_kernel[tiling.used_core_num, rt.current_stream()](
        a, b, c, bias, tiling, workspace)
    expected = a.float() @ b.float() + (bias if with_bias else 0)
    if not torch.allclose(c, expected, rtol=1e-3, atol=1e-3):
        worst = (c - expected).abs().max().item()
        raise AssertionError(f"matmul_cube_only: wrong product (max abs error {worst:.3g})")
    return report


if __name__ == "__main__":
    report = run(platform_from_cli(__doc__))
    print(f"matmul_cube_only: {M}x{K} @ {K}x{N} correct on {report.soc}, "
          f"{report.device_time_us:.2f} us simulated")
