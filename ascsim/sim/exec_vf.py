"""Executors of the register-level vector function records (semantics and costs:
:class:`~ascsim.isa.RegisterOp`, :class:`~ascsim.isa.RegisterFunction`) and THE register-op
table.

Every VF instruction is one row of :data:`REGISTER_OPS`: a function from the source registers'
values (typed arrays of one 256-byte register, bool arrays of a mask's 256 bits) to the values
of its destinations, and whether the predicate applies lane by lane to its result (then
masked-off lanes are zeroed, or keep the destination's value with merging). One numpy call per
operand per instruction. Values are computed in fp32 for fp16/bf16 registers and rounded once
to the result's type, as the tile vector ops are (:mod:`ascsim.sim.exec_vector`); integer
arithmetic wraps. Loads and stores touch UB through the same views, bounds rules and access
records as every other instruction (:mod:`ascsim.sim.views`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import RegisterFunction, RegisterOp
from ascsim.sim.exec_registers import vector_registers
from ascsim.sim.numerics import convert
from ascsim.sim.vf_registers import (
    ALL_LANES,
    MASK_BITS,
    REGISTER_BYTES,
    active_lanes,
    lane_bits,
    lanes,
    register_file,
    unwritten_vector,
)
from ascsim.sim.views import check_bytes, gates_done, gates_ready, raw_bytes

BLOCK = 32  # bytes of a DataBlock
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_INT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _work(x: np.ndarray) -> np.ndarray:
    """The datapath's type for ``x``: fp32 for fp16/bf16 (exact), else its own."""
    if x.dtype.itemsize == 2 and x.dtype.kind != "i" and x.dtype.kind != "u":
        return x.astype(np.float32)
    return x


def _bits(x: np.ndarray) -> np.ndarray:
    """``x`` as unsigned integers of its width (bitwise ops on any type)."""
    return x if x.dtype.kind in "ui" else x.view(_UINT[x.dtype.itemsize])


def _fit(result: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A result of one register's lanes in ``dtype``."""
    result = np.asarray(result)
    if result.dtype == dtype:
        return result
    if dtype.kind in "ui" and result.dtype.kind == "f":
        return convert(result, dtype, "trunc")
    return result.astype(dtype)


def _scalar(rec: RegisterOp, i: int, dtype: np.dtype):
    return np.asarray(rec.scalars[i]).astype(dtype).astype(_work(np.zeros(1, dtype)).dtype)


# ------------------------------------------------------------------ lane-wise arithmetic
def _binary(fn, bitwise=False):
    def run(rec, a, b):
        if bitwise:
            return (fn(_bits(a), _bits(b)).view(a.dtype) if a.dtype.kind == "f" or
                    a.dtype.name == "bfloat16" else fn(a, b),)
        return (_fit(fn(_work(a), _work(b)), rec.dtype),)
    return run


def _unary(fn, bitwise=False):
    def run(rec, a):
        if bitwise:
            return (fn(_bits(a)).view(a.dtype),)
        return (_fit(fn(_work(a)), rec.dtype),)
    return run


def _with_scalar(fn):
    def run(rec, a):
        return (_fit(fn(_work(a), _scalar(rec, 0, a.dtype)), rec.dtype),)
    return run


def _leaky(x, alpha):
    return np.where(x >= 0, x, x * alpha)


def _shift(left: bool):
    def run(rec, a, *shift):
        amount = shift[0] if shift else np.asarray(rec.scalars[0])
        bits = _bits(a)
        amount = np.asarray(amount).astype(bits.dtype)
        out = np.left_shift(bits, amount) if left else np.right_shift(bits, amount)
        return (out.astype(bits.dtype).view(a.dtype),)
    return run


def _mull(rec, a, b):
    wide = np.int64 if a.dtype.kind == "i" else np.uint64
    product = a.astype(wide) * b.astype(wide)
    lo = (product & wide(0xFFFFFFFF)).astype(np.uint32).view(a.dtype)
    hi = (product >> wide(32)).astype(np.uint32 if a.dtype.kind == "u" else np.int32)
    return lo, hi.view(a.dtype)


def _carry(sign: int):
    def run(rec, a, b, carry):
        wide = np.int64
        c = active_lanes(carry, a.dtype).astype(wide)
        total = a.astype(np.uint32).astype(wide) + sign * (b.astype(np.uint32).astype(wide) + c)
        out = (total & 0xFFFFFFFF).astype(np.uint32).view(a.dtype)
        flag = (total >> 32) != 0 if sign > 0 else total < 0
        return lane_bits(flag, a.dtype), out
    return run


def _select(rec, a, b, mask):
    if a.dtype == bool:
        return (np.where(mask, a, b),)
    return (np.where(active_lanes(mask, a.dtype), a, b),)


# ------------------------------------------------------------------ reductions
def _tree(values: np.ndarray, fn) -> np.ndarray:
    """Reduce the last axis in the vector unit's tree order (halves added pairwise)."""
    while values.shape[-1] > 1:
        half = values.shape[-1] // 2
        values = fn(values[..., :half], values[..., half:])
    return values[..., 0]


_IDENTITY = {"sum": 0, "max": -np.inf, "min": np.inf}
_REDUCE_FN = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def _reduce(how: str):
    def run(rec, a, mask):
        active = active_lanes(mask, a.dtype)[:a.size]
        work = _work(a)
        if work.dtype.kind == "f":
            fill = _IDENTITY[how]
        else:
            info = np.iinfo(work.dtype)
            fill = {"sum": 0, "max": info.min, "min": info.max}[how]
        values = work if mask is ALL_LANES else np.where(active, work, work.dtype.type(fill))
        # fp16 sums accumulate in fp32 (the datapath's type) and round once at the end; a
        # maximum or minimum is the same in any order (one numpy reduction).
        fn = _REDUCE_FN[how]
        out = np.zeros(a.size, dtype=rec.dtype)
        if rec.attrs.get("datablock"):
            per_block = BLOCK // a.dtype.itemsize
            blocks = values.reshape(-1, per_block)
            result = _tree(blocks, fn) if how == "sum" else fn.reduce(blocks, axis=-1)
            out[:blocks.shape[0]] = _fit(result, rec.dtype)
        else:
            out[0] = _fit(_tree(values, fn) if how == "sum" else fn.reduce(values), rec.dtype)
        return (out,)
    return run


def _pair_sum(rec, a, mask):
    work = np.where(active_lanes(mask, a.dtype)[:a.size], _work(a), 0)
    out = np.zeros(a.size, dtype=rec.dtype)
    out[:a.size // 2] = _fit(work[0::2] + work[1::2], rec.dtype)
    return (out,)


# ------------------------------------------------------------------ conversions
def _place_narrow(values: np.ndarray, dtype: np.dtype, layout: int) -> np.ndarray:
    """Narrower results into the lanes of a register of ``dtype``: element ``j`` to lane
    ``j * k + layout`` (``k`` = the width ratio), the other lanes zero."""
    out = np.zeros(lanes(dtype), dtype=dtype)
    k = out.size // values.size
    out[layout::k][:values.size] = values
    return out


def _astype(rec, a, *mask):
    """A conversion. The predicate counts the elements of the wider type (the side with
    fewer lanes); the results of masked-off elements are zero."""
    attrs = rec.attrs
    dst = rec.dtype
    mode = attrs.get("round", "rint")
    n_src, n_dst = a.size, lanes(dst)
    layout = attrs.get("layout", 0)
    wider = a.dtype if n_src <= n_dst else dst
    active = active_lanes(mask[0], wider)[:min(n_src, n_dst)] if mask else None
    if n_dst > n_src:  # narrowing: the results go to every k-th lane
        values = convert(a, dst, mode)
        if active is not None:
            values = np.where(active, values, dst.type(0))
        return (_place_narrow(values, dst, layout % (n_dst // n_src)),)
    if n_dst < n_src:  # widening: from every k-th lane of the source
        k = n_src // n_dst
        values = convert(a[layout % k::k][:n_dst], dst, mode)
    else:
        values = convert(a, dst, mode)
    if active is not None:
        values = np.where(active, values, dst.type(0))
    return (values,)


def _exp_sub(rec, a, b):
    dst = rec.dtype
    n = lanes(dst)
    layout = rec.attrs.get("layout", 0)
    if a.size > n:  # fp16 sources: one half of the lanes, computed and returned in fp32
        k = a.size // n
        a, b = a[layout % k::k][:n], b[layout % k::k][:n]
    return (_fit(np.exp(_work(a) - _work(b)), dst),)


def _muls_cast(rec, a):
    product = _work(a) * _scalar(rec, 0, a.dtype)
    values = convert(product.astype(np.float32), rec.dtype, "rint")
    return (_place_narrow(values, rec.dtype, rec.attrs.get("layout", 0)),)


def _pack(rec, a):
    """Narrow each element to the lower half of its bits (``part`` picks the half of the
    destination the results fill)."""
    if a.dtype == bool:
        half = a[0::2]
        out = np.zeros(MASK_BITS, dtype=bool)
        start = MASK_BITS // 2 if rec.attrs.get("upper") else 0
        out[start:start + half.size] = half
        return (out,)
    narrow = np.dtype(_UINT[a.dtype.itemsize // 2])
    values = _bits(a).astype(narrow)
    out = np.zeros(lanes(narrow), dtype=narrow)
    start = values.size if rec.attrs.get("upper") else 0
    out[start:start + values.size] = values
    return (out.view(rec.dtype),)


def _unpack(rec, a):
    """Widen one half of the elements (``part``: the upper or the lower half), zero- or
    sign-extended."""
    if a.dtype == bool:
        start = MASK_BITS // 2 if rec.attrs.get("upper") else 0
        return (np.repeat(a[start:start + MASK_BITS // 2], 2),)
    n = lanes(rec.dtype)
    start = n if rec.attrs.get("upper") else 0
    values = a[start:start + n]
    wide = (_INT if rec.dtype.kind == "i" or a.dtype.kind == "i" else _UINT)[
        rec.dtype.itemsize]
    return (values.astype(wide).view(rec.dtype),)


def _interleave(rec, a, b):
    both = np.empty(a.size * 2, dtype=a.dtype)
    both[0::2], both[1::2] = a, b
    return both[:a.size], both[a.size:]


def _de_interleave(rec, a, b):
    both = np.concatenate((a, b))
    return both[0::2].copy(), both[1::2].copy()


def _mask_interleave(inverse: bool):
    def run(rec, a, b):
        size = rec.attrs.get("width", 1)
        ga, gb = a.reshape(-1, size), b.reshape(-1, size)
        if inverse:
            both = np.concatenate((ga, gb))
            return both[0::2].reshape(-1), both[1::2].reshape(-1)
        both = np.empty((ga.shape[0] * 2, size), dtype=bool)
        both[0::2], both[1::2] = ga, gb
        flat = both.reshape(-1)
        return flat[:MASK_BITS], flat[MASK_BITS:]
    return run


# ------------------------------------------------------------------ fills, indices, moves
def _full(rec, *src):
    n = lanes(rec.dtype)
    if src:
        value = src[0][-1 if rec.attrs.get("highest") else 0]
        return (np.full(n, value, dtype=rec.dtype),)
    return (np.full(n, np.asarray(rec.scalars[0]).astype(rec.dtype), dtype=rec.dtype),)


def _arange(rec):
    n = lanes(rec.dtype)
    step = -1 if rec.attrs.get("decrease") else 1
    values = np.asarray(rec.scalars[0]) + step * np.arange(n)
    return (_fit(values, rec.dtype),)


def _copy(rec, a):
    return (a.copy(),)


def _squeeze(core, rec, a, mask):
    active = active_lanes(mask, a.dtype)[:a.size]
    kept = a[active]
    out = np.zeros(a.size, dtype=a.dtype)
    out[:kept.size] = kept
    if rec.attrs.get("store_count"):  # the AR register counts bytes (SqueezeMode page)
        register_file(core).ar = int(kept.size) * rec.dtype.itemsize
    return (out.view(rec.dtype) if rec.dtype.itemsize == a.dtype.itemsize else out,)


def _unsqueeze(rec, mask):
    n = lanes(rec.dtype)
    return (active_lanes(mask, rec.dtype)[:n].astype(rec.dtype),)


def _gather_register(rec, src, index):
    idx = index.astype(np.int64) % src.size
    return (src[idx],)


def _histogram(rec, src, mask, old):
    """Counts of the active bytes per bin value: bins ``128 * bin`` .. +127 in the 128 u16
    lanes; ``cumulative``: the count of values <= each bin."""
    active = active_lanes(mask, src.dtype)[:src.size]
    counts = np.bincount(src[active].astype(np.int64), minlength=256)
    if rec.attrs.get("cumulative"):
        counts = np.cumsum(counts)
    start = 128 * rec.attrs.get("bin", 0)
    add = counts[start:start + 128].astype(np.uint16)
    return ((old.astype(np.uint16) + add).astype(old.dtype),)


# ------------------------------------------------------------------ masks
#: id(active lanes array) -> (that array, its mask bits): the front-end hands every
#: ``create_mask`` / ``update_mask`` of one pattern the same read-only array.
_MASK_BITS: dict = {}


def _create_mask(rec):
    active = rec.attrs["active"]
    hit = _MASK_BITS.get(id(active))
    if hit is not None and hit[0] is active and hit[1] is rec.dtype:
        return (hit[2],)
    bits = lane_bits(np.asarray(active, dtype=bool), rec.dtype)
    if not active.flags.writeable:  # a shared pattern (see above): remember its bits
        if bits is not ALL_LANES:
            bits.setflags(write=False)
        _MASK_BITS[id(active)] = (active, rec.dtype, bits)
    return (bits,)


def _compare(fn):
    def run(rec, a, b_or_mask, *rest):
        if rest:  # register against register, then the predicate
            b, mask = b_or_mask, rest[0]
        else:
            b, mask = _scalar(rec, 0, a.dtype), b_or_mask
        result = fn(_work(a), _work(b) if isinstance(b, np.ndarray) else b)
        return (lane_bits(result & active_lanes(mask, a.dtype)[:a.size], a.dtype),)
    return run


def _mask_logic(fn):
    def run(rec, a, *rest):
        *others, pred = rest
        return (fn(a, *others) & pred,)
    return run


def _mask_from_register(rec, src):
    """A mask from the bits of one DataBlock-sized group of ``src`` (b16: 16 B, each bit
    twice; b32: 8 B, each bit four times)."""
    size = src.dtype.itemsize
    chunk = MASK_BITS // 8 // size
    raw = src.view(np.uint8)[rec.attrs["offset"] * chunk:][:chunk]
    return (np.repeat(np.unpackbits(raw, bitorder="little").astype(bool), size),)


def _mask_spr(core, rec):
    regs = vector_registers(core)
    words = (regs.low,) if rec.attrs.get("width") == 4 else (regs.low, regs.high)
    raw = np.frombuffer(b"".join(w.to_bytes(8, "little") for w in words), np.uint8)
    bits = np.unpackbits(raw, bitorder="little").astype(bool)
    return (np.repeat(bits, MASK_BITS // bits.size),)


def _clear_spr(core, rec):
    register_file(core).ar = 0
    return ()


# ------------------------------------------------------------------ memory
def _access(region, lo: int, hi: int) -> tuple:
    return (region.mem.key, region.offset + lo, region.offset + hi)


class _Memory:
    """The UB side of one load or store: its views (full runs) or bounds checks (timing-only
    runs), and the access records for the observers."""

    __slots__ = ("core", "region", "loc", "values", "touched")

    def __init__(self, core, rec):
        self.core = core
        self.region = rec.region
        self.loc = rec.loc
        self.values = core.launch.values
        self.touched: list = []

    def bytes(self, lo: int, hi: int):
        self.touched.append(_access(self.region, lo, hi))
        if self.values:
            return raw_bytes(self.core, self.region, lo, hi, self.loc)
        check_bytes(self.core, self.region, lo, hi, self.loc)
        return None


def _load_norm(mem, rec, n_bytes: int):
    raw = mem.bytes(0, n_bytes)
    return None if raw is None else raw.view(rec.dtype)


def _dist_load(mem, rec):
    """A vector load in one of its distributions (``attrs['dist']``)."""
    dist, dtype = rec.attrs["dist"], rec.dtype
    size = rec.attrs.get("grain") or dtype.itemsize
    grain = np.dtype(_UINT[size])
    if dist == "norm":
        got = _load_norm(mem, rec, REGISTER_BYTES)
        return None if got is None else (got.copy(),)
    if dist == "brc":
        raw = mem.bytes(0, size)
        return None if raw is None else (np.repeat(raw.view(grain), REGISTER_BYTES // size)
                                          .view(dtype),)
    if dist == "us":
        raw = mem.bytes(0, REGISTER_BYTES // 2)
        return None if raw is None else (np.repeat(raw.view(grain), 2).view(dtype),)
    if dist == "ds":
        raw = mem.bytes(0, 2 * REGISTER_BYTES)
        return None if raw is None else (raw.view(grain)[0::2].copy().view(dtype),)
    if dist in ("unpk", "unpk4"):
        k = 4 if dist == "unpk4" else 2
        grain = np.dtype(np.uint8) if dist == "unpk4" else grain
        raw = mem.bytes(0, REGISTER_BYTES // k)
        if raw is None:
            return None
        out = np.zeros(REGISTER_BYTES // grain.itemsize, dtype=grain)
        out[0::k] = raw.view(grain)
        return (out.view(dtype),)
    if dist == "blk":
        raw = mem.bytes(0, BLOCK)
        return None if raw is None else (np.tile(raw, REGISTER_BYTES // BLOCK).view(dtype),)
    if dist == "e2b":
        count = REGISTER_BYTES // BLOCK
        raw = mem.bytes(0, count * size)
        return None if raw is None else (np.repeat(raw.view(grain), BLOCK // size)
                                          .view(dtype),)
    if dist == "dintlv":
        raw = mem.bytes(0, 2 * REGISTER_BYTES)
        if raw is None:
            return None
        both = raw.view(grain)
        return both[0::2].copy().view(dtype), both[1::2].copy().view(dtype)
    raise KernelError(f"load_align: no load distribution {dist!r}", rec.loc)


def _block_load(mem, rec, mask):
    """DataBlock mode: block ``b`` of the register from ``b * block_stride`` DataBlocks on;
    a block whose predicate bits are all off is not read and holds zero."""
    stride = rec.attrs["block_stride"] * BLOCK
    blocks = REGISTER_BYTES // BLOCK
    on = mask.reshape(blocks, -1).any(axis=1) if mask is not None else np.ones(blocks, bool)
    out = np.zeros(REGISTER_BYTES, dtype=np.uint8)
    for b in np.flatnonzero(on):  # 8 blocks at most: one view each
        raw = mem.bytes(int(b) * stride, int(b) * stride + BLOCK)
        if raw is not None:
            out[b * BLOCK:(b + 1) * BLOCK] = raw
    return (out.view(rec.dtype),)


def _mask_load(mem, rec):
    dist = rec.attrs["dist"]
    nbytes = {"norm": MASK_BITS // 8, "us": MASK_BITS // 16, "ds": MASK_BITS // 4}[dist]
    raw = mem.bytes(0, nbytes)
    if raw is None:
        return None
    bits = np.unpackbits(raw, bitorder="little").astype(bool)
    if dist == "us":
        bits = np.repeat(bits, 2)
    elif dist == "ds":
        bits = bits[0::2]
    return (bits,)


def _execute_load(core, rec, vals):
    mem = _Memory(core, rec)
    kind = rec.attrs.get("kind", "vector")
    if kind == "mask":
        out = _mask_load(mem, rec)
    elif kind == "block":
        out = _block_load(mem, rec, vals[0] if vals else None)
    elif kind == "gather":
        index, mask = vals
        idx = index.astype(np.int64)
        active = active_lanes(mask, index.dtype)[:idx.size]
        unit = rec.attrs.get("unit", rec.dtype.itemsize)
        hi = int(idx[active].max()) * unit + unit if active.any() else 0
        raw = mem.bytes(0, hi)
        out = None
        if raw is not None:
            lanes_out = np.zeros(idx.size, dtype=rec.dtype)
            src = raw.view(np.uint8)
            offsets = idx[active] * unit
            picked = src[offsets[:, None] + np.arange(rec.dtype.itemsize)]
            lanes_out[active] = picked.reshape(-1).view(rec.dtype)
            out = (lanes_out,)
    else:
        out = _dist_load(mem, rec)
    return out, tuple(mem.touched), ()


def _write(mem, lo: int, data: np.ndarray, keep: np.ndarray | None = None) -> None:
    """Write ``data`` (bytes) at byte ``lo``; with ``keep`` (one bool per byte), only those."""
    raw = mem.bytes(lo, lo + data.size)
    if raw is None:
        return
    if keep is None:
        raw[:] = data
    else:
        raw[keep] = data[keep]


def _execute_store(core, rec, vals):
    mem = _Memory(core, rec)
    attrs = rec.attrs
    dist = attrs.get("dist", "norm")
    kind = attrs.get("kind", "vector")
    if kind == "mask":
        bits = vals[0]
        if dist == "pack":
            bits = bits[0::2]
        _write(mem, 0, np.packbits(bits, bitorder="little"))
    elif kind == "scatter":
        src, index, mask = vals
        active = active_lanes(mask, src.dtype)[:src.size]
        idx = index.astype(np.int64)[active]
        if idx.size:
            size = src.dtype.itemsize
            raw = mem.bytes(0, int(idx.max()) * size + size)
            if raw is not None:
                raw.view(src.dtype)[idx] = src[active]
    elif kind == "block":
        src, mask = vals
        stride = attrs["block_stride"] * BLOCK
        on = mask.reshape(REGISTER_BYTES // BLOCK, -1).any(axis=1)
        data = src.view(np.uint8)
        for b in np.flatnonzero(on):  # 8 blocks at most: one view each
            _write(mem, int(b) * stride, data[b * BLOCK:(b + 1) * BLOCK])
    elif kind == "unaligned":
        src = vals[0]
        count = attrs["count"]
        if count is None:  # the elements the last squeeze kept (the AR register's bytes)
            count = register_file(core).ar // src.dtype.itemsize
        _write(mem, 0, src[:count].view(np.uint8))
    elif dist == "intlv":
        a, b, mask = vals
        both = np.empty(a.size * 2, dtype=a.dtype)
        both[0::2], both[1::2] = a, b
        keep = np.repeat(np.repeat(active_lanes(mask, a.dtype)[:a.size], 2), a.dtype.itemsize)
        _write(mem, 0, both.view(np.uint8), keep)
    else:
        src, mask = vals[0], (vals[1] if len(vals) > 1 else None)
        n = src.size
        active = np.ones(n, bool) if mask is None else active_lanes(mask, src.dtype)[:n]
        if dist == "first":
            _write(mem, 0, src[:1].view(np.uint8))
        elif dist in ("pack", "pack4"):
            part = src.dtype.itemsize // (2 if dist == "pack" else 4)
            lows = _bits(src).astype(_UINT[max(part, 1)])[active]
            _write(mem, 0, lows.view(np.uint8))
        else:
            keep = np.repeat(active, src.dtype.itemsize)
            _write(mem, 0, src.view(np.uint8), keep)
    return (), (), tuple(mem.touched)


def _mem_bar(core, rec):
    return ()


class RegisterOpSpec(NamedTuple):
    """One row of the register-op table. ``fn(rec, *sources)`` returns the destinations'
    values (``with_core``: ``fn(core, rec, *sources)``); ``lanewise``: the predicate applies
    to each lane of the (first) result; ``memory``: a load or store, run by its executor."""

    fn: Any
    lanewise: bool = True
    with_core: bool = False
    memory: bool = False


_S = RegisterOpSpec
REGISTER_OPS: dict[str, RegisterOpSpec] = {
    # arithmetic on two registers
    "add": _S(_binary(np.add)), "sub": _S(_binary(np.subtract)),
    "mul": _S(_binary(np.multiply)), "div": _S(_binary(np.divide)),
    "max": _S(_binary(np.maximum)), "min": _S(_binary(np.minimum)),
    "abs_sub": _S(_binary(lambda a, b: np.abs(a - b))),
    "prelu": _S(_binary(lambda x, s: np.where(x >= 0, x, x * s))),
    "and": _S(_binary(np.bitwise_and, bitwise=True)),
    "or": _S(_binary(np.bitwise_or, bitwise=True)),
    "xor": _S(_binary(np.bitwise_xor, bitwise=True)),
    "mull": _S(_mull), "addc": _S(_carry(1), lanewise=False),
    "subc": _S(_carry(-1), lanewise=False),
    "exp_sub": _S(_exp_sub),
    # reading the destination too (its old value is the last source)
    "axpy": _S(lambda rec, a, d: (_fit(_work(a) * _scalar(rec, 0, a.dtype) + _work(d),
                                       rec.dtype),)),
    "mul_add_dst": _S(lambda rec, a, b, d: (_fit(_work(a) * _work(b) + _work(d),
                                                 rec.dtype),)),
    "mul_dst_add": _S(lambda rec, a, b, d: (_fit(_work(d) * _work(a) + _work(b),
                                                 rec.dtype),)),
    "histograms": _S(_histogram, lanewise=False),
    # one register
    "abs": _S(_unary(np.abs)), "neg": _S(_unary(np.negative)),
    "relu": _S(_unary(lambda x: np.maximum(x, 0))), "sqrt": _S(_unary(np.sqrt)),
    "exp": _S(_unary(np.exp)), "ln": _S(_unary(np.log)), "log2": _S(_unary(np.log2)),
    "log10": _S(_unary(np.log10)), "truncate": _S(_unary(np.trunc)),
    "not": _S(_unary(np.invert, bitwise=True)),
    # with a scalar
    "adds": _S(_with_scalar(np.add)), "muls": _S(_with_scalar(np.multiply)),
    "maxs": _S(_with_scalar(np.maximum)), "mins": _S(_with_scalar(np.minimum)),
    "leaky_relu": _S(_with_scalar(_leaky)),
    "shl": _S(_shift(True)), "shr": _S(_shift(False)),
    "muls_cast": _S(_muls_cast),
    # selection, reductions, conversions, rearrangements
    "select": _S(_select, lanewise=False),
    "reduce_sum": _S(_reduce("sum"), lanewise=False),
    "reduce_max": _S(_reduce("max"), lanewise=False),
    "reduce_min": _S(_reduce("min"), lanewise=False),
    "pair_reduce_sum": _S(_pair_sum, lanewise=False),
    "astype": _S(_astype, lanewise=False), "pack": _S(_pack, lanewise=False),
    "unpack": _S(_unpack, lanewise=False),
    "interleave": _S(_interleave, lanewise=False),
    "de_interleave": _S(_de_interleave, lanewise=False),
    "mask_interleave": _S(_mask_interleave(False), lanewise=False),
    "mask_de_interleave": _S(_mask_interleave(True), lanewise=False),
    "full": _S(_full), "arange": _S(_arange, lanewise=False), "move": _S(_copy),
    "squeeze": _S(_squeeze, lanewise=False, with_core=True),
    "unsqueeze": _S(_unsqueeze, lanewise=False),
    "gather_register": _S(_gather_register, lanewise=False),
    # masks
    "create_mask": _S(_create_mask, lanewise=False),
    "eq": _S(_compare(np.equal), lanewise=False), "ne": _S(_compare(np.not_equal),
                                                             lanewise=False),
    "lt": _S(_compare(np.less), lanewise=False), "le": _S(_compare(np.less_equal),
                                                           lanewise=False),
    "gt": _S(_compare(np.greater), lanewise=False),
    "ge": _S(_compare(np.greater_equal), lanewise=False),
    "mask_and": _S(_mask_logic(np.logical_and), lanewise=False),
    "mask_or": _S(_mask_logic(np.logical_or), lanewise=False),
    "mask_xor": _S(_mask_logic(np.logical_xor), lanewise=False),
    "mask_not": _S(_mask_logic(np.logical_not), lanewise=False),
    "mask_move": _S(lambda rec, a, *pred: (a & pred[0] if pred else a.copy(),),
                    lanewise=False),
    "mask_from_register": _S(_mask_from_register, lanewise=False),
    "mask_spr": _S(_mask_spr, lanewise=False, with_core=True),
    "clear_spr": _S(_clear_spr, lanewise=False, with_core=True),
    "mem_bar": _S(_mem_bar, lanewise=False, with_core=True),
    # memory
    "load": _S(_execute_load, memory=True),
    "store": _S(_execute_store, memory=True),
}

#: Record op -> the op name the SoC table prices it by (when the two differ).
_PRICED_AS = {"mask_interleave": "interleave", "mask_de_interleave": "de_interleave",
              "gather_register": "gather", "create_mask": "mask", "eq": "compare",
              "ne": "compare", "lt": "compare", "le": "compare", "gt": "compare",
              "ge": "compare", "mask_and": "mask", "mask_or": "mask", "mask_xor": "mask",
              "mask_not": "mask", "mask_move": "mask", "mask_from_register": "mask",
              "mask_spr": "mask", "clear_spr": "mask"}


def _read(core, regs, rec, number: int, as_dtype, role: str):
    value = regs.values.get(number)
    if value is None:
        kind = regs.kinds.get(number, "vector")
        name = regs.names.get(number, f"#{number}")
        if kind == "mask":
            core.launch.findings.report(
                "uninitialized-register",
                f"{rec.op} reads mask register {name!r}, which the vector function never set: "
                "its lanes are undefined (read as all off)", rec.loc,
                hint="set the mask first (vf.create_mask, vf.update_mask or a compare)",
                core=core.core_id, register=name)
            value = np.zeros(MASK_BITS, dtype=bool)
        else:
            core.launch.findings.report(
                "uninitialized-register",
                f"{rec.op} reads register {name!r} ({role}) before the vector function writes "
                "it: its contents are undefined (read as the 0xFF fill, NaN)", rec.loc,
                hint="load or fill the register (vf.load_align, vf.full) before reading it",
                core=core.core_id, register=name)
            value = unwritten_vector(as_dtype or np.dtype(np.float32))
        regs.values[number] = value
    if as_dtype is not None and value.dtype != bool and value.dtype != as_dtype:
        value = value.view(as_dtype)
    return value


def _stand_in(regs, number: int, dtype):
    """A register's value in a timing-only run, where values are not computed: all lanes on
    for a mask, zeros for a vector."""
    if regs.kinds.get(number) == "mask" or dtype is None:
        return np.ones(MASK_BITS, dtype=bool)
    return np.zeros(lanes(dtype), dtype=dtype)


def execute_register_op(core, rec: RegisterOp):
    op, dsts, srcs, loc, mask, _, _, _, _, _, src_dtypes = rec
    spec = REGISTER_OPS.get(op)
    if spec is None:
        raise KernelError(f"the vector function unit has no instruction {op!r}", loc)
    regs = core.vf_registers if hasattr(core, "vf_registers") else register_file(core)
    reads: tuple = ()
    writes: tuple = ()
    values = core.launch.values
    memory = spec.memory
    if memory:
        _check_alignment(core, rec)
    if values or memory:
        dtypes = src_dtypes or (None,) * len(srcs)
        if values:
            held = regs.values
            vals = []
            for n, d in zip(srcs, dtypes):
                value = held.get(n)
                if value is None or (d is not None and value.dtype != d
                                     and value.dtype != bool):
                    value = _read(core, regs, rec, n, d, "source")  # unwritten, or re-read
                vals.append(value)
        else:  # timing only: the footprint of a load or store, from stand-in values
            vals = [_stand_in(regs, n, d) for n, d in zip(rec.srcs, dtypes)]
        if memory:
            out, reads, writes = spec.fn(core, rec, vals)
        else:  # (floating-point warnings are off while a function runs: see below)
            out = spec.fn(core, rec, *vals) if spec.with_core else spec.fn(rec, *vals)
        if values and out:
            if mask is not None and spec.lanewise:
                out = _predicate(core, regs, rec, out)
            held = regs.values
            for number, value in zip(dsts, out):
                held[number] = value
    return _place(core, regs, rec, reads, writes)


def _predicate(core, regs, rec, out):
    first = out[0]
    mask = _read(core, regs, rec, rec.mask, None, "mask")
    if mask is ALL_LANES:
        return out
    active = active_lanes(mask, first.dtype)[:first.size]
    if active.all():
        return out
    if rec.merging:
        old = _read(core, regs, rec, rec.dsts[0], first.dtype, "merged destination")
        kept = np.where(active, first, old.view(first.dtype)[:first.size])
    else:
        kept = np.where(active, first, first.dtype.type(0))
    return (kept, *out[1:])


#: Load distribution -> the alignment (bytes) of its UB address (PyPTO Pro's vf.load_align
#: page, table 1-3; "grain": the element it broadcasts); stores in DataBlocks need 32.
_LOAD_ALIGN = {"norm": 32, "us": 32, "ds": 32, "unpk": 32, "unpk4": 32, "blk": 32,
               "dintlv": 32, "brc": "grain", "e2b": "e2b"}


def alignment(rec: RegisterOp) -> int:
    """The byte alignment the UB address of a VF load or store needs."""
    attrs = rec.attrs
    if "align" in attrs:  # the unaligned loads
        return attrs["align"]
    kind = attrs.get("kind")
    if kind in ("unaligned", "gather", "scatter"):
        return 1 if kind == "unaligned" else rec.dtype.itemsize
    if kind in ("mask", "block") or rec.op == "store":
        if kind == "mask" and attrs.get("dist") == "us":
            return MASK_BITS // 16
        return 32
    rule = _LOAD_ALIGN.get(attrs.get("dist"), 32)
    if rule == "grain":
        return attrs.get("grain") or rec.dtype.itemsize
    if rule == "e2b":
        return REGISTER_BYTES // BLOCK * (attrs.get("grain") or rec.dtype.itemsize)
    return rule


def _check_alignment(core, rec: RegisterOp) -> None:
    need = alignment(rec)
    offset = rec.region.offset
    if offset % need:
        core.launch.findings.report(
            "alignment",
            f"vf {rec.op} ({rec.attrs.get('dist') or rec.attrs.get('kind')}): UB address "
            f"{offset} is not {need}-byte aligned", rec.loc,
            hint=f"start the access on a {need}-byte boundary, or use the unaligned form "
            "(vf.load_unalign / vf.store_unalign)", core=core.core_id, buffer="UB",
            start=offset)


def _price(core, rec) -> tuple[float, float]:
    """(V-pipe cycles, latency) of ``rec``: one repeat of its cost class, over the issue
    width."""
    soc = core.soc
    op = _PRICED_AS.get(rec.op, rec.op)
    if op in ("load", "store"):
        op = rec.attrs.get("kind") if rec.attrs.get("kind") in ("gather", "scatter") else op
    cost_class = soc.vf_op_classes.get(op, "copy")
    dtype = rec.dtype if rec.dtype is not None else np.dtype(np.float32)
    busy, latency = core.costs.vector(cost_class, dtype, 1)
    return busy / (soc.timing.vector_function_issue_width or 1), latency


def _place(core, regs, rec, reads, writes):
    attrs = rec.attrs
    key = (rec.op, attrs.get("kind") if attrs else None, rec.dtype)
    price = regs.prices.get(key)
    if price is None:
        price = regs.prices[key] = _price(core, rec)
    region = rec.region
    start = core.pipe_free["V"]
    issued = getattr(core, "vf_issued", 0.0)
    if issued > start:
        start = issued
    if region is None:
        return core.place("V", rec.op, start, price[0], price[1], rec.loc, reads, writes, rec)
    gates = (region,)
    ready = gates_ready(gates)
    if ready > start:
        start = ready
    instr = core.place("V", rec.op, start, price[0], price[1], rec.loc, reads, writes, rec)
    gates_done(gates, instr.done)
    return instr


def execute_register_function(core, rec: RegisterFunction):
    regs = register_file(core)
    if not rec.begin:
        regs.depth -= 1
        regs.release(n for n, _, _ in rec.declared)
        if not regs.depth:
            np.seterr(**regs.float_errors)
        return None
    if not regs.depth:
        # Register lanes overflow, divide by zero and take logs of negatives as the hardware
        # does, silently: numpy's warnings are off for the function's run (one setting per
        # call rather than one per instruction; a function body never waits, so no other
        # core runs meanwhile).
        regs.float_errors = np.seterr(all="ignore")
    regs.depth += 1
    core.scalar_work(core.timing.scalar_cycles_per_call)
    core.vf_issued = core.scalar
    limits = core.soc.vf_registers
    if not limits:
        raise KernelError(f"{core.soc.name} has no register-level vector functions "
                          "(RegBase VF is a 950 feature)", rec.loc)
    for number, kind, name in rec.declared:
        regs.declare(number, kind, name)
    for kind, count in rec.live:
        limit = limits.get(kind)
        if limit is not None and count > limit:
            core.launch.findings.report(
                "register-spill",
                f"vector function {rec.name} needs {count} {kind} registers live at once; the "
                f"SoC has {limit}: the compiler spills the rest to a reserved UB area (slower)",
                rec.loc, hint="split the function, or reuse registers whose values are dead",
                core=core.core_id, kind=kind, count=count, limit=limit)
    return None


EXECUTORS = {RegisterOp: execute_register_op, RegisterFunction: execute_register_function}

__all__ = ["EXECUTORS", "REGISTER_OPS", "RegisterOpSpec", "lanes"]
