"""The per-core time estimate that ranks Matmul tilings, and the L1 caching plan it needs.

Nothing here decides a tiling: :mod:`ascsim.tiling.matmul` enumerates candidates and asks this
module two questions about each one -- "how would the L1 buffer be used?" (:func:`plan_l1`) and
"roughly how many cycles would one core take?" (:func:`estimate_cycles`). The estimate is a
ranking device, not the simulator's timing model: it only has to order candidates sensibly, so
it keeps one term per pipe (Cube, MTE1, FixPipe, GM traffic) and lets the slowest set the
pace, as pipes that overlap do.

Units: sizes in bytes, rates in bytes per cycle, times in AI Core cycles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Literal

from ascsim.hw import SocSpec

Operand = Literal["a", "b"]

#: Bytes of one fp32 bias element kept in L1 and in the bias table (the table holds fp32).
BIAS_BYTES = 4
#: Bytes of one L0C accumulator element (fp32 or int32, whatever the input type).
L0C_ELEM_BYTES = 4
#: Rows/columns of one Cube fractal: base_m and base_n are multiples of this.
FRACTAL = 16
#: A GM transfer of this size or more runs at full bandwidth (ascend-hw §3.3: "single
#: transfer >= 16 KB reaches best bandwidth"); L1 slabs grow until they reach it.
EFFICIENT_LOAD_BYTES = 16 * 1024


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def align_up(x: int, unit: int) -> int:
    return ceil_div(x, unit) * unit


#: Rates a division is made by (the fixed costs may be 0).
_POSITIVE_RATES = frozenset({"gm_read", "gm_write", "l1_to_l0a", "l1_to_l0b", "l0c_out"})


@dataclass(frozen=True, kw_only=True)
class MachineRates:
    """Per-core rates and fixed costs the ranking weighs.

    Fields:
        gm_read: bytes/cycle a core pulls from GM into L1. The L2 rate, not the HBM rate:
            when several cores read the same operand, all but the first read hit L2.
        gm_write: bytes/cycle of C written back to GM.
        l1_to_l0a, l1_to_l0b: MTE1 rates feeding the Cube.
        l0c_out: FixPipe rate draining L0C.
        mmad_startup: fixed cycles of one Mmad instruction.
        transfer_startup: fixed cycles of one MTE1 / FixPipe instruction.
        gm_latency: cycles before the first byte of a GM load arrives; paid once per load
            that double buffering does not hide.
        k_step: K elements the Cube consumes per cycle per 16x16 fractal, by input dtype.
    """

    gm_read: float
    gm_write: float
    l1_to_l0a: float
    l1_to_l0b: float
    l0c_out: float
    mmad_startup: int
    transfer_startup: int
    gm_latency: int
    k_step: Mapping[str, int]

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "k_step":
                if not value or min(value.values()) <= 0:
                    raise ValueError(f"MachineRates.k_step must map dtypes to rates > 0, "
                                     f"got {value!r}")
            elif value < 0 or (value == 0 and f.name in _POSITIVE_RATES):
                raise ValueError(f"MachineRates.{f.name} must be > 0, got {value}")

    @classmethod
    def from_soc(cls, soc: SocSpec) -> MachineRates:
        """Read the rates from the SoC table."""
        bw, timing = soc.bw, soc.timing
        return cls(gm_read=bw.l2_read, gm_write=bw.l2_write, l1_to_l0a=bw.l1_to_l0a,
                   l1_to_l0b=bw.l1_to_l0b, l0c_out=bw.l0c_to_gm,
                   mmad_startup=soc.cube.startup_cycles,
                   transfer_startup=timing.mte1_startup_cycles,
                   gm_latency=timing.gm_read_latency_cycles, k_step=dict(soc.cube.k_step))


@dataclass(frozen=True, kw_only=True)
class Problem:
    """What the ranking needs to know about one request, resolved against the SoC.

    Fields:
        a_bits, b_bits: bits per element of A and B.
        c_bytes: bytes per element of C as written out.
        k_align: base_k granularity in elements (one 32-byte C0 of the input type).
        k_step: Cube K throughput for the input type (see :class:`MachineRates`).
        has_bias: whether a bias row is added (costs L1 and bias-table space).
        a_in_l1, b_in_l1: the operand already sits in L1 (TSCM), wholly, for the core.
        l1, l0a, l0b, l0c, ub, bt: buffer budgets in bytes.
        c_in_ub: C is delivered to a UB position, so one C base block must fit UB.
        rates: the machine rates.
        trans_a, trans_b: the operand is stored transposed (A as [K, M], B as [N, K]); it
            decides which operand gets the deeper K slab when K streams through L1
            (:func:`streaming_plan`).
    """

    a_bits: int
    b_bits: int
    c_bytes: int
    k_align: int
    k_step: int
    has_bias: bool
    a_in_l1: bool
    b_in_l1: bool
    l1: int
    l0a: int
    l0b: int
    l0c: int
    ub: int
    bt: int
    c_in_ub: bool
    rates: MachineRates
    trans_a: bool = False
    trans_b: bool = False

    def __post_init__(self) -> None:
        for name in ("a_bits", "b_bits", "c_bytes", "k_align", "k_step"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Problem.{name} must be > 0, got {getattr(self, name)}")
        for name in ("l1", "l0a", "l0b", "l0c", "ub", "bt"):
            if getattr(self, name) < 0:
                raise ValueError(f"Problem.{name} budget must be >= 0, got "
                                 f"{getattr(self, name)}")


@dataclass(frozen=True)
class Grid:
    """One core's region cut into base blocks.

    ``scm x scn`` is the core's C region, ``sck`` its K extent; ``bm x bn x bk`` the base
    block; ``order`` 0 walks M first (the inner loop runs over M blocks), 1 walks N first.
    """

    scm: int
    scn: int
    sck: int
    bm: int
    bn: int
    bk: int
    order: int
    # Block counts along M, N and K, derived once (they are read in every estimate).
    mb: int = field(init=False)
    nb: int = field(init=False)
    kb: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mb", ceil_div(self.scm, self.bm))
        object.__setattr__(self, "nb", ceil_div(self.scn, self.bn))
        object.__setattr__(self, "kb", ceil_div(self.sck, self.bk))

    def blocks(self, op: Operand) -> int:
        """Base blocks of ``op`` along its non-K dimension (M for A, N for B)."""
        return self.mb if op == "a" else self.nb

    def stationary(self) -> Operand:
        """The operand that stays while the inner loop runs: B when walking M first."""
        return "b" if self.order == 0 else "a"


@dataclass(frozen=True)
class L1Plan:
    """How A and B are cached in L1.

    One GM->L1 load of A brings ``step_m`` base blocks along M times ``step_ka`` along K;
    ``db_a`` = 2 keeps a second such slab so the next load overlaps compute. Same for B with
    ``step_n``, ``step_kb``, ``db_b``. TCubeTiling's depth_a1 = step_m * step_ka * db_a.
    """

    step_m: int = 1
    step_n: int = 1
    step_ka: int = 1
    step_kb: int = 1
    db_a: int = 1
    db_b: int = 1

    @property
    def depth_a1(self) -> int:
        return self.step_m * self.step_ka * self.db_a

    @property
    def depth_b1(self) -> int:
        return self.step_n * self.step_kb * self.db_b

    def k_step(self, op: Operand) -> int:
        return self.step_ka if op == "a" else self.step_kb

    def cover(self, op: Operand) -> int:
        return self.step_m if op == "a" else self.step_n

    def db(self, op: Operand) -> int:
        return self.db_a if op == "a" else self.db_b

    def with_(self, op: Operand, *, k: int | None = None, cover: int | None = None,
              db: int | None = None) -> L1Plan:
        """A copy with ``op``'s K-step, cover (M/N step) or double buffering changed."""
        # Spelled out rather than dataclasses.replace: this runs thousands of times a search.
        if op == "a":
            return L1Plan(self.step_m if cover is None else cover, self.step_n,
                          self.step_ka if k is None else k, self.step_kb,
                          self.db_a if db is None else db, self.db_b)
        return L1Plan(self.step_m, self.step_n if cover is None else cover, self.step_ka,
                      self.step_kb if k is None else k, self.db_a,
                      self.db_b if db is None else db)

    def k_steps_compatible(self) -> bool:
        """The larger K-step must be a whole multiple of the smaller one, so that the two
        operands' K slabs line up."""
        low, high = sorted((self.step_ka, self.step_kb))
        return high % low == 0


def block_bytes(g: Grid, p: Problem, op: Operand) -> int:
    """Bytes of one base block of ``op`` in L1 (bm x bk of A, bk x bn of B)."""
    side, bits = (g.bm, p.a_bits) if op == "a" else (g.bn, p.b_bits)
    return ceil_div(side * g.bk * bits, 8)


def bias_bytes(g: Grid, p: Problem) -> int:
    return g.bn * BIAS_BYTES if p.has_bias else 0


def l1_bytes(g: Grid, p: Problem, plan: L1Plan) -> int:
    """L1 bytes the plan occupies: both operands' slabs plus the bias row."""
    return (plan.depth_a1 * block_bytes(g, p, "a") + plan.depth_b1 * block_bytes(g, p, "b")
            + bias_bytes(g, p))


def reloads(g: Grid, plan: L1Plan, op: Operand) -> int:
    """How many times ``op``'s whole core slab crosses GM->L1.

    An operand is fetched once when every K slab of the blocks in use stays in L1: for the
    stationary operand that is one column (row) at full K; for the streaming one it is the
    whole slab (all its blocks at full K), since the inner loop comes back to each block once
    per outer step. Otherwise it is re-fetched once per block of the other operand.
    """
    other: Operand = "b" if op == "a" else "a"
    full_k = plan.k_step(op) >= g.kb
    resident = full_k and (op == g.stationary() or plan.cover(op) >= g.blocks(op))
    return 1 if resident else g.blocks(other)


def loads(g: Grid, plan: L1Plan, op: Operand) -> int:
    """Number of GM->L1 load instructions of ``op`` over the core's whole run."""
    per_pass = ceil_div(g.blocks(op), plan.cover(op)) * ceil_div(g.kb, plan.k_step(op))
    return reloads(g, plan, op) * per_pass


def _fits(g: Grid, p: Problem, plan: L1Plan) -> bool:
    return plan.k_steps_compatible() and l1_bytes(g, p, plan) <= p.l1


# --- K streaming through L1: the host tiling library's rule --------------------------------
#
# When neither operand's slab at full K fits L1, CANN's tiling (asc-devkit
# ``impl/adv_api/tiling/matmul/matmul_tiling_algorithm.cpp``, the "neither full load" case of
# ``GetL1Factors``) double-buffers both operands with one block along M and N each and splits
# L1 between their K slabs: one operand gets the deeper slab, as many K steps as L1 holds
# next to a one-step slab of the other; the other then gets what is left, but no more K steps
# than keep one L1->L0 load near :data:`MTE1_LOAD_FRACTALS` fractals. Both step counts are
# divisors of the core's K steps. The rule is re-stated here, not ported; the samples print
# what it gives (asc-devkit ``matmul_high_performance``, MDL with the depths left to the
# library, 910B1 128x256x64 on a 2048x1536x8192 region: depthA1 4 / stepKa 2 in its README,
# depthB1 8 / stepKb 4 kept by its case 5 and restated by its constant tiling).

#: The fractal count one L1->L0 load of the shallower operand aims at (CANN's tiling
#: constant ``MIN_MTE1_LOAD``, same source).
MTE1_LOAD_FRACTALS = 32


def largest_divisor(n: int, cap: int) -> int:
    """The largest divisor of ``n`` that is at most ``cap`` (at least 1)."""
    for d in range(max(1, min(cap, n)), 0, -1):
        if n % d == 0:
            return d
    return 1


def _deep_operand(g: Grid, p: Problem) -> Operand | None:
    """The operand whose K slab the library deepens: the one whose stored rows run along K
    (A untransposed, B transposed); when both do, A if its block has more rows than B's has
    columns, else B; None when neither does (both then get the same K depth)."""
    a_rows_k, b_rows_k = not p.trans_a, p.trans_b
    if a_rows_k and b_rows_k:
        return "a" if ceil_div(g.bm, FRACTAL) > ceil_div(g.bn, FRACTAL) else "b"
    if a_rows_k:
        return "a"
    if b_rows_k:
        return "b"
    return None


def _mte1_cap(g: Grid, p: Problem, op: Operand) -> int:
    """Most K steps the shallower operand's slab takes: enough for one L1->L0 load of
    :data:`MTE1_LOAD_FRACTALS` fractals, counted as the library counts them (K in C0 blocks,
    M and N in 16-row fractals)."""
    k_c0 = ceil_div(g.bk, p.k_align)
    m16, n16 = ceil_div(g.bm, FRACTAL), ceil_div(g.bn, FRACTAL)
    per_step = (1 if n16 == 1 else k_c0) + (1 if k_c0 == 1 else m16)
    side = m16 if op == "a" else n16
    return max(MTE1_LOAD_FRACTALS // per_step,
               ceil_div(ceil_div(MTE1_LOAD_FRACTALS, side), k_c0))


def _line_up(plan: L1Plan, kb: int) -> L1Plan:
    """Make the larger K step a multiple of the smaller (and a divisor of ``kb``), lowering
    the larger, as the library does."""
    low, high = sorted((plan.step_ka, plan.step_kb))
    while high > low and (high % low or kb % high):
        high -= 1
    if plan.step_ka >= plan.step_kb:
        return plan.with_("a", k=high)
    return plan.with_("b", k=high)


def _full_k_fits(g: Grid, p: Problem) -> bool:
    """Whether one block of either operand at full K fits L1 beside one K step of the
    other: if not, K streams through L1 for both (the library's "neither full load")."""
    return any(_fits(g, p, L1Plan().with_(op, k=g.kb)) for op in ("a", "b"))


def streaming_plan(g: Grid, p: Problem) -> L1Plan | None:
    """The library's L1 plan when K streams through L1 for both operands (see above), or
    None when not even one K step of each fits."""
    free = p.l1 - bias_bytes(g, p)
    blocks = {op: block_bytes(g, p, op) for op in ("a", "b")}
    db = {"a": 2, "b": 2}
    # Double buffering goes first from B, then from A, if one step of each does not fit.
    for op in ("b", "a"):
        if db["a"] * blocks["a"] + db["b"] * blocks["b"] > free:
            db[op] = 1
    if db["a"] * blocks["a"] + db["b"] * blocks["b"] > free:
        return None
    deep = _deep_operand(g, p)
    if deep is None:  # one K depth for both
        per_step = db["a"] * blocks["a"] + db["b"] * blocks["b"]
        cap = max(_mte1_cap(g, p, "a"), _mte1_cap(g, p, "b"))
        steps = largest_divisor(g.kb, min(free // per_step, cap))
        plan = L1Plan(step_ka=steps, step_kb=steps, db_a=db["a"], db_b=db["b"])
    else:
        shallow: Operand = "b" if deep == "a" else "a"
        deep_steps = (free - db[shallow] * blocks[shallow]) // (db[deep] * blocks[deep])
        deep_steps = largest_divisor(g.kb, max(1, deep_steps))
        left = free - db[deep] * deep_steps * blocks[deep]
        shallow_steps = min(left // (db[shallow] * blocks[shallow]), _mte1_cap(g, p, shallow))
        shallow_steps = largest_divisor(g.kb, max(1, shallow_steps))
        steps = {deep: deep_steps, shallow: shallow_steps}
        plan = _line_up(L1Plan(step_ka=steps["a"], step_kb=steps["b"], db_a=db["a"],
                               db_b=db["b"]), g.kb)
    return plan if _fits(g, p, plan) else None


def plan_l1(g: Grid, p: Problem) -> L1Plan | None:
    """Choose the L1 caching plan for a grid, or None if even one block of each won't fit.

    Greedy, each move kept only if the plan still fits L1:

    1. the stationary operand at full K, when the streaming one has several blocks -- it is
       then fetched once instead of once per streaming block;
    2. the whole streaming slab at full K, when the stationary one has several blocks --
       everything is then fetched once;
    When not even one block of either operand fits L1 at full K (and neither is user-filled
    L1), K streams through L1 for both: the plan is then the host library's
    :func:`streaming_plan`.

    3. a second L1 buffer for each operand still fetched more than once, so the next load
       overlaps compute;
    4. K slabs grown (doubling) until one load moves at least :data:`EFFICIENT_LOAD_BYTES`:
       fewer, larger transfers, but no larger than needed, since compute waits for the
       first slab.
    """
    plan = L1Plan()
    # Operands the user placed in L1 (TSCM) are there whole, fetched by the user.
    if p.a_in_l1:
        plan = plan.with_("a", k=g.kb, cover=g.mb)
    if p.b_in_l1:
        plan = plan.with_("b", k=g.kb, cover=g.nb)
    if not _fits(g, p, plan):
        return None
    stat = g.stationary()
    stream: Operand = "a" if stat == "b" else "b"

    def attempt(candidate: L1Plan) -> bool:
        nonlocal plan
        if _fits(g, p, candidate):
            plan = candidate
            return True
        return False

    if g.blocks(stream) > 1:
        attempt(plan.with_(stat, k=g.kb))
    if g.blocks(stat) > 1:
        attempt(plan.with_(stream, k=g.kb, cover=g.blocks(stream)))
    if not (p.a_in_l1 or p.b_in_l1) and not _full_k_fits(g, p):
        streamed = streaming_plan(g, p)  # K streams for both: the library's own split
        if streamed is not None:
            return streamed
    for op in (stat, stream):
        if loads(g, plan, op) > 1:
            attempt(plan.with_(op, db=2))
    for op in (stat, stream):
        slab = plan.cover(op) * block_bytes(g, p, op)
        # Double the K depth of each load until loads are large enough or it stops fitting.
        while plan.k_step(op) < g.kb and plan.k_step(op) * slab < EFFICIENT_LOAD_BYTES:
            if not attempt(plan.with_(op, k=min(2 * plan.k_step(op), g.kb))):
                break
    # A second buffer only helps an operand that is loaded more than once.
    for op in (stat, stream):
        if plan.db(op) == 2 and loads(g, plan, op) <= 1:
            plan = plan.with_(op, db=1)
    return plan


def estimate_cycles(g: Grid, p: Problem, plan: L1Plan, *, c_writes: int = 1) -> float:
    """Rough cycles one core needs for its region with this grid and L1 plan.

    The slower of the GM stream and (first slabs + the busiest of Cube, MTE1, FixPipe),
    plus one GM latency. ``c_writes`` counts how many partial results of the same C region the cores
    write (more than 1 when K is split across cores).
    """
    r = p.rates
    m16, n16 = ceil_div(g.scm, FRACTAL), ceil_div(g.scn, FRACTAL)
    full_k, tail_k = divmod(g.sck, g.bk)
    k_cycles = full_k * ceil_div(g.bk, p.k_step) + ceil_div(tail_k, p.k_step)
    blocks = g.mb * g.nb
    mmads = blocks * g.kb
    cube = m16 * n16 * k_cycles + mmads * r.mmad_startup

    k_pad = align_up(g.sck, p.k_align)
    a_l0 = g.nb * m16 * FRACTAL * k_pad * p.a_bits / 8
    b_l0 = g.mb * n16 * FRACTAL * k_pad * p.b_bits / 8
    mte1 = a_l0 / r.l1_to_l0a + b_l0 / r.l1_to_l0b + 2 * mmads * r.transfer_startup

    fix = m16 * n16 * FRACTAL * FRACTAL * L0C_ELEM_BYTES / r.l0c_out
    fix += blocks * r.transfer_startup

    a_bytes = ceil_div(g.scm * g.sck * p.a_bits, 8) * (0 if p.a_in_l1 else reloads(g, plan, "a"))
    b_bytes = ceil_div(g.sck * g.scn * p.b_bits, 8) * (0 if p.b_in_l1 else reloads(g, plan, "b"))
    c_bytes = g.scm * g.scn * p.c_bytes * c_writes
    gm = (a_bytes + b_bytes) / r.gm_read + c_bytes / r.gm_write
    exposed = sum(loads(g, plan, op) for op in ("a", "b") if plan.db(op) == 1)
    gm += max(exposed - 2, 0) * r.gm_latency

    # Compute cannot start before the first slabs land; after that the pipes overlap, so
    # the core is bound by whichever is slower: the GM stream, or first slabs + compute.
    first = sum(plan.cover(op) * plan.k_step(op) * block_bytes(g, p, op)
                for op, in_l1 in (("a", p.a_in_l1), ("b", p.b_in_l1)) if not in_l1)
    return max(gm, first / r.gm_read + max(cube, mte1, fix)) + r.gm_latency
