"""The instruction records every front-end emits and the machine executes (``Core.execute``).

Each record is a frozen, slotted tuple (a ``NamedTuple``: as cheap to build as a tuple, read by
name). Its docstring states what it does to memory (*semantics*) and what it costs (*cost*), side
by side; the constants in the cost formulas are the SoC table's (:mod:`ascsim.hw`) and are read
by the machine's one cost model (:mod:`ascsim.sim.cost`). Operands are
:class:`~ascsim.isa.operands.Region` s; every record carries ``loc``, the kernel source line
that issued it (findings point there).

Records that occupy a pipe start at ``max(pipe free, scalar unit issued it, gates of their
regions, after)`` -- ``after`` is an extra dependency a front-end's protocol carries from an
earlier record's completion (a message that must arrive first) -- and cost
``scalar_cycles_per_call`` on the scalar unit to issue. The pipe a record runs on follows from
the record (a copy's path, ``V`` for vector records, ``M`` for Mmad, ``FIX`` for FixPipe).

A record never names a front-end's API: ``op`` is only the label shown in traces and findings.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, NamedTuple

import numpy as np

from ascsim.isa.operands import Bursts, Region

Location = tuple[str, int]

#: Whose counters a cross-core set raises (ascend-hw §4.5): every core of the setter's kind
#: (a barrier of that kind), the two AIVs of the setter's group, AIC <-> AIVs of one group, or
#: one named core.
CrossCoreScope = Literal["all_of_kind", "subblock_pair", "group", "unicast"]
CROSS_CORE_SCOPES = ("all_of_kind", "subblock_pair", "group", "unicast")

#: What a gate operation does: a producer takes the buffer (waits for its last readers), hands
#: it over (its writes become visible), a consumer takes it, or gives it back.
GateAction = Literal["acquire_write", "release_write", "acquire_read", "release_read"]
GATE_ACTIONS = ("acquire_write", "release_write", "acquire_read", "release_read")

#: Bytes of the vector unit's compare-mask register: one bit per lane of a 16-bit repeat.
CMPMASK_BYTES = 16


# ============================================================================ data movement
class Copy(NamedTuple):
    """Move ``bursts`` from ``src`` to ``dst`` (a DMA transfer on MTE2, MTE3, MTE1 or FIX).

    Semantics: block ``i`` of ``bursts.width`` bytes goes from byte ``src.offset + bursts.src +
    i * bursts.src_pitch`` to ``dst.offset + bursts.dst + i * bursts.dst_pitch`` -- with
    ``atomic`` ("add", "max", "min") its elements, of the destination's type, are combined with
    the destination's instead (an atomic store to GM); then, when
    ``pad`` = ``(indices, value)``, the destination elements ``indices`` (counted from
    ``dst.offset``) are set to ``value``. ``whole_blocks``: the destination's 32-byte blocks that
    the rows land in count as written (their padding holds unspecified values). The path is
    ``"{src.space}->{dst.space}"``; it must exist on the SoC, and only FixPipe (L0C->UB) reaches
    another core's memory.

    Cost-only form: ``src`` or ``dst`` None -- a side whose bytes the model does not hold (a
    front-end that computes a whole region's values at once, as the Matmul API does, moves its
    per-block operands this way). Then ``path`` names the path, nothing is moved, the accesses
    are those of the regions given, ``runs`` (when not 0) is the number of DMA runs if they
    are not the bursts' (the column runs of an NZ matrix), and ``gm`` names the GM bytes for the
    L2 model: ``(buffer id, ByteRows)``; None: those of the GM region given; ``()``: none (a
    GM read is then costed as a miss). ``values`` (with ``src`` None): a ``rows x width``
    array of the destination's type that the copy delivers, one row per burst at the bursts'
    destination pitch, combined with what is there by ``atomic`` (None, "add", "max", "min").

    Cost: ``busy = startup(pipe) + nbytes / rate + (bursts - 1) * burst_gap`` with ``rate`` the
    path's per-core rate (capped by the L2 port when one side is GM; lines read from HBM at the
    core's share of HBM; ``gm_misaligned_extra_bytes`` more per burst whose GM start is not
    32-byte aligned: see ascsim/sim/cost.py); ``latency`` is
    0 between local buffers, the L2 hit or HBM read latency for a GM read (the L2 model is asked
    at the instruction's true start), the GM write latency for a GM write.
    """

    src: Region | None
    dst: Region | None
    bursts: Bursts
    loc: Location
    op: str = "copy"
    pad: tuple | None = None
    whole_blocks: bool = False
    after: float = 0.0
    path: str | None = None
    gm: tuple | None = None
    runs: int = 0
    values: Any = None
    atomic: str | None = None


class ImageLoad(NamedTuple):
    """Load a window of an image from GM with AI Core pre-processing (AIPP; ``MTE2``).

    Semantics: :mod:`ascsim.sim.aipp` -- ``config`` (an :class:`ascsim.sim.aipp.AippConfig`)
    names the source format and the steps (channel swap, colour-space conversion, data type
    conversion, spatial and channel padding); ``window`` (an :class:`ascsim.sim.aipp.Window`)
    the rows and columns read and the padding added. ``src1`` is the UV plane of a YUV420SP
    image. The pixels land in ``dst`` as rows of pixels of ``config``'s channel count (HWC).
    Cost: as a :class:`Copy` GM->``dst`` of the destination bytes in one burst per row.
    """

    dst: Region
    src0: Region
    src1: Region | None
    config: Any
    window: Any
    loc: Location
    op: str = "load_image"
    after: float = 0.0


class IndexedCopy(NamedTuple):
    """A copy that rearranges elements on the way (fractal loads: ND->NZ, 2-D/3-D loads).

    Semantics: ``dst[dst_index] = src[src_index]`` with indices in elements from each region's
    offset; where ``src_index`` is negative the element is ``fill`` (zero: the DMA's fill of a
    fractal row a matrix row ends in; a Load3D's padding value). The index arrays have equal
    shapes; ``dst_index`` None means the first ``src_index.size`` elements in order.

    ``convert``: the elements are converted to ``dst``'s type (round to nearest even) rather
    than copied as bits (the fp16 -> fp32 move into the bias table). ``dst_runs``: ``(first,
    run, pitch, count)`` in elements when the destination indices are ``count`` runs of
    ``run`` elements ``pitch`` apart (a window of a fractal tile): the write is recorded as
    those runs, not their hull, so cores filling interleaved parts of one buffer are not taken
    for overlapping writers. ``nibbles``: the elements are 4-bit codes packed two to a byte
    (:mod:`ascsim.sim.fp4`: element ``i`` is the low four bits of byte ``i // 2`` when ``i`` is
    even, the high four when odd); the indices count those elements from each region's byte
    offset, and a filled element is code 0.

    Cost: as :class:`Copy` over ``nbytes`` bytes in ``bursts`` bursts (the instruction's own
    counts: a fractal load moves whole 512-byte fractals). ``gm_rows`` = ``(first elements,
    row elements)`` of the GM side, for the L2 model (None: costed as a miss).
    """

    src: Region
    dst: Region
    src_index: np.ndarray
    dst_index: np.ndarray | None
    nbytes: int
    bursts: int
    loc: Location
    op: str = "load"
    gm_rows: tuple | None = None
    fill: Any = 0
    after: float = 0.0
    convert: bool = False
    dst_runs: tuple | None = None
    nibbles: bool = False


# ============================================================================ vector unit
class Vector(NamedTuple):
    """One element-wise vector instruction: ``dst = f(*srcs, *scalars)`` (``V`` pipe).

    Semantics: ``op`` names a row of the machine's vector table (:mod:`ascsim.sim.exec_vector`)
    giving ``f`` and its cost class. Count form (``lanes`` None): the first ``dst.count``
    elements of every operand. Mask/repeat form: ``lanes`` holds one element index array per
    operand, destination first (see :func:`~ascsim.isa.operands.repeat_indices`), and
    ``repeats`` the repeat count. fp16/bf16 operands are computed in fp32 and rounded once to
    ``dst``'s type; a scalar has its source's type. ``attrs``: the op's own parameters (a
    cast's ``(rounding mode, the mode's name in the front-end's words)``; the modes are
    :mod:`ascsim.sim.numerics`'s ``rint floor ceil round trunc odd none``). Masked-off lanes
    keep their old values.

    Cost: ``busy = max(ceil(repeats * 256 / bytes_per_cycle) * throughput_factor, repeats *
    cycles_per_repeat_min) * vector_ub_bank_conflict_factor`` of the op's cost class and the
    sources' type; the result is ready ``latency`` cycles later. Count form: ``repeats =
    ceil(count * widest element / 256)``.
    """

    op: str
    dst: Region
    srcs: tuple
    loc: Location
    scalars: tuple = ()
    lanes: tuple | None = None
    repeats: int = 0
    attrs: Any = None
    after: float = 0.0


class VectorCompare(NamedTuple):
    """Compare element-wise and write one bit per lane (``V`` pipe, cost class ``compare``).

    Semantics: bit ``bits[i]`` of ``dst`` (bytes, least significant bit first; ``dst`` None:
    of the compare-mask register, see :class:`CmpMaskMove`) = ``cmp(a_i, b_i)`` where ``a``
    is ``srcs[0]`` at ``lanes[0]``, ``b`` is ``srcs[1]`` at ``lanes[1]`` or the scalar;
    ``cmp`` is one of ``lt gt eq le ge ne``. Other bits keep their values.
    Cost: as :class:`Vector` over ``repeats``.
    """

    cmp: str
    dst: Region | None
    srcs: tuple
    lanes: tuple
    bits: np.ndarray
    repeats: int
    loc: Location
    scalar: Any = None
    op: str = "compare"
    after: float = 0.0


class VectorSelect(NamedTuple):
    """Choose per lane between two sources by a bit mask (``V`` pipe, cost class ``select``).

    Semantics: ``dst[lanes[0]] = srcs[0][lanes[1]] if bit bits[i] of mask else srcs[1][lanes[2]]``
    (or the scalar when ``srcs`` has one region); ``mask`` None: the bits of the compare-mask
    register (:class:`CmpMaskMove`). Cost: as :class:`Vector` over ``repeats``.
    """

    dst: Region
    mask: Region | None
    srcs: tuple
    lanes: tuple
    bits: np.ndarray
    repeats: int
    loc: Location
    scalar: Any = None
    op: str = "select"
    after: float = 0.0


class VectorReduce(NamedTuple):
    """Reduce lanes of ``src`` to ``dst[0]`` (``V`` pipe).

    Semantics: ``dst[0] = reduce(src[lanes])`` with ``how`` one of ``sum max min`` (a sum is
    accumulated in double precision and rounded once); with ``index``, ``dst[1]`` holds, as the
    bits of an unsigned integer of ``dst``'s width, ``lane_numbers`` of the first max/min.
    ``work``: a scratch region the instruction may use (touched for the checks).

    Cost: a first pass over ``repeats`` repeats, then ``ceil(log8(repeats))`` passes over the
    partial results, each exposing the op's latency: ``busy = issue(repeats) + latency *
    passes``.
    """

    how: str
    dst: Region
    src: Region
    lanes: np.ndarray
    lane_numbers: np.ndarray
    index: bool
    repeats: int
    loc: Location
    work: Region | None = None
    op: str = "reduce"
    after: float = 0.0


class VectorGather(NamedTuple):
    """Gather elements by byte offsets (``V`` pipe, cost class ``transpose``).

    Semantics: ``dst[i] = src`` at byte ``base + offsets[i]`` (counted from ``src.offset``) for
    ``i < count``; ``offsets`` holds 32-bit unsigned byte offsets, each a multiple of the
    element size. Reads are recorded as the elements gathered, not their hull.
    Cost: as :class:`Vector` over ``ceil(count * element size / 256)`` repeats.

    Lane form (``dst_lanes`` given; the mask/repeat call): lane ``i`` writes ``dst`` element
    ``dst_lanes[i]`` with ``src`` at byte ``base + offsets[offset_lanes[i]]``; ``count`` is the
    number of lanes and ``repeats`` the repeats priced. Writes are recorded as the elements
    written.
    """

    dst: Region
    src: Region
    offsets: Region
    base: int
    count: int
    loc: Location
    op: str = "gather"
    after: float = 0.0
    dst_lanes: np.ndarray | None = None
    offset_lanes: np.ndarray | None = None
    repeats: int = 0


class VectorBlockGather(NamedTuple):
    """Gather whole 32-byte blocks by byte offsets (``V`` pipe, cost class ``transpose``).

    Semantics: for repeat ``r < repeats`` and block ``j < 8``, the 32 bytes of ``src`` at byte
    ``offsets[r * 8 + j]`` (uint32, counted from ``src.offset``, a multiple of 32) go to
    ``dst``'s block ``r * rep_stride + j * blk_stride``. Reads are recorded as the blocks
    gathered. Cost: as :class:`Vector` over ``repeats``.
    """

    dst: Region
    src: Region
    offsets: Region
    repeats: int
    blk_stride: int
    rep_stride: int
    loc: Location
    op: str = "gatherb"
    after: float = 0.0


class VectorScatter(NamedTuple):
    """Scatter elements to byte offsets (``V`` pipe, cost class ``transpose``).

    Semantics: for each lane ``i``, ``src[src_lanes[i]]`` goes to ``dst`` at byte ``base +
    offsets[offset_lanes[i]]`` (uint32 offsets, counted from ``dst.offset``, multiples of the
    element size). Two lanes writing one element leave either value (the device does not
    define which); the model keeps the later lane's. Writes are recorded as the elements
    written. Cost: as :class:`Vector` over ``repeats``.
    """

    dst: Region
    src: Region
    offsets: Region
    base: int
    src_lanes: np.ndarray
    offset_lanes: np.ndarray
    repeats: int
    loc: Location
    op: str = "scatter"
    after: float = 0.0


class VectorSequence(NamedTuple):
    """A library routine that is a chain of dependent vector instructions (``V`` pipe).

    Semantics: ``fn`` is the routine's numerical definition: called with a view of each region
    of ``srcs`` (all ``count`` elements, in their stored types), it returns one array per
    destination region (``dst``: one region or a tuple of them), each of that region's element
    count (or ``(element indices, values)`` to write only those), rounded once to its type.
    Every result is computed before any is stored, so outputs may alias inputs. ``extra``:
    regions the routine also reads; ``scratch``: scratch buffers it may use (both recorded for
    the checks and ordered by their gates). ``lanes``: when given, one element index array per
    region of ``(*destinations, *srcs)`` naming the elements the routine touches (the accesses
    the checks see; default: every element of each region).

    Cost: the steps in order, each waiting for the previous one's result: ``busy = sum(latency
    of the previous step + vector_step_cycles + issue(step))`` in cost type ``dtype``,
    ``latency`` = the last step's; a step is a cost class (over ``repeats``) or ``(cost class,
    repeats)``. The scalar unit issues every step (``scalar_cycles_per_call`` each).
    """

    op: str
    dst: Any
    srcs: tuple
    fn: Any
    steps: tuple
    repeats: int
    dtype: str
    loc: Location
    extra: tuple = ()
    scratch: tuple = ()
    after: float = 0.0
    lanes: tuple | None = None


# ============================================================================ cube unit
class RegisterOp(NamedTuple):
    """One instruction of a register-level vector function (the 950's RegBase VF, ``V`` pipe).

    Semantics: ``op`` names a row of the machine's register-op table
    (:mod:`ascsim.sim.exec_vf`), which says what it reads and writes. Operands are numbers of the
    core's VF registers (:mod:`ascsim.sim.vf_registers`: 256-byte vector registers, 256-bit mask
    registers): ``srcs`` are read (each as the element type ``src_dtypes`` gives, None: the type
    it holds), ``dsts`` written, ``mask`` the predicate (None: every lane). ``dtype`` is the
    result's element type. Masked-off lanes of the result are zeroed, or keep the
    destination's old value with ``merging``. ``region``: the UB bytes a load, store, gather or
    scatter touches (counted from its offset); ``attrs``: the op's own parameters.

    Cost: one 256-byte repeat of the cost class the SoC table names for ``op``
    (``SocSpec.vf_op_classes``), issued ``vector_function_issue_width`` at a time: a VF
    instruction does not pass through the scalar unit (the function was issued once, by a
    :class:`RegisterFunction` record) and starts when the V pipe is free and its UB operand's
    gates allow.
    """

    op: str
    dsts: tuple
    srcs: tuple
    loc: Location
    mask: int | None = None
    dtype: Any = None
    scalars: tuple = ()
    attrs: Any = None
    region: Region | None = None
    merging: bool = False
    src_dtypes: tuple | None = None


class RegisterFunction(NamedTuple):
    """The start (``begin``) or the end of one call of a register-level vector function.

    Semantics: at ``begin`` the core's VF registers the function declares (``declared``: a
    ``(number, kind, name)`` each, kinds ``vector``, ``mask``, ``address``, ``unaligned``)
    are allocated, their contents undefined until written. ``live``: ``(kind, count)`` pairs,
    the most registers of each kind the body keeps live at once; a kind that needs more than
    the SoC has (``SocSpec.vf_registers``) is a ``register-spill`` finding (the compiler
    spills to a reserved UB area). At the end the registers are released.

    Cost: one scalar-unit call to issue the function (``scalar_cycles_per_call``); nothing at
    its end.
    """

    begin: bool
    declared: tuple
    loc: Location
    name: str = ""
    live: tuple = ()
    op: str = "vector_function"


class Mmad(NamedTuple):
    """``C (+)= A . B (+ bias)`` on the Cube (``M`` pipe).

    Semantics: ``a`` (L0A, ``m x k`` in the SoC's L0A fractal layout), ``b`` (L0B, ``k x n``,
    ZN fractals), ``dst`` (L0C, ``m x n`` NZ fractals of 16x16, fp32 or int32). fp16/bf16
    products are exact and summed in fp32; int8 in int32; fp8 (``float8_e4m3fn``,
    ``float8_e5m2``) and HiFloat8 in fp32 -- ``dtype`` "hifloat8" says that ``a`` and ``b``, stored
    as bytes, hold HiF8 codes (:mod:`ascsim.sim.hifloat8`). The initial C is ``bias`` (a BT row
    broadcast down the rows, or an L0C matrix), else ``dst`` itself when ``accumulate``, else
    zero. A record with ``dst`` None is cost-only: a front-end that computes a whole region's
    product at once (:class:`CubeProduct`) emits its steps this way.

    Frames: ``a_rows`` (``b_cols``, ``c_rows``) is the row (column, row) count of the fractal
    frame the operand is stored in, when it is larger than ``m`` (``n``, ``m``) rounded up to
    whole fractals (a tile whose valid part is smaller than the buffer): the fractal columns of
    A and C are ``a_rows`` / ``c_rows`` rows apart and the fractal rows of B hold ``b_cols``
    columns; 0 means the tight frame. Only the ``m x k`` / ``k x n`` / ``m x n`` windows (in
    whole fractals) are read and written. ``unit_flag`` ("partial" / "final"): the L0C
    buffer's unit-flag handshake with the fixpipe (:mod:`ascsim.sim.unit_flag`). ``hf32``
    ("even" / "away"): fp32 inputs are first rounded to HF32 (:func:`ascsim.sim.numerics.
    to_hf32`, ties to even or away from zero). ``sparse``: int8 4:2 structured sparsity -- ``a``
    is ``m x k``, ``b`` the dense ``k/2 x n`` (ZN), and each B element ``(j, c)`` multiplies the
    A element its 2-bit index selects from the group of four ``4*(j//2) ..`` (the indices of
    :class:`SparseIndexLoad`; :mod:`ascsim.sim.exec_sparse` has the rule); priced as the dense
    ``k/2`` product. ``mx``: the 950's MX product (``mad_mx``, :mod:`ascsim.sim.mx`), the
    element formats of ``a`` and ``b`` -- both FP8 (``float8_e4m3fn`` / ``float8_e5m2``, the
    regions' own types) or both FP4 (``float4_e2m1`` / ``float4_e1m2``: codes packed two to a
    byte, :mod:`ascsim.sim.fp4`, in fractals of 16 x 64 codes) -- every 32 elements of K scaled
    by an E8M0 code the machine reads from the L0A / L0B MX buffers at the data's byte address
    >> 4; ``k`` a multiple of 64; priced by ``dtype`` (A's format: FP4 at twice FP8's rate).

    Cost: ``busy = startup + ceil(m/16) * ceil(n/16) * ceil(k / k_step[dtype])`` cycles (the
    CubeCost of the SoC table), no extra latency; in HF32 mode K is consumed twice as fast as
    in fp32 (ascend-hw: HF32 = 2x fp32).
    """

    m: int
    n: int
    k: int
    dtype: str
    loc: Location
    dst: Region | None = None
    a: Region | None = None
    b: Region | None = None
    bias: Region | None = None
    accumulate: bool = False
    op: str = "mmad"
    after: float = 0.0
    a_rows: int = 0
    b_cols: int = 0
    c_rows: int = 0
    unit_flag: str | None = None
    hf32: str | None = None
    sparse: bool = False
    mx: tuple[str, str] | None = None


class SparseIndexLoad(NamedTuple):
    """Load 4:2 sparsity indices into the Cube's index buffer (``MTE1``), next to the dense B
    fractals they belong to (Ascend C's LoadDataWithSparse).

    Semantics: ``nbytes`` bytes of ``src`` (L1) from byte ``start`` go to the index buffer at
    byte ``b.offset // 4``: the buffer is a quarter of L0B, one 2-bit index per int8 of L0B at
    the same position, four to a byte, least significant bits first. A sparse :class:`Mmad`
    reads the indices of its B region from there.
    Cost: as a :class:`Copy` L1->L0B of ``nbytes`` in one burst.
    """

    src: Region
    b: Region
    start: int
    nbytes: int
    loc: Location
    op: str = "load_sparse_index"
    after: float = 0.0


class FixPipe(NamedTuple):
    """Move a result out of L0C (``FIX`` pipe): to GM, L1 or (where the path exists) an AIV's UB.

    Semantics (``src`` given): for ND matrix ``i < nd_num``, row ``r < m``, column ``c < n``,
    the L0C element at ``i * src_nd_stride * 256 + (c // 16) * src_stride * 16 + r * 16 + c %
    16`` goes to ``dst`` at ``i * dst_nd_stride + r * dst_stride + c`` (``layout`` "ND") or at
    ``i * dst_nd_stride + (c // c0) * dst_stride * c0 + r * c0 + c % c0`` ("NZ"), after an
    optional ReLU and a conversion to ``dst``'s type (round to nearest even), combined with
    what ``dst`` holds by ``atomic`` (None, "add", "max", "min"). ``sub_block``:
    an L0C->UB move writes the UB of that AIV of the caller's group (``dst`` names an address
    in UB). ``unit_flag`` ("partial" / "final"): the L0C buffer's unit-flag handshake with the
    Cube (:mod:`ascsim.sim.unit_flag`). ``quant``: a quantising move -- after the ReLU each
    value is multiplied in fp32 by a scale before the conversion: a float (one scale, the
    "deqScalar"), or a region of 64-bit words in the fixpipe buffer, one per column ``c < n``,
    whose low 32 bits are the column's fp32 scale (the "deqTensor"). ``dst_format``: the value
    format of ``dst``'s bytes where its storage type does not say it -- "hifloat8": the
    conversion is to HiF8 codes (nearest, ties away from zero, saturating).

    Cost: as a :class:`Copy` of the destination bytes in ``nd_num * m`` row bursts (ND) or
    ``nd_num * n / c0`` strip bursts (NZ), and no faster than the L0C read port moves the
    source's whole 16-column strips.

    Block form (``src`` None; the result of a region computed at once, see
    :class:`CubeProduct`): ``values`` (an ``m x n`` array, or None for timing only) is written
    to ``dst`` rows of ``dst_stride`` elements, combined with what is there by ``atomic``
    (None, "add", "max", "min"); ``path`` names the path when ``dst`` is None (a workspace the
    model does not hold). Cost: as a :class:`Copy` of ``m * n`` elements of ``dtype`` in ``m``
    row bursts, without GM addresses for the L2 model and without the read-port floor.

    ``hold_until`` (block form): the cycle before which its transfer cannot begin. With
    UnitFlag the FixPipe starts when issued, before the block's last Mmad has written its
    first 512-byte unit of L0C (asc-devkit matmul_high_performance README, case 8), and holds
    its pipe while it waits: busy = (hold_until - start) + the transfer, when it starts
    earlier.
    """

    dst: Region | None
    m: int
    n: int
    loc: Location
    src: Region | None = None
    nd_num: int = 1
    src_nd_stride: int = 0
    src_stride: int = 0
    dst_nd_stride: int = 0
    dst_stride: int = 0
    layout: str = "ND"
    c0: int = 16
    relu: bool = False
    convert: bool = False
    values: Any = None
    atomic: str | None = None
    sub_block: int | None = None
    path: str | None = None
    dtype: Any = None
    op: str = "fixpipe"
    after: float = 0.0
    unit_flag: str | None = None
    quant: Any = None
    dst_format: str | None = None
    hold_until: float = 0.0



class CubeProduct(NamedTuple):
    """Start the product ``a @ b (+ bias)`` of a whole region of a matrix, accumulated as
    :class:`Mmad` accumulates; ``execute`` returns a handle whose ``result()`` is the
    accumulator-typed product (None in a timing-only run). ``a``, ``b`` and ``bias`` (or None)
    are callables that read the operands as numpy arrays in their stored types (a timing-only
    run never calls them). No pipe time: the region's Mmad records (cost-only) carry the
    cost.

    ``hf32`` ("even" / "away"): fp32 ``a`` and ``b`` are first rounded to HF32, as a
    :class:`Mmad` in HF32 mode rounds them. ``sparse_index`` (a callable, or None): a 4:2
    sparse product -- int8 ``a`` is ``m x k``, ``b`` the dense ``k/2 x n`` and the callable
    returns the 2-bit indices of ``b``'s elements as a ``k/2 x n`` integer array; element
    ``(j, c)`` of ``b`` multiplies the element of ``a``'s row that the index selects from the
    group of four ``4*(j//2) ..`` (the rule of the sparse :class:`Mmad`), summed in int32."""

    a: Any
    b: Any
    bias: Any
    loc: Location
    hf32: str | None = None
    sparse_index: Any = None


# ============================================================================ scalar unit
class ScalarLoad(NamedTuple):
    """Read element 0 of ``src`` into the scalar unit; ``execute`` returns the value.

    Cost: a local buffer: ``scalar_ld_st_cycles`` on the ``S`` pipe; GM: the GM read latency on
    the scalar unit (it stalls).
    """

    src: Region
    loc: Location
    op: str = "scalar_load"


class ScalarStore(NamedTuple):
    """Write ``value`` to element 0 of ``dst`` from the scalar unit. Cost: as
    :class:`ScalarLoad` (GM: the write latency)."""

    dst: Region
    value: Any
    loc: Location
    op: str = "scalar_store"


class ScalarOps(NamedTuple):
    """``count`` scalar instructions (address arithmetic, parameter set-up) that issue nothing
    to another pipe. Cost: ``count * scalar_cycles_per_call`` on the scalar unit."""

    count: int
    loc: Location


#: What the Matmul high-level API's bookkeeping records (:class:`MatmulBookkeeping`) count.
MATMUL_EVENTS = ("k_step", "l1_load")


class MatmulBookkeeping(NamedTuple):
    """The Matmul high-level API's own scalar work for one ``event``: ``"k_step"`` (one K step
    of a base block: its loop, the L0A/L0B load and Mmad parameters, the flag waits it issues)
    or ``"l1_load"`` (one GM->L1 slab load: ND2NZ parameters, GM and L1 addresses, the L1
    buffer rotation). ``const_tiling``: the tiling is a compile-time constant, so its fields
    are not loaded and checked at run time. Cost: ``matmul_k_step_scalar_cycles`` or
    ``matmul_l1_load_scalar_cycles`` on the scalar unit, times
    ``matmul_const_tiling_scalar_share`` with a constant tiling."""

    event: str
    const_tiling: bool
    loc: Location


class Inspect(NamedTuple):
    """Read elements ``index`` of ``src`` for a debug print (a device-side dump of a buffer or
    a GM tensor); ``execute`` returns them as an array shaped like ``index`` (None in a
    timing-only run, which computes no values).

    Semantics: memory is unchanged; ``index`` holds element offsets from ``src.offset``; the
    read is an access like any other (the checks see it: an unsynchronised dump is a race, a
    dump of bytes never written is an uninitialised read). ``pipe`` is the pipe that prints
    (``V`` on an AIV, ``S`` on an AIC, which has no vector unit); on ``S`` the scalar unit
    goes on once the print is done.

    Cost: ``scalar_ld_st_cycles`` per 32-byte block read, on ``pipe``.
    """

    src: Region
    index: np.ndarray
    pipe: str
    loc: Location
    op: str = "inspect"


class SetVectorRegisters(NamedTuple):
    """Set the vector unit's special registers. The mask registers, which vector instructions
    issued with ``is_set_mask=False`` read: ``mode`` (``"normal"``: the two words are a
    per-repeat bit mask; ``"counter"``: the low word is the total element count) and the
    ``low``/``high`` 64-bit words. The side outputs of two instructions, set as part of them:
    ``remain``, the count of elements a ``gather_mask`` kept, and ``mrg_sort``, the entries a
    ``mrg_sort`` took from each of its four queues. ``deq``: the DEQSCALE register that the
    dequantising vector ops read (:mod:`ascsim.sim.exec_registers` says its forms). ``None``
    leaves a register as it is.
    ``side_effect``: the change is part of another instruction (a vector instruction that sets
    its own mask, or resets it after a count-form call), which is priced on its own.
    Cost: one scalar instruction when it sets the mode or a mask word and is not a side
    effect, else none."""

    mode: str | None
    low: int | None
    high: int | None
    loc: Location
    remain: int | None = None
    mrg_sort: tuple | None = None
    side_effect: bool = False
    op: str = "set_vector_registers"
    deq: tuple | None = None


class CmpMaskMove(NamedTuple):
    """Move the vector unit's compare-mask register (CMPMASK, ``CMPMASK_BYTES`` bytes) to or
    from UB (``V`` pipe, cost class ``copy`` over one repeat).

    Semantics: ``to_register``: the first ``CMPMASK_BYTES`` bytes of ``region`` become the
    register; else the register's bytes are written to them. The register is also written by
    a :class:`VectorCompare` without a destination and read by a :class:`VectorSelect`
    without a mask region. A core starts with the register all zero.
    """

    region: Region
    to_register: bool
    loc: Location
    op: str = "cmp_mask"
    after: float = 0.0


class WatchLocalMemory(NamedTuple):
    """Arm (``enable``) or disarm exception register ``register`` of the UB access check
    (Ascend C's CheckLocalMemoryIA, a debug feature).

    Semantics: while armed, every access of this core to UB bytes ``[lo, hi)`` of a kind in
    ``kinds`` (``scalar_read``, ``scalar_write``, ``vector_read``, ``vector_write``,
    ``mte_read``, ``mte_write``) is a ``local-memory-ia`` finding at the accessing line (the
    device raises an exception there). Memory is unchanged. Cost: one scalar instruction.
    """

    register: int
    lo: int
    hi: int
    kinds: frozenset
    enable: bool
    loc: Location
    op: str = "watch_local_memory"


# ============================================================================ synchronisation
class SetFlag(NamedTuple):
    """Raise event ``event_id`` from pipe ``src`` to pipe ``dst`` once everything queued on
    ``src`` has completed. Cost: issue only; the matching wait sees it ``flag_latency_cycles``
    later. Setting an event that is set and not yet waited for is a ``flag-misuse``."""

    src: str
    dst: str
    event_id: int
    loc: Location


class WaitFlag(NamedTuple):
    """Hold pipe ``dst`` until event ``event_id`` from ``src`` is raised, and consume it. A wait
    with no set before it is a ``flag-misuse`` (the device would wait forever)."""

    src: str
    dst: str
    event_id: int
    loc: Location


class PipeBarrier(NamedTuple):
    """Later work on ``pipe`` waits for all earlier work on it; ``"ALL"``: every pipe and the
    scalar unit wait for everything issued so far."""

    pipe: str
    loc: Location


class CrossCoreSet(NamedTuple):
    """Raise cross-core flag ``flag`` once everything queued on ``pipe`` has completed.

    ``scope`` decides whose counters the set raises: ``all_of_kind`` -- every core of the
    setter's kind, once all of them have set (a barrier); ``subblock_pair`` -- both AIVs of the
    group, once both have set; ``group`` -- an AIC's set raises both of its AIVs, the AIC is
    raised once both AIVs have set; ``unicast`` -- the core ``target`` only (an AIC target has
    a flag per AIV: an AIV's unicast set names the AIC's flag, see :class:`CrossCoreWait`,
    so ``flag`` may go up to ``2*ids-1`` there). A counter holds at
    most 15 unconsumed sets. Cost: issue only; the waiter sees it
    ``cross_core_flag_latency_cycles`` later.
    """

    flag: int
    scope: CrossCoreScope
    pipe: str
    loc: Location
    target: int | None = None


class CrossCoreWait(NamedTuple):
    """Hold ``pipe`` until this core's counter of cross-core flag ``flag`` is raised, then take
    one off. A wait that no running core can satisfy is a deadlock report naming the cores,
    the flag and ``loc``; ``who`` describes, for that report, who should have set it.

    ``scope`` "unicast" on an AIC: ``flag`` numbers the AIC's per-AIV intra-block flags, as
    unicast sets from its AIVs raise them -- ``0 .. ids-1`` from its first AIV and ``ids ..
    2*ids-1`` from its second (the 950's numbering)."""

    flag: int
    pipe: str
    loc: Location
    who: str = ""
    scope: CrossCoreScope | None = None


class GmFlagSet(NamedTuple):
    """Write ``value`` (int32) into the GM word ``flag`` once everything queued on ``pipe`` has
    completed: a flag that cores poll in GM (Ascend C's IBSet, NotifyNextBlock).

    Semantics: the word holds ``value`` from then on (in a run without values, the launch
    remembers it). Cost: issue only on the scalar unit; the word lands
    ``gm_write_latency_cycles`` after ``pipe`` drains. An ordering edge for the race checks.
    """

    flag: Region
    value: int
    pipe: str
    loc: Location
    op: str = "gm_flag_set"


class GmFlagWait(NamedTuple):
    """Hold ``pipe`` until the GM word ``flag`` holds at least ``value`` (set by a
    :class:`GmFlagSet` of any core, or already there when the launch holds values): a core
    polling GM (Ascend C's IBWait, WaitPreBlock).

    Semantics: memory is unchanged. A wait that no running core can satisfy is a deadlock
    report naming the cores, ``who`` should have set it and ``loc`` (the device polls forever).
    Cost: the waiter's ``pipe`` goes on ``gm_read_latency_cycles`` after the word landed (or
    after the wait was issued, when it was already set).
    """

    flag: Region
    value: int
    pipe: str
    loc: Location
    who: str = ""
    op: str = "gm_flag_wait"


class CoreBarrier(NamedTuple):
    """Every core of the caller's kind (``everyone``: every core of the launch) finishes its
    queued work before any of them goes on (``used_cores``: only the first so many take part).
    Cost: the latest arrival plus ``cross_core_flag_latency_cycles``."""

    everyone: bool
    loc: Location
    used_cores: int | None = None


class Handoff(NamedTuple):
    """A message that some protocol defines (the Matmul server's answers to its AIVs): this
    core's ``pipe`` waits until the message, sent by ``src_core``'s ``src_pipe`` at cycle
    ``at``, has crossed its ``link`` (``cross_core``: ``cross_core_flag_latency_cycles``;
    ``flag``: an intra-core event, ``flag_latency_cycles``; ``none``). Drawn as a flow arrow;
    an ordering edge for the race checks. Cost: none of its own."""

    src_core: int
    src_pipe: str
    pipe: str
    at: float
    loc: Location
    link: str = "cross_core"


class Request(NamedTuple):
    """A request from this core to ``server``, a core of its group that serves it (the Matmul
    server on the AIC). ``execute`` returns the cycle it arrives: now plus
    ``cross_core_flag_latency_cycles`` (now, when a core serves itself). Requests are served in
    the order they arrive in simulated time. Cost: one call on the scalar unit."""

    server: int
    loc: Location


class Mutex(NamedTuple):
    """Take (``action`` "lock") or give back ("unlock") buffer token ``mutex_id`` on ``pipe``
    (the 950's buffer mutexes, ascend-hw §4).

    Semantics: a lock holds ``pipe`` until the token's last holder on *another* pipe gave it
    back: everything that pipe had queued before its unlock has completed, plus
    ``flag_latency_cycles``. So accesses to one buffer by different pipes happen in program
    order when every access is wrapped in a lock and an unlock; accesses on one pipe are in
    order anyway. Locking a token the same pipe still holds hangs the device (a ``deadlock``
    finding); an unlock by a pipe that does not hold the token is a ``mutex-misuse`` finding.
    An ordering edge for the race checks. Cost: issue only.
    """

    action: Literal["lock", "unlock"]
    pipe: str
    mutex_id: int
    loc: Location


class GateOp(NamedTuple):  # (gate_op below builds one without the constructor's frame)
    """A step of a buffer gate's hand-over protocol (a queue slot's alloc, enque, deque, free).

    ``acquire_write``: the producer takes the buffer; its writes wait for the last use before
    (plus ``flag_latency_cycles`` when there was one). ``release_write``: the producer hands it
    over; the consumer's accesses start no earlier than the producer's last access plus
    ``flag_latency_cycles``. ``acquire_read`` / ``release_read``: the consumer takes and gives
    back the buffer (ordering for the race checks, no time of their own). Cost: issue only.
    """

    gate: Any
    action: GateAction
    loc: Location


#: ``gate_op((gate, action, loc))``: a :class:`GateOp` from its fields, without the
#: constructor's Python frame (a queue makes four per tile).
gate_op = partial(tuple.__new__, GateOp)

__all__ = [
    "CMPMASK_BYTES", "CROSS_CORE_SCOPES", "CmpMaskMove", "Copy", "CoreBarrier", "CrossCoreScope",
    "CrossCoreSet", "CrossCoreWait", "CubeProduct", "FixPipe", "GATE_ACTIONS", "GateAction",
    "GateOp", "GmFlagSet", "GmFlagWait", "Handoff", "ImageLoad", "IndexedCopy", "Inspect",
    "Location", "MATMUL_EVENTS", "MatmulBookkeeping", "Mmad", "Mutex", "PipeBarrier",
    "RegisterFunction", "RegisterOp", "Request",
    "ScalarLoad", "ScalarOps", "ScalarStore", "SetFlag", "SetVectorRegisters", "SparseIndexLoad",
    "Vector", "VectorBlockGather", "VectorCompare", "VectorGather", "VectorReduce", "VectorScatter",
    "VectorSelect", "VectorSequence", "WaitFlag", "WatchLocalMemory", "gate_op",
]
