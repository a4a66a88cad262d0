"""Fused C = LeakyReLU(A @ B + bias): the Cube makes each block, the vector core finishes it.

The AIV walks its region of C block by block with ``with mm.iterate() as count:``. For every
``base_m x base_n`` block the group's AIC computes A @ B + bias; ``get_tensor_c`` brings the block
into a UB buffer of the AIV (through a GM workspace on 910B, straight from L0C on 950), the
vector unit applies LeakyReLU in place, and MTE3 writes the block to its place in C with a
strided copy (one row of the block per burst, skipping the rest of C's row). Blocks come M-first:
block ``count`` sits at block-row ``count % blocks_down`` and block-column
``count // blocks_down`` of the region.

Shapes: A fp16 [M, K], B fp16 [K, N], bias fp32 [1, N], C fp32 [M, N]; alpha = 0.001.

Run it with ``ascsim run examples/matmul_leakyrelu.py -r Model -v Ascend910B1``; tune its
tiling with ``ascsim tune examples/matmul_leakyrelu.py:tune_entry --space
examples/matmul_leakyrelu_space.yaml --soc Ascend910B1`` (``tune_entry`` runs one
configuration).
"""


import asc
import asc.lib.host as host
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch
from example_cli import platform_from_cli

M, K, N = 1024, 256, 640
ALPHA = 0.001
BASE_M, BASE_N = 256, 128
VECTOR_CORES = 2  # one AIC + 2 AIV group: the two AIVs split M


@asc.jit
def region_of(tiling: asc.adv.TCubeTiling):
    """Element offsets of this core's A, B, C and bias."""
    core = asc.get_block_idx()
    regions_down = tiling.m.ceildiv(tiling.single_core_m)
    first_row = core % regions_down * tiling.single_core_m
    first_col = core // regions_down * tiling.single_core_n
    return first_row * tiling.k_a, first_col, first_row * tiling.n + first_col, first_col


@asc.jit(always_compile=True)
def matmul_leakyrelu_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                            bias: asc.GlobalAddress, alpha: float, tiling: asc.adv.TCubeTiling,
                            workspace: asc.GlobalAddress):
    a_at, b_at, c_at, bias_at = region_of(tiling)
    a_gm, b_gm = asc.GlobalTensor(), asc.GlobalTensor()
    c_gm, bias_gm = asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a + a_at)
    b_gm.set_global_buffer(b + b_at)
    c_gm.set_global_buffer(c + c_at)
    bias_gm.set_global_buffer(bias + bias_at)

    block_elems = tiling.base_m * tiling.base_n
    pipe = asc.TPipe()
    out_queue = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=out_queue, num=1, len=block_elems * c.dtype.sizeof())

    mm = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b.dtype),
        c=asc.adv.MatmulType(asc.TPosition.VECCALC, asc.CubeFormat.ND, c.dtype),
        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bias.dtype),
    )
    asc.adv.register_matmul(pipe, workspace, mm, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    mm.set_bias(bias_gm)

    # Strided write-back of one block: base_m rows of base_n floats, C's row pitch apart
    # (lengths and gaps in 32-byte units).
    unit = asc.property(asc.DEFAULT_C0_SIZE)
    row_bytes = tiling.base_n * c.dtype.sizeof()
    gap_bytes = (tiling.n - tiling.base_n) * c.dtype.sizeof()
    blocks_down = tiling.single_core_m // tiling.base_m
    with mm.iterate() as count:
        block = out_queue.alloc_tensor(c.dtype)
        mm.get_tensor_c(block, en_sequential_write=True)
        asc.leaky_relu(block, block, alpha, count=block_elems)
        out_queue.enque(block)
        block = out_queue.deque(c.dtype)
        row, col = count % blocks_down, count // blocks_down
        at = row * tiling.base_m * tiling.n + col * tiling.base_n
        rows = asc.DataCopyParams(block_count=tiling.base_m, block_len=row_bytes // unit,
                                  src_stride=0, dst_stride=gap_bytes // unit)
        asc.data_copy(c_gm[at:], block, repeat_params=rows)
        out_queue.free_tensor(block)
    mm.end()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def plan(m: int, n: int, k: int, base_m: int = BASE_M, base_n: int = BASE_N, base_k: int = -1,
         cores: int = VECTOR_CORES) -> asc.adv.TCubeTiling:
    """Host tiling: C in a vector-side buffer, fixed base blocks (256 x 128 unless given), M
    walked first, over ``cores`` vector cores."""
    tiler = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    tiler.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    tiler.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    tiler.set_c_type(host.TPosition.VECCALC, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiler.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiler.set_dim(cores)
    tiler.set_org_shape(m, n, k)
    tiler.set_shape(m, n, k)
    tiler.enable_bias(True)
    tiler.set_traverse(host.MatrixTraverse.FIRSTM)
    tiler.set_fix_split(base_m, base_n, base_k)
    tiler.set_buffer_space(-1, -1, -1)
    tiling = asc.adv.TCubeTiling()
    if tiler.get_tiling(tiling) != 0:
        raise RuntimeError(f"no Matmul tiling for {m}x{n}x{k}")
    return tiling


def check_whole_blocks(tiling: asc.adv.TCubeTiling) -> None:
    """The kernel writes whole base blocks of whole per-core regions: refuse other tilings."""
    t = {f: int(getattr(tiling, f)) for f in ("m", "n", "single_core_m", "single_core_n",
                                              "base_m", "base_n")}
    if t["m"] % t["single_core_m"] or t["n"] % t["single_core_n"] or \
            t["single_core_m"] % t["base_m"] or t["single_core_n"] % t["base_n"]:
        raise ValueError(f"the tiling leaves partial blocks ({t}); this kernel writes whole "
                         "base blocks of whole core regions")


def run(platform=None, m: int = M, k: int = K, n: int = N, alpha: float = ALPHA,
        **knobs):
    """Simulate the fused kernel on ``platform``, check it against torch, return the report.

    ``knobs`` (base_m, base_n, base_k, cores) go to :func:`plan`. ``m`` and ``n`` must be
    whole multiples of the base block per core (the kernel writes whole blocks).
    """
    config.set_platform(config.Backend.Model, platform)
    a = torch.randint(-5, 5, (m, k)).to(torch.float16)
    b = torch.randint(-5, 5, (k, n)).to(torch.float16)
    bias = torch.randint(-5, 5, (1, n)).to(torch.float32)
    c = torch.zeros((m, n), dtype=torch.float32)
    workspace = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)
    tiling = plan(m, n, k, **knobs)
    check_whole_blocks(tiling)
    report = matmul_leakyrelu_kernel[tiling.used_core_num // 2, rt.current_stream()](
        a, b, c, bias, alpha, tiling, workspace)
    pre = a.float() @ b.float() + bias
    expected = torch.where(pre >= 0, pre, pre * alpha)
    if not torch.allclose(c, expected, rtol=1e-3, atol=1e-3):
        worst = (c - expected).abs().max().item()
        raise AssertionError(f"matmul_leakyrelu: wrong result (max abs error {worst:.3g})")
    return report


def tune_entry(base_m: int = BASE_M, base_n: int = BASE_N, base_k: int = -1,
               cores: int = VECTOR_CORES):
    """One tuning trial (``ascsim tune``): run the checked kernel with these knobs on the SoC
    the tuner selected, and return its report."""
    return run(None, base_m=base_m, base_n=base_n, base_k=base_k, cores=cores)


if __name__ == "__main__":
    report = run(platform_from_cli(__doc__))
    print(f"matmul_leakyrelu: LeakyReLU({M}x{K} @ {K}x{N} + bias) correct on {report.soc}, "
          f"{report.device_time_us:.2f} us simulated")
