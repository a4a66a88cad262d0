"""The transposed batch matmul calibration kernel (cann-samples ``transpose_batch_matmul``, the
TBMM variant: the batch/M transpose of A written into the GM -> L1 copy's stride instead of a
separate Transpose kernel).

C[i, b, j] = sum_k A_b[i, k] · B[b, k, j] for ``batch`` batches, on the Ascend 950 (the sample
is dav-3510 only). A is stored ``[batch, m, k]`` (``perm_x1`` = 0) or ``[m, batch, k]``
(``perm_x1`` = 1: one batch's rows are ``batch * k`` elements apart, which the ND -> NZ copy
takes as its source row pitch); B is ``[batch, k, n]``; C is written ``[m, batch, n]``.

Work: C is cut into ``base_m`` x ``base_n`` blocks per batch; block ``t`` (batch-major, then M,
then N) goes to core ``t % cores``, every AIC of the SoC launched as the sample launches them.
For a block, K goes through L1 in ``k_l1``-element chunks (A's and B's chunk together in one
half of L1, the two halves alternating), and through L0 in ``base_k`` steps (two L0 halves
alternating). L1 -> L0A is one ``LoadData2DParamsV2`` (the chunk's NZ fractals, L0A is NZ on
the 950); L1 -> L0B transposes each fractal of B's NZ chunk into the ZN order, one
``LoadData2DParamsV2`` per 16-deep K strip. One L0C accumulator per core, handed between Mmad
and FixPipe with the M -> FIX / FIX -> M flags; FixPipe writes fp32 -> ``dtype`` rows into C.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.session import SESSION

FRACTAL = 16  # rows of a fractal; 16-bit elements per 32-byte fractal row
L0_HALF_BYTES = 32 * 1024
ELEM = 2  # bytes of a 16-bit element
#: dtype name -> (torch dtype, FixPipe conversion from the fp32 accumulator).
DTYPES = {"float16": (torch.float16, asc.QuantModes.F322F16),
          "bfloat16": (torch.bfloat16, asc.QuantModes.F322BF16)}
PERMS_X1 = (0, 1)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _align16(v: int) -> int:
    return _ceil_div(v, FRACTAL) * FRACTAL


@dataclass(frozen=True)
class TbmmPlan:
    """One run: the problem (``batch``, ``m``, ``n``, ``k``, A's layout ``perm_x1``), the
    tiling (``base_m``, ``base_n``, ``base_k``, ``k_l1``) and the cores launched."""

    batch: int
    m: int
    n: int
    k: int
    perm_x1: int
    base_m: int
    base_n: int
    base_k: int
    k_l1: int
    cores: int


def plan(bmnk, perm_x1: int, base=(128, 128, 64), k_l1: int = 256, soc=None) -> TbmmPlan:
    """Check the problem and tiling against the SoC; returns the plan."""
    soc = soc or SESSION.soc
    batch, m, n, k = (int(v) for v in bmnk)
    bm, bn, bk = (int(v) for v in base)
    if not soc.load2d_v2:
        raise ValueError(f"tbmm: the sample is written for the Ascend 950 (LoadData2DParamsV2); "
                         f"{soc.name} does not have that load")
    if perm_x1 not in PERMS_X1:
        raise ValueError(f"tbmm: perm_x1 {perm_x1!r}: expected 0 (A [batch, m, k]) or 1 "
                         "(A [m, batch, k])")
    if min(batch, m, n, k, bm, bn, bk, k_l1) < 1:
        raise ValueError(f"tbmm: sizes must be positive (bmnk {list(bmnk)}, base {list(base)}, "
                         f"k_l1 {k_l1})")
    if bm % FRACTAL or bn % FRACTAL or bk % FRACTAL or k_l1 % bk or k % FRACTAL:
        raise ValueError(f"tbmm: base {list(base)} and K {k} must be whole 16-element fractals "
                         f"and k_l1 {k_l1} whole base_k steps")
    if (bm + bn) * k_l1 * ELEM > soc.l1_bytes // 2:
        raise ValueError(f"tbmm: an A and a B chunk ({(bm + bn) * k_l1 * ELEM} B) must fit half "
                         f"of {soc.name}'s {soc.l1_bytes}-byte L1")
    if max(bm, bn) * bk * ELEM > L0_HALF_BYTES or bm * bn * 4 > soc.l0c_bytes:
        raise ValueError(f"tbmm: base {list(base)} does not fit a 32 KiB half of L0A/L0B and "
                         f"{soc.name}'s L0C")
    return TbmmPlan(batch, m, n, k, perm_x1, bm, bn, bk, k_l1, soc.aic_count)


@asc.jit
def load_b_zn(b_l0, b_l1, k_frac0, k_fracs, n_fracs, chunk_fracs):
    """B's K strips [k_frac0, k_frac0 + k_fracs) of an NZ chunk ([n strip][k row][16]) into
    L0B's ZN order (K-fractal rows of ``n_fracs`` fractals), each fractal transposed."""
    for r in range(k_fracs):
        asc.load_data(b_l0[r * n_fracs * FRACTAL * FRACTAL:], b_l1, asc.LoadData2DParamsV2(
            m_start_position=k_frac0 + r, k_start_position=0, m_step=1, k_step=n_fracs,
            src_stride=chunk_fracs, dst_stride=1, if_transpose=True))


@asc.jit(kernel_type=KernelType.AIC_ONLY)
def tbmm_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, batch: int,
                m: int, n: int, k: int, perm_x1: int, base_m: int, base_n: int, base_k: int,
                k_l1: int, l1_bytes: int, quant: asc.ConstExpr[asc.QuantModes]):
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    half_l1 = l1_bytes // 2 // ELEM
    l0_half = L0_HALF_BYTES // ELEM
    l1 = asc.LocalTensor(a.dtype, asc.TPosition.A1, 0, l1_bytes // ELEM)
    l0a = asc.LocalTensor(a.dtype, asc.TPosition.A2, 0, 2 * l0_half)
    l0b = asc.LocalTensor(a.dtype, asc.TPosition.B2, 0, 2 * l0_half)
    l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, base_m * base_n)
    # A's layout: where batch bi's row i starts, and the pitch between its rows.
    a_batch, a_row = (k, batch * k) if perm_x1 == 1 else (m * k, k)
    m_blocks, n_blocks = _ceil_div(m, base_m), _ceil_div(n, base_n)
    chunks = _ceil_div(k, k_l1)
    for ev in range(2):
        asc.set_flag(asc.HardEvent.MTE1_MTE2, ev)
        asc.set_flag(asc.HardEvent.M_MTE1, ev)
    asc.set_flag(asc.HardEvent.FIX_M, 0)
    l0_turn, l1_turn = 0, 0
    for t in range(asc.get_block_idx(), batch * m_blocks * n_blocks, asc.get_block_num()):
        bi = t // (m_blocks * n_blocks)
        mb = t % (m_blocks * n_blocks) // n_blocks
        nb = t % n_blocks
        rows = min(base_m, m - mb * base_m)
        cols = min(base_n, n - nb * base_n)
        rows16, cols16 = _align16(rows), _align16(cols)
        asc.wait_flag(asc.HardEvent.FIX_M, 0)
        for ch in range(chunks):
            buf = l1_turn % 2
            depth = min(k_l1, k - ch * k_l1)
            a_l1 = l1[buf * half_l1:]
            b_l1 = l1[buf * half_l1 + base_m * k_l1:]
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, buf)
            asc.data_copy(a_l1, a_gm[bi * a_batch + mb * base_m * a_row + ch * k_l1:],
                          asc.Nd2NzParams(1, rows, depth, 0, a_row, rows16, 1, 0))
            asc.data_copy(b_l1, b_gm[(bi * k + ch * k_l1) * n + nb * base_n:],
                          asc.Nd2NzParams(1, depth, cols, 0, n, depth, 1, 0))
            asc.set_flag(asc.HardEvent.MTE2_MTE1, buf)
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, buf)
            for step in range(_ceil_div(depth, base_k)):
                slot = l0_turn % 2
                step_k = min(base_k, depth - step * base_k)
                a_l0 = l0a[slot * l0_half:]
                b_l0 = l0b[slot * l0_half:]
                asc.wait_flag(asc.HardEvent.M_MTE1, slot)
                asc.load_data(a_l0, a_l1, asc.LoadData2DParamsV2(
                    m_start_position=0, k_start_position=step * base_k // FRACTAL,
                    m_step=rows16 // FRACTAL, k_step=step_k // FRACTAL,
                    src_stride=rows16 // FRACTAL, dst_stride=rows16 // FRACTAL))
                load_b_zn(b_l0, b_l1, step * base_k // FRACTAL, step_k // FRACTAL,
                          cols16 // FRACTAL, depth // FRACTAL)
                asc.set_flag(asc.HardEvent.MTE1_M, slot)
                asc.wait_flag(asc.HardEvent.MTE1_M, slot)
                asc.mmad(l0c, a_l0, b_l0,
                         asc.MmadParams(m=rows, n=cols, k=step_k, unit_flag=0,
                                        cmatrix_source=False,
                                        cmatrix_init_val=ch == 0 and step == 0))
                asc.set_flag(asc.HardEvent.M_MTE1, slot)
                l0_turn += 1
            asc.set_flag(asc.HardEvent.MTE1_MTE2, buf)
            l1_turn += 1
        asc.set_flag(asc.HardEvent.M_FIX, 0)
        asc.wait_flag(asc.HardEvent.M_FIX, 0)
        asc.fixpipe(c_gm[(mb * base_m * batch + bi) * n + nb * base_n:], l0c,
                    asc.FixpipeParamsV220(n_size=cols, m_size=rows, src_stride=rows16,
                                          dst_stride=batch * n, quant_pre=quant),
                    asc.FixpipeConfig.cfg_row_major())
        asc.set_flag(asc.HardEvent.FIX_M, 0)
    for ev in range(2):
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, ev)
        asc.wait_flag(asc.HardEvent.M_MTE1, ev)
    asc.wait_flag(asc.HardEvent.FIX_M, 0)


def tbmm(a: torch.Tensor, b: torch.Tensor, p: TbmmPlan, dtype: str = "bfloat16", soc=None):
    """C [m, batch, n] of A (laid out as ``p.perm_x1`` says) and B [batch, k, n]; returns
    (C, the launch report)."""
    soc = soc or SESSION.soc
    if dtype not in DTYPES:
        raise ValueError(f"tbmm: dtype {dtype!r}: expected one of {sorted(DTYPES)}")
    torch_dtype, quant = DTYPES[dtype]
    a_shape = (p.m, p.batch, p.k) if p.perm_x1 == 1 else (p.batch, p.m, p.k)
    if tuple(a.shape) != a_shape or tuple(b.shape) != (p.batch, p.k, p.n):
        raise ValueError(f"tbmm: A {list(a.shape)} and B {list(b.shape)} do not match the "
                         f"plan (A {list(a_shape)}, B {[p.batch, p.k, p.n]})")
    if a.dtype != torch_dtype or b.dtype != torch_dtype:
        raise ValueError(f"tbmm: A and B must be {dtype}, got {a.dtype} and {b.dtype}")
    c = torch.zeros((p.m, p.batch, p.n), dtype=torch_dtype)
    report = tbmm_kernel[p.cores](a, b, c, p.batch, p.m, p.n, p.k, p.perm_x1, p.base_m,
                                  p.base_n, p.base_k, p.k_l1, soc.l1_bytes, quant)
    return c, report


def reference(a: torch.Tensor, b: torch.Tensor, perm_x1: int) -> torch.Tensor:
    """C [m, batch, n] in fp32."""
    a_bmk = a.float().permute(1, 0, 2) if perm_x1 == 1 else a.float()
    return (a_bmk @ b.float()).permute(1, 0, 2)


def check_product(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, perm_x1: int) -> None:
    """C must be the batched product rounded to C's dtype (exact for small integers)."""
    expected = reference(a, b, perm_x1).to(c.dtype)
    if not torch.equal(c, expected):
        raise AssertionError("calibration tbmm: wrong product (max abs error "
                             f"{(c.float() - expected.float()).abs().max().item():.3g})")


def run_tbmm(bmnk, perm_x1: int, base=(128, 128, 64), k_l1: int = 256,
             dtype: str = "bfloat16"):
    """The sample's TBMM on the current SoC; checks C against torch (unless the session is
    timing-only); returns the launch report in a list."""
    soc = SESSION.soc
    p = plan(bmnk, perm_x1, base, k_l1, soc)
    if dtype not in DTYPES:
        raise ValueError(f"tbmm: dtype {dtype!r}: expected one of {sorted(DTYPES)}")
    a_shape = (p.m, p.batch, p.k) if perm_x1 == 1 else (p.batch, p.m, p.k)
    gen = torch.Generator().manual_seed(0)
    # Small integers: every product and sum is exact in fp32 and in the 16-bit output.
    a = torch.randint(-2, 3, a_shape, generator=gen).to(DTYPES[dtype][0])
    b = torch.randint(-2, 3, (p.batch, p.k, p.n), generator=gen).to(DTYPES[dtype][0])
    c, report = tbmm(a, b, p, dtype, soc)
    if not SESSION.timing_only:  # timing-only computes no values: nothing to check
        check_product(c, a, b, perm_x1)
    return [report]
