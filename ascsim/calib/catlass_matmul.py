"""CATLASS's basic matmul on the Ascend 950 under its two block schedulers (device-times.md §D:
``docs/zh/2_Design/01_kernel_design/05_aswt.md``, the table for ``43_ascend950_basic_matmul``).

C[M, N] (fp32) = A[M, K] · B[N, K]ᵀ (fp16). Each AI core computes the C blocks its scheduler
gives it (:mod:`ascsim.calib.block_order`: the S-shaped swizzle or the adaptive sliding window
with its split last round), one after the other, each over the whole K extent, through the
cube pipeline of :mod:`ascsim.calib.matmul_basic`: L1 tiles of ``tile_m`` x ``tile_n`` x
``tile_k`` (two buffers per operand), L0 tiles ``tile_k / l0_k`` deep (two buffers), one L0C
accumulator handed to FixPipe block by block, FixPipe writing fp32 rows to GM.

The published note states the tiles (L1 256 x 256 x 128, L0 256 x 256 x 64) and the types (half
in, float out), not B's layout; B is taken as stored [N, K], the layout of the CATLASS
fixpipe-optimisation table of the same section, so both tables run on one pipeline.
"""

from __future__ import annotations

from functools import lru_cache

import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.calib import block_order
from ascsim.calib.matmul_basic import (
    HALF,
    L0_SLOT_BYTES,
    buffers_drained,
    buffers_free,
    cube_buffers,
    global_operands,
    plan,
    region_blocks,
)
from ascsim.session import SESSION


@lru_cache(maxsize=8)
def _schedule(scheduler: str, m: int, n: int, tile_m: int, tile_n: int, cores: int) -> tuple:
    """Every core's blocks, worked out once per launch shape (each core asks for its own)."""
    return tuple(map(tuple, block_order.SCHEDULERS[scheduler](m, n, tile_m, tile_n, cores)))


def core_blocks(scheduler: str, m: int, n: int, tile_m: int, tile_n: int, cores: int, core: int):
    """The blocks core ``core`` computes, in order (see :mod:`ascsim.calib.block_order`)."""
    return _schedule(scheduler, m, n, tile_m, tile_n, cores)[core]


@asc.jit(kernel_type=KernelType.AIC_ONLY)
def catlass_matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                          m: int, n: int, k: int, tile_m: int, tile_n: int, l0_k: int,
                          steps: int, cores: int, l1_bytes: int,
                          scheduler: asc.ConstExpr[str], v2: asc.ConstExpr[bool]):
    a_gm, b_gm, c_gm = global_operands(a, b, c)
    a1_elems = tile_m * l0_k * steps
    b1_elems = tile_n * l0_k * steps
    l0_elems = L0_SLOT_BYTES // HALF
    a1, b1, l0a, l0b, l0c = cube_buffers(l1_bytes, l0_elems, tile_m * tile_n)
    blocks = core_blocks(scheduler, m, n, tile_m, tile_n, cores, asc.get_block_idx())
    if blocks:
        buffers_free()
        for blk in blocks:
            region_blocks(a_gm, b_gm, c_gm, a1, b1, l0a, l0b, l0c, blk.m0, blk.n0, blk.rows,
                          blk.cols, k, tile_m, tile_n, l0_k, steps, steps, n, a1_elems,
                          b1_elems, l0_elems, v2, asc.QuantModes.NoQuant)
        buffers_drained()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def run_catlass_matmul(mnk, l1_tile=(256, 256, 128), l0_k: int = 64,
                       scheduler: str = "swizzle"):
    """C = A · Bᵀ on the current SoC's AI cores with CATLASS's tiles and ``scheduler``
    ("swizzle" or "aswt"); checks C against torch unless the session is timing-only; returns
    the launch report in a list."""
    if scheduler not in block_order.SCHEDULERS:
        raise ValueError(f"catlass matmul: scheduler must be one of "
                         f"{sorted(block_order.SCHEDULERS)}, got {scheduler!r}")
    soc = SESSION.soc
    m, n, k = (int(v) for v in mnk)
    tile_m, tile_n, tile_k = (int(v) for v in l1_tile)
    if l0_k < 1 or tile_k % l0_k:
        raise ValueError(f"catlass matmul: the L1 tile's K ({tile_k}) must be whole L0 tiles "
                         f"of {l0_k}")
    steps = tile_k // l0_k
    # The buffer and K checks of the basic pipeline, for one tile-sized region per core.
    plan((tile_m, tile_n, k), (tile_m, tile_n, l0_k), (tile_m, tile_n), steps, steps, 1, soc)
    cores = soc.aic_count
    used = sum(1 for blocks in _schedule(scheduler, m, n, tile_m, tile_n, cores) if blocks)
    a = torch.randint(-2, 3, (m, k), dtype=torch.int8).to(torch.float16)
    b = torch.randint(-2, 3, (n, k), dtype=torch.int8).to(torch.float16)
    c = torch.zeros((m, n), dtype=torch.float32)
    report = catlass_matmul_kernel[used](a, b, c, m, n, k, tile_m, tile_n, l0_k, steps, cores,
                                         soc.l1_bytes, scheduler, bool(soc.load2d_v2))
    if not SESSION.timing_only:  # timing-only computes no values: nothing to check
        expected = a.float() @ b.float().T  # small integers: exact in fp32
        if not torch.equal(c, expected):
            raise AssertionError("calibration CATLASS matmul: wrong product (max abs error "
                                 f"{(c - expected).abs().max().item():.3g})")
    return [report]
