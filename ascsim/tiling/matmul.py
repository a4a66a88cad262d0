"""ascsim's own Matmul tiling: how to cut ``C = A @ B (+ bias)`` over cores and base blocks.

This is the behaviour of CANN's ``matmul_tiling::MultiCoreMatmulTiling`` re-derived from the
documented constraints, not a port of it. :func:`compute_matmul_tiling` takes a
:class:`MatmulTilingRequest` and a SoC record and returns the values of every ``TCubeTiling``
field; ``docs/tiling.md`` explains the search with worked examples.

Search, in three stages, each ranking candidates with the per-core estimate of
:mod:`ascsim.tiling.cost`:

1. core split -- every way of cutting M, N (and K when allowed) into at most ``dim`` aligned
   pieces, each scored with a quick default base block; the fewest cores within a few per
   cent of the fastest wins;
2. base block -- every ``base_m x base_n`` (multiples of 16, up to 512) that fits L0C, UB and
   the bias table, with the largest ``base_k`` that fits L0A/L0B and L1, for each walk order;
3. L1 plan -- depths and steps for the winner (:func:`ascsim.tiling.cost.plan_l1`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Any, Literal

from .cost import (
    BIAS_BYTES,
    FRACTAL,
    L0C_ELEM_BYTES,
    Grid,
    L1Plan,
    MachineRates,
    Problem,
    align_up,
    ceil_div,
    estimate_cycles,
    l1_bytes,
    plan_l1,
)

#: The fields of ``TCubeTiling`` in declaration order (pyasc-api §3.9); the struct in
#: :mod:`ascsim.asc.adv.tiling_structs` is built from this tuple.
TCUBE_TILING_FIELDS: tuple[str, ...] = (
    "used_core_num", "m", "n", "k_a", "k_b", "single_core_m", "single_core_n", "single_core_k",
    "base_m", "base_n", "base_k", "depth_a1", "depth_b1", "step_m", "step_n", "is_bias",
    "trans_length", "iterate_order", "share_mode", "share_l1_size", "share_l0c_size",
    "share_ub_size", "batch_m", "batch_n", "single_batch_m", "single_batch_n", "step_k_a",
    "step_k_b", "depth_a_l1_cache_ub", "depth_b_l1_cache_ub", "db_l0a", "db_l0b", "db_l0c",
    "a_layout_info_b", "a_layout_info_s", "a_layout_info_n", "a_layout_info_g",
    "a_layout_info_d", "b_layout_info_b", "b_layout_info_s", "b_layout_info_n",
    "b_layout_info_g", "b_layout_info_d", "c_layout_info_b", "c_layout_info_s1",
    "c_layout_info_n", "c_layout_info_g", "c_layout_info_s2", "batch_num",
)  # fmt: skip


class TilingError(ValueError):
    """The request is invalid or no tiling fits; the message names the constraint and sizes."""


Traverse = Literal["FIRSTM", "FIRSTN", "NOSET"]
MadType = Literal["NORMAL", "HF32", "MXMODE"]

#: Bits per element of every dtype name the tiling understands.
DTYPE_BITS: Mapping[str, int] = MappingProxyType({
    "float16": 16, "bfloat16": 16, "float32": 32, "int8": 8, "uint8": 8, "int4": 4,
    "int16": 16, "int32": 32, "float8_e4m3fn": 8, "float8_e5m2": 8, "hifloat8": 8,
})  # fmt: skip
#: UB buffers a C block in UB takes when the tiler picks the block: kernels hand C blocks to the
#: vector side through a queue of two buffers (one filled while the previous is processed), so
#: a block that only fits single-buffered would make the kernel's own init_buffer overflow UB.
C_UB_BUFFERS = 2

#: Input types the Cube multiplies (A and B).
CUBE_INPUT_DTYPES = frozenset(
    {"float16", "bfloat16", "float32", "int8", "uint8", "int4", "float8_e4m3fn", "float8_e5m2",
     "hifloat8"}
)  # fmt: skip
#: Types C can be written as (FixPipe converts from the fp32/int32 accumulator).
C_DTYPES = frozenset({"float32", "float16", "bfloat16", "int32", "int8", "uint8"})
BIAS_DTYPES = frozenset({"float32", "float16", "bfloat16", "int32"})

#: Storage behind each position an operand may be given in: "gm" is fetched from GM, "ub" is
#: a Unified-Buffer position (staged through a GM workspace on 910B), "l1" is user-filled L1.
POSITION_STORAGE: Mapping[str, str] = MappingProxyType({
    "GM": "gm", "CO2": "gm", "VECIN": "ub", "VECOUT": "ub", "VECCALC": "ub", "LCM": "ub",
    "TSCM": "l1", "A1": "l1", "B1": "l1", "C1": "l1",
})  # fmt: skip
#: Storages each operand may use (C cannot be user-filled L1).
OPERAND_STORAGES: Mapping[str, frozenset[str]] = MappingProxyType({
    "a": frozenset({"gm", "ub", "l1"}),
    "b": frozenset({"gm", "ub", "l1"}),
    "c": frozenset({"gm", "ub"}),
    "bias": frozenset({"gm", "ub", "l1"}),
})
FORMATS = frozenset(
    {"ND", "NZ", "ZN", "ZZ", "NN", "ND_ALIGN", "SCALAR", "VECTOR", "ROW_MAJOR", "COLUMN_MAJOR"}
)
TRAVERSE_ORDERS: Mapping[str, tuple[int, ...]] = MappingProxyType(
    {"FIRSTM": (0,), "FIRSTN": (1,), "NOSET": (0, 1)}
)
#: HF32 feeds fp32 through the Cube at twice the fp32 rate (ascend-hw §3.1).
MAD_K_STEP_FACTOR: Mapping[str, int] = MappingProxyType({"NORMAL": 1, "HF32": 2, "MXMODE": 1})

#: One C0: 32 bytes of K per fractal row, so base_k is a multiple of 256 / bits elements.
C0_BITS = 256
#: Largest base_m / base_n the search proposes (a fixed split may be larger).
MAX_AUTO_BASE = 512
#: Mmad takes m, n, k up to 4095 (ascend-hw §2.2).
MAX_MMAD_EXTENT = 4095
#: A core split this much slower than the fastest still counts as "as fast" (the estimate
#: is rough); among those the one with the fewest cores wins.
CORE_SPLIT_TOLERANCE = 0.03
#: Same for base blocks; among those, the largest size class, then no tail, then area wins.
BASE_TOLERANCE = 0.02
#: Base blocks with less than 1/SMALL_BLOCK_RATIO of the largest fitting area are not tried.
SMALL_BLOCK_RATIO = 4


#: Python type of each annotation of MatmulTilingRequest (checked on construction).
_FIELD_TYPES: Mapping[str, type] = MappingProxyType(
    {"int": int, "bool": bool, "str": str, "Traverse": str, "MadType": str}
)


def k_alignment(dtype: str) -> int:
    """base_k granularity in elements for an input type: one 32-byte C0 (fp16 16, fp32 8,
    int8 32, int4 64)."""
    return C0_BITS // DTYPE_BITS[dtype]


@dataclass(frozen=True, kw_only=True)
class MatmulTilingRequest:
    """One Matmul tiling problem: ``C[m, n] = A[m, k] @ B[k, n] (+ bias[n])``.

    Shape (elements):
        m, n, k: the problem this tiling computes (``set_shape``).
        org_m, org_n, org_ka, org_kb: the full GM tensors it is part of, i.e. their row
            strides (``set_org_shape``); -1 (default) = the same as m, n, k. TCubeTiling's
            ``m, n, k_a, k_b`` carry these.

    Types and placement:
        a_dtype, b_dtype: input types, e.g. "float16" (default), "bfloat16", "float32",
            "int8"; A and B must have the same width.
        c_dtype: output type (default "float32"); bias_dtype: bias type (default "float32").
        trans_a, trans_b: the operand is stored transposed (default False).
        a_position, b_position, c_position, bias_position: TPosition names, "GM" (default),
            "VECIN"/"VECOUT"/"VECCALC" (UB) or "TSCM" (user-filled L1; not for C).
        a_format, b_format, c_format: CubeFormat names, "ND" (default) or "NZ", ...
        has_bias: add a bias row (default False).

    Core split:
        dim: cores available (``set_dim``; AIV cores in MIX mode on split SoCs); -1
            (default) = all of the SoC's (AIV count on split SoCs, else AIC count).
        single_core_m, single_core_n, single_core_k: fixed per-core extents
            (``set_single_shape``); -1 (default) = choose. A fixed single_core_k < k splits K.
        align_m, align_n, align_k: granularity of per-core extents (``set_align_split``);
            -1 (default) = 16 for M and N, one C0 of the input type for K.
        split_k: allow cutting K across cores (``enable_multi_core_split_k``; default False).

    Base block:
        base_m, base_n, base_k: fixed base block (``set_fix_split``); -1 (default) =
            choose. base_m, base_n must be multiples of 16, base_k of one C0.
        traverse: "FIRSTM" (walk M first), "FIRSTN", or "NOSET" (default: choose).
        mad_type: "NORMAL" (default), "HF32" (fp32 at twice the rate) or "MXMODE".

    Buffers (bytes; ``set_buffer_space``): l1_bytes, l0c_bytes, ub_bytes, bt_bytes; -1
    (default) = the SoC's whole buffer. db_l0a, db_l0b (default True) and db_l0c (default
    False) ask for double buffering in L0; a fixed base that only fits single-buffered gets
    single buffering.
    """

    m: int
    n: int
    k: int
    org_m: int = -1
    org_n: int = -1
    org_ka: int = -1
    org_kb: int = -1
    a_dtype: str = "float16"
    b_dtype: str = "float16"
    c_dtype: str = "float32"
    bias_dtype: str = "float32"
    trans_a: bool = False
    trans_b: bool = False
    a_position: str = "GM"
    b_position: str = "GM"
    c_position: str = "GM"
    bias_position: str = "GM"
    a_format: str = "ND"
    b_format: str = "ND"
    c_format: str = "ND"
    has_bias: bool = False
    dim: int = -1
    single_core_m: int = -1
    single_core_n: int = -1
    single_core_k: int = -1
    align_m: int = -1
    align_n: int = -1
    align_k: int = -1
    split_k: bool = False
    base_m: int = -1
    base_n: int = -1
    base_k: int = -1
    traverse: Traverse = "NOSET"
    mad_type: MadType = "NORMAL"
    l1_bytes: int = -1
    l0c_bytes: int = -1
    ub_bytes: int = -1
    bt_bytes: int = -1
    db_l0a: bool = True
    db_l0b: bool = True
    db_l0c: bool = False

    def __post_init__(self) -> None:
        for f in fields(self):
            value, expected = getattr(self, f.name), _FIELD_TYPES[str(f.type)]
            if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise TilingError(f"{f.name} must be {expected.__name__}, got {value!r}")
        for name in ("m", "n", "k"):
            if getattr(self, name) < 1:
                raise TilingError(f"{name} must be >= 1, got {getattr(self, name)}")
        for org, extent in (("org_m", "m"), ("org_n", "n"), ("org_ka", "k"), ("org_kb", "k")):
            value = getattr(self, org)
            if value != -1 and value < getattr(self, extent):
                raise TilingError(f"{org}={value} is smaller than {extent}="
                                  f"{getattr(self, extent)}")
        self._check_types()
        self._check_placement()
        self._check_splits()
        if self.traverse not in TRAVERSE_ORDERS:
            raise TilingError(f"traverse must be one of {sorted(TRAVERSE_ORDERS)}, "
                              f"got {self.traverse!r}")
        if self.mad_type not in MAD_K_STEP_FACTOR:
            raise TilingError(f"mad_type must be one of {sorted(MAD_K_STEP_FACTOR)}, "
                              f"got {self.mad_type!r}")
        for name in ("l1_bytes", "l0c_bytes", "ub_bytes", "bt_bytes"):
            if getattr(self, name) < -1:
                raise TilingError(f"{name} must be -1 (the SoC's) or >= 0, "
                                  f"got {getattr(self, name)}")

    def _check_types(self) -> None:
        for name, allowed in (("a_dtype", CUBE_INPUT_DTYPES), ("b_dtype", CUBE_INPUT_DTYPES),
                              ("c_dtype", C_DTYPES), ("bias_dtype", BIAS_DTYPES)):
            value = getattr(self, name)
            if value not in allowed:
                raise TilingError(f"{name} {value!r} is not supported; use one of "
                                  f"{', '.join(sorted(allowed))}")
        if DTYPE_BITS[self.a_dtype] != DTYPE_BITS[self.b_dtype]:
            raise TilingError(f"A is {self.a_dtype} but B is {self.b_dtype}: the Cube needs "
                              "inputs of the same width")

    def _check_placement(self) -> None:
        for op in ("a", "b", "c", "bias"):
            position = getattr(self, f"{op}_position")
            storage = POSITION_STORAGE.get(position)
            if storage not in OPERAND_STORAGES[op]:
                usable = sorted(p for p, s in POSITION_STORAGE.items()
                                if s in OPERAND_STORAGES[op])
                raise TilingError(f"{op.upper()} cannot be placed at TPosition {position!r}; "
                                  f"use one of {', '.join(usable)}")
        for op in ("a", "b", "c"):
            fmt = getattr(self, f"{op}_format")
            if fmt not in FORMATS:
                raise TilingError(f"{op}_format {fmt!r} is not a CubeFormat; use one of "
                                  f"{', '.join(sorted(FORMATS))}")

    def _check_splits(self) -> None:
        if self.dim != -1 and self.dim < 1:
            raise TilingError(f"dim must be -1 (all cores) or >= 1, got {self.dim}")
        k_align = k_alignment(self.a_dtype)
        core_k = self.single_core_k if self.single_core_k != -1 else self.k
        for name, unit in (("base_m", FRACTAL), ("base_n", FRACTAL), ("base_k", k_align)):
            value = getattr(self, name)
            # A base_k off the C0 grid that covers the core's whole K is one K step whose
            # tail is padded to C0 in L0, as CANN takes it (set_fix_split(32, 16, 8) on a K
            # of 8 in fp16 tiles with base_k=8).
            whole_k = name == "base_k" and value >= core_k
            if value != -1 and (value < 1 or (value % unit and not whole_k)):
                raise TilingError(f"{name}={value} must be -1 (choose) or a positive multiple "
                                  f"of {unit}" + (f" (or cover the core's K={core_k})"
                                                  if name == "base_k" else ""))
        for name, extent in (("single_core_m", "m"), ("single_core_n", "n"),
                             ("single_core_k", "k")):
            value, total = getattr(self, name), getattr(self, extent)
            if value != -1 and not 1 <= value <= total:
                raise TilingError(f"{name}={value} must be -1 (choose) or in [1, {extent}="
                                  f"{total}]")
        for name in ("align_m", "align_n", "align_k"):
            value = getattr(self, name)
            if value != -1 and value < 1:
                raise TilingError(f"{name} must be -1 (default) or >= 1, got {value}")

    # --- derived values ------------------------------------------------------------------

    def org(self) -> tuple[int, int, int, int]:
        """(org_m, org_n, org_ka, org_kb) with -1 resolved to the problem's extents."""
        given = (self.org_m, self.org_n, self.org_ka, self.org_kb)
        own = (self.m, self.n, self.k, self.k)
        m, n, ka, kb = (o if g == -1 else g for g, o in zip(given, own, strict=True))
        return m, n, ka, kb

    def storage(self, op: str) -> str:
        return POSITION_STORAGE[getattr(self, f"{op}_position")]


def default_core_count(soc: Any) -> int:
    """Cores ``dim = -1`` means: AIVs on a split SoC (the Matmul API is driven from the AIV
    side there, ascend-hw §2.4), else AICs."""
    split = getattr(soc, "cube_vector_split", True)
    return soc.aiv_count if split and soc.aiv_count > 0 else soc.aic_count


# --- resolving a request against a SoC -------------------------------------------------------


def _budget(requested: int, available: int, name: str, soc_name: str) -> int:
    if requested == -1:
        return available
    if requested > available:
        raise TilingError(f"set_buffer_space {name}={requested} B exceeds the {available} B "
                          f"{name.upper()} of {soc_name}")
    return requested


def _problem(req: MatmulTilingRequest, soc: Any) -> Problem:
    soc_name = getattr(soc, "name", "the SoC")
    rates = MachineRates.from_soc(soc)
    # HF32 only changes how fp32 inputs go through the Cube.
    factor = MAD_K_STEP_FACTOR[req.mad_type] if req.a_dtype == "float32" else 1
    # A type this SoC's Cube table does not list (fp8 on a 910B): one C0 block of it per
    # cycle, enough for the estimate, which only ranks tilings.
    k_step = rates.k_step.get(req.a_dtype, k_alignment(req.a_dtype)) * factor
    return Problem(
        a_bits=DTYPE_BITS[req.a_dtype],
        b_bits=DTYPE_BITS[req.b_dtype],
        c_bytes=max(DTYPE_BITS[req.c_dtype] // 8, 1),
        k_align=k_alignment(req.a_dtype),
        k_step=k_step,
        has_bias=req.has_bias,
        a_in_l1=req.storage("a") == "l1",
        b_in_l1=req.storage("b") == "l1",
        l1=_budget(req.l1_bytes, soc.l1_bytes, "l1", soc_name),
        l0a=soc.l0a_bytes,
        l0b=soc.l0b_bytes,
        l0c=_budget(req.l0c_bytes, soc.l0c_bytes, "l0c", soc_name),
        ub=_budget(req.ub_bytes, soc.ub_bytes, "ub", soc_name),
        bt=_budget(req.bt_bytes, soc.bt_bytes, "bt", soc_name),
        c_in_ub=req.storage("c") == "ub",
        rates=rates,
        trans_a=req.trans_a,
        trans_b=req.trans_b,
    )


# --- base blocks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Base:
    bm: int
    bn: int
    bk: int
    db_l0a: int
    db_l0b: int
    db_l0c: int


def _c_ub_buffers(req: MatmulTilingRequest) -> int:
    """UB buffers a C block in UB must fit in: double buffering for a block the tiler picks;
    a base the caller fixed (``set_fix_split``) is taken at its word, single-buffered."""
    return 1 if req.base_m != -1 and req.base_n != -1 else C_UB_BUFFERS


def _fits_out(bm: int, bn: int, req: MatmulTilingRequest, p: Problem,
              relax: bool) -> tuple[int, str | None]:
    """(db_l0c, None) if a bm x bn C block fits L0C, UB (when C goes there) and the bias
    table, else (0, reason). ``relax`` lets L0C fall back to single buffering."""
    acc = bm * bn * L0C_ELEM_BYTES
    db_c = 2 if req.db_l0c else 1
    if acc * db_c > p.l0c and relax and acc <= p.l0c:
        db_c = 1
    if acc * db_c > p.l0c:
        buffers = " x2 (double-buffered)" if db_c == 2 else ""
        return 0, (f"base_m x base_n = {bm}x{bn} needs {acc * db_c} B of L0C ({L0C_ELEM_BYTES}"
                   f" B accumulators{buffers}) but L0C has {p.l0c} B")
    c_buffers = _c_ub_buffers(req)
    if p.c_in_ub and c_buffers * bm * bn * p.c_bytes > p.ub:
        held = f"{c_buffers} x " if c_buffers > 1 else ""
        return 0, (f"C block {bm}x{bn} {req.c_dtype} needs {held}{bm * bn * p.c_bytes} B of UB "
                   f"(C is at {req.c_position}) but UB has {p.ub} B")
    if p.has_bias and bn * BIAS_BYTES > p.bt:
        return 0, (f"bias row of base_n={bn} needs {bn * BIAS_BYTES} B of the bias table but "
                   f"BT has {p.bt} B")
    return db_c, None


def _fit_base_k(bm: int, bn: int, sck: int, req: MatmulTilingRequest, p: Problem,
                relax: bool) -> tuple[int, int, int, str | None]:
    """(base_k, db_l0a, db_l0b, None) for a bm x bn block, or (0, 0, 0, reason).

    A fixed base_k is kept; otherwise base_k is the largest C0 multiple that fits L0A and L0B
    with the requested double buffering and leaves one A and one B block room in L1, then
    evened out so that the K blocks are equal."""
    a_row, b_row = bm * p.a_bits, bn * p.b_bits  # bits per unit of K
    dbs = [(2 if req.db_l0a else 1, 2 if req.db_l0b else 1)]
    if relax:
        dbs.append((1, 1))
    # L1 must hold one block of each operand fetched from GM (TSCM operands are checked
    # whole by the L1 plan) plus the bias row.
    l1_row = (0 if p.a_in_l1 else a_row) + (0 if p.b_in_l1 else b_row)
    l1_free = (p.l1 - (bn * BIAS_BYTES if p.has_bias else 0)) * 8
    l1_cap = l1_free // l1_row if l1_row else MAX_MMAD_EXTENT
    reason = None
    for db_a, db_b in dbs:
        l0_cap = min(p.l0a * 8 // (a_row * db_a), p.l0b * 8 // (b_row * db_b), MAX_MMAD_EXTENT)
        if req.base_k != -1:
            if align_up(req.base_k, p.k_align) <= l0_cap:  # L0 holds K padded to C0
                return req.base_k, db_a, db_b, None
            bk = align_up(req.base_k, p.k_align)
            need_a, need_b = a_row * bk * db_a // 8, b_row * bk * db_b // 8
            reason = (f"base {bm}x{bn}x{bk}: A block needs {need_a} B of L0A (has {p.l0a} B),"
                      f" B block needs {need_b} B of L0B (has {p.l0b} B)")
            continue
        if l0_cap < p.k_align:
            reason = (f"base_m x base_n = {bm}x{bn} leaves no room for base_k={p.k_align} in "
                      f"L0A ({p.l0a} B) / L0B ({p.l0b} B)")
            continue
        cap = min(l0_cap, l1_cap, align_up(sck, p.k_align))
        cap -= cap % p.k_align
        if cap < p.k_align:
            need = ceil_div(l1_row * p.k_align, 8) + (bn * BIAS_BYTES if p.has_bias else 0)
            bias = " plus the bias row" if p.has_bias else ""
            return 0, 0, 0, (f"base {bm}x{bn}x{p.k_align}: one A and one B block{bias} need "
                             f"{need} B of L1 but L1 has {p.l1} B")
        bk = align_up(ceil_div(sck, ceil_div(sck, cap)), p.k_align)
        return bk, db_a, db_b, None
    return 0, 0, 0, reason


def _make_base(bm: int, bn: int, sck: int, req: MatmulTilingRequest,
               p: Problem) -> tuple[_Base | None, str | None]:
    relax = req.base_m != -1 or req.base_n != -1 or req.base_k != -1
    db_c, reason = _fits_out(bm, bn, req, p, relax)
    if reason:
        return None, reason
    bk, db_a, db_b, reason = _fit_base_k(bm, bn, sck, req, p, relax)
    if reason:
        return None, reason
    return _Base(bm, bn, bk, db_a, db_b, db_c), None


def _base_sizes(extent: int, fixed: int) -> list[int]:
    if fixed != -1:
        return [fixed]
    top = min(align_up(extent, FRACTAL), MAX_AUTO_BASE)
    return list(range(FRACTAL, top + 1, FRACTAL))


def _l1_reason(g: Grid, p: Problem) -> str:
    need = l1_bytes(g, p, L1Plan(step_m=g.mb if p.a_in_l1 else 1, step_n=g.nb if p.b_in_l1 else 1,
                                 step_ka=g.kb if p.a_in_l1 else 1,
                                 step_kb=g.kb if p.b_in_l1 else 1))
    whole = " (TSCM operands whole)" if p.a_in_l1 or p.b_in_l1 else ""
    bias = " plus the bias row" if p.has_bias else ""
    return (f"base {g.bm}x{g.bn}x{g.bk}: one A and one B block{whole}{bias} need {need} B of "
            f"L1 but L1 has {p.l1} B")


@dataclass(frozen=True)
class _Choice:
    base: _Base
    grid: Grid
    plan: L1Plan
    cycles: float


def _evaluate(scm: int, scn: int, sck: int, base: _Base, orders: tuple[int, ...], p: Problem,
              c_writes: int) -> tuple[_Choice | None, str | None]:
    best, reason = None, None
    for order in orders:
        g = Grid(scm, scn, sck, base.bm, base.bn, base.bk, order)
        plan = plan_l1(g, p)
        if plan is None:
            reason = _l1_reason(g, p)
            continue
        choice = _Choice(base, g, plan, estimate_cycles(g, p, plan, c_writes=c_writes))
        if best is None or choice.cycles < best.cycles:
            best = choice
    return best, reason


def _quick_choice(scm: int, scn: int, sck: int, req: MatmulTilingRequest, p: Problem,
                  c_writes: int) -> tuple[_Choice | None, str | None]:
    """Score a core region with a default base block, for ranking core splits: the largest
    near-square block L0C allows (128x256 for 128 KB, 256x256 for 256 KB), clamped to the
    region, fixed parts kept; halved (the larger side first) until it fits."""
    per_block = p.l0c // (L0C_ELEM_BYTES * (2 if req.db_l0c else 1))
    if p.c_in_ub:
        per_block = min(per_block, p.ub // (_c_ub_buffers(req) * p.c_bytes))
    side = FRACTAL
    while (2 * side) ** 2 <= per_block and 2 * side <= MAX_AUTO_BASE // 2:
        side *= 2
    bn_cap = MAX_AUTO_BASE if not p.has_bias else min(MAX_AUTO_BASE, p.bt // BIAS_BYTES)
    m_al, n_al = align_up(scm, FRACTAL), align_up(scn, FRACTAL)

    def fill(other: int, cap: int, extent: int) -> int:
        size = min(per_block // other, cap, extent)
        return max(size - size % FRACTAL, FRACTAL)

    bm, bn = req.base_m, req.base_n
    if bm == -1 and bn == -1:
        if m_al <= n_al:
            bm = min(m_al, side)
            bn = fill(bm, bn_cap, n_al)
        else:
            bn = min(n_al, side, max(bn_cap - bn_cap % FRACTAL, FRACTAL))
            bm = fill(bn, MAX_AUTO_BASE, m_al)
    elif bm == -1:
        bm = fill(bn, MAX_AUTO_BASE, m_al)
    elif bn == -1:
        bn = fill(bm, bn_cap, n_al)
    orders = TRAVERSE_ORDERS[req.traverse][:1]  # the final search tries both orders
    while True:
        base, reason = _make_base(bm, bn, sck, req, p)
        if base is not None:
            choice, reason = _evaluate(scm, scn, sck, base, orders, p, c_writes)
            if choice is not None:
                return choice, None
        shrink_m = req.base_m == -1 and bm > FRACTAL and (bm >= bn or req.base_n != -1)
        shrink_n = req.base_n == -1 and bn > FRACTAL and not shrink_m
        if not (shrink_m or shrink_n):
            return None, reason
        if shrink_m:
            bm = max(bm // 2 - bm // 2 % FRACTAL, FRACTAL)
        else:
            bn = max(bn // 2 - bn // 2 % FRACTAL, FRACTAL)


def _search_base(scm: int, scn: int, sck: int, req: MatmulTilingRequest, p: Problem,
                 c_writes: int) -> _Choice:
    """Best base block and walk order for one core's region (stage 2 + 3)."""
    orders = TRAVERSE_ORDERS[req.traverse]
    bases: list[_Base] = []
    reason = None
    for bm in _base_sizes(scm, req.base_m):
        for bn in _base_sizes(scn, req.base_n):
            base, why = _make_base(bm, bn, sck, req, p)
            if base is None:
                reason = reason or why
            else:
                bases.append(base)
    # Blocks far smaller than the largest that fits only add per-block overheads and would
    # lose anyway; not scoring them keeps the search fast.
    largest = max((b.bm * b.bn for b in bases), default=0)
    choices: list[_Choice] = []
    for base in bases:
        if base.bm * base.bn * SMALL_BLOCK_RATIO < largest:
            continue
        choice, why = _evaluate(scm, scn, sck, base, orders, p, c_writes)
        if choice is None:
            reason = reason or why
        else:
            choices.append(choice)
    if not choices:
        raise TilingError(f"no base block fits for a {scm}x{scn}x{sck} core region: {reason}")
    fastest = min(c.cycles for c in choices)
    m_al, n_al = align_up(scm, FRACTAL), align_up(scn, FRACTAL)

    def preference(c: _Choice) -> tuple:
        b = c.base
        # A block that does not divide the region leaves a ragged tail block per core.
        tails = (b.bm < m_al and m_al % b.bm != 0) + (b.bn < n_al and n_al % b.bn != 0)
        area = b.bm * b.bn
        # Areas within a factor of two count as one size class, so that a block without a
        # tail beats a slightly larger ragged one.
        return (-area.bit_length(), tails, -area, c.grid.order, b.bm > b.bn, -b.bk, b.bm)

    near = [c for c in choices if c.cycles <= fastest * (1 + BASE_TOLERANCE)]
    return min(near, key=preference)


# --- core split ------------------------------------------------------------------------------


def _pieces(total: int, unit: int, fixed: int, max_parts: int,
            least: int = 1, grain: int = 1) -> list[tuple[int, int]]:
    """Distinct ways to cut ``total`` into at most ``max_parts`` pieces of a multiple of
    ``unit`` (the last may be short): (parts, piece) pairs. One piece is exactly ``total``.
    Pieces smaller than ``least`` once rounded up to ``grain`` (a fixed base block must fit
    inside its core's region) are left out."""
    if fixed != -1:
        return [(ceil_div(total, fixed), fixed)]
    found: dict[int, int] = {}
    for parts in range(1, min(max_parts, ceil_div(total, unit)) + 1):
        piece = min(align_up(ceil_div(total, parts), unit), total)
        if align_up(piece, grain) >= least:
            found.setdefault(piece, ceil_div(total, piece))
    return [(parts, piece) for piece, parts in found.items()]


@dataclass(frozen=True)
class _Split:
    m_dim: int
    n_dim: int
    k_dim: int
    scm: int
    scn: int
    sck: int
    cycles: float

    @property
    def cores(self) -> int:
        return self.m_dim * self.n_dim * self.k_dim


def _choose_split(req: MatmulTilingRequest, p: Problem, dim: int) -> _Split:
    """Stage 1: cut M, N (and K) over at most ``dim`` cores."""
    unit_m = req.align_m if req.align_m != -1 else FRACTAL
    unit_n = req.align_n if req.align_n != -1 else FRACTAL
    unit_k = req.align_k if req.align_k != -1 else p.k_align
    max_k_parts = dim if req.split_k else 1
    splits: list[_Split] = []
    reason = None
    for k_dim, sck in _pieces(req.k, unit_k, req.single_core_k, max_k_parts, req.base_k,
                              p.k_align):
        for m_dim, scm in _pieces(req.m, unit_m, req.single_core_m, dim // k_dim, req.base_m,
                                  FRACTAL):
            for n_dim, scn in _pieces(req.n, unit_n, req.single_core_n, dim // (k_dim * m_dim),
                                      req.base_n, FRACTAL):
                if k_dim * m_dim * n_dim > dim:
                    continue
                choice, why = _quick_choice(scm, scn, sck, req, p, k_dim)
                if choice is None:
                    reason = reason or why
                    continue
                splits.append(_Split(m_dim, n_dim, k_dim, scm, scn, sck, choice.cycles))
    fixed = [f"{name}={getattr(req, name)}" for name in
             ("single_core_m", "single_core_n", "single_core_k") if getattr(req, name) != -1]
    if not splits and fixed and reason is None:
        need = (ceil_div(req.m, req.single_core_m if req.single_core_m != -1 else req.m)
                * ceil_div(req.n, req.single_core_n if req.single_core_n != -1 else req.n)
                * ceil_div(req.k, req.single_core_k if req.single_core_k != -1 else req.k))
        raise TilingError(f"set_single_shape({', '.join(fixed)}) needs {need} cores but dim "
                          f"is {dim}")
    if not splits:
        raise TilingError(f"no tiling fits: {reason}")
    # An even dim is read as AIV cores of a MIX launch, which come in pairs (one AIC + two
    # AIV per block, launched as used_core_num // 2 blocks): an odd count would drop a core.
    if dim % 2 == 0 and any(s.cores % 2 == 0 for s in splits):
        splits = [s for s in splits if s.cores % 2 == 0]
    fastest = min(s.cycles for s in splits)
    near = [s for s in splits if s.cycles <= fastest * (1 + CORE_SPLIT_TOLERANCE)]
    # Among equals: fewest cores, then the smallest per-core perimeter (scm + scn: the A and
    # B bytes each core reads per unit of K), then the estimate.
    return min(near, key=lambda s: (s.cores, s.scm + s.scn, s.cycles, s.m_dim))


# --- the result ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatmulTiling:
    """A computed tiling.

    Fields:
        values: every TCubeTiling field by name.
        m_dim, n_dim, k_dim: how many pieces M, N and K were cut into across cores
            (``used_core_num = m_dim * n_dim * k_dim``).
        estimated_cycles: the ranking estimate of one core's time (not a simulated time).
    """

    values: Mapping[str, int]
    m_dim: int
    n_dim: int
    k_dim: int
    estimated_cycles: float


def solve_matmul_tiling(req: MatmulTilingRequest, soc: Any) -> MatmulTiling:
    """Tile ``req`` for ``soc`` (an :class:`ascsim.hw.SocSpec`).

    Raises :class:`TilingError` naming the constraint and the sizes when nothing fits.
    """
    if not isinstance(req, MatmulTilingRequest):
        raise TypeError(f"req must be a MatmulTilingRequest, got {type(req).__name__}")
    p = _problem(req, soc)
    dim = req.dim if req.dim != -1 else default_core_count(soc)
    req = _clamp_fixed_base_k(req, p)
    if req.base_m != -1 or req.base_n != -1 or req.base_k != -1:
        _check_fixed_base(req, p)
    split = _choose_split(req, p, dim)
    choice = _search_base(split.scm, split.scn, split.sck, req, p, split.k_dim)
    values = MappingProxyType(_result(req, p, split, choice))
    return MatmulTiling(values, split.m_dim, split.n_dim, split.k_dim, choice.cycles)


def compute_matmul_tiling(req: MatmulTilingRequest, soc: Any) -> dict[str, int]:
    """Tile ``req`` for ``soc``: every TCubeTiling field name mapped to its value.

    Raises :class:`TilingError` naming the constraint and the sizes when nothing fits.
    """
    return dict(solve_matmul_tiling(req, soc).values)


def _clamp_fixed_base_k(req: MatmulTilingRequest, p: Problem) -> MatmulTilingRequest:
    """A fixed base_k beyond the core's K (rounded up to C0) becomes that K: the whole K is
    then one step. CANN accepts such a split (pyasc's fused-attention example fixes base_k=128
    for a K of 64), unlike an oversized base_m/base_n."""
    extent = req.single_core_k if req.single_core_k != -1 else req.k
    if req.base_k > align_up(extent, p.k_align):
        return replace(req, base_k=align_up(extent, p.k_align))
    return req


def _check_fixed_base(req: MatmulTilingRequest, p: Problem) -> None:
    """Fail early, with the fixed sizes in the message, when a fixed base cannot fit."""
    fixed = f"set_fix_split({req.base_m}, {req.base_n}, {req.base_k})"
    # A base block may not exceed its core's region rounded up to the fractal (to C0 for K).
    limits = (("base_m", "m", "single_core_m", FRACTAL), ("base_n", "n", "single_core_n", FRACTAL),
              ("base_k", "k", "single_core_k", p.k_align))
    for base_name, extent_name, single_name, grain in limits:
        base, single = getattr(req, base_name), getattr(req, single_name)
        extent = single if single != -1 else getattr(req, extent_name)
        if base != -1 and base > align_up(extent, grain):
            source = single_name if single != -1 else extent_name
            raise TilingError(f"{fixed}: {base_name}={base} exceeds {source}={extent} rounded "
                              f"up to {grain} ({align_up(extent, grain)})")
    bm = req.base_m if req.base_m != -1 else FRACTAL
    bn = req.base_n if req.base_n != -1 else FRACTAL
    base, reason = _make_base(bm, bn, min(req.k, req.base_k if req.base_k != -1 else req.k),
                              req, p)
    if base is None:
        raise TilingError(f"{fixed} does not fit: {reason}")


def _result(req: MatmulTilingRequest, p: Problem, split: _Split,
            choice: _Choice) -> dict[str, int]:
    base, grid, plan = choice.base, choice.grid, choice.plan
    org_m, org_n, org_ka, org_kb = req.org()
    in_ub = [op for op in ("a", "b") if req.storage(op) == "ub"]
    # A/B given in UB reach L1 through a staging area of one base block (ascsim's reading
    # of trans_length; 0 when both come from GM or L1).
    stage = {"a": base.bm * base.bk * p.a_bits // 8, "b": base.bk * base.bn * p.b_bits // 8}
    out = dict.fromkeys(TCUBE_TILING_FIELDS, 0)
    out.update(
        used_core_num=split.cores,
        m=org_m, n=org_n, k_a=org_ka, k_b=org_kb,
        single_core_m=split.scm, single_core_n=split.scn, single_core_k=split.sck,
        base_m=base.bm, base_n=base.bn, base_k=base.bk,
        depth_a1=plan.depth_a1, depth_b1=plan.depth_b1,
        step_m=plan.step_m, step_n=plan.step_n, step_k_a=plan.step_ka, step_k_b=plan.step_kb,
        is_bias=int(req.has_bias),
        trans_length=max((stage[op] for op in in_ub), default=0),
        iterate_order=grid.order,
        share_mode=0,
        share_l1_size=l1_bytes(grid, p, plan),
        share_l0c_size=base.bm * base.bn * L0C_ELEM_BYTES * base.db_l0c,
        share_ub_size=base.bm * base.bn * p.c_bytes if p.c_in_ub else 0,
        batch_m=1, batch_n=1, single_batch_m=1, single_batch_n=1, batch_num=1,
        db_l0a=base.db_l0a, db_l0b=base.db_l0b, db_l0c=base.db_l0c,
    )  # fmt: skip
    return out
