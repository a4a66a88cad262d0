"""Matmul calibration kernels on the Matmul high-level API (asc-devkit ``matmul_high_performance``,
``matmul_gelu_high_performance``; cann-samples ``cv_datapath``).

C is cut into regions of ``single = (single_m, single_n)`` (default: C split evenly into
``split = (M parts, N parts)``; the last region of a dimension takes what is left, e.g. 683/679
columns, or 1536/512 when ``single`` is given). With ``rounds`` > 1 (the L2 split) M is first cut
into ``rounds`` bands and every band into regions, so that one band's A and all of B stay in L2
while the cores work on it. Regions are numbered band by band, M-parts fastest, and dealt
round-robin to the cores (``cores``, default one region per core per band): 64 regions on 28
cores leave some cores three and most two (cann-samples ``cv_datapath``).

``matmul_api``: C[M, N] = A[M, K] · B[N, K]ᵀ on the AIC cores alone (B stored transposed, as the
samples store it). The other published knobs: the base block, the NORM or MDL template, the L1
depths and K steps (``depth_a1``, ``depth_b1``, ``step_ka``, ``step_kb``; those a sample does
not set are what it runs with: one block per load on NORM, whose samples set them so, the
host tiling library's choice on MDL, :func:`resolve_l1`), constant tiling (the
per-core shape and base block carried by the Matmul config, as Ascend C's
``MatmulApiStaticTiling``) and UnitFlag (``en_unit_flag`` in the config).

``matmul_act``: a MIX kernel, act(A · Bᵀ) with act GELU or ReLU, fp32 out; the regions go to
the AIV cores (two per AIC). Each AIV walks its region block by block; ``relay="gm"`` has
FixPipe write every C block to a GM workspace and the AIV read it back (the GM relay),
``relay="ub"`` has FixPipe write the block straight into the AIV's UB (L0C -> UB, Ascend 950
only). The AIV applies the activation in ``act_tile``-element pieces and writes the block to C
with one strided copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

import ascsim.asc as asc
from ascsim.asc.adv.tiling_structs import TCubeTiling
from ascsim.calib.vector import ACTIVATIONS, gelu_tile
from ascsim.session import SESSION
from ascsim.tiling import MatmulTilingRequest, compute_matmul_tiling

TEMPLATES = ("norm", "mdl")
RELAYS = ("gm", "ub")
TORCH_DTYPES = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Regions:
    """How C is cut: region size, regions per band along M and N, bands, and cores."""

    single_m: int
    single_n: int
    m_parts: int
    n_parts: int
    rounds: int
    cores: int

    @property
    def count(self) -> int:
        return self.m_parts * self.n_parts * self.rounds


def plan_regions(mnk, split, single=None, rounds: int = 1, cores: int | None = None) -> Regions:
    """Regions of ``split`` (or of size ``single``) in ``rounds`` M bands over ``cores``."""
    m, n, _ = mnk
    if m % rounds:
        raise ValueError(f"matmul: M {m} is not {rounds} whole bands")
    band = m // rounds
    if single is None:
        single = (_ceil_div(band, split[0]), _ceil_div(n, split[1]))
    sm, sn = single
    parts = (_ceil_div(band, sm), _ceil_div(n, sn))
    if tuple(split) != parts:
        raise ValueError(f"matmul: regions of {sm}x{sn} split a {band}x{n} band "
                         f"{parts[0]}x{parts[1]}, not {split[0]}x{split[1]}")
    return Regions(sm, sn, parts[0], parts[1], rounds, cores or parts[0] * parts[1])


def make_config(template: str, unit_flag: bool | None, const_shape=None):
    """The Matmul config: NORM or MDL, UnitFlag (None: the template's default, on for
    CFG_NORM and off for CFG_MDL, as the samples take them), and the per-core shape and base
    block when the tiling is a compile-time constant (``const_shape`` = (sm, sn, sk, bm, bn,
    bk))."""
    if template not in TEMPLATES:
        raise ValueError(f"matmul template {template!r}: expected one of {TEMPLATES}")
    if unit_flag is None:
        unit_flag = template == "norm"
    fields = dict(do_norm=template == "norm", do_multi_data_load=template == "mdl",
                  en_unit_flag=bool(unit_flag))
    if const_shape is not None:
        sm, sn, sk, bm, bn, bk = const_shape
        fields.update(single_core_m=sm, single_core_n=sn, single_core_k=sk, basic_m=bm,
                      basic_n=bn, basic_k=bk)
    return asc.adv.MatmulConfig(**fields)


#: The L1 fields a sample on the NORM template sets after GetTiling (asc-devkit
#: matmul_high_performance ``SetL1``, cases 0-3): one block per load, no L1 caching.
NORM_L1 = {"depth_a1": 1, "depth_b1": 1, "step_ka": 1, "step_kb": 1}


def library_l1(mnk, regions: Regions, base, out_dtype: str, dtype: str = "float16") -> dict:
    """The L1 depths and K steps the host tiling library gives the samples' request (A [M, K],
    B stored [N, K], SetDim(AIC count), SetSingleShape(region, K), SetFixSplit(base)), which
    an MDL sample keeps where it does not set them (asc-devkit matmul_high_performance cases
    4 and 5)."""
    m, n, k = mnk
    soc = SESSION.soc
    req = MatmulTilingRequest(m=m, n=n, k=k, a_dtype=dtype, b_dtype=dtype, c_dtype=out_dtype,
                              trans_b=True, dim=max(soc.aic_count, regions.cores),
                              single_core_m=regions.single_m, single_core_n=regions.single_n,
                              single_core_k=k, base_m=base[0], base_n=base[1], base_k=base[2])
    t = compute_matmul_tiling(req, soc)
    return {"depth_a1": t["depth_a1"], "depth_b1": t["depth_b1"], "step_ka": t["step_k_a"],
            "step_kb": t["step_k_b"]}


def resolve_l1(template: str, given: dict, mnk, regions: Regions, base, out_dtype: str,
               dtype: str = "float16") -> dict:
    """The L1 fields a sample runs with: those it sets (``given``, None = not set), the rest
    as its template's sample leaves them (NORM: :data:`NORM_L1`; MDL: the library's)."""
    missing = [name for name, value in given.items() if value is None]
    if not missing:
        return dict(given)
    rest = NORM_L1 if template == "norm" else library_l1(mnk, regions, base, out_dtype, dtype)
    return {name: rest[name] if value is None else value for name, value in given.items()}


def make_tiling(mnk, regions: Regions, base, depth_a1: int, depth_b1: int, step_ka: int,
                step_kb: int) -> TCubeTiling:
    """The TCubeTiling of one region (M walked first inside it)."""
    m, n, k = mnk
    bm, bn, bk = base
    return TCubeTiling(m=m, n=n, k_a=k, k_b=k, single_core_m=regions.single_m,
                       single_core_n=regions.single_n, single_core_k=k, base_m=bm, base_n=bn,
                       base_k=bk, depth_a1=depth_a1, depth_b1=depth_b1, step_m=1, step_n=1,
                       step_k_a=step_ka, step_k_b=step_kb, used_core_num=regions.cores,
                       iterate_order=0, is_bias=0, db_l0a=2, db_l0b=2, db_l0c=1)


@asc.jit
def region_at(idx, tiling: asc.adv.TCubeTiling, m_parts: int, n_parts: int, band_m: int):
    """(first row, first column, rows, columns) of region ``idx`` (band by band, M fastest)."""
    per_band = m_parts * n_parts
    band = idx // per_band
    in_band = idx % per_band
    first_row = band * band_m + in_band % m_parts * tiling.single_core_m
    first_col = in_band // m_parts * tiling.single_core_n
    rows = min(tiling.single_core_m, (band + 1) * band_m - first_row)
    cols = min(tiling.single_core_n, tiling.n - first_col)
    return first_row, first_col, rows, cols


@asc.jit
def bind_region(mm, a, b, c, tiling: asc.adv.TCubeTiling, idx, m_parts: int, n_parts: int,
                band_m: int):
    """Point ``mm`` at region ``idx`` (A rows, transposed B columns, its tail); returns the
    region's rows and C's GM tensor from the region's first element."""
    first_row, first_col, rows, cols = region_at(idx, tiling, m_parts, n_parts, band_m)
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a + first_row * tiling.k_a)
    b_gm.set_global_buffer(b + first_col * tiling.k_b)
    c_gm.set_global_buffer(c + first_row * tiling.n + first_col)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm, True)
    mm.set_tail(rows, cols, tiling.k_a)
    return rows, c_gm


@asc.jit(matmul_cube_only=True, always_compile=True)
def matmul_api_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                      tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress, m_parts: int,
                      n_parts: int, rounds: int, template: asc.ConstExpr[str],
                      unit_flag: asc.ConstExpr[bool], const_tiling: asc.ConstExpr[bool]):
    if asc.ascend_is_aic():
        const_shape = None
        if const_tiling:
            const_shape = (tiling.single_core_m, tiling.single_core_n, tiling.k_a,
                           tiling.base_m, tiling.base_n, tiling.base_k)
        pipe = asc.TPipe()
        mm = asc.adv.Matmul(
            a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a.dtype),
            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b.dtype, True),
            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c.dtype),
            matmul_config=make_config(template, unit_flag, const_shape))
        asc.adv.register_matmul(pipe, workspace, mm, tiling)
        band_m = tiling.m // rounds
        for idx in range(asc.get_block_idx(), m_parts * n_parts * rounds, asc.get_block_num()):
            _, c_gm = bind_region(mm, a, b, c, tiling, idx, m_parts, n_parts, band_m)
            mm.iterate_all(c_gm)
        mm.end()
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def _operands(m: int, n: int, k: int, dtype: torch.dtype):
    # Small integers: every product and sum is exact in fp32, so the check can be tight.
    a = torch.randint(-2, 3, (m, k), dtype=torch.int8).to(dtype)
    b = torch.randint(-2, 3, (n, k), dtype=torch.int8).to(dtype)
    return a, b


def _expected(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.float() @ b.float().T


def run_matmul_api(mnk, split, base, template: str = "norm", depth_a1: int | None = None,
                   depth_b1: int | None = None, step_ka: int | None = None,
                   step_kb: int | None = None, rounds: int = 1,
                   const_tiling: bool = False, unit_flag: bool | None = None,
                   dtype: str = "float16", out_dtype: str = "float16", single=None,
                   cores: int | None = None):
    """C = A · Bᵀ with the published tiling; checks C; returns the launch reports. L1 depths
    and K steps left at None are the sample's for its template (:func:`resolve_l1`)."""
    if template not in TEMPLATES:
        raise ValueError(f"matmul template {template!r}: expected one of {TEMPLATES}")
    m, n, k = mnk
    regions = plan_regions(mnk, split, single, rounds, cores)
    l1 = resolve_l1(template, {"depth_a1": depth_a1, "depth_b1": depth_b1, "step_ka": step_ka,
                               "step_kb": step_kb}, mnk, regions, base, out_dtype, dtype)
    tiling = make_tiling(mnk, regions, base, **l1)
    if unit_flag is None:  # the template's default (make_config)
        unit_flag = template == "norm"
    a, b = _operands(m, n, k, TORCH_DTYPES[dtype])
    c = torch.zeros((m, n), dtype=TORCH_DTYPES[out_dtype])
    workspace = torch.zeros(1024, dtype=torch.uint8)
    report = matmul_api_kernel[regions.cores](a, b, c, tiling, workspace, regions.m_parts,
                                              regions.n_parts, rounds, template, unit_flag,
                                              const_tiling)
    if SESSION.timing_only:  # no values computed: nothing to check
        return [report]
    expected = _expected(a, b).to(c.dtype)
    if not torch.allclose(c.float(), expected.float(), rtol=1e-2, atol=1e-2):
        raise AssertionError("calibration matmul: wrong product (max abs error "
                             f"{(c.float() - expected.float()).abs().max().item():.3g})")
    return [report]


# ------------------------------------------------------------------------ fused matmul + act
@asc.jit
def act_block(block, t_ub, act: asc.ConstExpr[str], elems: int, act_tile: asc.ConstExpr[int]):
    """act over a UB block, ``act_tile`` elements at a time (the scratch is one piece)."""
    for p in range(elems // act_tile):
        piece = block[p * act_tile:]
        if act == "gelu":
            gelu_tile(piece, piece, t_ub, act_tile)
        else:
            asc.relu(piece, piece, count=act_tile)
        asc.pipe_barrier(asc.PipeID.PIPE_V)


@asc.jit(always_compile=True)
def matmul_act_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                      tiling: asc.adv.TCubeTiling, workspace: asc.GlobalAddress,
                      relay_ws: asc.GlobalAddress, m_parts: int, n_parts: int,
                      act: asc.ConstExpr[str], relay: asc.ConstExpr[str],
                      act_tile: asc.ConstExpr[int], template: asc.ConstExpr[str]):
    block_elems = tiling.base_m * tiling.base_n
    pipe = asc.TPipe()
    out_q = asc.TQue(asc.TPosition.VECOUT, 1)
    scratch = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(que=out_q, num=1, len=block_elems * c.dtype.sizeof())
    pipe.init_buffer(buf=scratch, len=act_tile * c.dtype.sizeof())
    c_pos = asc.TPosition.VECCALC if relay == "ub" else asc.TPosition.GM
    mm = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b.dtype, True),
        c=asc.adv.MatmulType(c_pos, asc.CubeFormat.ND, c.dtype),
        matmul_config=make_config(template, None))
    asc.adv.register_matmul(pipe, workspace, mm, tiling)  # the AIC serves from here on
    t_ub = scratch.get(c.dtype)
    ws_gm = asc.GlobalTensor()
    ws_gm.set_global_buffer(relay_ws + asc.get_block_idx() * block_elems)
    unit = 32
    row_bytes = tiling.base_n * c.dtype.sizeof()
    gap_bytes = (tiling.n - tiling.base_n) * c.dtype.sizeof()
    for idx in range(asc.get_block_idx(), m_parts * n_parts, asc.get_block_num()):
        rows, c_gm = bind_region(mm, a, b, c, tiling, idx, m_parts, n_parts, tiling.m)
        blocks_down = rows // tiling.base_m
        with mm.iterate() as count:
            block = out_q.alloc_tensor(c.dtype)
            if relay == "ub":
                mm.get_tensor_c(block, en_sequential_write=True)
            else:
                mm.get_tensor_c(ws_gm, en_sequential_write=True)
                asc.data_copy(block, ws_gm, count=block_elems)
                asc.set_flag(asc.HardEvent.MTE2_V, 0)
                asc.wait_flag(asc.HardEvent.MTE2_V, 0)
            act_block(block, t_ub, act, block_elems, act_tile)
            out_q.enque(block)
            block = out_q.deque(c.dtype)
            at = count % blocks_down * tiling.base_m * tiling.n + count // blocks_down * \
                tiling.base_n
            asc.data_copy(c_gm[at:], block,
                          repeat_params=asc.DataCopyParams(tiling.base_m, row_bytes // unit, 0,
                                                           gap_bytes // unit))
            out_q.free_tensor(block)
    mm.end()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def run_matmul_act(mnk, split, base, act: str, relay: str, act_tile: int = 8192,
                   template: str = "mdl", depth_a1: int = 8, depth_b1: int = 8,
                   step_ka: int = 4, step_kb: int = 4, dtype: str = "float16", single=None,
                   aivs: int | None = None):
    """act(A · Bᵀ) fp32 as one MIX kernel over ``aivs`` AIV cores (two per AIC; default one
    region each); ``split``/``single`` cut C into the AIV regions."""
    if act not in ACTIVATIONS:
        raise ValueError(f"activation {act!r}: expected one of {sorted(ACTIVATIONS)}")
    if relay not in RELAYS:
        raise ValueError(f"relay {relay!r}: expected one of {RELAYS}")
    soc = SESSION.soc
    if relay == "ub" and not soc.has_path("L0C->UB"):
        raise ValueError(f"relay 'ub' (L0C -> UB) does not exist on {soc.name}")
    m, n, k = mnk
    regions = plan_regions(mnk, split, single, 1, aivs)
    bm, bn, _ = base
    if m % bm or n % bn or regions.single_m % bm or regions.single_n % bn \
            or (bm * bn) % act_tile:
        raise ValueError(f"matmul_act: {mnk} in {regions.single_m}x{regions.single_n} regions "
                         f"must be whole {bm}x{bn} blocks, and a block whole {act_tile}-element "
                         "activation pieces")
    if regions.cores % 2:
        raise ValueError(f"matmul_act: {regions.cores} AIV cores are not whole AIC+2 AIV groups")
    tiling = make_tiling(mnk, regions, base, depth_a1, depth_b1, step_ka, step_kb)
    a, b = _operands(m, n, k, TORCH_DTYPES[dtype])
    c = torch.zeros((m, n), dtype=torch.float32)
    workspace = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)  # the Matmul's own
    relay_ws = torch.zeros(regions.cores * bm * bn, dtype=torch.float32)  # a block per AIV
    report = matmul_act_kernel[regions.cores // 2](a, b, c, tiling, workspace, relay_ws,
                                                   regions.m_parts, regions.n_parts, act, relay,
                                                   act_tile, template)
    if SESSION.timing_only:  # no values computed: nothing to check
        return [report]
    expected = ACTIVATIONS[act](_expected(a, b))
    if not torch.allclose(c, expected, rtol=1e-3, atol=1e-2):
        raise AssertionError(f"calibration matmul+{act}: wrong result (max abs error "
                             f"{(c - expected).abs().max().item():.3g})")
    return [report]
