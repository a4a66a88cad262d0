"""The Matmul high-level API of ``asc.adv``: ``Matmul``, ``register_matmul``.

One ``Matmul`` computes ``C = A @ B (+ bias)`` for one core's ``singleCoreM x singleCoreN``
region, base block by base block (``tiling.base_m x base_n``, K in ``base_k`` steps).

Numerics: one product per core region in the accumulator type — fp16/bf16/fp32 inputs through
``ascsim.sim.numerics.start_cube_matmul`` (``cube_matmul``'s fp32 accumulation, as ``mmad``,
computed on a worker thread from a copy of the operands taken when the region starts, and
waited for when the first block leaves L0C), int8 in int32 — the bias added once, converted to
C's type on the way out: what the Cube (accumulation in L0C) and FixPipe (conversion) do.

Timing (ascend-hw §2.4): on the split architectures the API is a client/server protocol. The
AIV-side calls post messages; the group's AIC executes MTE2 (GM->L1), MTE1 (L1->L0A/L0B), the
Cube (M) and FixPipe, so those instructions are charged to the AIC's timelines, each message
arriving a cross-core flag latency after the AIV sent it. Two AIVs share one AIC, which serves
them in turn. A C block for a UB tensor goes L0C->GM (workspace)->UB on 910B and straight
L0C->UB on 950. On a MIX kernel's AIC, ``register_matmul`` ends the user code: the AIC only
serves. L1 reuse follows the tiling's ``step_*``/``depth_*``: an operand slab that holds its
whole K extent stays in L1 while the walk stays within it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ascsim.asc.adv.matmul_config import CFG_NORM, MatmulConfig, MatmulType
from ascsim.asc.adv.matmul_static import has_static_shape, static_tiling
from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import CubeFormat, IterateOrder, LayoutMode, TPosition
from ascsim.asc.errors import CallFormError
from ascsim.asc.launcher import ServerMode
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.asc.values import GlobalAddress, RuntimeInt
from ascsim.isa import (
    Bursts,
    Copy,
    CubeProduct,
    FixPipe,
    Handoff,
    KernelError,
    MatmulBookkeeping,
    Mmad,
    Region,
    Request,
    ScalarOps,
)
from ascsim.sim.access import ByteRows
from ascsim.sim.numerics import convert

UB_POSITIONS = frozenset({TPosition.VECIN, TPosition.VECOUT, TPosition.VECCALC})
#: MTE1 queue entries the API issues per K step: the wait for the L1 slab (MTE2 -> MTE1 flag),
#: the L0A and L0B loads, and the set of the MTE1 -> M flag. With the pipe queue depth (32,
#: [S10]) this bounds how many K steps the scalar unit runs ahead of MTE1 (and so of the Cube,
#: which MTE1 cannot outrun by more than its two L0 buffers): 8. Checked on the
#: FixPipe columns of asc-devkit matmul_high_performance with UnitFlag (910B1 and 950 case 8,
#: and cases 0-3, whose CFG_NORM enables UnitFlag): FixPipe holds its pipe for about the last
#: 8 K steps of each block (docs/cost-model.md, "FixPipe as msprof counts it").
MTE1_ENTRIES_PER_K_STEP = 4
FRACTAL_ROWS = 16
C0_BYTES = 32  # one fractal row: 32 bytes of elements

# en_atomic value -> how FixPipe combines C with what GM already holds.
ATOMIC_OPS = {0: None, 1: "add", 2: "max", 3: "min"}

_TILING_FIELDS = ("used_core_num", "m", "n", "k_a", "k_b", "single_core_m", "single_core_n",
                  "single_core_k", "base_m", "base_n", "base_k", "step_m", "step_n", "step_k_a",
                  "step_k_b", "iterate_order", "is_bias")


@dataclass(frozen=True)
class _Tiling:
    """The TCubeTiling fields the Matmul reads, as plain ints."""

    used_core_num: int
    m: int
    n: int
    k_a: int
    k_b: int
    single_core_m: int
    single_core_n: int
    single_core_k: int
    base_m: int
    base_n: int
    base_k: int
    step_m: int
    step_n: int
    step_k_a: int
    step_k_b: int
    iterate_order: int
    is_bias: int

    def __post_init__(self):
        for name in ("base_m", "base_n", "base_k"):
            if getattr(self, name) <= 0:
                raise ValueError(f"tiling.{name} is {getattr(self, name)}: fill the tiling with "
                                 "MultiCoreMatmulTiling.get_tiling or TCubeTiling(...)")


def _finished(product) -> np.ndarray:
    """A region's product (a :class:`~ascsim.isa.instr.CubeProduct` handle), once computed."""
    return product.result()


@dataclass
class _Block:
    """The C block computed by the latest ``iterate`` step, waiting for ``get_tensor_c``."""

    mi: int
    ni: int
    region: object  # the region's product (an array, or a Future of one: see _product)
    rows: slice  # the block's rows and columns of the region
    cols: slice
    shape: tuple[int, int]
    ready: float  # cycle the block is complete in L0C
    #: The quantisation of a quantising FixPipe (see Matmul.set_quant_scalar): an fp32 scale,
    #: or one per column of the block; None when C is converted without a scale.
    scale: object = None
    c_dtype: object = None  # C's numpy type, when ``scale`` is set

    @property
    def values(self) -> np.ndarray | None:
        """rows x cols, accumulator type, bias included (waits for a background product);
        with a quantisation: scaled in fp32 and rounded to C's type (to nearest even,
        saturating), as the FixPipe quantises."""
        result = _finished(self.region)  # (None in a timing-only run)
        if result is None:
            return None
        return _quantised(result[self.rows, self.cols], self.scale, self.c_dtype)


def _acc_type(dtype) -> np.dtype:
    return np.dtype(np.int32) if dtype.is_int() else np.dtype(np.float32)


#: C types that an integer (int32) accumulator reaches through a quantising FixPipe (int8 in,
#: the "deq" modes), and those a float (fp32) accumulator does (int8 out, the "quant" modes).
_QUANTISED_C = {True: frozenset({"float16", "bfloat16", "int8"}), False: frozenset({"int8"})}


def _quantised(values: np.ndarray, scale, c_dtype) -> np.ndarray:
    """Accumulator ``values`` as a quantising FixPipe writes them with ``scale`` (None: as
    they are, converted on the way out): scaled in fp32, rounded to nearest even and
    saturated to C's type."""
    if scale is None:
        return values
    return convert(values.astype(np.float32) * scale, c_dtype, "rint")


def _quantises(a_dtype, c_dtype) -> bool:
    """Whether the FixPipe of a Matmul with these A and C types applies a quantisation scale."""
    return c_dtype.name in _QUANTISED_C[a_dtype.is_int()]


def _gm_matrix(t: GlobalTensor, rows: int, cols: int, stride: int, loc) -> np.ndarray:
    """A (rows x cols) strided numpy view of GM from ``t``'s start (row pitch ``stride``)."""
    if rows <= 0 or cols <= 0:
        return np.zeros((max(rows, 0), max(cols, 0)), t.dtype.np_dtype)
    flat = t.elements(0, (rows - 1) * stride + cols, loc)
    size = flat.itemsize
    # An ndarray over the flat view's buffer: a tenth of ``as_strided``'s cost.
    return np.ndarray((rows, cols), flat.dtype, buffer=flat, strides=(stride * size, size))


def _nz_matrix(t: GlobalTensor, rows: int, cols: int, org_rows: int, loc) -> np.ndarray:
    """(rows x cols) of a matrix stored in NZ fractals: column blocks of 32 bytes, each holding
    all ``org_rows`` rows (padded to 16) one after the other."""
    size = t.dtype.sizeof()
    c0 = C0_BYTES // size
    padded = -(-org_rows // FRACTAL_ROWS) * FRACTAL_ROWS
    col_blocks = -(-cols // c0)
    if rows <= 0 or cols <= 0:
        return np.zeros((max(rows, 0), max(cols, 0)), t.dtype.np_dtype)
    # Only up to the last row used in the last column block: a core's slice that starts
    # mid-block (an N-split of a transposed B) must not run past the end of the buffer.
    flat = t.elements(0, (col_blocks - 1) * padded * c0 + rows * c0, loc)
    tiles = np.lib.stride_tricks.as_strided(flat, (rows, col_blocks, c0),
                                            (c0 * size, padded * c0 * size, size))
    return tiles.reshape(rows, col_blocks * c0)[:, :cols]


def _nz_indices(t: GlobalTensor, rows: int, cols: int, org_rows: int, loc) -> np.ndarray:
    """(rows x cols) 2-bit sparsity indices of B's dense K/2 x N matrix, stored as an int8
    NZ matrix would be (32-column strips, each all ``org_rows`` rows padded to 16) with four
    indices to a byte, least significant bits first."""
    padded = -(-org_rows // FRACTAL_ROWS) * FRACTAL_ROWS
    strips = -(-cols // C0_BYTES)
    used = (strips - 1) * padded * C0_BYTES + rows * C0_BYTES  # up to the last row used
    nbytes = -(-used // 4)
    packed = np.asarray(t.elements(0, nbytes, loc)).view(np.uint8)
    shifts = np.arange(4, dtype=np.uint8) * 2
    flat = ((packed[:, None] >> shifts) & 3).reshape(-1)
    full = np.zeros(strips * padded * C0_BYTES, np.uint8)
    full[:flat.size] = flat[:full.size]
    tiles = full.reshape(strips, padded, C0_BYTES)[:, :rows]
    return tiles.transpose(1, 0, 2).reshape(rows, strips * C0_BYTES)[:, :cols]


#: set_hf32's trans_mode -> how fp32 ties round to HF32 (as set_hf32_trans_mode(False/True)).
HF32_TRANS_MODES = {0: "even", 1: "away"}


def _atomic(en_atomic: int, loc) -> str | None:
    if int(en_atomic) not in ATOMIC_OPS:
        raise KernelError(f"en_atomic={en_atomic}: 0 (none), 1 (add), 2 (max), 3 (min)", loc)
    return ATOMIC_OPS[int(en_atomic)]


def _as_global(tensor, loc) -> GlobalTensor:
    if isinstance(tensor, GlobalTensor):
        tensor._require_bound()
        return tensor
    if isinstance(tensor, GlobalAddress):
        t = GlobalTensor()
        t.set_global_buffer(tensor)
        return t
    raise KernelError(f"expected a GlobalTensor, got {type(tensor).__name__} (operands from "
                      "UB or L1 are not supported by this Matmul)", loc)


class _NBatch(NamedTuple):
    """What an ``iterate_n_batch`` left in the workspace for ``get_batch_tensor_c``."""

    workspace: GlobalTensor  # C matrices, packed, as the C type
    batch: int  # matrices per batched product
    matrix: int  # elements of one C matrix (single M x single N)
    cols: int  # its row length (single N)
    finished: tuple  # cycle at which each batched product is written
    taken: int  # batched products read so far


class _Iteration:
    """What ``Matmul.iterate()`` returns: a loop over base blocks (``with ... as count``) or,
    used as a condition, one step (``while mm.iterate(): ...``)."""

    def __init__(self, mm: Matmul):
        self.mm = mm

    def __ascsim_iterations__(self):
        count = 0
        while self.mm._step(user_location()):
            yield RuntimeInt(count)
            count += 1

    def __bool__(self) -> bool:
        return self.mm._step(user_location())


class Matmul:
    """``asc.adv.Matmul(a, b, c, bias=None, matmul_config=None, matmul_policy=0)``."""

    def __init__(self, a: MatmulType, b: MatmulType, c: MatmulType, bias: MatmulType | None = None,
                 matmul_config: MatmulConfig | None = None, matmul_policy: int = 0):
        loc = user_location()
        for name, t in (("a", a), ("b", b), ("c", c), ("bias", bias)):
            if t is not None and not isinstance(t, MatmulType):
                raise KernelError(f"Matmul({name}=...) must be an asc.adv.MatmulType", loc)
        if a.dtype != b.dtype:
            raise KernelError(f"Matmul: A is {a.dtype.name} but B is {b.dtype.name}", loc)
        self.a_type, self.b_type, self.c_type, self.bias_type = a, b, c, bias
        self.config = matmul_config or CFG_NORM
        # A compile-time tiling spares the scalar unit part of its bookkeeping.
        self._const_tiling = has_static_shape(self.config)
        self.policy = matmul_policy
        self.tiling: _Tiling | None = None
        self.workspace = None
        self._a = self._b = self._bias = None
        self._trans_a, self._trans_b = a.is_trans, b.is_trans
        self._org: tuple | None = None  # (m, n, ka, kb, kc) from set_org_shape
        self._single: list[int] | None = None  # [m, n, k] after set_single_shape / set_tail
        self._cursor = 0
        self._region_product = None  # this region's product (array or Future), while iterating
        self._region_rows = self._region_cols = range(0)  # its row and column indices
        self._block: _Block | None = None
        self._resident: dict[str, tuple | None] = {"a": None, "b": None}
        # Per operand, when MTE1 last read each of the slabs still in L1 (oldest first), and
        # the current slab: a new slab overwrites the oldest once MTE1 is done with it.
        self._l1_reads: dict[str, deque] = {"a": deque(maxlen=1), "b": deque(maxlen=1)}
        self._l1_reading = {"a": 0.0, "b": 0.0}
        self._hold_until = 0.0  # the current block's last Mmad end, for a UnitFlag FixPipe
        self._pending = 0.0  # completion of an asynchronous iterate_all
        self._pending_from = None  # the AIC that runs it
        self._batch_num = (1, 1)  # set_batch_num: iterate_batch's default batch counts
        self._n_batch: _NBatch | None = None  # iterate_n_batch's products, get_batch_tensor_c
        self.self_define_data = self.user_def_info = None  # callback data (no callbacks here)
        # set_quant_scalar / set_quant_vector: ("scalar", fp32 scale) or ("vector", GM words)
        self._quant: tuple | None = None
        self._hf32: str | None = None  # set_hf32: the HF32 ties rule, None when off
        self._sparse: GlobalTensor | None = None  # set_sparse_index: B's index matrix
        # When each L0C buffer is read out by its last FixPipe (oldest first): the next
        # block's first Mmad overwrites the buffer the oldest of them read.
        self._l0c_free: deque = deque(maxlen=1)

    # ------------------------------------------------------------------ set-up
    def init(self, tiling, pipe=None) -> None:
        loc = user_location()
        current_core().call_overhead()
        try:
            self.tiling = _Tiling(**{f: int(getattr(tiling, f)) for f in _TILING_FIELDS})
        except ValueError as exc:
            raise KernelError(str(exc), loc) from None
        self._check_fits(loc)
        self._single = None
        t = self.tiling
        two_fit = 2 * t.base_m * t.base_n * 4 <= current_core().soc.l0c_bytes
        buffers = 2 if int(getattr(tiling, "db_l0c", 1)) == 2 and two_fit else 1
        self._l0c_free = deque(maxlen=buffers)
        self._l1_reads = {op: deque(maxlen=self._l1_slots(tiling, op)) for op in "ab"}
        self._l1_reading = {"a": 0.0, "b": 0.0}

    def _l1_slots(self, tiling, op: str) -> int:
        """Slabs of operand ``op`` that L1 holds at once. The NORM template moves one base block
        per load into one L1 buffer and hands L1 over per K step, so a K step's loads wait for
        MTE1 to finish the previous step's moves of both operands (asc-devkit
        matmul_high_performance README, cases 0-3: no L1 multi-block caching; the published
        MTE2 and MTE1 times add up to the total, 582516 + 162104 of 759364 us in case 0);
        MDL ping-pongs when depthA1 / (stepM * stepKa) = 2 (same README, case 4)."""
        if not self.config.do_multi_data_load:
            return 1
        depth = int(getattr(tiling, "depth_a1" if op == "a" else "depth_b1", 0))
        t = self.tiling
        per_slab = (max(1, t.step_m) * max(1, t.step_k_a) if op == "a"
                    else max(1, t.step_n) * max(1, t.step_k_b))
        return 2 if depth >= 2 * per_slab else 1

    def _check_fits(self, loc) -> None:
        t, soc = self.tiling, current_core().soc
        ab = self.a_type.dtype.sizeof()
        needs = {"L0A": (t.base_m * t.base_k * ab, soc.l0a_bytes),
                 "L0B": (t.base_k * t.base_n * ab, soc.l0b_bytes),
                 "L0C": (t.base_m * t.base_n * 4, soc.l0c_bytes)}
        for buf, (need, have) in needs.items():
            if need > have:
                raise KernelError(f"tiling base block {t.base_m}x{t.base_n}x{t.base_k} needs "
                                  f"{need} B of {buf}, which holds {have} B on {soc.name}", loc)

    def set_workspace(self, addr, size=None) -> None:
        current_core().call_overhead()
        self.workspace = addr

    def set_tensor_a(self, tensor, transpose: bool | None = None) -> None:
        loc = user_location()
        current_core().call_overhead()
        self._a = _as_global(tensor, loc)
        if transpose is not None:
            self._trans_a = bool(transpose)
        self._cursor = 0

    def set_tensor_b(self, tensor, transpose: bool | None = None) -> None:
        loc = user_location()
        current_core().call_overhead()
        self._b = _as_global(tensor, loc)
        if transpose is not None:
            self._trans_b = bool(transpose)
        self._cursor = 0

    def set_bias(self, tensor) -> None:
        loc = user_location()
        current_core().call_overhead()
        if self.bias_type is None:
            raise KernelError("set_bias on a Matmul declared without a bias type "
                              "(Matmul(..., bias=MatmulType(...)))", loc)
        self._bias = _as_global(tensor, loc)

    def disable_bias(self) -> None:
        current_core().call_overhead()
        self._bias = None

    def set_org_shape(self, org_m, org_n, org_ka, org_kb=None, org_kc=None) -> None:
        current_core().call_overhead()
        kb = org_ka if org_kb is None else org_kb
        kc = org_n if org_kc is None else org_kc
        self._org = (int(org_m), int(org_n), int(org_ka), int(kb), int(kc))

    def set_single_shape(self, single_m, single_n, single_k) -> None:
        self.set_tail(single_m, single_n, single_k)

    def set_tail(self, tail_m=-1, tail_n=-1, tail_k=-1) -> None:
        """This core's region is ``tail_m x tail_n`` with K ``tail_k`` (values <= 0 keep the
        tiling's single-core sizes)."""
        loc = user_location()
        current_core().call_overhead()
        t = self._require_tiling(loc)
        single = [t.single_core_m, t.single_core_n, t.single_core_k or t.k_a]
        for i, v in enumerate((tail_m, tail_n, tail_k)):
            if int(v) > 0:
                single[i] = int(v)
        self._single = single
        self._cursor = 0

    def set_quant_scalar(self, quant_scalar) -> None:
        """One quantisation scale for all of C (Ascend C ``SetQuantScalar``): the low 32 bits
        of the uint64 are the fp32 scale. It is applied where the FixPipe's conversion of the
        accumulators to C's type is a quantising one (int8 A/B to an fp16, bf16 or int8 C;
        float A/B to an int8 C); other conversions take no scale, so there it changes nothing."""
        current_core().call_overhead()
        bits = np.array([int(quant_scalar) & 0xFFFFFFFF], np.uint32)
        self._quant = ("scalar", bits.view(np.float32)[0])

    def set_quant_vector(self, quant_tensor) -> None:
        """One quantisation scale per column of C (Ascend C ``SetQuantVector``): a uint64 GM
        tensor from this core's first column, each word's low 32 bits an fp32 scale; applied
        as :meth:`set_quant_scalar` says. The FixPipe fetches each block's scales from GM."""
        loc = user_location()
        current_core().call_overhead()
        gm = _as_global(quant_tensor, loc)
        if gm.dtype.name != "uint64":
            raise KernelError(f"set_quant_vector: the scales are uint64 words, got a "
                              f"{gm.dtype.name} tensor", loc)
        self._quant = ("vector", gm)

    def set_hf32(self, enable_hf32=False, trans_mode=0) -> None:
        """``set_hf32(enable_hf32=False, trans_mode=0)``: with ``enable_hf32`` the Cube rounds
        fp32 A and B to HF32 before multiplying (ties to even for ``trans_mode`` 0, away from
        zero for 1) and consumes K twice as fast; other input types are not affected."""
        loc = user_location()
        current_core().call_overhead()
        mode = int(trans_mode)
        if mode not in HF32_TRANS_MODES:
            raise KernelError(f"set_hf32: trans_mode {mode} is not one of "
                              f"{sorted(HF32_TRANS_MODES)}", loc)
        self._hf32 = HF32_TRANS_MODES[mode] if bool(enable_hf32) else None

    def set_sparse_index(self, index_global) -> None:
        """``set_sparse_index(index_global)``: a 4:2 sparse Matmul. B (set_tensor_b) is then
        the dense K/2 x N matrix kept of the K x N one (two of every four K positions), and
        ``index_global`` (uint8 GM) the 2-bit index of each dense B element, in int8 NZ order
        (see :func:`_nz_indices`); element ``(j, c)`` of B multiplies the A element its index
        selects from the group of four ``4*(j//2) ..`` (the rule of ``mmad_with_sparse``).
        int8 A and B; the 910B / 910_93 Cube has the sparse path."""
        loc = user_location()
        current_core().call_overhead()
        gm = _as_global(index_global, loc)
        if gm.dtype.name not in ("uint8", "int8"):
            raise KernelError(f"set_sparse_index: the index matrix is uint8, got a "
                              f"{gm.dtype.name} tensor", loc)
        if self.a_type.dtype.name != "int8":
            raise KernelError(f"set_sparse_index: a 4:2 sparse Matmul takes int8 A and B, this "
                              f"one is {self.a_type.dtype.name}", loc)
        self._sparse = gm

    def _block_quant(self, aic, cols: slice, ready: float, loc) -> tuple:
        """(scale, C's numpy type, cycle the scales are in place) of a block whose columns
        are ``cols`` of the region; (None, None, ready) without a quantisation."""
        if self._quant is None or not _quantises(self.a_type.dtype, self.c_type.dtype):
            return None, None, ready
        kind, value = self._quant
        c_dtype = self.c_type.dtype.np_dtype
        if kind == "scalar":
            return value, c_dtype, ready
        n = self._shape(loc)[1]
        words = np.asarray(value.elements(0, n, loc), np.uint64)[cols]
        scales = (words & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
        fetch = aic.execute(Copy(None, None, Bursts.contiguous(words.size * 8), loc,
                                 "matmul_quant_vector", path="GM->L1", after=ready))
        return scales, c_dtype, max(ready, fetch.done)

    def end(self) -> None:
        current_core().call_overhead()
        self._cursor = 0
        self._block = None

    # ------------------------------------------------------------------ geometry
    def _require_tiling(self, loc) -> _Tiling:
        if self.tiling is None:
            raise KernelError("Matmul used before it has a tiling: pass it to "
                              "asc.adv.register_matmul(pipe, workspace, mm, tiling) or call "
                              "mm.init(tiling)", loc)
        return self.tiling

    def _shape(self, loc) -> tuple[int, int, int]:
        t = self._require_tiling(loc)
        if self._single is not None:
            return tuple(self._single)
        return t.single_core_m, t.single_core_n, t.single_core_k or t.k_a

    def _org_shape(self) -> tuple[int, int, int, int, int]:
        t = self.tiling
        return self._org or (t.m, t.n, t.k_a, t.k_b or t.k_a, t.n)

    def _grid(self, loc) -> tuple[int, int, int]:
        m, n, k = self._shape(loc)
        t = self.tiling
        return -(-m // t.base_m), -(-n // t.base_n), -(-k // t.base_k)

    def _order(self) -> int:
        forced = self.config.iterate_order
        return int(forced) if forced != IterateOrder.UNDEF else self.tiling.iterate_order

    def _coords(self, count: int, mb: int, nb: int) -> tuple[int, int]:
        if self._order() == 0:  # M first: walk down a column of blocks, then the next column
            return count % mb, count // mb
        return count // nb, count % nb

    def _operands(self, loc):
        """Readers of this core's A [M, K], B [K, N] and bias [N] (numpy views of GM), for the
        region's product."""
        if self._a is None or self._b is None:
            raise KernelError("Matmul needs set_tensor_a and set_tensor_b before computing", loc)
        m, n, k = self._shape(loc)
        org_m, org_n, ka, kb, _ = self._org_shape()
        a, b, bias_t = self._a, self._b, self._bias
        trans_a, trans_b = self._trans_a, self._trans_b
        if self._sparse is not None:  # B holds the dense half of K
            k_b, kb = k // 2, kb // 2
        else:
            k_b = k

        def read_a():
            return self._read(a, self.a_type, trans_a, m, k, org_m, ka, loc)

        def read_b():
            return self._read(b, self.b_type, trans_b, k_b, n, kb, org_n, loc)

        def read_bias():
            return bias_t.elements(0, n, loc).astype(_acc_type(self.a_type.dtype))

        return read_a, read_b, None if bias_t is None else read_bias

    @staticmethod
    def _read(t, mtype, trans, rows, cols, org_rows, org_cols, loc) -> np.ndarray:
        """A logical (rows x cols) operand; stored transposed when ``trans``."""
        if mtype.format == CubeFormat.NZ:
            if trans:  # NZ fractals of the stored (cols x rows) matrix, org_cols rows tall
                return _nz_matrix(t, cols, rows, org_cols, loc).T
            return _nz_matrix(t, rows, cols, org_rows, loc)
        if trans:
            return _gm_matrix(t, cols, rows, org_rows, loc).T
        return _gm_matrix(t, rows, cols, org_cols, loc)

    def _product(self, loc):
        """The region's product, started on the machine's cube datapath (for float inputs on a
        worker thread, while the simulation goes on); ``_finished`` waits for it."""
        sparse = self._sparse
        if sparse is not None:
            if self._shape(loc)[2] % 4:
                raise KernelError(f"a 4:2 sparse Matmul needs K a multiple of 4, got "
                                  f"{self._shape(loc)[2]}", loc)
            _, n, k = self._shape(loc)
            org_kb = self._org_shape()[3] // 2

            def indices():
                return _nz_indices(sparse, k // 2, n, org_kb, loc)
        hf32 = self._hf32 if self.a_type.dtype.name == "float32" else None
        return current_core().execute(CubeProduct(*self._operands(loc), loc, hf32=hf32,
                                                  sparse_index=None if sparse is None
                                                  else indices))

    # ------------------------------------------------------------------ cores and timing
    def _aic(self, client, loc):
        if client.kind == "AIC":
            return client
        aic = client.launch.partner(client, "AIC")
        if aic is None:
            raise KernelError("a Matmul on an AIV needs its AIC, but this kernel runs "
                              f"{client.launch.kind}; call asc.adv.register_matmul so the kernel "
                              "is built as a MIX kernel", loc)
        return aic

    @staticmethod
    def _message(client, aic, loc) -> float:
        """Cycle at which a request sent now by ``client`` reaches the AIC."""
        return client.execute(Request(aic.core_id, loc))

    @staticmethod
    def _answer(aic, client, pipe: str, sent: float, loc) -> None:
        """The AIC's reply, sent at cycle ``sent``, reaches ``client``'s ``pipe``."""
        client.execute(Handoff(aic.core_id, "FIX", pipe, sent, loc))

    def _load(self, aic, op: str, idx: int, kt: int, loc, shape: tuple[int, int, int],
              k_tiles: int) -> float:
        """Make operand ``op``'s slab for block ``idx`` and K step ``kt`` resident in L1 (MTE2
        GM->L1 if it is not); returns when it is there. ``shape`` is the core's (M, N, K) and
        ``k_tiles`` its number of K steps (the caller has them at hand)."""
        t = self.tiling
        m, n, k = shape
        base, extent = (t.base_m, m) if op == "a" else (t.base_n, n)
        cover = max(1, t.step_m if op == "a" else t.step_n)
        k_step = max(1, t.step_k_a if op == "a" else t.step_k_b)
        if k_step >= k_tiles:  # the whole K extent stays: the slab spans ``cover`` blocks
            first = idx // cover * cover
            key, k_lo, k_len = (first, 0), 0, k
        else:  # K streams through: one block's slab per ``k_step`` base_k steps
            first, cover = idx, 1
            slab = kt // k_step
            key, k_lo = (idx, slab), slab * k_step * t.base_k
            k_len = min(k_step * t.base_k, k - k_lo)
        if op == "b" and self._sparse is not None:  # B holds the dense half of K
            k_lo, k_len = k_lo // 2, -(-k_len // 2)
        resident = self._resident[op]
        if resident is not None and resident[0] == key:
            return resident[1]
        aic.execute(MatmulBookkeeping("l1_load", self._const_tiling, loc))
        reads = self._l1_reads[op]
        if resident is not None:  # the current slab joins the older ones
            reads.append(self._l1_reading[op])
        free = reads[0] if len(reads) == reads.maxlen else 0.0
        rows = min(cover * base, extent - first * base)
        mtype = self.a_type if op == "a" else self.b_type
        nbytes = rows * k_len * mtype.dtype.sizeof()
        runs = rows  # ND2NZ moves row by row
        if mtype.format == CubeFormat.NZ:  # one run per 32-byte column block of the stored
            trans = self._trans_a if op == "a" else self._trans_b  # matrix the slab touches
            along = k_len if (op == "a") != trans else rows
            runs = -(-along * mtype.dtype.sizeof() // C0_BYTES)
        src = self._a if op == "a" else self._b
        gm = self._slab_rows(op, first * base, rows, k_lo, k_len)
        np_dtype = mtype.dtype.np_dtype
        if gm is None:  # NZ fractal runs are costed without addresses
            region = Region(src.buffer, src.byte_offset, nbytes // np_dtype.itemsize, np_dtype)
            bursts, l2 = Bursts.contiguous(nbytes), ()
        else:
            # The slab's rows at their pitch: cores reading side by side column slabs of B
            # (or row slabs of a transposed A) are then one pattern, not overlapping hulls.
            slab = gm[1]
            region = Region(src.buffer, slab.first, slab.nbytes // np_dtype.itemsize, np_dtype)
            bursts, l2 = Bursts(0, 0, slab.width, slab.pitch, slab.width, slab.count), None
        instr = aic.execute(Copy(region, None, bursts, loc, f"matmul_load_{op}", path="GM->L1",
                                 gm=l2, runs=runs, after=free))
        done = instr.done
        if op == "b" and self._sparse is not None:  # its indices: a 2-bit one per B byte
            index = aic.execute(Copy(None, None, Bursts.contiguous(-(-nbytes // 4)), loc,
                                     "matmul_load_sparse_index", path="GM->L1", gm=()))
            done = max(done, index.done)
        self._resident[op] = (key, done)
        return done

    def _slab_rows(self, op: str, first: int, count: int, k_lo: int, k_len: int):
        """``(buffer id, ByteRows)`` of the GM bytes of operand ``op``'s slab (``count`` rows
        of A or columns of B from ``first``, K from ``k_lo``), for the L2 model; None for NZ
        operands, whose fractal runs are costed without addresses, and for empty slabs."""
        mtype = self.a_type if op == "a" else self.b_type
        if mtype.format == CubeFormat.NZ:
            return None
        org_m, org_n, ka, kb, _ = self._org_shape()
        if op == "a":  # logical A [M, K]: rows ``first..``, columns ``k_lo..``
            trans, rows, cols, pitch = self._trans_a, (first, count), (k_lo, k_len), ka
            pitch_t = org_m
            t = self._a
        else:  # logical B [K, N]: rows ``k_lo..``, columns ``first..``
            trans, rows, cols, pitch = self._trans_b, (k_lo, k_len), (first, count), org_n
            pitch_t = kb // 2 if self._sparse is not None else kb  # a sparse B: half of K
            t = self._b
        if trans:  # stored transposed: a stored row is a logical column
            rows, cols, pitch = cols, rows, pitch_t
        if rows[1] <= 0 or cols[1] <= 0:
            return None
        size = mtype.dtype.sizeof()
        return t.buffer.id, ByteRows(t.byte_offset + (rows[0] * pitch + cols[0]) * size,
                                     cols[1] * size, pitch * size, rows[1])

    def _charge_block(self, aic, client, mi: int, ni: int, arrival: float, loc) -> float:
        """Charge the AIC for computing block (mi, ni) into L0C, once ``client``'s request has
        arrived at cycle ``arrival``; returns when FixPipe may start reading the block.

        The first Mmad waits until FixPipe has read out the L0C buffer it overwrites. Without
        UnitFlag FixPipe starts once the last Mmad is done; with it (``en_unit_flag``) Cube
        and FixPipe hand the buffer over unit by unit, so FixPipe starts while the last Mmad
        still runs, early enough to finish reading no sooner than the Mmad writes."""
        t = self.tiling
        shape = m, n, k = self._shape(loc)
        k_tiles = -(-k // t.base_k)
        rows = min(t.base_m, m - mi * t.base_m)
        cols = min(t.base_n, n - ni * t.base_n)
        esize = self.a_type.dtype.sizeof()
        dtype = self.a_type.dtype.name
        aic.execute(Handoff(client.core_id, "S", "S", arrival, loc, link="none"))
        bias_ready = 0.0
        if self._bias is not None:
            bias = Bursts.contiguous(cols * 4)
            load = aic.execute(Copy(None, None, bias, loc, "matmul_load_bias", path="GM->L1",
                                    gm=()))
            bias_ready = aic.execute(Copy(None, None, bias, loc, "matmul_bias_table",
                                          path="L1->BT", after=load.done)).done
        # An operand whose slab holds the whole K extent is loaded (or found in L1) once per
        # block: _load would find the same slab resident at every later K step.
        sparse = self._sparse is not None
        a_streams = max(1, t.step_k_a) < k_tiles
        b_streams = max(1, t.step_k_b) < k_tiles
        full = len(self._l0c_free) == self._l0c_free.maxlen
        l0c_free = self._l0c_free[0] if full else 0.0
        step = MatmulBookkeeping("k_step", self._const_tiling, loc)
        multi_load = self.config.do_multi_data_load
        l1_reading, hf32 = self._l1_reading, self._hf32
        # The L1->L0A and L1->L0B bursts of each K depth (most steps have the full base_k).
        l0_bursts: dict[int, tuple] = {}
        mmad = None
        unit_flag = self.config.en_unit_flag
        ahead = max(1, aic.timing.pipe_queue_depth // MTE1_ENTRIES_PER_K_STEP)
        issue = arrival  # when the scalar unit could issue the block's FixPipe (UnitFlag)
        for kt in range(k_tiles):
            aic.execute(step)
            depth = min(t.base_k, k - kt * t.base_k)
            if kt == 0 or a_streams:
                a_ready = self._load(aic, "a", mi, kt, loc, shape, k_tiles)
            if kt == 0 or b_streams:
                b_ready = self._load(aic, "b", ni, kt, loc, shape, k_tiles)
            b_depth = -(-depth // 2) if sparse else depth  # a sparse B: the dense half of K
            bursts = l0_bursts.get(depth)
            if bursts is None:
                bursts = l0_bursts[depth] = (Bursts.contiguous(rows * depth * esize),
                                             Bursts.contiguous(b_depth * cols * esize))
            la = aic.execute(Copy(None, None, bursts[0], loc, "matmul_load_l0a", path="L1->L0A",
                                  after=a_ready))
            lb = aic.execute(Copy(None, None, bursts[1], loc, "matmul_load_l0b", path="L1->L0B",
                                  after=b_ready))
            if multi_load:
                l1_reading["a"], l1_reading["b"] = la.end, lb.end
            else:  # NORM hands L1 over per K step: both operands' L1->L0 moves done
                l1_reading["a"] = l1_reading["b"] = max(la.end, lb.end)
            if sparse:  # and its indices, into the Cube's index buffer
                lb = aic.execute(Copy(None, None, Bursts.contiguous(-(-b_depth * cols // 4)),
                                      loc, "matmul_load_sparse_index", path="L1->L0B",
                                      after=lb.done))
            mmad = aic.execute(Mmad(rows, cols, depth, dtype, loc, hf32=hf32, sparse=sparse,
                                    after=max(la.done, lb.done, bias_ready, l0c_free)))
            if unit_flag and kt == k_tiles - 1 - ahead:
                # The scalar unit issues the FixPipe right after the block's last Mmad; it is
                # that far ahead only while the MTE1 queue holds the steps in between, and
                # MTE1 itself keeps within the two L0 buffers of the Cube: so about ``ahead``
                # K steps ahead of the Cube.
                issue = mmad.start
        if mmad is None:
            return arrival
        if not unit_flag:
            self._hold_until = 0.0
            return mmad.done
        # UnitFlag: FixPipe starts when issued and holds the FIX pipe until the last Mmad has
        # written its first units, then moves them as they come (what msprof's
        # aic_fixpipe_time counts: asc-devkit matmul_high_performance, case 7 -> 8); it
        # finishes reading no sooner than the Mmad writes.
        self._hold_until = max(mmad.start, mmad.done - aic.costs.l0c_read_cycles(rows * cols * 4))
        return min(max(issue, arrival), self._hold_until)

    def _fix(self, aic, path: str, rows: int, cols: int, ready: float, loc, dst=None,
             stride: int = 0, values=None, atomic=None):
        """FixPipe a block of C out of L0C to ``dst`` (rows ``stride`` apart; None: a workspace
        whose bytes the model does not hold), writing ``values`` there. The L0C buffer is
        free for the next block once it has been read out."""
        fix = aic.execute(FixPipe(dst, rows, cols, loc, dst_stride=stride, values=values,
                                  atomic=atomic, path=path, dtype=self.c_type.dtype.np_dtype,
                                  after=ready, hold_until=self._hold_until))
        self._hold_until = 0.0
        self._l0c_free.append(fix.end)
        return fix

    # ------------------------------------------------------------------ iterate
    def iterate(self, en_partial_sum: bool = False, sync: bool = True, local_c_matrix=None):
        if en_partial_sum:
            raise KernelError("iterate(en_partial_sum=True) is not supported by the simulator",
                              user_location())
        return _Iteration(self)

    def _step(self, loc) -> bool:
        """Compute the next base block; False (and rewind) when every block is done."""
        client = current_core()
        mb, nb, _ = self._grid(loc)
        if self._cursor >= mb * nb:
            self._cursor = 0
            self._region_product = None
            return False
        if self._cursor == 0 or self._region_product is None:
            # One product for the core's whole region, sliced per block below: a numpy call
            # per block costs far more than the arithmetic at these sizes.
            self._region_product = self._product(loc)
            m, n, _ = self._shape(loc)
            self._region_rows, self._region_cols = range(m), range(n)
        mi, ni = self._coords(self._cursor, mb, nb)
        self._cursor += 1
        t = self.tiling
        rs = slice(mi * t.base_m, (mi + 1) * t.base_m)
        cs = slice(ni * t.base_n, (ni + 1) * t.base_n)
        shape = (len(self._region_rows[rs]), len(self._region_cols[cs]))
        aic = self._aic(client, loc)
        ready = self._charge_block(aic, client, mi, ni, self._message(client, aic, loc), loc)
        scale, c_dtype, ready = self._block_quant(aic, cs, ready, loc)
        self._block = _Block(mi, ni, self._region_product, rs, cs, shape, ready, scale, c_dtype)
        return True

    def get_tensor_c(self, tensor=None, en_atomic: int = 0, en_sequential_write: bool = False,
                     sync: bool = True, optional_tensor=None, **_ignored):
        """Write the block of the current iteration to ``tensor`` (UB or GM)."""
        loc = user_location()
        client = current_core()
        block = self._block
        if block is None:
            raise KernelError("get_tensor_c outside an iterate() loop: no block has been "
                              "computed", loc)
        t = self.tiling
        rows, cols = block.shape
        aic = self._aic(client, loc)
        if tensor is None:
            return self._block_to_workspace(client, aic, block, loc)
        if isinstance(tensor, LocalTensor):
            self._to_ub(client, aic, tensor, block, en_atomic, en_sequential_write, loc)
            return None
        gm = _as_global(tensor, loc)
        if en_sequential_write:
            off, stride = 0, t.base_n
        else:
            off = block.mi * t.base_m * self._org_shape()[4] + block.ni * t.base_n
            stride = self._org_shape()[4]
        fix = self._fix(aic, "L0C->GM", rows, cols, block.ready, loc, gm[off:].region(), stride,
                        block.values, _atomic(en_atomic, loc))
        if sync and client is not aic:
            self._answer(aic, client, "S", fix.done, loc)
        return None

    def _check_ub_target(self, api: str, client, tensor: LocalTensor, loc) -> None:
        """C reaches a local tensor only in an AIV's UB, and only in C's own type."""
        if client.kind != "AIV" or tensor.position not in UB_POSITIONS:
            raise KernelError(f"{api} to TPosition.{tensor.position.name} on an "
                              f"{client.kind}: C reaches the AIV's UB (VECIN, VECOUT or "
                              "VECCALC) only", loc)
        if tensor.dtype != self.c_type.dtype:
            raise KernelError(f"{api}: the tensor is {tensor.dtype.name} but C is "
                              f"{self.c_type.dtype.name}", loc)

    def _to_ub(self, client, aic, tensor: LocalTensor, block: _Block, en_atomic, seq, loc):
        t = self.tiling
        self._check_ub_target("get_tensor_c", client, tensor, loc)
        rows, cols = block.shape
        if seq:
            off, stride = 0, t.base_n
        else:
            stride = t.single_core_n
            off = block.mi * t.base_m * stride + block.ni * t.base_n
        ub = tensor[off:].region()
        atomic = _atomic(en_atomic, loc)
        if client.soc.has_path("L0C->UB"):  # 950: FixPipe writes the AIV's UB directly
            # The request names the UB buffer, so the AIC writes it only after the AIV has
            # asked for it (and after whatever the AIV did to that buffer before asking).
            request = self._message(client, aic, loc)
            fix = self._fix(aic, "L0C->UB", rows, cols, max(block.ready, request), loc, ub,
                            stride, block.values, atomic)
            self._answer(aic, client, "V", fix.done, loc)
        else:  # 910B: FixPipe to the GM workspace, flag to the AIV, MTE2 GM->UB on the AIV
            fix = self._fix(aic, "L0C->GM", rows, cols, block.ready, loc)
            self._answer(aic, client, "S", fix.done, loc)
            size = tensor.dtype.sizeof()
            bursts = Bursts(0, 0, cols * size, cols * size, stride * size, rows)
            copy = client.execute(Copy(None, ub, bursts, loc, "get_tensor_c", path="GM->UB",
                                       runs=1 if seq else rows, values=block.values,
                                       atomic=atomic))
            # get_tensor_c returns with the block in UB: the vector unit may read it at once.
            client.execute(Handoff(client.core_id, "MTE2", "V", copy.done, loc, link="flag"))
        self._answer(aic, client, "S", fix.done, loc)

    def _block_to_workspace(self, client, aic, block: _Block, loc) -> GlobalTensor:
        if self.workspace is None:
            raise KernelError("get_tensor_c() without a tensor returns the block in the Matmul "
                              "workspace, but none was given (register_matmul's workspace or "
                              "set_workspace)", loc)
        ws = _as_global(self.workspace, loc)
        rows, cols = block.shape
        out = GlobalTensor()
        out.buffer, out.offset, out.dtype = ws.buffer, 0, self.c_type.dtype
        out.offset = ws.byte_offset // out.dtype.sizeof()
        out.size = rows * cols
        fix = self._fix(aic, "L0C->GM", rows, cols, block.ready, loc, out.region(), cols,
                        block.values)
        if client is not aic:
            self._answer(aic, client, "S", fix.done, loc)
        return out

    # ------------------------------------------------------------------ iterate_all
    def iterate_all(self, tensor, en_atomic: int = 0, sync: bool = True,
                    en_sequential_write=None, wait_iterate_all=None, fake_msg=None) -> None:
        """Compute this core's whole region and write it to ``tensor`` (GM, row pitch of C)."""
        loc = user_location()
        if isinstance(tensor, LocalTensor):
            raise KernelError("iterate_all writes C to GM; for UB use iterate() and "
                              "get_tensor_c", loc)
        self._region_to_gm(_as_global(tensor, loc), self._org_shape()[4], en_atomic, sync, loc)

    def _region_to_gm(self, gm: GlobalTensor, stride: int, en_atomic, sync, loc) -> float:
        """Compute this core's whole region and FixPipe it to ``gm``, rows ``stride`` elements
        apart; return the cycle at which its last block is written."""
        client = current_core()
        m, n, _ = self._shape(loc)
        mb, nb, _ = self._grid(loc)
        atomic = _atomic(en_atomic, loc)
        product = self._product(loc)  # (computing while the blocks are timed)
        aic = self._aic(client, loc)
        arrival = self._message(client, aic, loc)
        t = self.tiling
        done = arrival
        for count in range(mb * nb):
            mi, ni = self._coords(count, mb, nb)
            ready = self._charge_block(aic, client, mi, ni, arrival, loc)
            rows = min(t.base_m, m - mi * t.base_m)
            cols = min(t.base_n, n - ni * t.base_n)
            r0, c0 = mi * t.base_m, ni * t.base_n
            scale, c_dtype, ready = self._block_quant(aic, slice(c0, c0 + cols), ready, loc)
            result = _finished(product)
            values = (None if result is None
                      else _quantised(result[r0:r0 + rows, c0:c0 + cols], scale, c_dtype))
            fix = self._fix(aic, "L0C->GM", rows, cols, ready, loc,
                            gm[r0 * stride + c0:].region(), stride, values, atomic)
            done = max(done, fix.done)
        self._block = None
        if client is not aic:
            if sync:
                self._answer(aic, client, "S", done, loc)
            else:
                self._pending = done
        self._pending_from = aic
        return done

    # ------------------------------------------------------------------ batches
    def set_batch_num(self, batch_a: int, batch_b: int) -> None:
        """``set_batch_num(batch_a, batch_b)``: the batch counts ``iterate_batch`` uses when it
        is not given them."""
        self._batch_num = (int(batch_a), int(batch_b))

    def iterate_batch(self, tensor, batch_a: int | None = None, batch_b: int | None = None,
                      en_sequential_write: bool = False, matrix_stride_a: int = 0,
                      matrix_stride_b: int = 0, matrix_stride_c: int = 0,
                      en_partial_sum: bool = False, en_atomic: int = 0, sync: bool = True,
                      wait_iterate_batch=None) -> None:
        """``iterate_batch(c, batch_a, batch_b, en_sequential_write=False, matrix_stride_a=0,
        matrix_stride_b=0, matrix_stride_c=0)``: ``max(batch_a, batch_b)`` products of this
        core's region, the matrices of each operand one after the other in GM (NORMAL layout;
        a stride of 0 means one whole matrix's elements, M x K, K x N and M x N of the tiling);
        the smaller batch is broadcast over the larger (it must divide it)."""
        loc = user_location()
        if en_partial_sum:
            raise KernelError("iterate_batch(en_partial_sum=True) is not supported by the "
                              "simulator", loc)
        if batch_a is None or batch_b is None:
            batch_a, batch_b = self._batch_num
        if isinstance(tensor, LocalTensor):
            raise KernelError("iterate_batch writes C to GM in this model; give a GlobalTensor",
                              loc)
        batch, stride_a, stride_b = self._batch_operands("iterate_batch", batch_a, batch_b,
                                                         matrix_stride_a, matrix_stride_b, loc)
        org_m, _, _, _, c_pitch = self._org_shape()
        stride_c = int(matrix_stride_c) or org_m * c_pitch
        gm = _as_global(tensor, loc)
        a0, b0 = self._a, self._b
        try:
            for i in range(batch):
                self._a = a0[i // (batch // int(batch_a)) * stride_a:]
                self._b = b0[i // (batch // int(batch_b)) * stride_b:]
                self._region_to_gm(gm[i * stride_c:], c_pitch, en_atomic, sync, loc)
        finally:
            self._a, self._b = a0, b0

    def _batch_operands(self, api: str, batch_a, batch_b, matrix_stride_a, matrix_stride_b,
                        loc) -> tuple[int, int, int]:
        """Check one batched call's counts and operands; return its number of products and the
        element distances between consecutive A and B matrices (0 given: one whole matrix,
        M x K and K x N of the tiling's original shape, which all cores share)."""
        layouts = {self.a_type.layout, self.b_type.layout, self.c_type.layout}
        if layouts - {LayoutMode.NONE, LayoutMode.NORMAL}:
            # The batched layouts interleave heads and sequence positions in GM; the tiling's
            # layout fields that describe them are not modelled, and a NORMAL reading of such
            # operands would be silently wrong.
            raise KernelError(f"{api}: the BSNGD, SBNGD and BNGS1S2 layouts are not supported "
                              "by the simulator; operands in NORMAL layout only", loc)
        batch_a, batch_b = int(batch_a), int(batch_b)
        if batch_a <= 0 or batch_b <= 0:
            raise KernelError(f"{api}: batch counts must be positive, got {batch_a}, "
                              f"{batch_b}", loc)
        batch = max(batch_a, batch_b)
        if batch % batch_a or batch % batch_b:
            raise KernelError(f"{api}: batch_a={batch_a} and batch_b={batch_b}: the "
                              "smaller must divide the larger to be broadcast", loc)
        if self._a is None or self._b is None:
            raise KernelError("Matmul needs set_tensor_a and set_tensor_b before computing", loc)
        self._require_tiling(loc)
        org_m, org_n, ka, kb, _ = self._org_shape()
        return batch, int(matrix_stride_a) or org_m * ka, int(matrix_stride_b) or kb * org_n

    def iterate_n_batch(self, batch_loop: int, batch_a: int, batch_b: int,
                        en_sequential_write: bool, matrix_stride_a: int = 0,
                        matrix_stride_b: int = 0, matrix_stride_c: int = 0, sync: bool = True,
                        wait_iterate_batch: bool = False) -> None:
        """``iterate_n_batch(batch_loop, batch_a, batch_b, en_sequential_write,
        matrix_stride_a=0, matrix_stride_b=0, matrix_stride_c=0, sync=True,
        wait_iterate_batch=False)``: ``batch_loop`` batched products in one call, each of
        ``max(batch_a, batch_b)`` matrices as in :meth:`iterate_batch` (operand matrices one
        after the other in GM, NORMAL layout). The C matrices go to the Matmul workspace,
        ``single M x single N`` each, packed one after the other, batched product after batched
        product. ``sync=True`` returns when all are written; ``sync=False`` returns at once,
        and each :meth:`get_batch_tensor_c` then waits for the next batched product (or
        :meth:`wait_iterate_batch` for all of them). ``matrix_stride_c`` is reserved, as on
        the device, and unused; so is ``en_sequential_write``, since the workspace always holds
        the C matrices packed."""
        loc = user_location()
        loops = int(batch_loop)
        if loops <= 0:
            raise KernelError(f"iterate_n_batch: batch_loop must be positive, got {loops}", loc)
        batch, stride_a, stride_b = self._batch_operands("iterate_n_batch", batch_a, batch_b,
                                                         matrix_stride_a, matrix_stride_b, loc)
        if self.workspace is None:
            raise KernelError("iterate_n_batch writes C to the Matmul workspace, but none was "
                              "given (register_matmul's workspace or set_workspace)", loc)
        ws = _as_global(self.workspace, loc)
        out = GlobalTensor()
        out.buffer, out.dtype = ws.buffer, self.c_type.dtype
        out.offset = ws.byte_offset // out.dtype.sizeof()
        out.size = None  # up to the end of the workspace buffer
        m, n, _ = self._shape(loc)
        per_a, per_b = batch // int(batch_a), batch // int(batch_b)
        a0, b0 = self._a, self._b
        finished = []
        try:
            for loop in range(loops):
                for i in range(batch):
                    self._a = a0[(loop * int(batch_a) + i // per_a) * stride_a:]
                    self._b = b0[(loop * int(batch_b) + i // per_b) * stride_b:]
                    done = self._region_to_gm(out[(loop * batch + i) * m * n:], n, 0, sync, loc)
                finished.append(done)
        finally:
            self._a, self._b = a0, b0
        # get_batch_tensor_c hands out the batched products in order, from the workspace
        self._n_batch = _NBatch(out, batch, m * n, n, tuple(finished), 0)

    def get_batch_tensor_c(self, *args, **kwargs):
        """``get_batch_tensor_c(batch_a, batch_b, en_sequential_write=False, sync=True)`` ->
        GlobalTensor, or ``get_batch_tensor_c(tensor, batch_a, batch_b,
        en_sequential_write=False, sync=True)`` into a UB tensor: the next batched product of
        an ``iterate_n_batch(..., sync=False)``, ``max(batch_a, batch_b) x single M x
        single N`` elements, once it is written. As in pyasc only ``sync=False`` is accepted.
        The UB form moves the elements from the workspace with MTE2 (rows padded to 32 bytes,
        the ND_ALIGN rule)."""
        loc = user_location()
        tensor = kwargs.pop("tensor", None)
        if tensor is None and args and isinstance(args[0], LocalTensor):
            tensor, args = args[0], args[1:]
        names = ("batch_a", "batch_b", "en_sequential_write", "sync")
        if len(args) > len(names):
            raise CallFormError(f"get_batch_tensor_c takes at most {len(names)} arguments "
                                f"besides the tensor, got {len(args)}", loc)
        given = dict(zip(names, args))
        for name in kwargs:
            if name not in names or name in given:
                raise CallFormError(f"get_batch_tensor_c: unexpected or repeated argument "
                                    f"{name!r}", loc)
        given.update(kwargs)
        if "batch_a" not in given or "batch_b" not in given:
            raise CallFormError("get_batch_tensor_c needs batch_a and batch_b", loc)
        if given.get("sync", True):
            raise CallFormError("get_batch_tensor_c supports sync=False only (it reads the "
                                "products of an asynchronous iterate_n_batch)", loc)
        state = self._n_batch
        if state is None or state.taken >= len(state.finished):
            raise KernelError("get_batch_tensor_c: no batched product left to read (call "
                              "iterate_n_batch(..., sync=False) first; each call reads one of "
                              "its batch_loop products)", loc)
        batch = max(int(given["batch_a"]), int(given["batch_b"]))
        if batch != state.batch:
            raise KernelError(f"get_batch_tensor_c: max(batch_a, batch_b) = {batch}, but each "
                              f"batched product of iterate_n_batch has {state.batch} "
                              "matrices", loc)
        client = current_core()
        index = state.taken
        self._n_batch = state._replace(taken=index + 1)
        if self._pending_from is not None and self._pending_from is not client:
            self._answer(self._pending_from, client, "S", state.finished[index], loc)
        size = state.batch * state.matrix
        src = state.workspace[index * size:]
        src.size = size
        if tensor is None:
            return src
        return self._batch_to_ub(client, tensor, src, state, loc)

    def _batch_to_ub(self, client, tensor: LocalTensor, src: GlobalTensor, state, loc) -> None:
        self._check_ub_target("get_batch_tensor_c", client, tensor, loc)
        size = tensor.dtype.sizeof()
        width = state.cols * size
        pitch = -(-width // 32) * 32  # ND_ALIGN: each row starts on a 32-byte block
        rows = state.batch * state.matrix // state.cols
        copy = client.execute(Copy(src.region(), tensor.region(), Bursts(0, 0, width, width,
                                                                         pitch, rows),
                                   loc, "get_batch_tensor_c", path="GM->UB"))
        # it returns with C in UB: the vector unit may read it at once
        client.execute(Handoff(client.core_id, "MTE2", "V", copy.done, loc, link="flag"))

    def wait_iterate_batch(self) -> None:
        """Wait for an ``iterate_batch(..., sync=False)`` to finish (its last product)."""
        self.wait_iterate_all()

    # ------------------------------------------------------------------ callback data
    def set_self_define_data(self, data_ptr) -> None:
        """``set_self_define_data(data_ptr)``: data for the user callbacks of a Matmul made
        with MatmulCallBackFunc. This Matmul takes no callbacks, so nothing reads it, as on
        the device when no callback is configured; it is kept in ``self_define_data``."""
        self.self_define_data = data_ptr

    def set_user_def_info(self, tiling_ptr) -> None:
        """``set_user_def_info(tiling_ptr)``: the user tiling pointer handed to the callbacks;
        kept in ``user_def_info`` (see :meth:`set_self_define_data`)."""
        self.user_def_info = tiling_ptr

    def wait_iterate_all(self) -> None:
        """Wait for an ``iterate_all(..., sync=False)`` to finish."""
        loc = user_location()
        client = current_core()
        client.execute(ScalarOps(1, loc))
        if self._pending_from is not None and self._pending_from is not client:
            self._answer(self._pending_from, client, "S", self._pending, loc)


def register_matmul(pipe, *args, **kwargs) -> None:
    """``register_matmul(pipe, workspace, matmul, tiling=None)`` or the older
    ``register_matmul(pipe, matmul, tiling)`` (workspace from ``asc.set_sys_workspace``).

    On the AIC of a MIX kernel this is where the user code ends: the AIC runs the Matmul server
    for its two AIVs from here on.
    """
    loc = user_location()
    core = current_core()
    args = list(args)
    matmul = kwargs.pop("matmul", None)
    workspace = kwargs.pop("workspace", None)
    tiling = kwargs.pop("tiling", None)
    if kwargs:
        raise KernelError(f"register_matmul: unexpected argument(s) {sorted(kwargs)}", loc)
    if matmul is None:
        if args and isinstance(args[0], Matmul):  # older form: (pipe, matmul[, tiling])
            matmul = args.pop(0)
        elif len(args) >= 2 and isinstance(args[1], Matmul):
            workspace, matmul = args.pop(0), args.pop(0)
    elif args and workspace is None:
        workspace = args.pop(0)
    if args and tiling is None:
        tiling = args.pop(0)
    if not isinstance(matmul, Matmul) or args:
        raise KernelError("register_matmul(pipe, workspace, matmul, tiling=None) or "
                          "register_matmul(pipe, matmul, tiling)", loc)
    if workspace is None:
        workspace = core.launch.shared.get("sys_workspace")
    core.call_overhead()
    matmul.workspace = workspace
    matmul.pipe = pipe
    if tiling is None and has_static_shape(matmul.config):  # the config's compile-time tiling
        tiling = static_tiling(matmul.a_type, matmul.b_type, matmul.c_type, matmul.bias_type,
                               matmul.config, core.soc, loc)
    if tiling is not None:
        matmul.init(tiling)
    if (core.kind == "AIC" and core.launch.kind == "MIX"
            and not matmul.config.enable_mix_dual_master):
        raise ServerMode()


__all__ = ["Matmul", "register_matmul"]
