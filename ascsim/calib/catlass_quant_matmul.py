"""CATLASS's int8 quantised matmul on the Ascend910B1, two variants (device-times.md §D: the
table of ``examples/44_quant_matmul_full_loadA_tla``, which times ``12_quant_matmul`` beside it).

D[M, N] (bf16) = (A[M, K] · B[K, N]) (int8 in, int32 accumulated) x scale[N] x perTokenScale[M]
(float32), all matrices RowMajor. One MIX kernel: the AIC computes C blocks of ``tile_m`` x
``tile_n`` over the whole K extent and FixPipes each int32 block into a GM workspace slot; the
group's two AIVs dequantise it from there into D. The hand-off follows the samples' kernels
(``QuantMatmulMultiStageWorkspace`` / ``QuantMatmulFullLoadATla``): two workspace slots per core
(``WORKSPACE_STAGES``), cross-core flag "stored" (AIC -> AIVs, after the FixPipe) and
"consumed" (AIVs -> AIC, after their last MTE3 copy) per slot; the AIC waits for a slot to be
consumed before it writes it a third time.

Cube side, variant ``12`` (``BlockMmad`` with ``MmadAtlasA2PreloadAsyncWithCallback``): L1
tiles 128 x 256 x 512 (A 128 x 512, B 512 x 256, two buffers each), L0 tiles 128 x 256 x 128
(two L0A, two L0B buffers), one L0C. K tiles start at ``core % k_tiles`` (shuffle-K) and wrap.
Preload 1: the GM -> L1 copies of a K tile are issued before the L1 -> L0 loads and Mmads of
the tile before it, across block boundaries, and the FixPipe of a block runs after the first
copies of the next. The workspace slot wait sits just before the FixPipe. Block order:
``GemmIdentityBlockSwizzle<3, 0>`` when M > N, else ``<3, 1>``; launched on every AIC.

Cube side, variant ``44`` (``BlockMmadTla`` with ``MmadFullLoadA``): A's whole block row
(``tile_m`` x K) is copied into the first half of L1 once and kept while the core's next blocks
share that row; B's K tiles (512 x 256) ping-pong in two buffers in the second half, the next
one copied while the current one is computed. No preload across blocks: the workspace slot
wait comes before the block's Mmads. Block order: ``GemmIdentityBlockSwizzleL1FullLoad<1, 0>``
(contiguous runs per core) when M > 128, else ``GemmIdentityBlockSwizzle<3, 0>``; launched on
min(AICs, blocks) cores. When A has one block row, B is read with L2 disabled
(``CACHE_MODE_DISABLE``), and A too when B has one block column, as the sample does.

Both: A goes GM -> L1 ND -> zN (16 x 32 int8 fractals) and L1 -> L0A by LoadData2D per 16-row
band; B goes GM -> L1 ND -> zN and L1 -> L0B by LoadDataWithTranspose (32 x 32 int8 squares)
per 32-deep K group.

Vector side (``BlockEpilogue`` with ``EpilogueAtlasA2PerTokenDequant``, both variants): the
block is cut into 32 x 256 tiles walked down the rows first (``EpilogueHorizontalTileSwizzle``);
AIV ``sub`` takes tiles ``sub``, ``sub + 2``, ... Per tile, with two UB buffers: DataCopyPad
of the int32 tile, its 256 scales and 32 per-token scales (MTE2); Cast int32 -> fp32; Mul by
the scale row (repeat over rows, ``src1`` repeat stride 0); Brcb of the per-token scales to
one 32-byte block each; Mul by them (block-stride form); Cast fp32 -> bf16; DataCopyPad to D
(MTE3).

Published facts not followed: the ``12_quant_matmul`` source at the stated commit reads B
ColumnMajor with fp16 scales and output; the timing table says "A, B and the output all
RowMajor" and was taken beside the bf16 / float-scale ``44`` sample, so both variants run
RowMajor B, float scales and bf16 output here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.calib import block_order
from ascsim.session import SESSION

FRACTAL = 16  # rows of a fractal
C0_INT8 = 32  # int8 elements per 32-byte fractal row
WORKSPACE_STAGES = 2  # workspace slots per core (the samples' workspaceStages)
UB_STAGES = 2  # the epilogue's UB buffers
FP32_PER_BLOCK = 8  # fp32 elements per 32-byte block
MUL_LANES = 64  # fp32 lanes of one vector repeat (256 bytes)

#: Cross-core flag ids per workspace slot, numbered as the samples' kernels do: slot s uses
#: 2s ("stored": AIC -> AIVs) and 2s + 1 ("consumed": AIVs -> AIC).
STORED = (0, 2)
CONSUMED = (1, 3)

VARIANTS = ("12", "44")
#: The published tiles of both samples: L1 tile (M, N, K), L0 tile K, epilogue tile (rows, cols).
L1_TILE = (128, 256, 512)
L0_K = 128
EPI_TILE = (32, 256)


#: The shipped points file, and the prefix of this kernel's published points in it.
POINTS_FILE = Path(__file__).resolve().parent / "points.yaml"
POINT_PREFIX = "catlass-qmm-b1-"


def published_points(match: str = "") -> list:
    """The points of :data:`POINTS_FILE` that time this kernel (ids containing ``match``)."""
    from ascsim.calib.points import load_points
    return [p for p in load_points(POINTS_FILE).points
            if p.id.startswith(POINT_PREFIX) and match in p.id]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class QuantMatmulPlan:
    """One run: ``variant`` ("12" or "44"), the problem ``m`` x ``n`` x ``k``, the L1 tile
    (``tile_m``, ``tile_n``, ``tile_k``; the L0 tile is ``tile_m`` x ``tile_n`` x ``l0_k``),
    the epilogue tile ``epi_rows`` x ``epi_cols``, the AIC cores launched (the schedule deals
    blocks over them) and the SoC's L1 size (the buffer map)."""

    variant: str
    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    tile_k: int
    l0_k: int
    epi_rows: int
    epi_cols: int
    cores: int
    l1_bytes: int

    @property
    def m_tiles(self) -> int:
        return _ceil_div(self.m, self.tile_m)

    @property
    def n_tiles(self) -> int:
        return _ceil_div(self.n, self.tile_n)

    @property
    def k_tiles(self) -> int:
        return _ceil_div(self.k, self.tile_k)

    @property
    def workspace_elems(self) -> int:
        return self.tile_m * self.tile_n * self.cores * WORKSPACE_STAGES

    @property
    def scheduler(self) -> str:
        """The block scheduler the sample picks for this shape."""
        if self.variant == "12":
            return "swizzle<3,0>" if self.m > self.n else "swizzle<3,1>"
        return "l1_full_load<1,0>" if self.m > self.tile_m else "swizzle<3,0>"


@lru_cache(maxsize=16)
def schedule(p: QuantMatmulPlan) -> tuple:
    """Every core's blocks, in order (worked out once per plan, each core asks for its own)."""
    order = p.scheduler
    if order == "l1_full_load<1,0>":
        per_core = block_order.l1_full_load_blocks(p.m, p.n, p.tile_m, p.tile_n, p.cores, 1, 0)
    else:
        direction = 0 if order == "swizzle<3,0>" else 1
        per_core = block_order.swizzle_blocks(p.m, p.n, p.tile_m, p.tile_n, p.cores, 3,
                                              direction)
    return tuple(map(tuple, per_core))


def plan(variant: str, mnk, l1_tile=L1_TILE, l0_k: int = L0_K, epi_tile=EPI_TILE,
         soc=None) -> QuantMatmulPlan:
    """Check the knobs against the problem and the SoC's buffers; returns the plan."""
    soc = soc or SESSION.soc
    if variant not in VARIANTS:
        raise ValueError(f"quant matmul: variant must be one of {list(VARIANTS)}, got "
                         f"{variant!r}")
    m, n, k = (int(v) for v in mnk)
    tm, tn, tk = (int(v) for v in l1_tile)
    er, ec = (int(v) for v in epi_tile)
    if min(m, n, k, tm, tn, tk, l0_k, er, ec) < 1:
        raise ValueError(f"quant matmul: sizes must be positive (mnk {list(mnk)}, L1 tile "
                         f"{list(l1_tile)}, L0 K {l0_k}, epilogue tile {list(epi_tile)})")
    if m % FRACTAL or n % C0_INT8 or k % C0_INT8:
        raise ValueError(f"quant matmul: M must be a multiple of {FRACTAL}, N and K of "
                         f"{C0_INT8} (whole int8 fractals), got {m} x {n} x {k}")
    if tm % FRACTAL or tn % C0_INT8 or tk % l0_k or l0_k % C0_INT8:
        raise ValueError(f"quant matmul: the L1 tile {list(l1_tile)} must be whole fractals "
                         f"(M of {FRACTAL}, N of {C0_INT8}) and its K whole L0 tiles of {l0_k} "
                         f"(a multiple of {C0_INT8})")
    if tm * l0_k > soc.l0a_bytes // 2 or tn * l0_k > soc.l0b_bytes // 2:
        raise ValueError(f"quant matmul: an L0 tile ({tm} x {l0_k} of A, {l0_k} x {tn} of B, "
                         f"int8) must fit half of L0A / L0B")
    if tm * tn * 4 > soc.l0c_bytes:
        raise ValueError(f"quant matmul: a {tm} x {tn} int32 block does not fit "
                         f"{soc.name}'s {soc.l0c_bytes}-byte L0C")
    if variant == "12" and 2 * (tm * tk + tk * tn) > soc.l1_bytes:
        raise ValueError(f"quant matmul 12: two A tiles ({tm * tk} B) and two B tiles "
                         f"({tk * tn} B) do not fit {soc.name}'s {soc.l1_bytes}-byte L1")
    if variant == "44" and (tm * k > soc.l1_bytes // 2 or 2 * tk * tn > soc.l1_bytes // 2):
        raise ValueError(f"quant matmul 44: A's block row ({tm} x {k} int8) and two B tiles "
                         f"({tk} x {tn}) must each fit half of {soc.name}'s {soc.l1_bytes}-byte "
                         "L1 (the sample refuses the shape: 'MatA tile cannot be full loaded')")
    if ec % MUL_LANES or er % FP32_PER_BLOCK:
        raise ValueError(f"quant matmul: the epilogue tile {list(epi_tile)} needs rows a "
                         f"multiple of {FP32_PER_BLOCK} and columns of {MUL_LANES}")
    ub_need = UB_STAGES * (er * ec * (4 + 2) + ec * 4 + er * 4) + 2 * er * ec * 4 + er * 32
    if ub_need > soc.ub_bytes:
        raise ValueError(f"quant matmul: the epilogue's buffers for a {er} x {ec} tile need "
                         f"{ub_need} B of UB; {soc.name} has {soc.ub_bytes}")
    tasks = _ceil_div(m, tm) * _ceil_div(n, tn)
    cores = soc.aic_count if variant == "12" else min(soc.aic_count, tasks)
    return QuantMatmulPlan(variant, m, n, k, tm, tn, tk, l0_k, er, ec, cores, soc.l1_bytes)


# ------------------------------------------------------------------------------ cube side
def _depth(p: QuantMatmulPlan, k_tile: int) -> int:
    """K extent of L1 K tile ``k_tile`` (the last one may be short)."""
    return min(p.tile_k, p.k - k_tile * p.tile_k)


class _CubeBuffers:
    """The AIC's buffers: L1 A and B tiles, two L0A and two L0B slots, one int32 L0C."""

    def __init__(self, p: QuantMatmulPlan, l0a_bytes: int, l0b_bytes: int):
        l1 = asc.LocalTensor(asc.int8, asc.TPosition.A1, 0, p.l1_bytes)
        if p.variant == "12":  # two A tiles, then two B tiles
            a_tile = p.tile_m * p.tile_k
            b_tile = p.tile_k * p.tile_n
            self.l1a = (l1[0:], l1[a_tile:])
            self.l1b = (l1[2 * a_tile:], l1[2 * a_tile + b_tile:])
        else:  # A's block row in the first half of L1, B's two tiles in the second
            half = p.l1_bytes // 2
            b_tile = p.tile_k * p.tile_n
            self.l1a = (l1[0:],)
            self.l1b = (l1[half:], l1[half + b_tile:])
        l0a = asc.LocalTensor(asc.int8, asc.TPosition.A2, 0, l0a_bytes)
        l0b = asc.LocalTensor(asc.int8, asc.TPosition.B2, 0, l0b_bytes)
        self.l0a = (l0a[0:], l0a[l0a_bytes // 2:])
        self.l0b = (l0b[0:], l0b[l0b_bytes // 2:])
        self.l0c = asc.LocalTensor(asc.int32, asc.TPosition.CO1, 0, p.tile_m * p.tile_n)


@asc.jit
def copy_a(l1a, a_gm, row, col, rows, cols, k: int, frame: int):
    """``rows`` x ``cols`` of A from (``row``, ``col``), ND -> zN into L1 (strips of 32
    columns, ``frame`` rows apart)."""
    asc.data_copy(l1a, a_gm[row * k + col:], asc.Nd2NzParams(1, rows, cols, 0, k, frame, 1, 0))


@asc.jit
def copy_b(l1b, b_gm, row, col, rows, cols, n: int, frame: int):
    """``rows`` (K) x ``cols`` (N) of B from (``row``, ``col``), ND -> zN into L1."""
    asc.data_copy(l1b, b_gm[row * n + col:], asc.Nd2NzParams(1, rows, cols, 0, n, frame, 1, 0))


@asc.jit
def load_a(l0a, l1a, k_off, rows, depth, frame: int):
    """A's L0 tile (``rows`` x ``depth`` from column ``k_off`` of the zN L1 tile, strips
    ``frame`` rows apart) into L0A as zZ: one LoadData2D per 16-row band."""
    for band in range(rows // FRACTAL):
        asc.load_data(l0a[band * depth * FRACTAL:],
                      l1a[(k_off // C0_INT8) * frame * C0_INT8 + band * FRACTAL * C0_INT8:],
                      asc.LoadData2DParams(0, depth // C0_INT8, frame // FRACTAL, 0, 0, False, 0))


@asc.jit
def load_b(l0b, l1b, k_off, depth, cols, frame: int):
    """B's L0 tile (``depth`` x ``cols`` from row ``k_off`` of the zN L1 tile, strips ``frame``
    rows apart) into L0B: one LoadDataWithTranspose of 32 x 32 squares per 32-deep K group."""
    for group in range(depth // C0_INT8):
        asc.load_data_with_transpose(
            l0b[group * cols * C0_INT8:], l1b[(k_off + group * C0_INT8) * C0_INT8:],
            asc.LoadData2dTransposeParams(start_index=0, repeat_times=cols // C0_INT8,
                                          src_stride=frame // C0_INT8, dst_gap=1,
                                          dst_frac_gap=0))


@asc.jit
def fix_out(ws_gm, l0c, slot, rows, cols, tile_n: int):
    """The int32 block from L0C into its workspace slot (row-major, ``tile_n`` pitch)."""
    asc.fixpipe(ws_gm[slot * tile_n:], l0c,
                asc.FixpipeParamsV220(n_size=cols, m_size=rows, src_stride=rows,
                                      dst_stride=tile_n, quant_pre=asc.QuantModes.NoQuant),
                asc.FixpipeConfig.cfg_row_major())


class _Handoff:
    """The AIC's side of the workspace slots: which slot a block uses, the wait for a slot to be
    consumed before it is rewritten, the "stored" flag after the FixPipe, the final drain."""

    def __init__(self, p: QuantMatmulPlan):
        self.core = asc.get_block_idx()
        self.cores = p.cores
        self.stage = 0
        self.used = 0

    def next_slot(self):
        """(slot row in the workspace, stage, whether the slot must be waited for)."""
        stage = self.stage
        wait = self.used == WORKSPACE_STAGES
        if not wait:
            self.used += 1
        self.stage = (stage + 1) % WORKSPACE_STAGES
        return (stage * self.cores + self.core), stage, wait


@asc.jit
def before_fix(stage, wait):
    if wait:
        asc.cross_core_wait_flag(CONSUMED[stage], 2)


@asc.jit
def after_fix(stage):
    asc.cross_core_set_flag(STORED[stage], 2, asc.PipeID.PIPE_FIX)


@asc.jit
def drain(handoff):
    """Wait for the AIVs to consume the slots still in use (the samples' last loop)."""
    while handoff.used > 0:
        asc.cross_core_wait_flag(
            CONSUMED[(handoff.stage - handoff.used) % WORKSPACE_STAGES], 2)
        handoff.used -= 1


@asc.jit
def l1_tile_mmad(bufs, t, ws_gm, p: asc.ConstExpr, ids):
    """The L1 -> L0 loads and Mmads of one K tile (variant 12's ``L1TileMmad``); after the last
    K tile of a block its FixPipe, between the slot callbacks. ``t``: (L1 buffer, block rows,
    block cols, K depth, first K tile of the block, last K tile, slot, stage, wait)."""
    buf, rows, cols, depth, first, last, slot, stage, wait = t
    if first:
        asc.wait_flag(asc.HardEvent.FIX_M, 0)
    for kp in range(_ceil_div(depth, p.l0_k)):
        kd = min(p.l0_k, depth - kp * p.l0_k)
        la = ids["l0a"]
        asc.wait_flag(asc.HardEvent.M_MTE1, la)
        if kp == 0:
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, buf)
        load_a(bufs.l0a[la], bufs.l1a[buf], kp * p.l0_k, rows, kd, p.tile_m)
        if kp == _ceil_div(depth, p.l0_k) - 1:
            asc.set_flag(asc.HardEvent.MTE1_MTE2, buf)
        lb = ids["l0b"]
        asc.wait_flag(asc.HardEvent.M_MTE1, 2 + lb)
        if kp == 0:
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, 2 + buf)
        load_b(bufs.l0b[lb], bufs.l1b[buf], kp * p.l0_k, kd, cols, p.tile_k)
        if kp == _ceil_div(depth, p.l0_k) - 1:
            asc.set_flag(asc.HardEvent.MTE1_MTE2, 2 + buf)
        asc.set_flag(asc.HardEvent.MTE1_M, 0)
        asc.wait_flag(asc.HardEvent.MTE1_M, 0)
        asc.mmad(bufs.l0c, bufs.l0a[la], bufs.l0b[lb],
                 asc.MmadParams(m=rows, n=cols, k=kd, unit_flag=0, cmatrix_source=False,
                                cmatrix_init_val=first and kp == 0))
        asc.set_flag(asc.HardEvent.M_MTE1, 2 + lb)
        ids["l0b"] = 1 - lb
        asc.set_flag(asc.HardEvent.M_MTE1, la)
        ids["l0a"] = 1 - la
    if last:
        before_fix(stage, wait)
        asc.set_flag(asc.HardEvent.M_FIX, 0)
        asc.wait_flag(asc.HardEvent.M_FIX, 0)
        fix_out(ws_gm, bufs.l0c, slot * p.tile_m, rows, cols, p.tile_n)
        asc.set_flag(asc.HardEvent.FIX_M, 0)
        after_fix(stage)


@asc.jit
def cube_preload(a_gm, b_gm, ws_gm, p: asc.ConstExpr, l0a_bytes: int, l0b_bytes: int):
    """Variant 12's AIC: per K tile, its GM -> L1 copies, then the Mmads of the tile before."""
    bufs = _CubeBuffers(p, l0a_bytes, l0b_bytes)
    handoff = _Handoff(p)
    blocks = schedule(p)[handoff.core]
    for ev in range(4):
        asc.set_flag(asc.HardEvent.MTE1_MTE2, ev)
        asc.set_flag(asc.HardEvent.M_MTE1, ev)
    asc.set_flag(asc.HardEvent.FIX_M, 0)
    ids = {"l0a": 0, "l0b": 0}
    l1_id = 0
    pending = None
    for blk in blocks:
        slot, stage, wait = handoff.next_slot()
        start = handoff.core % p.k_tiles  # shuffle-K
        for kl in range(p.k_tiles):
            kt = (start + kl) % p.k_tiles
            depth = min(p.tile_k, p.k - kt * p.tile_k)
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, l1_id)
            copy_a(bufs.l1a[l1_id], a_gm, blk.m0, kt * p.tile_k, blk.rows, depth, p.k,
                   p.tile_m)
            asc.set_flag(asc.HardEvent.MTE2_MTE1, l1_id)
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, 2 + l1_id)
            copy_b(bufs.l1b[l1_id], b_gm, kt * p.tile_k, blk.n0, depth, blk.cols, p.n,
                   p.tile_k)
            asc.set_flag(asc.HardEvent.MTE2_MTE1, 2 + l1_id)
            if pending is not None:
                l1_tile_mmad(bufs, pending, ws_gm, p, ids)
            pending = (l1_id, blk.rows, blk.cols, depth, kl == 0, kl == p.k_tiles - 1, slot,
                       stage, wait)
            l1_id = 1 - l1_id
    if pending is not None:
        l1_tile_mmad(bufs, pending, ws_gm, p, ids)
    drain(handoff)
    for ev in range(4):
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, ev)
        asc.wait_flag(asc.HardEvent.M_MTE1, ev)
    asc.wait_flag(asc.HardEvent.FIX_M, 0)


@asc.jit
def cube_full_load_a(a_gm, b_gm, ws_gm, p: asc.ConstExpr, l0a_bytes: int, l0b_bytes: int):
    """Variant 44's AIC: A's block row stays in L1 while the core's blocks share it; B's K
    tiles ping-pong, the next copied while the current one is computed."""
    bufs = _CubeBuffers(p, l0a_bytes, l0b_bytes)
    handoff = _Handoff(p)
    blocks = schedule(p)[handoff.core]
    for ev in range(2):
        asc.set_flag(asc.HardEvent.MTE1_MTE2, 1 + ev)  # B's buffers (A's id 0 is set per load)
    for ev in range(4):
        asc.set_flag(asc.HardEvent.M_MTE1, ev)
    asc.set_flag(asc.HardEvent.FIX_M, 0)
    ids = {"l0a": 0, "l0b": 0}
    b_id = 0
    loaded_row = -1
    for blk in blocks:
        slot, stage, wait = handoff.next_slot()
        before_fix(stage, wait)  # 44 waits for the slot before the block's Mmads
        if blk.m0 != loaded_row:
            # The scalar unit waits for MTE1 to finish with the old row, then for the copy.
            asc.set_flag(asc.HardEvent.MTE1_MTE2, 0)
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, 0)
            copy_a(bufs.l1a[0], a_gm, blk.m0, 0, blk.rows, p.k, p.k, p.tile_m)
            asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
            loaded_row = blk.m0
        start = handoff.core
        first = start % p.k_tiles
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, 1 + b_id)
        copy_b(bufs.l1b[b_id], b_gm, first * p.tile_k, blk.n0, _depth(p, first), blk.cols, p.n,
               p.tile_k)
        asc.set_flag(asc.HardEvent.MTE2_MTE1, 1 + b_id)
        asc.wait_flag(asc.HardEvent.FIX_M, 0)
        for kl in range(p.k_tiles):
            kt = (start + kl) % p.k_tiles
            nxt = 1 - b_id
            if kl < p.k_tiles - 1:
                kn = (start + kl + 1) % p.k_tiles
                asc.wait_flag(asc.HardEvent.MTE1_MTE2, 1 + nxt)
                copy_b(bufs.l1b[nxt], b_gm, kn * p.tile_k, blk.n0, _depth(p, kn), blk.cols, p.n,
                       p.tile_k)
                asc.set_flag(asc.HardEvent.MTE2_MTE1, 1 + nxt)
            depth = _depth(p, kt)
            parts = _ceil_div(depth, p.l0_k)
            for kp in range(parts):
                kd = min(p.l0_k, depth - kp * p.l0_k)
                la, lb = ids["l0a"], ids["l0b"]
                asc.wait_flag(asc.HardEvent.M_MTE1, la)
                load_a(bufs.l0a[la], bufs.l1a[0], kt * p.tile_k + kp * p.l0_k, blk.rows, kd,
                       p.tile_m)
                asc.wait_flag(asc.HardEvent.M_MTE1, 2 + lb)
                if kp == 0:
                    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 1 + b_id)
                load_b(bufs.l0b[lb], bufs.l1b[b_id], kp * p.l0_k, kd, blk.cols, p.tile_k)
                if kp == parts - 1:
                    asc.set_flag(asc.HardEvent.MTE1_MTE2, 1 + b_id)
                asc.set_flag(asc.HardEvent.MTE1_M, 0)
                asc.wait_flag(asc.HardEvent.MTE1_M, 0)
                asc.mmad(bufs.l0c, bufs.l0a[la], bufs.l0b[lb],
                         asc.MmadParams(m=blk.rows, n=blk.cols, k=kd, unit_flag=0,
                                        cmatrix_source=False,
                                        cmatrix_init_val=kl == 0 and kp == 0))
                asc.set_flag(asc.HardEvent.M_MTE1, 2 + lb)
                ids["l0b"] = 1 - lb
                asc.set_flag(asc.HardEvent.M_MTE1, la)
                ids["l0a"] = 1 - la
            b_id = nxt
        asc.set_flag(asc.HardEvent.M_FIX, 0)
        asc.wait_flag(asc.HardEvent.M_FIX, 0)
        fix_out(ws_gm, bufs.l0c, slot * p.tile_m, blk.rows, blk.cols, p.tile_n)
        asc.set_flag(asc.HardEvent.FIX_M, 0)
        after_fix(stage)
    drain(handoff)
    for ev in range(2):
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, 1 + ev)
    for ev in range(4):
        asc.wait_flag(asc.HardEvent.M_MTE1, ev)
    asc.wait_flag(asc.HardEvent.FIX_M, 0)


# ------------------------------------------------------------------------------ vector side
class _EpilogueBuffers:
    """The AIV's UB map, the samples' order: per UB stage the int32 C tile, the scales, the
    per-token scales and the bf16 D tile; then the fp32 C tile, the product and the per-token
    scales broadcast to one 32-byte block each."""

    def __init__(self, p: QuantMatmulPlan):
        count = p.epi_rows * p.epi_cols
        at = 0
        self.c, self.scale, self.token, self.d = [], [], [], []
        for _ in range(UB_STAGES):
            self.c.append(asc.LocalTensor(asc.int32, asc.TPosition.VECIN, at, count))
            at += count * 4
            self.scale.append(asc.LocalTensor(asc.float32, asc.TPosition.VECIN, at, p.epi_cols))
            at += p.epi_cols * 4
            self.token.append(asc.LocalTensor(asc.float32, asc.TPosition.VECIN, at, p.epi_rows))
            at += _ceil_div(p.epi_rows * 4, 32) * 32
            self.d.append(asc.LocalTensor(asc.bfloat16, asc.TPosition.VECOUT, at, count))
            at += count * 2
        self.c32 = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, at, count)
        at += count * 4
        self.mul = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, at, count)
        at += count * 4
        self.token_brcb = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, at,
                                          p.epi_rows * FP32_PER_BLOCK)


@asc.jit
def dequant_tile(bufs, ub, ws_gm, scale_gm, token_gm, d_gm, p: asc.ConstExpr, blk, slot,
                 r0, c0, rows, cols):
    """One epilogue tile: rows ``r0`` .. of the block, columns ``c0`` .., in UB stage ``ub``."""
    count = p.epi_rows * p.epi_cols
    asc.wait_flag(asc.HardEvent.V_MTE2, 3 * ub)
    asc.data_copy_pad(bufs.c[ub], ws_gm[(slot * p.tile_m + r0) * p.tile_n + c0:],
                      asc.DataCopyExtParams(rows, cols * 4, (p.tile_n - cols) * 4,
                                            (p.epi_cols - cols) * 4 // 32, 0))
    asc.set_flag(asc.HardEvent.MTE2_V, 3 * ub)
    asc.wait_flag(asc.HardEvent.V_MTE2, 3 * ub + 1)
    asc.data_copy_pad(bufs.scale[ub], scale_gm[blk.n0 + c0:],
                      asc.DataCopyExtParams(1, cols * 4, 0, 0, 0))
    asc.set_flag(asc.HardEvent.MTE2_V, 3 * ub + 1)
    asc.wait_flag(asc.HardEvent.V_MTE2, 3 * ub + 2)
    asc.data_copy_pad(bufs.token[ub], token_gm[blk.m0 + r0:],
                      asc.DataCopyExtParams(1, rows * 4, 0, 0, 0))
    asc.set_flag(asc.HardEvent.MTE2_V, 3 * ub + 2)
    asc.wait_flag(asc.HardEvent.MTE2_V, 3 * ub)
    asc.cast(bufs.c32, bufs.c[ub], asc.RoundMode.CAST_RINT, count)
    asc.set_flag(asc.HardEvent.V_MTE2, 3 * ub)
    asc.wait_flag(asc.HardEvent.MTE2_V, 3 * ub + 1)
    asc.wait_flag(asc.HardEvent.MTE2_V, 3 * ub + 2)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    # C x scale[col]: one repeat per row, the scale row re-read (src1 repeat stride 0).
    row_blocks = p.epi_cols // FP32_PER_BLOCK
    for col in range(0, p.epi_cols, MUL_LANES):
        asc.mul(bufs.mul[col:], bufs.c32[col:], bufs.scale[ub][col:], MUL_LANES, p.epi_rows,
                asc.BinaryRepeatParams(1, 1, 1, row_blocks, row_blocks, 0))
    asc.set_flag(asc.HardEvent.V_MTE2, 3 * ub + 1)
    asc.brcb(bufs.token_brcb, bufs.token[ub], _ceil_div(p.epi_rows, FP32_PER_BLOCK),
             asc.BrcbRepeatParams(1, 8))
    asc.set_flag(asc.HardEvent.V_MTE2, 3 * ub + 2)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    # x token[row]: eight rows per repeat (block stride = a row), one block per row of src1.
    # The product goes back into the fp32 C tile, free since the first Mul read it (the
    # samples' float-scale epilogues alias their per-token product to that buffer).
    for row in range(0, p.epi_rows, FP32_PER_BLOCK):
        asc.mul(bufs.c32[row * p.epi_cols:], bufs.mul[row * p.epi_cols:],
                bufs.token_brcb[row * FP32_PER_BLOCK:], MUL_LANES, row_blocks,
                asc.BinaryRepeatParams(row_blocks, row_blocks, 1, 1, 1, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.wait_flag(asc.HardEvent.MTE3_V, ub)
    asc.cast(bufs.d[ub], bufs.c32, asc.RoundMode.CAST_RINT, count)
    asc.set_flag(asc.HardEvent.V_MTE3, ub)
    asc.wait_flag(asc.HardEvent.V_MTE3, ub)
    asc.data_copy_pad(d_gm[(blk.m0 + r0) * p.n + blk.n0 + c0:], bufs.d[ub],
                      asc.DataCopyExtParams(rows, cols * 2,
                                            (p.epi_cols * 2 - _ceil_div(cols * 2, 32) * 32) // 32,
                                            (p.n - cols) * 2, 0))
    asc.set_flag(asc.HardEvent.MTE3_V, ub)


@asc.jit
def vector_epilogue(ws_gm, scale_gm, token_gm, d_gm, p: asc.ConstExpr):
    """An AIV: for each block of its AIC, wait for the slot, dequantise its share of the
    block's tiles, then tell the AIC the slot is consumed."""
    bufs = _EpilogueBuffers(p)
    core = asc.get_block_idx() // 2
    sub = asc.get_sub_block_idx()
    for ub in range(UB_STAGES):
        for ev in range(3):
            asc.set_flag(asc.HardEvent.V_MTE2, 3 * ub + ev)
        asc.set_flag(asc.HardEvent.MTE3_V, ub)
    ub = 0
    stage = 0
    for blk in schedule(p)[core]:
        slot = stage * p.cores + core
        asc.cross_core_wait_flag(STORED[stage], 2)
        row_tiles = _ceil_div(blk.rows, p.epi_rows)
        tiles = row_tiles * _ceil_div(blk.cols, p.epi_cols)
        for t in range(sub, tiles, 2):
            r0 = t % row_tiles * p.epi_rows
            c0 = t // row_tiles * p.epi_cols
            dequant_tile(bufs, ub, ws_gm, scale_gm, token_gm, d_gm, p, blk, slot, r0, c0,
                         min(p.epi_rows, blk.rows - r0), min(p.epi_cols, blk.cols - c0))
            ub = (ub + 1) % UB_STAGES
        asc.cross_core_set_flag(CONSUMED[stage], 2, asc.PipeID.PIPE_MTE3)
        stage = (stage + 1) % WORKSPACE_STAGES
    for ub in range(UB_STAGES):
        for ev in range(3):
            asc.wait_flag(asc.HardEvent.V_MTE2, 3 * ub + ev)
        asc.wait_flag(asc.HardEvent.MTE3_V, ub)


def _gm(address):
    tensor = asc.GlobalTensor()
    tensor.set_global_buffer(address)
    return tensor


@asc.jit
def quant_matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, scale: asc.GlobalAddress,
                        token: asc.GlobalAddress, d: asc.GlobalAddress, ws: asc.GlobalAddress,
                        p: asc.ConstExpr, l0a_bytes: int, l0b_bytes: int):
    """One MIX kernel: the AIC's int32 blocks reach its two AIVs through the GM workspace."""
    if asc.ascend_is_aic():
        a_gm, b_gm = _gm(a), _gm(b)
        if p.variant == "44":
            # The sample's L2 hints: an operand read by one block row / column bypasses L2.
            if p.m_tiles == 1:
                b_gm.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_DISABLE)
            if p.n_tiles == 1:
                a_gm.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_DISABLE)
            cube_full_load_a(a_gm, b_gm, _gm(ws), p, l0a_bytes, l0b_bytes)
        else:
            cube_preload(a_gm, b_gm, _gm(ws), p, l0a_bytes, l0b_bytes)
    else:
        vector_epilogue(_gm(ws), _gm(scale), _gm(token), _gm(d), p)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def operands(m: int, n: int, k: int, seed: int = 0):
    """int8 A [M, K] and B [K, N] in the samples' range [-16, 16], float32 scales in [0, 1)."""
    gen = torch.Generator().manual_seed(seed)
    a = torch.randint(-16, 17, (m, k), dtype=torch.int8, generator=gen)
    b = torch.randint(-16, 17, (k, n), dtype=torch.int8, generator=gen)
    scale = torch.rand(n, generator=gen, dtype=torch.float32)
    token = torch.rand(m, generator=gen, dtype=torch.float32)
    return a, b, scale, token


def reference(a, b, scale, token) -> torch.Tensor:
    """The dequantised product in float64 (exact int matmul times both scales), rounded to bf16."""
    c = a.to(torch.float64) @ b.to(torch.float64)
    return (c * scale.to(torch.float64)[None, :] * token.to(torch.float64)[:, None]).to(
        torch.bfloat16)


def check_result(d: torch.Tensor, expected: torch.Tensor) -> None:
    """D against the reference with bf16's usual tolerance (torch's for bfloat16)."""
    try:
        torch.testing.assert_close(d.float(), expected.float(), rtol=1.6e-2, atol=1e-5)
    except AssertionError as err:
        raise AssertionError(f"calibration CATLASS quant matmul: wrong result: {err}") from None


def quant_matmul(a, b, scale, token, p: QuantMatmulPlan, soc=None):
    """D = (A · B) x scale x token on ``soc`` with plan ``p``; returns (D, the launch report)."""
    soc = soc or SESSION.soc
    if tuple(a.shape) != (p.m, p.k) or tuple(b.shape) != (p.k, p.n) \
            or tuple(scale.shape) != (p.n,) or tuple(token.shape) != (p.m,):
        raise ValueError(f"quant matmul: A {list(a.shape)}, B {list(b.shape)}, scale "
                         f"{list(scale.shape)}, per-token scale {list(token.shape)} do not match "
                         f"M, N, K = {p.m}, {p.n}, {p.k} (A [M, K], B [K, N], scale [N], "
                         f"per-token [M])")
    if a.dtype != torch.int8 or b.dtype != torch.int8 or scale.dtype != torch.float32 \
            or token.dtype != torch.float32:
        raise ValueError(f"quant matmul: A and B must be int8 and the scales float32, got "
                         f"{a.dtype}, {b.dtype}, {scale.dtype}, {token.dtype}")
    d = torch.zeros((p.m, p.n), dtype=torch.bfloat16)
    ws = torch.zeros(p.workspace_elems, dtype=torch.int32)
    report = quant_matmul_kernel[p.cores](a, b, scale, token, d, ws, p, soc.l0a_bytes,
                                          soc.l0b_bytes, kernel_type=KernelType.MIX_AIC_1_2)
    return d, report


def run_catlass_quant_matmul(mnk, variant: str = "12", l1_tile=L1_TILE, l0_k: int = L0_K,
                             epi_tile=EPI_TILE):
    """The published sample ``variant`` ("12": 12_quant_matmul, "44":
    44_quant_matmul_full_loadA_tla) on the current SoC; checks D against torch unless the
    session is timing-only; returns the launch report in a list."""
    p = plan(str(variant), mnk, l1_tile, l0_k, epi_tile)
    a, b, scale, token = operands(p.m, p.n, p.k)
    d, report = quant_matmul(a, b, scale, token, p)
    if not SESSION.timing_only:  # timing-only computes no values: nothing to check
        check_result(d, reference(a, b, scale, token))
    return [report]
