"""C = A @ B on the Cube, driven from the vector cores of a MIX kernel, one call per core.

Each AIV owns one ``singleCoreM x singleCoreN`` region of C. It hands its A rows and B columns to
the Matmul object and asks for the whole region at once with ``iterate_all``: the AIC of its
group does the work (GM -> L1 -> L0A/L0B -> Cube -> FixPipe -> GM) while the AIV waits. The
kernel is launched with one block per AIC + 2 AIV group, so the AIV block indices cover twice
the launch size; regions on the right or bottom edge are smaller (tails).

Run it with ``ascsim run examples/matmul_mix.py -r Model -v Ascend910B1``.
"""


import asc
import asc.lib.host as host
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch
from example_cli import platform_from_cli

M, K, N = 512, 512, 1024


@asc.jit
def region_of(tiling: asc.adv.TCubeTiling):
    """Element offsets of this core's A, B and C, and its region's rows and columns."""
    core = asc.get_block_idx()
    regions_down = tiling.m.ceildiv(tiling.single_core_m)
    row_block = core % regions_down
    col_block = core // regions_down
    first_row = row_block * tiling.single_core_m
    first_col = col_block * tiling.single_core_n
    rows = tiling.m - first_row
    if rows > tiling.single_core_m:
        rows = tiling.single_core_m
    cols = tiling.n - first_col
    if cols > tiling.single_core_n:
        cols = tiling.single_core_n
    return first_row * tiling.k_a, first_col, first_row * tiling.n + first_col, rows, cols


@asc.jit(always_compile=True)
def matmul_mix_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                      tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress):
    a_at, b_at, c_at, rows, cols = region_of(tiling)
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a + a_at)
    b_gm.set_global_buffer(b + b_at)
    c_gm.set_global_buffer(c + c_at)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b.dtype),
        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c.dtype),
    )
    # From here on the AIC of each group serves its two AIVs' requests.
    asc.adv.register_matmul(pipe, workspace, mm, tiling)
    if asc.get_block_idx() < tiling.used_core_num:
        mm.set_tensor_a(a_gm)
        mm.set_tensor_b(b_gm)
        mm.set_tail(rows, cols)
        mm.iterate_all(c_gm)
        mm.end()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def plan(m: int, n: int, k: int, vector_cores: int) -> asc.adv.TCubeTiling:
    """Host tiling: fp16 A and B in GM, fp32 C in GM, split over ``vector_cores`` AIVs."""
    tiler = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    tiler.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    tiler.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    tiler.set_c_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiler.set_dim(vector_cores)
    tiler.set_org_shape(m, n, k)
    tiler.set_shape(m, n, k)
    tiler.enable_bias(False)
    tiler.set_buffer_space(-1, -1, -1)
    tiling = asc.adv.TCubeTiling()
    if tiler.get_tiling(tiling) != 0:
        raise RuntimeError(f"no Matmul tiling for {m}x{n}x{k} on {vector_cores} cores")
    return tiling


def run(platform=None, m: int = M, k: int = K, n: int = N):
    """Simulate C = A @ B on ``platform`` (default: the runner's), check it, return the report."""
    config.set_platform(config.Backend.Model, platform)
    vector_cores = rt.device_info(rt.DeviceModuleType.RT_MODULE_TYPE_VECTOR_CORE,
                                  rt.DeviceInfoType.INFO_TYPE_CORE_NUM)
    a = torch.randint(-5, 5, (m, k)).to(torch.float16)
    b = torch.randint(-5, 5, (k, n)).to(torch.float16)
    c = torch.zeros((m, n), dtype=torch.float32)
    workspace = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)
    tiling = plan(m, n, k, vector_cores)
    groups = -(-tiling.used_core_num // 2)  # one launch block = 1 AIC + 2 AIV
    report = matmul_mix_kernel[groups, rt.current_stream()](a, b, c, tiling, workspace)
    expected = a.float() @ b.float()
    if not torch.allclose(c, expected, rtol=1e-3, atol=1e-3):
        worst = (c - expected).abs().max().item()
        raise AssertionError(f"matmul_mix: wrong product (max abs error {worst:.3g})")
    return report


if __name__ == "__main__":
    report = run(platform_from_cli(__doc__))
    print(f"matmul_mix: {M}x{K} @ {K}x{N} correct on {report.soc}, "
          f"{report.device_time_us:.2f} us simulated")
