"""A linear layer y = x . W^T written directly against the cube unit (no Matmul API).

x is [M, K], W is [N, K], both fp16; the cube accumulates in fp32 and FixPipe rounds the result
to fp16 on its way to GM. The output is cut into 128 x 128 blocks (64-row blocks when there are
too few blocks to keep half the cube cores busy) and the blocks are dealt round-robin to the
launched AIC cores. For one block:

    GM --data_copy(Nd2NzParams)--> L1 (NZ)      K in 512-element segments, two L1 buffers
    L1 --load_data--> L0A / L0B                  128-element K steps, two L0 buffers
    L0A x L0B --mmad--> L0C (fp32)               first step initialises, the rest accumulate
    L0C --fixpipe(F322F16, row-major)--> GM      one write per block, two L0C buffers

Pipes hand buffers to each other with set_flag / wait_flag, so copies of the next segment
overlap the multiplications of the current one. Tails in M, N and K need no special code: the
ND->NZ copy zero-fills the last 32-byte piece of each row, and mmad / fixpipe take the true
sizes. Run it with ``ascsim run examples/linear_cube.py -r Model -v Ascend910B1``.
"""

import argparse
import logging

import torch

try:
    import asc
except ImportError:  # started with plain python: let the simulator serve ``asc``
    from ascsim.runner import install_asc_alias

    install_asc_alias()
    import asc
import asc.lib.runtime as rt
import asc.runtime.config as config

BLOCK_N = 128
K_SEG = 512  # K elements staged in L1 per copy
K_STEP = 128  # K elements per L0A/L0B load and per mmad
FRACTAL = 16  # rows of a fractal; also fp16 elements per 32-byte fractal row (C0)
FRAC_ELEMS = FRACTAL * FRACTAL

logging.basicConfig(level=logging.INFO)


def round16(value):
    return (value + FRACTAL - 1) // FRACTAL * FRACTAL


@asc.jit
def load_step(a_l1, b_l1, a_l0, b_l0, mp, np_, k_off, k_len, l0a_nz: asc.ConstExpr[bool]):
    """Move K columns [k_off, k_off + k_len) of the staged A and B tiles into L0A / L0B."""
    k1 = (k_len + FRACTAL - 1) // FRACTAL
    first = k_off // FRACTAL
    m1 = mp // FRACTAL
    if l0a_nz:
        # L0A keeps NZ (column strips of mp rows), the same order as L1: one contiguous load.
        asc.load_data(a_l0, a_l1[first * mp * FRACTAL:],
                      asc.LoadData2DParams(0, k1 * m1, 1, 0, 0, False, 0))
    else:
        # L0A wants the fractals row by row (ZZ): one load per 16-row band, hopping strips.
        for band in range(m1):
            asc.load_data(a_l0[band * k1 * FRAC_ELEMS:],
                          a_l1[(first * mp + band * FRACTAL) * FRACTAL:],
                          asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
    # W[n][k] staged as NZ strips of K is already the ZN order L0B wants for B = W^T.
    asc.load_data(b_l0, b_l1[first * np_ * FRACTAL:],
                  asc.LoadData2DParams(0, k1 * (np_ // FRACTAL), 1, 0, 0, False, 0))


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def linear_cube_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, y: asc.GlobalAddress,
                       m: asc.ConstExpr[int], n: asc.ConstExpr[int], k: asc.ConstExpr[int],
                       block_m: asc.ConstExpr[int], l0a_nz: asc.ConstExpr[bool]):
    x_gm = asc.GlobalTensor()
    w_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    w_gm.set_global_buffer(w)
    y_gm.set_global_buffer(y)

    a_tile = block_m * K_SEG  # elements of one staged A segment
    b_tile = BLOCK_N * K_SEG
    l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 2 * (a_tile + b_tile))
    l0a = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 2 * block_m * K_STEP)
    l0b = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 2 * BLOCK_N * K_STEP)
    l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 2 * block_m * BLOCK_N)

    m_blocks = (m + block_m - 1) // block_m
    n_blocks = (n + BLOCK_N - 1) // BLOCK_N
    segments = (k + K_SEG - 1) // K_SEG

    # Every buffer starts free: pre-set the "consumer done" flags once.
    for slot in range(2):
        asc.set_flag(asc.HardEvent.MTE1_MTE2, slot)
        asc.set_flag(asc.HardEvent.M_MTE1, slot)
        asc.set_flag(asc.HardEvent.FIX_M, slot)

    seg_count = 0
    step_count = 0
    block_count = 0
    for task in asc.range(asc.get_block_idx(), m_blocks * n_blocks, asc.get_block_num()):
        m_base = (task // n_blocks) * block_m
        n_base = (task % n_blocks) * BLOCK_N
        m_len = min(block_m, m - m_base)
        n_len = min(BLOCK_N, n - n_base)
        mp = round16(m_len)
        np_ = round16(n_len)
        c_slot = block_count % 2
        c_l0 = l0c[c_slot * block_m * BLOCK_N:]
        asc.wait_flag(asc.HardEvent.FIX_M, c_slot)

        for seg in range(segments):
            k_base = seg * K_SEG
            k_len = min(K_SEG, k - k_base)
            s = seg_count % 2
            a_l1 = l1[s * (a_tile + b_tile):]
            b_l1 = l1[s * (a_tile + b_tile) + a_tile:]
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, s)
            asc.data_copy(a_l1, x_gm[m_base * k + k_base:],
                          asc.Nd2NzParams(1, m_len, k_len, 0, k, mp, 1, 0))
            asc.data_copy(b_l1, w_gm[n_base * k + k_base:],
                          asc.Nd2NzParams(1, n_len, k_len, 0, k, np_, 1, 0))
            asc.set_flag(asc.HardEvent.MTE2_MTE1, s)
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, s)

            for k_off in range(0, k_len, K_STEP):
                step_len = min(K_STEP, k_len - k_off)
                p = step_count % 2
                a_l0 = l0a[p * block_m * K_STEP:]
                b_l0 = l0b[p * BLOCK_N * K_STEP:]
                asc.wait_flag(asc.HardEvent.M_MTE1, p)
                load_step(a_l1, b_l1, a_l0, b_l0, mp, np_, k_off, step_len, l0a_nz)
                asc.set_flag(asc.HardEvent.MTE1_M, p)
                asc.wait_flag(asc.HardEvent.MTE1_M, p)
                first = seg == 0 and k_off == 0
                asc.mmad(c_l0, a_l0, b_l0,
                         asc.MmadParams(m=m_len, n=n_len, k=step_len, unit_flag=0,
                                        cmatrix_source=False, cmatrix_init_val=first))
                asc.set_flag(asc.HardEvent.M_MTE1, p)
                step_count += 1
            asc.set_flag(asc.HardEvent.MTE1_MTE2, s)
            seg_count += 1

        asc.set_flag(asc.HardEvent.M_FIX, c_slot)
        asc.wait_flag(asc.HardEvent.M_FIX, c_slot)
        asc.fixpipe(y_gm[m_base * n + n_base:], c_l0,
                    asc.FixpipeParamsV220(n_size=n_len, m_size=m_len, src_stride=mp,
                                          dst_stride=n, quant_pre=asc.QuantModes.F322F16),
                    asc.FixpipeConfig.cfg_row_major())
        asc.set_flag(asc.HardEvent.FIX_M, c_slot)
        block_count += 1

    for slot in range(2):  # drain: every pre-set flag is consumed exactly once
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, slot)
        asc.wait_flag(asc.HardEvent.M_MTE1, slot)
        asc.wait_flag(asc.HardEvent.FIX_M, slot)


def plan(m: int, n: int, aic_count: int) -> tuple[int, int]:
    """(block rows, launched cores): 128-row blocks, or 64-row ones when blocks are scarce."""
    block_m = 128
    blocks = -(-m // block_m) * -(-n // BLOCK_N)
    if blocks * 2 <= aic_count and m > 64:
        block_m = 64
        blocks = -(-m // block_m) * -(-n // BLOCK_N)
    return block_m, min(aic_count, blocks)


def linear(x: torch.Tensor, weight: torch.Tensor):
    """y = x . weight^T on the cube; returns (y, the launch's report)."""
    m, k = x.shape
    n = weight.shape[0]
    aic = int(rt.device_info(rt.DeviceModuleType.RT_MODULE_TYPE_AICORE,
                             rt.DeviceInfoType.INFO_TYPE_CORE_NUM))
    block_m, cores = plan(m, n, aic)
    l0a_nz = rt.get_soc_version().value.startswith("Ascend950")
    y = torch.zeros(m, n, dtype=torch.float16)
    report = linear_cube_kernel[cores, rt.current_stream()](x, weight, y, m, n, k, block_m,
                                                            l0a_nz)
    return y, report


def run(platform=None, m: int = 128, n: int = 256, k: int = 256, seed: int = 0):
    """Run one shape on the simulator, check it against torch; returns the launch report."""
    config.set_platform(config.Backend.Model, platform)
    torch.manual_seed(seed)
    x = torch.randn(m, k, dtype=torch.float16)
    weight = torch.randn(n, k, dtype=torch.float16)
    y, report = linear(x, weight)
    expected = (x.float() @ weight.float().T).to(torch.float16)
    assert torch.allclose(y, expected, rtol=1e-2, atol=1e-2), \
        f"linear_cube: result differs from torch (max |diff| {(y - expected).abs().max()})"
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="linear layer on the cube unit")
    parser.add_argument("-r", default="Model", help="backend (Model)")
    parser.add_argument("-v", default=None, help="platform, e.g. Ascend910B1")
    parser.add_argument("--shape", type=int, nargs=3, default=(128, 256, 256),
                        metavar=("M", "N", "K"))
    args = parser.parse_args()
    config.Backend(args.r)  # Model or NPU; both run on the simulated chip
    platform = config.Platform(args.v) if args.v else None
    logging.info("[INFO] start linear_cube %s", "x".join(map(str, args.shape)))
    result = run(platform, *args.shape)
    logging.info("[INFO] linear_cube run success: simulated %.2f us on %s",
                 result.device_time_us, result.soc)
