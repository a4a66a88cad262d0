"""The basic-API Matmul calibration kernel (asc-devkit ``matmul_basic_api_high_performance``).

C[M, N] = A[M, K] · B[N, K]ᵀ in fp16 with fp32 accumulation, written by hand against the cube
instructions instead of the Matmul high-level API (:mod:`ascsim.calib.matmul` prices that one):

    GM --data_copy(Nd2NzParams)--> L1      one "chunk" of ``step_ka`` (A) / ``step_kb`` (B)
                                            base-K slices per copy, two L1 buffers per operand
    L1 --load_data--> L0A / L0B             one base block per K step, two L0 buffers
    L0A x L0B --mmad--> L0C (fp32)          one L0C accumulator
    L0C --fixpipe(F322F16, row-major)--> GM once per base block

The L1 map follows the published sample: A's two chunk buffers in the first half of L1, B's in
the second half; L0A and L0B hold two base slices 32 KiB apart. Moving a slice into L0: on the
2201 (910B) A goes through one Load3D (the NZ chunk read as a 1 x ``base_m`` feature map with
``base_k`` channels, which is the ZZ order L0A wants) and B through one Load2D per 16-deep K
strip; on the 3510 (950) both take one ``LoadData2DParamsV2`` each.

Synchronisation is the sample's: MTE2 -> MTE1 flags say a chunk is in L1 (waited for only at a
chunk's first slice), MTE1 -> MTE2 flags free it (set after its last slice, pre-set once so the
first waits pass), MTE1 <-> M flags pass the two L0 buffers. The next chunks are fetched right
after each Mmad, B before A (B's chunks run out first when ``step_kb`` < ``step_ka``). The
sample hands the L0C accumulator between Mmad and FixPipe with UnitFlag; ascsim's basic
``mmad``/``fixpipe`` do not carry ``unit_flag``, so the kernel hands it over with the M -> FIX
and FIX -> M event flags instead (the same whole-instruction hand-over the simulator prices for
a unit flag).

Work split: C is cut into ``single_m`` x ``single_n`` regions. With ``rounds`` = 1 core ``b``
takes region (``b % m_regions``, ``b // m_regions``); with ``rounds`` = R (the sample's L2
split) each round covers ``ceil(M / (single_m * R))`` region rows, so that one round's A rows
and all of B stay in L2, and core ``b`` takes (``b % per_round + round * per_round``,
``b // per_round``) in every round. Inside a region the base blocks are walked M fastest, and
for each block the whole K extent. Region and base-block tails in M and N are handled (16-row
and 16-column alignment in L0). The published sample's K is whole chunks of both operands
(:func:`plan` insists); with ``k_tail`` (CATLASS's kernels) the last chunk and its last L0 slice
are shorter: the chunk copies only the K columns left, the slice loads them in whole 16-deep
strips, and the Mmad takes the true K, so the strip's padding columns are never summed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.session import SESSION

FRACTAL = 16  # rows of a fractal; fp16 elements per 32-byte fractal row
L0_SLOT_BYTES = 32 * 1024  # the second L0A / L0B buffer starts here (the sample's layout)
HALF = 2  # bytes of an fp16 element


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class BasicMatmulPlan:
    """The published knobs of one run and what follows from them.

    ``mnk``: the problem; ``base``: (base_m, base_n, base_k), one Mmad; ``single``: (single_m,
    single_n), a core's region per round; ``step_ka`` / ``step_kb``: base-K slices per L1
    chunk of A / B; ``rounds``: the L2 split of M. ``m_per_round`` region rows per round and
    ``n_regions`` region columns give the cores (one region each per round)."""

    m: int
    n: int
    k: int
    base_m: int
    base_n: int
    base_k: int
    single_m: int
    single_n: int
    step_ka: int
    step_kb: int
    rounds: int
    m_regions: int
    n_regions: int
    m_per_round: int

    @property
    def cores(self) -> int:
        return self.m_per_round * self.n_regions


def plan(mnk, base, single, step_ka: int, step_kb: int, rounds: int = 1, soc=None,
         k_tail: bool = False) -> BasicMatmulPlan:
    """Check the knobs against the problem and the SoC's buffers; returns the plan.
    ``k_tail``: K need not be whole chunks (the last chunk and slice are shorter)."""
    m, n, k = (int(v) for v in mnk)
    bm, bn, bk = (int(v) for v in base)
    sm, sn = (int(v) for v in single)
    soc = soc or SESSION.soc
    if min(m, n, k, bm, bn, bk, sm, sn, step_ka, step_kb, rounds) < 1:
        raise ValueError(f"basic matmul: every size, step and round count must be positive "
                         f"(mnk {mnk}, base {base}, single {single}, steps {step_ka}/{step_kb}, "
                         f"rounds {rounds})")
    if bm % FRACTAL or bn % FRACTAL or bk % FRACTAL:
        raise ValueError(f"basic matmul: base {list(base)} must be whole 16x16 fractals")
    if not k_tail and (k % (bk * step_ka) or k % (bk * step_kb)):
        raise ValueError(f"basic matmul: K {k} must be whole chunks of {bk * step_ka} (A) and "
                         f"{bk * step_kb} (B) elements")
    a1, b1 = bm * bk * step_ka * HALF, bn * bk * step_kb * HALF
    if 2 * a1 > soc.l1_bytes // 2 or 2 * b1 > soc.l1_bytes // 2:
        raise ValueError(f"basic matmul: two A chunks ({a1} B each) and two B chunks ({b1} B "
                         f"each) must each fit half of {soc.name}'s {soc.l1_bytes}-byte L1")
    if bm * bk * HALF > L0_SLOT_BYTES or bn * bk * HALF > L0_SLOT_BYTES \
            or 2 * L0_SLOT_BYTES > min(soc.l0a_bytes, soc.l0b_bytes):
        raise ValueError(f"basic matmul: a base slice ({bm * bk * HALF} B of A, "
                         f"{bn * bk * HALF} B of B) must fit a 32 KiB half of L0A / L0B")
    if bm * bn * 4 > soc.l0c_bytes:
        raise ValueError(f"basic matmul: a {bm}x{bn} fp32 block does not fit {soc.name}'s "
                         f"{soc.l0c_bytes}-byte L0C")
    m_regions, n_regions = _ceil_div(m, sm), _ceil_div(n, sn)
    m_per_round = _ceil_div(m, sm * rounds)
    if rounds > 1 and m_per_round * rounds != m_regions:
        raise ValueError(f"basic matmul: {m_regions} region rows of {sm} do not make "
                         f"{rounds} rounds of {m_per_round}")
    cores = m_per_round * n_regions
    if cores > soc.aic_count:
        raise ValueError(f"basic matmul: {cores} regions per round need {cores} AIC cores; "
                         f"{soc.name} has {soc.aic_count}")
    return BasicMatmulPlan(m, n, k, bm, bn, bk, sm, sn, step_ka, step_kb, rounds, m_regions,
                           n_regions, m_per_round)


def k_piece(index: int, k: int, piece_k: int) -> int:
    """K extent of piece ``index`` when K is cut into pieces of ``piece_k``: ``piece_k``, or
    what is left of K for the last piece (the K tail)."""
    return min(piece_k, k - index * piece_k)


@asc.jit
def copy_in(l1_buf, gm, rows, first_row, chunk: int, k: int, chunk_k: int, frame: int):
    """One chunk of an operand: ``rows`` rows from ``first_row``, K columns from chunk ``chunk``
    (fewer for a K tail), ND -> NZ into ``l1_buf`` with 16-column strips ``frame`` rows tall.
    A tail's last strip is only partly written: the Mmad reads no K column beyond its ``k``."""
    asc.data_copy(l1_buf, gm[first_row * k + chunk * chunk_k:],
                  asc.Nd2NzParams(1, rows, k_piece(chunk, k, chunk_k), 0, k, frame, 1, 0))


@asc.jit
def load_slice_v2(l0, src, rows_align, base_rows: int, k_len: int):
    """One LoadData2DV2 (the 950's form) of a base slice -- ``rows_align`` rows of NZ strips
    ``base_rows`` tall, ``k_len`` deep (whole 16-column strips) -- into L0A or L0B."""
    asc.load_data(l0, src, asc.LoadData2DParamsV2(
        m_start_position=0, k_start_position=0, m_step=rows_align // FRACTAL,
        k_step=_ceil_div(k_len, FRACTAL), src_stride=base_rows // FRACTAL,
        dst_stride=rows_align // FRACTAL))


@asc.jit
def load_a(a_l0, a_l1, slice_in_chunk, m_align, base_m: int, base_k: int, k_len: int,
           v2: asc.ConstExpr[bool]):
    """A's base slice ``slice_in_chunk`` of a chunk (NZ, ``base_m``-row strips), ``k_len``
    deep (``base_k`` but for a K tail), into L0A."""
    src = a_l1[slice_in_chunk * base_k * base_m:]
    if v2:
        load_slice_v2(a_l0, src, m_align, base_m, k_len)
    else:
        k_align = _ceil_div(k_len, FRACTAL) * FRACTAL
        asc.load_data(a_l0, src, asc.LoadData3DParamsV2(
            l1_h=1, l1_w=base_m, channel_size=k_align, k_extension=k_align,
            m_extension=m_align, k_start_pt=0, m_start_pt=0))


@asc.jit
def load_b(b_l0, b_l1, slice_in_chunk, n_align, base_n: int, base_k: int, k_len: int,
           v2: asc.ConstExpr[bool]):
    """B's base slice (B stored [N, K]: NZ strips of K, ``base_n`` rows each), ``k_len`` deep,
    into L0B."""
    src = b_l1[slice_in_chunk * base_k * base_n:]
    if v2:
        load_slice_v2(b_l0, src, n_align, base_n, k_len)
    else:
        for strip in range(_ceil_div(k_len, FRACTAL)):
            asc.load_data(b_l0[strip * n_align * FRACTAL:],
                          src[strip * base_n * FRACTAL:],
                          asc.LoadData2DParams(0, n_align // FRACTAL, 1, 0, 0, False, 0))


@asc.jit
def block_product(a_gm, b_gm, a1, b1, l0a, l0b, l0c, row_a, row_b, m_len, n_len, k: int,
                  base_m: int, base_n: int, base_k: int, step_ka: int, step_kb: int,
                  a1_elems: int, b1_elems: int, l0_elems: int, l0_slot,
                  v2: asc.ConstExpr[bool]):
    """One base block's product into L0C over the whole K extent (a shorter last K slice when
    K is not whole slices): rows ``row_a ..`` of A, ``row_b ..`` of B. Ends once the last Mmad
    is done (M -> FIX), the accumulator ready for FixPipe; the caller writes it out and frees
    it (FIX -> M). Returns the L0 slot the next block starts with."""
    k_loop = _ceil_div(k, base_k)
    m_align = _ceil_div(m_len, FRACTAL) * FRACTAL
    n_align = _ceil_div(n_len, FRACTAL) * FRACTAL
    # The first chunk of each operand goes to buffer 0.
    asc.wait_flag(asc.HardEvent.MTE1_MTE2, 0)
    copy_in(a1, a_gm, m_len, row_a, 0, k, base_k * step_ka, base_m)
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE1_MTE2, 2)
    copy_in(b1, b_gm, n_len, row_b, 0, k, base_k * step_kb, base_n)
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 2)
    next_a, next_b = 1, 1  # the next chunk to fetch
    for kb in range(k_loop):
        in_a, in_b = kb % step_ka, kb % step_kb
        a_buf, b_buf = kb // step_ka % 2, kb // step_kb % 2
        k_len = k_piece(kb, k, base_k)
        asc.wait_flag(asc.HardEvent.M_MTE1, l0_slot)
        if in_a == 0:
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, a_buf)
        if in_b == 0:
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, 2 + b_buf)
        a_l0 = l0a[l0_slot * l0_elems:]
        b_l0 = l0b[l0_slot * l0_elems:]
        load_a(a_l0, a1[a_buf * a1_elems:], in_a, m_align, base_m, base_k, k_len, v2)
        load_b(b_l0, b1[b_buf * b1_elems:], in_b, n_align, base_n, base_k, k_len, v2)
        # A chunk is used up after its last slice, or after the K tail's.
        if in_a == step_ka - 1 or kb == k_loop - 1:
            asc.set_flag(asc.HardEvent.MTE1_MTE2, a_buf)
        if in_b == step_kb - 1 or kb == k_loop - 1:
            asc.set_flag(asc.HardEvent.MTE1_MTE2, 2 + b_buf)
        asc.set_flag(asc.HardEvent.MTE1_M, l0_slot)
        asc.wait_flag(asc.HardEvent.MTE1_M, l0_slot)
        if kb == 0:  # the accumulator is free once the last block was written out
            asc.wait_flag(asc.HardEvent.FIX_M, 0)
        asc.mmad(l0c, a_l0, b_l0,
                 asc.MmadParams(m=m_len, n=n_len, k=k_len, unit_flag=0,
                                cmatrix_source=False, cmatrix_init_val=kb == 0))
        asc.set_flag(asc.HardEvent.M_MTE1, l0_slot)
        l0_slot = 1 - l0_slot
        # Fetch the next chunks behind the Mmad, B first: it runs out sooner.
        if (kb == 0 or in_b == step_kb - 1) and next_b * step_kb < k_loop:
            w = next_b % 2
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, 2 + w)
            copy_in(b1[w * b1_elems:], b_gm, n_len, row_b, next_b, k, base_k * step_kb, base_n)
            asc.set_flag(asc.HardEvent.MTE2_MTE1, 2 + w)
            next_b += 1
        if (kb == 0 or in_a == step_ka - 1) and next_a * step_ka < k_loop:
            w = next_a % 2
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, w)
            copy_in(a1[w * a1_elems:], a_gm, m_len, row_a, next_a, k, base_k * step_ka, base_m)
            asc.set_flag(asc.HardEvent.MTE2_MTE1, w)
            next_a += 1
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    return l0_slot


@asc.jit
def region_blocks(a_gm, b_gm, c_gm, a1, b1, l0a, l0b, l0c, first_m, first_n, rows, cols,
                  k: int, base_m: int, base_n: int, base_k: int, step_ka: int, step_kb: int,
                  n_out: int, a1_elems: int, b1_elems: int, l0_elems: int,
                  v2: asc.ConstExpr[bool], quant):
    """Every base block of one region (M fastest), the whole K extent each; FixPipe writes
    each block out with ``quant`` (``QuantModes.F322F16``: fp16 C, ``NoQuant``: fp32 C)."""
    l0_slot = 0
    for nb in range(_ceil_div(cols, base_n)):
        for mb in range(_ceil_div(rows, base_m)):
            m_len = min(base_m, rows - mb * base_m)
            n_len = min(base_n, cols - nb * base_n)
            row_a = first_m + mb * base_m
            row_b = first_n + nb * base_n
            l0_slot = block_product(a_gm, b_gm, a1, b1, l0a, l0b, l0c, row_a, row_b, m_len,
                                    n_len, k, base_m, base_n, base_k, step_ka, step_kb,
                                    a1_elems, b1_elems, l0_elems, l0_slot, v2)
            asc.fixpipe(c_gm[row_a * n_out + row_b:], l0c,
                        asc.FixpipeParamsV220(n_size=n_len, m_size=m_len,
                                              src_stride=_ceil_div(m_len, FRACTAL) * FRACTAL,
                                              dst_stride=n_out, quant_pre=quant),
                        asc.FixpipeConfig.cfg_row_major())
            asc.set_flag(asc.HardEvent.FIX_M, 0)


@asc.jit
def buffers_free():
    """Every buffer starts free: pre-set the consumers' flags that :func:`region_blocks` waits
    for before it fills a buffer (drained by :func:`buffers_drained`)."""
    for ev in range(4):
        asc.set_flag(asc.HardEvent.MTE1_MTE2, ev)
    for slot in range(2):
        asc.set_flag(asc.HardEvent.M_MTE1, slot)
    asc.set_flag(asc.HardEvent.FIX_M, 0)


@asc.jit
def buffers_drained():
    """Wait for the last uses of every buffer (the flags :func:`buffers_free` pre-set)."""
    for ev in range(4):
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, ev)
    for slot in range(2):
        asc.wait_flag(asc.HardEvent.M_MTE1, slot)
    asc.wait_flag(asc.HardEvent.FIX_M, 0)


def global_operands(a, b, c):
    """The kernel's A, B and C as global tensors."""
    tensors = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    for tensor, address in zip(tensors, (a, b, c), strict=True):
        tensor.set_global_buffer(address)
    return tensors


def cube_buffers(l1_bytes: int, l0_elems: int, c_elems: int):
    """The pipeline's buffers: A's L1 chunks in the first half of L1, B's in the second; two
    L0A and two L0B slots of ``l0_elems`` fp16 each; one fp32 L0C accumulator."""
    l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, l1_bytes // HALF)
    l0a = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 2 * l0_elems)
    l0b = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 2 * l0_elems)
    l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, c_elems)
    return l1[0:], l1[l1_bytes // 2 // HALF:], l0a, l0b, l0c


@asc.jit(kernel_type=KernelType.AIC_ONLY)
def matmul_basic_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                        m: int, n: int, k: int, base_m: int, base_n: int, base_k: int,
                        single_m: int, single_n: int, step_ka: int, step_kb: int,
                        m_per_round: int, rounds: int, l1_bytes: int,
                        v2: asc.ConstExpr[bool]):
    a_gm, b_gm, c_gm = global_operands(a, b, c)
    a1_elems = base_m * base_k * step_ka
    b1_elems = base_n * base_k * step_kb
    l0_elems = L0_SLOT_BYTES // HALF
    a1, b1, l0a, l0b, l0c = cube_buffers(l1_bytes, l0_elems, base_m * base_n)
    m_regions = _ceil_div(m, single_m)
    n_regions = _ceil_div(n, single_n)
    block = asc.get_block_idx()
    for rnd in range(rounds):
        m_idx = block % m_per_round + rnd * m_per_round
        n_idx = block // m_per_round
        if m_idx < m_regions and n_idx < n_regions:
            buffers_free()
            first_m, first_n = m_idx * single_m, n_idx * single_n
            region_blocks(a_gm, b_gm, c_gm, a1, b1, l0a, l0b, l0c, first_m, first_n,
                          min(single_m, m - first_m), min(single_n, n - first_n), k, base_m,
                          base_n, base_k, step_ka, step_kb, n, a1_elems, b1_elems, l0_elems,
                          v2, asc.QuantModes.F322F16)
            buffers_drained()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def _operands(m: int, n: int, k: int):
    # Small integers: every product and sum is exact in fp32, so the check can be tight.
    a = torch.randint(-2, 3, (m, k), dtype=torch.int8).to(torch.float16)
    b = torch.randint(-2, 3, (n, k), dtype=torch.int8).to(torch.float16)
    return a, b


def matmul_basic(a: torch.Tensor, b: torch.Tensor, p: BasicMatmulPlan, soc=None):
    """C = A · Bᵀ (A [M, K], B [N, K], fp16) with plan ``p`` on ``soc`` (default: the current
    SoC); returns (C, the launch report)."""
    soc = soc or SESSION.soc
    if tuple(a.shape) != (p.m, p.k) or tuple(b.shape) != (p.n, p.k):
        raise ValueError(f"basic matmul: A {list(a.shape)} and B {list(b.shape)} do not match "
                         f"the plan's M, N, K = {p.m}, {p.n}, {p.k} (A [M, K], B [N, K])")
    if a.dtype != torch.float16 or b.dtype != torch.float16:
        raise ValueError(f"basic matmul: A and B must be float16, got {a.dtype} and {b.dtype}")
    c = torch.zeros((p.m, p.n), dtype=torch.float16)
    report = matmul_basic_kernel[p.cores](a, b, c, p.m, p.n, p.k, p.base_m, p.base_n,
                                          p.base_k, p.single_m, p.single_n, p.step_ka,
                                          p.step_kb, p.m_per_round, p.rounds, soc.l1_bytes,
                                          bool(soc.load2d_v2))
    return c, report


def check_product(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """C must be A · Bᵀ rounded to fp16 (exact for the small-integer operands used here)."""
    expected = (a.float() @ b.float().T).to(torch.float16)
    if not torch.equal(c, expected):
        raise AssertionError("calibration basic matmul: wrong product (max abs error "
                             f"{(c.float() - expected.float()).abs().max().item():.3g})")


def run_matmul_basic(mnk, base, single, step_ka: int, step_kb: int, rounds: int = 1):
    """C = A · Bᵀ on the current SoC with the published tiling; checks C against torch (unless
    the session is timing-only); returns the launch report in a list."""
    soc = SESSION.soc
    p = plan(mnk, base, single, step_ka, step_kb, rounds, soc)
    a, b = _operands(p.m, p.n, p.k)
    c, report = matmul_basic(a, b, p, soc)
    if not SESSION.timing_only:  # timing-only computes no values: nothing to check
        check_product(c, a, b)
    return [report]
