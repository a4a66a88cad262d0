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

K need not be whole L1 tiles: as in CATLASS's block Mmad, the last L1 tile holds what is left
of K (399 = 128 + 128 + 128 + 15) and is cut into L0 tiles of ``l0_k`` with a shorter last one;
the short tile is copied to L1 as its columns only, loaded into L0 in whole 16-deep strips (the
fp16 cube's K step) and multiplied with the true K.

Two epilogues (the fixpipe-optimisation table's two columns, ``epilogue``):

* ``fixpipe`` -- an AIC-only kernel; FixPipe writes each C block from L0C to GM.
* ``ub_dual`` -- CATLASS ``KernelMatmulMixFixpipeOpti`` with the ``EpilogueAscend950Fixpipe``
  block epilogue: a MIX kernel, one AIC and its two AIVs per block. The AIC's FixPipe writes the
  block from L0C into both AIVs' UBs at once (the dual destination, split M: fp32 C has the
  accumulator's type), rows padded to whole 32-byte blocks; each AIV copies its half of the rows
  (the first ``ceil(rows / 2)`` to AIV 0) to GM with DataCopyPad. The hand-over is CATLASS's:
  UB stage ``(round // cores) % 2`` (so stage 0 while a core has fewer rounds than there are
  cores, as in every published shape), the AIC waits for both AIVs' "stage free" on its FixPipe
  queue before the block and raises "stage full" for both after FixPipe; each AIV
  waits for "full" on MTE3, copies, and raises "free" from MTE3. The AIVs pre-raise "free" for
  both stages, and the AIC takes those last ones at the end.
"""

from __future__ import annotations

from functools import lru_cache

import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.calib import block_order
from ascsim.calib.matmul_basic import (
    FRACTAL,
    HALF,
    L0_SLOT_BYTES,
    block_product,
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


#: UB stages of the dual-destination epilogue, and its cross-core flag ids (CATLASS's): an AIV
#: raises ``STAGE_FREE + stage`` when it has copied a stage out, the AIC ``STAGE_FULL + stage``
#: when FixPipe has filled it.
UB_STAGES = 2
STAGE_FREE = 6
STAGE_FULL = 8
#: Bytes of an fp32 C element, and fp32 elements per 32-byte UB block (a C row in UB is padded
#: to whole blocks).
F32 = 4
F32_PER_BLOCK = 8
#: The cross-core flag scope between an AIC and its own two AIVs (pyasc mode 2): an AIC's set
#: raises the flag on both AIVs; the AIVs' sets raise the AIC's once both have set it. (CATLASS
#: uses the 950's mode 4, one flag id per AIV, and the AIC waits for each: the same hand-over.)
GROUP = 2


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def ub_stage(round_idx: int, cores: int) -> int:
    """The UB stage a core's round uses (CATLASS: ``(loopIdx / blockNum) & 1``)."""
    return round_idx // cores % UB_STAGES


def aiv_rows(rows: int, sub_block: int) -> tuple[int, int]:
    """(first row, rows) of a ``rows``-row block that AIV ``sub_block`` copies out: AIV 0 the
    first ``ceil(rows / 2)``, AIV 1 the rest (FixPipe's split M, fed an even row count)."""
    half = -(-rows // 2)
    return sub_block * half, half if sub_block == 0 else rows - half


@asc.jit
def cube_side(a_gm, b_gm, m: int, n: int, k: int, tile_m: int, tile_n: int, l0_k: int,
              steps: int, cores: int, l1_bytes: int, ub_stage_elems: int,
              scheduler: asc.ConstExpr[str], v2: asc.ConstExpr[bool]):
    """The AIC of the dual-destination kernel: each block's product, then FixPipe L0C -> both
    AIVs' UBs, with the stage hand-over of the module docstring."""
    a1_elems = tile_m * l0_k * steps
    b1_elems = tile_n * l0_k * steps
    l0_elems = L0_SLOT_BYTES // HALF
    a1, b1, l0a, l0b, l0c = cube_buffers(l1_bytes, l0_elems, tile_m * tile_n)
    # On the AIC a UB tensor names an address in its AIVs' UB (FixPipe picks whose).
    ub = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, UB_STAGES * ub_stage_elems)
    blocks = core_blocks(scheduler, m, n, tile_m, tile_n, cores, asc.get_block_idx())
    if blocks:
        buffers_free()
        l0_slot = 0
        for rnd, blk in enumerate(blocks):
            stage = ub_stage(rnd, cores)
            asc.cross_core_wait_flag(STAGE_FREE + stage, GROUP, asc.PipeID.PIPE_FIX)
            l0_slot = block_product(a_gm, b_gm, a1, b1, l0a, l0b, l0c, blk.m0, blk.n0,
                                    blk.rows, blk.cols, k, tile_m, tile_n, l0_k, steps, steps,
                                    a1_elems, b1_elems, l0_elems, l0_slot, v2)
            n_align = _round_up(blk.cols, F32_PER_BLOCK)
            asc.fixpipe(ub[stage * ub_stage_elems:], l0c,
                        asc.FixpipeParamsV220(n_size=n_align, m_size=_round_up(blk.rows, 2),
                                              src_stride=_round_up(blk.rows, FRACTAL),
                                              dst_stride=n_align, dual_dst_ctl=1),
                        asc.FixpipeConfig.cfg_row_major())
            asc.set_flag(asc.HardEvent.FIX_M, 0)
            asc.cross_core_set_flag(STAGE_FULL + stage, GROUP, asc.PipeID.PIPE_FIX)
        buffers_drained()
    for stage in range(UB_STAGES):  # the AIVs' last "free" of each stage
        asc.cross_core_wait_flag(STAGE_FREE + stage, GROUP, asc.PipeID.PIPE_FIX)


@asc.jit
def vector_side(c_gm, m: int, n: int, tile_m: int, tile_n: int, cores: int,
                ub_stage_elems: int, scheduler: asc.ConstExpr[str]):
    """An AIV of the dual-destination kernel: its half of each of its AIC's blocks, UB -> GM
    by DataCopyPad (rows of the block's width, the UB rows padded to whole 32-byte blocks)."""
    ub = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, UB_STAGES * ub_stage_elems)
    for stage in range(UB_STAGES):
        asc.cross_core_set_flag(STAGE_FREE + stage, GROUP, asc.PipeID.PIPE_MTE3)
    sub = asc.get_sub_block_idx()
    blocks = core_blocks(scheduler, m, n, tile_m, tile_n, cores, asc.get_block_idx() // 2)
    for rnd, blk in enumerate(blocks):
        stage = ub_stage(rnd, cores)
        asc.cross_core_wait_flag(STAGE_FULL + stage, GROUP, asc.PipeID.PIPE_MTE3)
        first, rows = aiv_rows(blk.rows, sub)
        if rows > 0:
            asc.data_copy_pad(c_gm[(blk.m0 + first) * n + blk.n0:],
                              ub[stage * ub_stage_elems:],
                              asc.DataCopyExtParams(rows, blk.cols * F32, 0,
                                                    (n - blk.cols) * F32, 0))
        asc.cross_core_set_flag(STAGE_FREE + stage, GROUP, asc.PipeID.PIPE_MTE3)


@asc.jit(kernel_type=KernelType.MIX_AIC_1_2)
def catlass_matmul_ub_dual_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress,
                                  c: asc.GlobalAddress, m: int, n: int, k: int, tile_m: int,
                                  tile_n: int, l0_k: int, steps: int, cores: int,
                                  l1_bytes: int, ub_stage_elems: int,
                                  scheduler: asc.ConstExpr[str], v2: asc.ConstExpr[bool]):
    a_gm, b_gm, c_gm = global_operands(a, b, c)
    if asc.ascend_is_aic():
        cube_side(a_gm, b_gm, m, n, k, tile_m, tile_n, l0_k, steps, cores, l1_bytes,
                  ub_stage_elems, scheduler, v2)
    else:
        vector_side(c_gm, m, n, tile_m, tile_n, cores, ub_stage_elems, scheduler)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def _ub_stage_elems(soc) -> int:
    """fp32 elements of one UB stage: half of the usable UB (CATLASS's ``UB_SIZE /
    UB_STAGES``). Half of a block that fits L0C fits the UB from stage 0; a half block larger
    than a stage (128 KiB of a 256 x 256 block against 124 KiB) runs past the UB's end from
    stage 1, which only a core with more rounds than there are cores reaches."""
    if not soc.has_path("L0C->UB"):
        raise ValueError(f"catlass matmul: epilogue 'ub_dual' needs FixPipe's L0C -> UB path, "
                         f"which {soc.name} does not have")
    return soc.ub_bytes // UB_STAGES // F32


#: Epilogue name -> (kernel, its launch arguments beyond the shared ones, from the SoC).
EPILOGUES = {
    "fixpipe": lambda soc: (catlass_matmul_kernel, ()),
    "ub_dual": lambda soc: (catlass_matmul_ub_dual_kernel, (_ub_stage_elems(soc),)),
}


def run_catlass_matmul(mnk, l1_tile=(256, 256, 128), l0_k: int = 64,
                       scheduler: str = "swizzle", epilogue: str = "fixpipe"):
    """C = A · Bᵀ on the current SoC's AI cores with CATLASS's tiles, ``scheduler`` ("swizzle"
    or "aswt") and ``epilogue`` ("fixpipe": L0C -> GM; "ub_dual": L0C -> both AIVs' UBs ->
    GM); checks C against torch unless the session is timing-only; returns the launch report in
    a list."""
    if scheduler not in block_order.SCHEDULERS:
        raise ValueError(f"catlass matmul: scheduler must be one of "
                         f"{sorted(block_order.SCHEDULERS)}, got {scheduler!r}")
    if epilogue not in EPILOGUES:
        raise ValueError(f"catlass matmul: epilogue must be one of {sorted(EPILOGUES)}, got "
                         f"{epilogue!r}")
    soc = SESSION.soc
    m, n, k = (int(v) for v in mnk)
    tile_m, tile_n, tile_k = (int(v) for v in l1_tile)
    if l0_k < 1 or tile_k % l0_k:
        raise ValueError(f"catlass matmul: the L1 tile's K ({tile_k}) must be whole L0 tiles "
                         f"of {l0_k}")
    steps = tile_k // l0_k
    # The buffer checks of the basic pipeline, for one tile-sized region per core; K may end
    # in a shorter tile.
    plan((tile_m, tile_n, k), (tile_m, tile_n, l0_k), (tile_m, tile_n), steps, steps, 1, soc,
         k_tail=True)
    kernel, extra = EPILOGUES[epilogue](soc)
    cores = soc.aic_count
    used = sum(1 for blocks in _schedule(scheduler, m, n, tile_m, tile_n, cores) if blocks)
    a = torch.randint(-2, 3, (m, k), dtype=torch.int8).to(torch.float16)
    b = torch.randint(-2, 3, (n, k), dtype=torch.int8).to(torch.float16)
    c = torch.zeros((m, n), dtype=torch.float32)
    report = kernel[used](a, b, c, m, n, k, tile_m, tile_n, l0_k, steps, cores, soc.l1_bytes,
                          *extra, scheduler, bool(soc.load2d_v2))
    if not SESSION.timing_only:  # timing-only computes no values: nothing to check
        expected = a.float() @ b.float().T  # small integers: exact in fp32
        if not torch.equal(c, expected):
            raise AssertionError("calibration CATLASS matmul: wrong product (max abs error "
                                 f"{(c - expected).abs().max().item():.3g})")
    return [report]
