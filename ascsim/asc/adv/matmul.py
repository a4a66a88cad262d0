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

from dataclasses import dataclass

import numpy as np

from ascsim.asc.adv.matmul_config import CFG_NORM, MatmulConfig, MatmulType
from ascsim.asc.adv.matmul_static import has_static_shape, static_tiling
from ascsim.asc.basic._exec import execute
from ascsim.asc.basic.crosscore import notify_observers
from ascsim.asc.basic.data_copy import transfer_cycles
from ascsim.asc.context import current_core, current_scheduler, user_location
from ascsim.asc.enums import CubeFormat, IterateOrder, TPosition
from ascsim.asc.launcher import ServerMode
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.asc.values import GlobalAddress, RuntimeInt
from ascsim.sim.access import ByteRows, strided
from ascsim.sim.errors import KernelError
from ascsim.sim.numerics import start_cube_matmul

UB_POSITIONS = frozenset({TPosition.VECIN, TPosition.VECOUT, TPosition.VECCALC})
FRACTAL_ROWS = 16
C0_BYTES = 32  # one fractal row: 32 bytes of elements

# en_atomic value -> how FixPipe combines C with what GM already holds.
ATOMIC_OPS = {1: np.add, 2: np.maximum, 3: np.minimum}

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
    """A region's product: the array itself, or the result of a background one (a Future)."""
    return product if isinstance(product, np.ndarray) else product.result()


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

    @property
    def values(self) -> np.ndarray:
        """rows x cols, accumulator type, bias included (waits for a background product)."""
        return _finished(self.region)[self.rows, self.cols]


def _acc_type(dtype) -> np.dtype:
    return np.dtype(np.int32) if dtype.is_int() else np.dtype(np.float32)


def _gm_matrix(t: GlobalTensor, rows: int, cols: int, stride: int, loc) -> np.ndarray:
    """A (rows x cols) strided numpy view of GM from ``t``'s start (row pitch ``stride``)."""
    if rows <= 0 or cols <= 0:
        return np.zeros((max(rows, 0), max(cols, 0)), t.dtype.np_dtype)
    return _rows_view(t.elements(0, (rows - 1) * stride + cols, loc), rows, cols, stride)


def _rows_view(flat: np.ndarray, rows: int, cols: int, stride: int) -> np.ndarray:
    """``rows`` rows of ``cols`` elements, ``stride`` elements apart, as a view of the 1-D
    contiguous ``flat`` (an ndarray over its buffer: a tenth of ``as_strided``'s cost)."""
    size = flat.itemsize
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


def _write(view: np.ndarray, values: np.ndarray, en_atomic: int, loc) -> None:
    op = ATOMIC_OPS.get(int(en_atomic))
    if int(en_atomic) and op is None:
        raise KernelError(f"en_atomic={en_atomic}: 0 (none), 1 (add), 2 (max), 3 (min)", loc)
    if op is None:
        np.copyto(view, values, casting="unsafe")  # one cast, straight into the view
    else:
        view[...] = op(view.astype(np.float32), values.astype(np.float32)).astype(view.dtype)


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
        self._pending = 0.0  # completion of an asynchronous iterate_all
        self._pending_from = None  # the AIC that runs it

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

    def _operands(self, loc) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """This core's A [M, K], B [K, N] and bias [N] as numpy views of GM."""
        if self._a is None or self._b is None:
            raise KernelError("Matmul needs set_tensor_a and set_tensor_b before computing", loc)
        m, n, k = self._shape(loc)
        org_m, org_n, ka, kb, _ = self._org_shape()
        a = self._read(self._a, self.a_type, self._trans_a, m, k, org_m, ka, loc)
        b = self._read(self._b, self.b_type, self._trans_b, k, n, kb, org_n, loc)
        bias = None
        if self._bias is not None:
            bias = self._bias.elements(0, n, loc).astype(_acc_type(self.a_type.dtype))
        return a, b, bias

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

    def _product(self, a, b, bias):
        """The region's product: for float inputs a Future of it, computed on a worker thread
        while the simulation goes on (see ``start_cube_matmul``); for int8 the array."""
        acc = _acc_type(self.a_type.dtype)
        bias = None if bias is None else bias[: b.shape[1]]
        if acc == np.float32:
            return start_cube_matmul(a, b, bias)
        out = np.matmul(a.astype(acc), b.astype(acc))
        if bias is not None:
            out += bias
        return out

    # ------------------------------------------------------------------ cores and timing
    def _aic(self, client, loc):
        if client.kind == "AIC":
            return client
        for core in client.launch.cores:
            if core.kind == "AIC" and core.group == client.group:
                return core
        raise KernelError("a Matmul on an AIV needs its AIC, but this kernel runs "
                          f"{client.launch.kind}; call asc.adv.register_matmul so the kernel is "
                          "built as a MIX kernel", loc)

    def _message(self, client, aic) -> float:
        """Cycle at which a request sent now by ``client`` reaches the AIC."""
        client.call_overhead()
        if client is aic:
            return client.scalar
        # The AIC serves its two AIVs in the order their requests arrive in simulated time.
        current_scheduler().yield_to_earlier(lambda core: core.scalar)
        notify_observers(client.launch, "on_cross_core_edge", client, "S", aic, "ALL")
        return client.scalar + client.timing.cross_core_flag_latency_cycles

    @staticmethod
    def _answer(aic, client, pipe: str, until: float) -> None:
        """The AIC's reply reaches ``client``: its ``pipe`` waits until ``until``."""
        client.block_pipe(pipe, until)
        notify_observers(client.launch, "on_cross_core_edge", aic, "FIX", client, pipe)

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
        resident = self._resident[op]
        if resident is not None and resident[0] == key:
            return resident[1]
        rows = min(cover * base, extent - first * base)
        mtype = self.a_type if op == "a" else self.b_type
        nbytes = rows * k_len * mtype.dtype.sizeof()
        bursts = rows  # ND2NZ moves row by row
        if mtype.format == CubeFormat.NZ:  # one run per 32-byte column block of the stored
            trans = self._trans_a if op == "a" else self._trans_b  # matrix the slab touches
            along = k_len if (op == "a") != trans else rows
            bursts = -(-along * mtype.dtype.sizeof() // C0_BYTES)
        src = self._a if op == "a" else self._b
        gm = self._slab_rows(op, first * base, rows, k_lo, k_len)
        busy, latency = transfer_cycles("GM->L1", nbytes, bursts, core=aic, gm=gm)
        if gm is None:
            reads = ((("GM", src.buffer.id), src.byte_offset, src.byte_offset + nbytes),)
        else:
            # The slab's rows at their pitch: cores reading side by side column slabs of B
            # (or row slabs of a transposed A) are then one pattern, not overlapping hulls.
            slab = gm[1]
            reads = (strided(("GM", src.buffer.id), slab.first, slab.width,
                             slab.pitch if slab.count > 1 else 0, slab.count),)
        instr = aic.issue("MTE2", f"matmul_load_{op}", busy, latency, loc, reads=reads,
                          info=("GM->L1", nbytes))
        aic.count_bytes("GM->L1", nbytes)
        self._resident[op] = (key, instr.done)
        return instr.done

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
            pitch_t = kb
            t = self._b
        if trans:  # stored transposed: a stored row is a logical column
            rows, cols, pitch = cols, rows, pitch_t
        if rows[1] <= 0 or cols[1] <= 0:
            return None
        size = mtype.dtype.sizeof()
        return t.buffer.id, ByteRows(t.byte_offset + (rows[0] * pitch + cols[0]) * size,
                                     cols[1] * size, pitch * size, rows[1])

    def _charge_block(self, aic, mi: int, ni: int, arrival: float, loc) -> float:
        """Charge the AIC for computing block (mi, ni) into L0C; returns when it is done."""
        t = self.tiling
        shape = m, n, k = self._shape(loc)
        k_tiles = -(-k // t.base_k)
        rows = min(t.base_m, m - mi * t.base_m)
        cols = min(t.base_n, n - ni * t.base_n)
        esize = self.a_type.dtype.sizeof()
        dtype = self.a_type.dtype.name
        aic.block_pipe("S", arrival)
        bias_ready = 0.0
        if self._bias is not None:
            nbytes = cols * 4
            busy, lat = transfer_cycles("GM->L1", nbytes, 1, core=aic)
            load = aic.issue("MTE2", "matmul_load_bias", busy, lat, loc, info=("GM->L1", nbytes))
            busy, lat = transfer_cycles("L1->BT", nbytes, 1, core=aic)
            bias_ready = aic.issue("MTE1", "matmul_bias_table", busy, lat, loc, ready=load.done,
                                   info=("L1->BT", nbytes)).done
            aic.count_bytes("GM->L1", nbytes)
        done = arrival
        # Every K step but a tail has the same depth, so the same costs: work them out once.
        step_costs: dict[int, tuple] = {}
        # An operand whose slab holds the whole K extent is loaded (or found in L1) once per
        # block: _load would find the same slab resident at every later K step.
        a_streams = max(1, t.step_k_a) < k_tiles
        b_streams = max(1, t.step_k_b) < k_tiles
        for kt in range(k_tiles):
            depth = min(t.base_k, k - kt * t.base_k)
            if kt == 0 or a_streams:
                a_ready = self._load(aic, "a", mi, kt, loc, shape, k_tiles)
            if kt == 0 or b_streams:
                b_ready = self._load(aic, "b", ni, kt, loc, shape, k_tiles)
            costs = step_costs.get(depth)
            if costs is None:
                a_bytes, b_bytes = rows * depth * esize, depth * cols * esize
                costs = step_costs[depth] = (
                    a_bytes, transfer_cycles("L1->L0A", a_bytes, 1, core=aic),
                    b_bytes, transfer_cycles("L1->L0B", b_bytes, 1, core=aic),
                    aic.soc.cube.mmad_cycles(rows, cols, depth, dtype))
            a_bytes, (a_busy, a_lat), b_bytes, (b_busy, b_lat), cycles = costs
            la = aic.issue("MTE1", "matmul_load_l0a", a_busy, a_lat, loc, ready=a_ready,
                           info=("L1->L0A", a_bytes))
            lb = aic.issue("MTE1", "matmul_load_l0b", b_busy, b_lat, loc, ready=b_ready,
                           info=("L1->L0B", b_bytes))
            aic.count_bytes("L1->L0A", a_bytes)
            aic.count_bytes("L1->L0B", b_bytes)
            mm = aic.issue("M", "mmad", cycles, 0, loc, ready=max(la.done, lb.done, bias_ready),
                           info=(rows, cols, depth, dtype))
            done = mm.done
        return done

    def _charge_fix(self, aic, path: str, rows: int, cols: int, ready: float, loc,
                    writes=(), tensor=None):
        nbytes = rows * cols * self.c_type.dtype.sizeof()
        busy, latency = transfer_cycles(path, nbytes, rows, core=aic)
        slot_ready = tensor.ready() if tensor is not None else 0.0
        instr = aic.issue("FIX", "fixpipe", busy, latency, loc, writes=writes,
                          ready=max(ready, slot_ready), info=(path, nbytes))
        aic.count_bytes(path, nbytes)
        return instr

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
            a, b, bias = self._operands(loc)
            self._region_product = self._product(a, b, bias)
            self._region_rows, self._region_cols = range(a.shape[0]), range(b.shape[1])
        mi, ni = self._coords(self._cursor, mb, nb)
        self._cursor += 1
        t = self.tiling
        rs = slice(mi * t.base_m, (mi + 1) * t.base_m)
        cs = slice(ni * t.base_n, (ni + 1) * t.base_n)
        shape = (len(self._region_rows[rs]), len(self._region_cols[cs]))
        aic = self._aic(client, loc)
        ready = self._charge_block(aic, mi, ni, self._message(client, aic), loc)
        self._block = _Block(mi, ni, self._region_product, rs, cs, shape, ready)
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
        wait = 0.0 if client is aic else client.timing.cross_core_flag_latency_cycles
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
        view = _gm_matrix(gm[off:], rows, cols, stride, loc)
        _write(view, block.values, en_atomic, loc)
        fix = self._charge_fix(aic, "L0C->GM", rows, cols, block.ready, loc,
                               writes=self._rows(gm, off, rows, cols, stride))
        if sync and wait:
            self._answer(aic, client, "S", fix.done + wait)
        return None

    @staticmethod
    def _rows(gm: GlobalTensor, off: int, rows: int, cols: int, stride: int) -> tuple:
        """The access record of a (rows x cols) block at pitch ``stride``: strided (one row
        of ``cols`` every ``stride``), so that cores writing side by side columns of C are not
        taken for overlapping."""
        size = gm.dtype.sizeof()
        lo, _ = gm.byte_range(off, 0)
        return (strided(("GM", gm.buffer.id), lo, cols * size, stride * size, rows),)

    def _to_ub(self, client, aic, tensor: LocalTensor, block: _Block, en_atomic, seq, loc):
        t = self.tiling
        if client.kind != "AIV" or tensor.position not in UB_POSITIONS:
            raise KernelError(f"get_tensor_c to TPosition.{tensor.position.name} on an "
                              f"{client.kind}: a C block reaches the AIV's UB (VECIN, VECOUT or "
                              "VECCALC) only", loc)
        if tensor.dtype != self.c_type.dtype:
            raise KernelError(f"get_tensor_c: the tensor is {tensor.dtype.name} but C is "
                              f"{self.c_type.dtype.name}", loc)
        rows, cols = block.shape
        if seq:
            off, stride = 0, t.base_n
        else:
            stride = t.single_core_n
            off = block.mi * t.base_m * stride + block.ni * t.base_n
        count = (rows - 1) * stride + cols
        flat = tensor.elements(off, count, loc)
        size = tensor.dtype.sizeof()
        _write(_rows_view(flat, rows, cols, stride), block.values, en_atomic, loc)
        ub_write = (tensor.access(off, count),)
        latency = client.timing.cross_core_flag_latency_cycles
        if client.soc.has_path("L0C->UB"):  # 950: FixPipe writes the AIV's UB directly
            # The request names the UB buffer, so the AIC writes it only after the AIV has
            # asked for it (and after whatever the AIV did to that buffer before asking).
            request = self._message(client, aic)
            fix = self._charge_fix(aic, "L0C->UB", rows, cols, max(block.ready, request), loc,
                                   writes=ub_write, tensor=tensor)
            if tensor.slot is not None and fix.done > tensor.slot.last_done:
                tensor.slot.last_done = fix.done
            arrived = fix.done + latency
            self._answer(aic, client, "V", arrived)
        else:  # 910B: FixPipe to the GM workspace, flag to the AIV, MTE2 GM->UB on the AIV
            fix = self._charge_fix(aic, "L0C->GM", rows, cols, block.ready, loc)
            self._answer(aic, client, "S", fix.done + latency)
            nbytes = rows * cols * size
            busy, lat = transfer_cycles("GM->UB", nbytes, 1 if seq else rows, core=client)
            copy = execute("MTE2", "get_tensor_c", busy, lat, loc, (tensor,), (), ub_write,
                           info=("GM->UB", nbytes))
            client.count_bytes("GM->UB", nbytes)
            arrived = copy.done + client.timing.flag_latency_cycles
            # get_tensor_c returns with the block in UB: the vector unit may read it at once.
            client.block_pipe("V", arrived)
            notify_observers(client.launch, "on_cross_core_edge", client, "MTE2", client, "V")
        self._answer(aic, client, "S", fix.done + latency)

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
        _write(_gm_matrix(out, rows, cols, cols, loc), block.values, 0, loc)
        fix = self._charge_fix(aic, "L0C->GM", rows, cols, block.ready, loc,
                               writes=self._rows(out, 0, rows, cols, cols))
        if client is not aic:
            self._answer(aic, client, "S", fix.done + client.timing.cross_core_flag_latency_cycles)
        return out

    # ------------------------------------------------------------------ iterate_all
    def iterate_all(self, tensor, en_atomic: int = 0, sync: bool = True,
                    en_sequential_write=None, wait_iterate_all=None, fake_msg=None) -> None:
        """Compute this core's whole region and write it to ``tensor`` (GM, row pitch of C)."""
        loc = user_location()
        client = current_core()
        if isinstance(tensor, LocalTensor):
            raise KernelError("iterate_all writes C to GM; for UB use iterate() and "
                              "get_tensor_c", loc)
        gm = _as_global(tensor, loc)
        m, n, _ = self._shape(loc)
        mb, nb, _ = self._grid(loc)
        stride = self._org_shape()[4]
        product = self._product(*self._operands(loc))  # (computing while the blocks are timed)
        aic = self._aic(client, loc)
        arrival = self._message(client, aic)
        t = self.tiling
        done = arrival
        for count in range(mb * nb):
            mi, ni = self._coords(count, mb, nb)
            ready = self._charge_block(aic, mi, ni, arrival, loc)
            rows = min(t.base_m, m - mi * t.base_m)
            cols = min(t.base_n, n - ni * t.base_n)
            off = mi * t.base_m * stride + ni * t.base_n
            fix = self._charge_fix(aic, "L0C->GM", rows, cols, ready, loc,
                                   writes=self._rows(gm, off, rows, cols, stride))
            done = max(done, fix.done)
        _write(_gm_matrix(gm, m, n, stride, loc), _finished(product), en_atomic, loc)
        self._block = None
        if client is not aic:
            done += client.timing.cross_core_flag_latency_cycles
            if sync:
                self._answer(aic, client, "S", done)
            else:
                self._pending = done
        self._pending_from = aic

    def wait_iterate_all(self) -> None:
        """Wait for an ``iterate_all(..., sync=False)`` to finish."""
        client = current_core()
        client.call_overhead()
        if self._pending_from is not None and self._pending_from is not client:
            self._answer(self._pending_from, client, "S", self._pending)


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
