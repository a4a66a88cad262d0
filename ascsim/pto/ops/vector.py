"""Element-wise tile operations on the vector unit (UB tiles, ``V`` pipe).

PyPTO Pro writes the output first (``pl.add(out, a, b)``), computes over the output's valid
window, never broadcasts and never promotes types. A right operand that is not a tile makes the
scalar form of the op (``add`` -> ``adds``). Each call is one :class:`~ascsim.isa.Vector`
record naming a row of the machine's vector table: in count form when every operand's window
is one contiguous run, else with one element index array per operand (the window's rows
inside each tile's frame) and one repeat per 256 bytes of each row.

The fused casts, the partial ops (``partadd`` ...) and ``quant``/``dequant`` are short chains
of vector passes, each one :class:`~ascsim.isa.VectorSequence` record
(:mod:`ascsim.pto.ops.routine`). The vector-mask calls (``set_vec_mask`` ...) are scalar
instructions: tile operations set the mask they need themselves.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa import ScalarOps, Vector
from ascsim.pto.dtypes import PACKED_NIBBLES
from ascsim.pto.enums import ROUNDING, MemorySpace, QuantMode, RoundMode
from ascsim.pto.ops.common import KernelError, current_core, expect_space, user_location
from ascsim.pto.ops.routine import Window, repeats_of, run, vec_tiles, window
from ascsim.pto.tile import Tile
from ascsim.sim import fp4
from ascsim.sim.numerics import compute_dtype, convert

REPEAT_BYTES = 256


def elementwise(unit_op: str, out: Tile, srcs: tuple, scalars: tuple, op: str, loc,
                attrs=None, window=None) -> None:
    """Run the vector unit's ``unit_op`` over ``window`` (default: the output's valid
    window) of ``out`` and ``srcs``."""
    if not isinstance(out, Tile):
        raise KernelError(f"{op}: the output must be a tile, got {type(out).__name__}", loc)
    tiles = (out, *srcs)
    vec_tiles(op, loc, *tiles)
    rows, cols = window or out.valid
    if rows <= 0 or cols <= 0:
        return
    for t in srcs:
        if t.shape[0] < rows or t.shape[1] < cols:
            raise KernelError(f"{op}: a {t.shape[0]}x{t.shape[1]} operand is smaller than the "
                              f"{rows}x{cols} window", loc)
    if all(t.contiguous(rows, cols) for t in tiles):
        n = rows * cols
        rec = Vector(unit_op, out.region(n), tuple(t.region(n) for t in srcs), loc,
                     tuple(scalars), attrs=attrs)
    else:
        widest = max(t.np_dtype.itemsize for t in tiles)
        repeats = rows * -(-cols * widest // REPEAT_BYTES)
        lanes = tuple(t.offsets(rows, cols).reshape(-1) for t in tiles)
        rec = Vector(unit_op, out.region(), tuple(t.region() for t in srcs), loc,
                     tuple(scalars), lanes, repeats, attrs)
    current_core().execute(rec)


def _scalar(value, tile: Tile):
    """A scalar operand in the tile's element type."""
    return tile.np_dtype.type(value)


# pl name -> (unit op with a tile right operand, unit op with a scalar right operand)
BINARY = {"add": ("add", "adds"), "sub": ("sub", "subs"), "mul": ("mul", "muls"),
          "div": ("div", "divs"), "maximum": ("max", "maxs"), "minimum": ("min", "mins"),
          "and_": ("and", "ands"), "or_": ("or", "ors"), "shl": ("shl", "shl"),
          "shr": ("shr", "shr"), "rem": ("rem", "rems"), "add_relu": ("add_relu", None),
          "sub_relu": ("sub_relu", None)}
# Backend spellings of the scalar forms, callable directly.
SCALAR = {"adds": "adds", "subs": "subs", "muls": "muls", "divs": "divs", "maxs": "maxs",
          "mins": "mins", "ands": "ands", "ors": "ors", "shls": "shl", "shrs": "shr",
          "rems": "rems", "xors": "xors"}
UNARY = {"neg": "neg", "abs": "abs", "exp": "exp", "log": "ln", "sqrt": "sqrt",
         "rsqrt": "rsqrt", "recip": "reciprocal", "relu": "relu", "not_": "not"}
# out also read: out = f(a, b, out)
DST_READING = {"mul_add_dst": "mul_add_dst", "fused_mul_add": "fused_mul_add",
               "fused_mul_add_relu": "fused_mul_add_relu"}


def _make_binary(name: str, tile_op: str, scalar_op: str | None):
    def op(out, lhs, rhs):
        loc = user_location()
        if isinstance(rhs, Tile):
            elementwise(tile_op, out, (lhs, rhs), (), name, loc)
        elif scalar_op is None:
            raise KernelError(f"{name}: the right operand must be a tile", loc)
        else:
            elementwise(scalar_op, out, (lhs,), (_scalar(rhs, lhs),), name, loc)
    op.__name__ = name
    op.__doc__ = f"``pl.{name}(out, lhs, rhs_tile_or_scalar)``"
    return op


def _make_scalar(name: str, unit_op: str):
    def op(out, src, scalar):
        loc = user_location()
        elementwise(unit_op, out, (src,), (_scalar(scalar, src),), name, loc)
    op.__name__ = name
    op.__doc__ = f"``pl.{name}(out, src, scalar)``"
    return op


def _make_unary(name: str, unit_op: str):
    def op(out, src):
        elementwise(unit_op, out, (src,), (), name, user_location())
    op.__name__ = name.rstrip("_")
    op.__doc__ = f"``pl.{name}(out, src)``"
    return op


def _make_dst_reading(name: str, unit_op: str):
    def op(out, a, b):
        elementwise(unit_op, out, (a, b), (), name, user_location())
    op.__name__ = name
    op.__doc__ = f"``pl.{name}(out, a, b)``: reads ``out`` too"
    return op


def xor(out, lhs, rhs, tmp=None):
    """``pl.xor(out, a, b, tmp)`` (``tmp`` is the backend's scratch; unused here)."""
    loc = user_location()
    if isinstance(rhs, Tile):
        elementwise("xor", out, (lhs, rhs), (), "xor", loc)
    else:
        elementwise("xors", out, (lhs,), (_scalar(rhs, lhs),), "xor", loc)


def addc(out, a, b, c):
    """``pl.addc(out, a, b, c)`` = a + b + c (two additions)."""
    loc = user_location()
    elementwise("add", out, (a, b), (), "addc", loc)
    elementwise("add", out, (out, c), (), "addc", loc)


def axpy(out, src, alpha):
    """``pl.axpy(out, src, alpha)``: out += alpha * src."""
    elementwise("axpy", out, (src,), (_scalar(alpha, src),), "axpy", user_location())


def expands(out, scalar):
    """``pl.expands(out, scalar)``: every element of the valid window = ``scalar``."""
    elementwise("duplicate", out, (), (_scalar(scalar, out),), "expands", user_location())


def cast(out, src, *, mode=RoundMode.CAST_ROUND):
    """``pl.cast(out, src, *, mode=pl.RoundMode.CAST_ROUND)``: convert to ``out``'s type."""
    loc = user_location()
    rm = RoundMode(mode)
    if rm == RoundMode.CAST_ODD and not (src.dtype.name == "FP32" and out.dtype.name == "FP16"):
        raise KernelError("cast: CAST_ODD converts FP32 to FP16 only", loc)
    if isinstance(out, Tile) and out.dtype.packed:
        _cast_to_packed(out, src, ROUNDING[rm], loc)
        return
    elementwise("cast", out, (src,), (), "cast", loc,
                attrs=(ROUNDING[rm], f"RoundMode.{rm.name}"))


def _cast_to_packed(out: Tile, src: Tile, rounding: str, loc) -> None:
    """A cast into an MXFP4 tile: each value rounded to a 4-bit code (:func:`fp4.encode`),
    two consecutive codes of a row packed into a byte (low four bits first), as the 950's
    cast writes them. The window's rows must be runs of whole bytes."""
    vec_tiles("cast", loc, src)
    expect_space(out, (MemorySpace.Vec,), "cast", "out", loc)
    rows, cols = out.valid
    if rows <= 0 or cols <= 0:
        return
    codes = out.offsets(rows, cols)
    if cols % 2 or (codes[:, 0::2] % 2).any() or (codes[:, 1::2] != codes[:, 0::2] + 1).any():
        raise KernelError(f"cast: a {out.dtype!r} tile packs two codes to a byte along its "
                          f"rows, so a cast writes an even number of columns from an even "
                          f"code (got a {rows} x {cols} window)", loc)
    byte_offsets = codes[:, 0::2] // 2
    lo, span = int(byte_offsets.min()), int(byte_offsets.max()) + 1 - int(byte_offsets.min())
    target = Window(out.region().at(lo, span), byte_offsets - lo)
    fmt = PACKED_NIBBLES[out.dtype.name]

    def compute(values):
        encoded = fp4.encode(compute_dtype(values), fmt, rounding)
        return ((encoded[:, 0::2] & 0xF) | (encoded[:, 1::2] << 4),)

    run("cast", (target,), (window(src, rows, cols),), compute,
        (("cast", repeats_of(rows, cols, src.np_dtype.itemsize)),), src.np_dtype, loc)


# ------------------------------------------------------------------ fused casts
#: pl name -> (the element-wise op done in the sources' type, its cost class)
FUSED_CASTS = {"add_relu_cast": (lambda a, b: np.maximum(a + b, 0), "add"),
               "sub_relu_cast": (lambda a, b: np.maximum(a - b, 0), "sub"),
               "mul_cast": (lambda a, b: a * b, "mul")}


def _make_fused_cast(name: str, fn, cost: str):
    def op(out, lhs, rhs, *, target_type=None, mode=RoundMode.CAST_ROUND):
        loc = user_location()
        vec_tiles(name, loc, out, lhs, rhs)
        if target_type is not None and target_type != out.dtype:
            raise KernelError(f"{name}: target_type {target_type!r} is not the output's type "
                              f"{out.dtype!r}", loc)
        rounding = ROUNDING[RoundMode(mode)]
        rows, cols = out.valid
        src_type = lhs.np_dtype

        def compute(a, b):  # the op rounds to the sources' type, then the cast converts
            with np.errstate(all="ignore"):
                mid = fn(compute_dtype(a), compute_dtype(b)).astype(src_type)
                return (convert(mid, out.np_dtype, rounding),)

        reps = repeats_of(rows, cols, max(out.np_dtype.itemsize, src_type.itemsize))
        run(name, (window(out, rows, cols),), (window(lhs, rows, cols), window(rhs, rows, cols)),
            compute, ((cost, reps), ("cast", reps)), src_type, loc)
    op.__name__ = name
    op.__doc__ = (f"``pl.{name}(out, lhs, rhs, *, target_type, mode)``: the op in the sources' "
                  "type, then a cast to ``out``'s")
    return op


# ------------------------------------------------------------------ partial ops
#: pl name -> (combination where both sources are valid, its cost class)
PARTIAL = {"partadd": (np.add, "add"), "partmax": (np.maximum, "max"),
           "partmin": (np.minimum, "min"), "partmul": (np.multiply, "mul")}


def _make_partial(name: str, fn, cost: str):
    def op(out, src0, src1):
        """``out`` = f(src0, src1) where both are valid, the valid one's value where one is."""
        loc = user_location()
        vec_tiles(name, loc, out, src0, src1)
        rows, cols = out.valid
        (r0, c0), (r1, c1) = src0.valid, src1.valid
        if max(r0, r1) > rows or max(c0, c1) > cols or [rows, cols] not in (src0.valid,
                                                                            src1.valid):
            raise KernelError(f"{name}: one source's valid window must be the output's "
                              f"{out.valid} and the other's within it, got {src0.valid} and "
                              f"{src1.valid}", loc)

        def compute(a, b):
            a, b = compute_dtype(a), compute_dtype(b)
            result = np.zeros((rows, cols), dtype=a.dtype)
            covered = np.zeros((rows, cols), dtype=bool)
            result[:r1, :c1], covered[:r1, :c1] = b, True
            result[:r0, :c0], covered[:r0, :c0] = a, True
            both = (min(r0, r1), min(c0, c1))
            with np.errstate(all="ignore"):
                result[:both[0], :both[1]] = fn(a[:both[0], :both[1]], b[:both[0], :both[1]])
            return ((np.flatnonzero(covered), result[covered]),)

        size = out.np_dtype.itemsize
        run(name, (window(out, rows, cols),), (window(src0, r0, c0), window(src1, r1, c1)),
            compute, (("copy", repeats_of(rows, cols, size)),
                      (cost, repeats_of(min(r0, r1), min(c0, c1), size))), out.np_dtype, loc)
    op.__name__ = name
    return op


# ------------------------------------------------------------------ quantisation
def _per_row(tile: Tile, rows: int, op: str, role: str, loc):
    if tile.shape[0] < rows:
        raise KernelError(f"{op}: the {role} tile needs one value per row ({rows}), got "
                          f"{tile.shape[0]}x{tile.shape[1]}", loc)
    return window(tile, rows, 1)


def quant(out, src, scale, *, mode=QuantMode.SYM, offset=None):
    """``pl.quant(out, src, scale, *, mode=SYM, offset=None)``: ``out = saturate(round(src *
    scale))`` (ASYM: ``saturate(round(src * scale) + offset)``) with one scale (and offset) per
    row, rounded half to even, saturated to the output type."""
    loc = user_location()
    mode = QuantMode(int(mode))
    if mode == QuantMode.ASYM and offset is None:
        raise KernelError("quant: mode ASYM needs offset=", loc)
    extra = (offset,) if mode == QuantMode.ASYM else ()
    vec_tiles("quant", loc, out, src, scale, *extra)
    if out.np_dtype.kind not in "iu":
        raise KernelError(f"quant: the output must be an integer tile, got {out.dtype.name}", loc)
    rows, cols = out.valid
    info = np.iinfo(out.np_dtype)

    def compute(x, s, *o):
        y = np.rint(compute_dtype(x).astype(np.float32) * compute_dtype(s).astype(np.float32))
        if o:
            y = np.rint(y + compute_dtype(o[0]).astype(np.float32))
        return (np.clip(y, info.min, info.max),)

    reps = repeats_of(rows, cols, src.np_dtype.itemsize)
    steps = (("mul", reps),) + (("add", reps),) * len(extra) + (("cast", reps),)
    run("quant", (window(out, rows, cols),), (window(src, rows, cols),
                                              _per_row(scale, rows, "quant", "scale", loc),
                                              *(_per_row(t, rows, "quant", "offset", loc)
                                                for t in extra)),
        compute, steps, src.np_dtype, loc)


def dequant(out, src, scale, offset):
    """``pl.dequant(out, src, scale, offset)``: ``out = (src - offset) * scale`` with one scale
    and offset per row."""
    loc = user_location()
    vec_tiles("dequant", loc, out, src, scale, offset)
    rows, cols = out.valid

    def compute(x, s, o):
        x = compute_dtype(x).astype(np.float32)
        return ((x - compute_dtype(o).astype(np.float32)) * compute_dtype(s).astype(np.float32),)

    reps = repeats_of(rows, cols, max(src.np_dtype.itemsize, out.np_dtype.itemsize))
    run("dequant", (window(out, rows, cols),),
        (window(src, rows, cols), _per_row(scale, rows, "dequant", "scale", loc),
         _per_row(offset, rows, "dequant", "offset", loc)), compute,
        (("cast", reps), ("sub", reps), ("mul", reps)), out.np_dtype, loc)


# ------------------------------------------------------------------ vector mask registers
def _mask_register(name: str):
    def op(*args):
        """Writes the vector mask register (one scalar instruction). Tile operations set the
        mask they need themselves, so it changes none of their results."""
        loc = user_location()
        for a in args:
            if not -(1 << 63) <= int(a) < (1 << 64):
                raise KernelError(f"{name}: {a!r} does not fit a 64-bit mask word", loc)
        current_core().execute(ScalarOps(1, loc))
    op.__name__ = name
    return op


MASK_OPS = {"set_mask_count": 0, "set_mask_norm": 0, "reset_mask": 0, "set_vec_mask": 2}


def _checked_arity(name: str, arity: int):
    fn = _mask_register(name)

    def op(*args):
        if len(args) != arity:
            raise KernelError(f"{name} takes {arity} arguments, got {len(args)}",
                              user_location())
        fn(*args)
    op.__name__ = name
    return op


OPS: dict = {}
OPS.update({n: _make_binary(n, t, s) for n, (t, s) in BINARY.items()})
OPS.update({n: _make_scalar(n, u) for n, u in SCALAR.items()})
OPS.update({n: _make_unary(n, u) for n, u in UNARY.items()})
OPS.update({n: _make_dst_reading(n, u) for n, u in DST_READING.items()})
OPS.update({"xor": xor, "addc": addc, "axpy": axpy, "expands": expands, "cast": cast,
            "quant": quant, "dequant": dequant})
OPS.update({n: _make_fused_cast(n, fn, c) for n, (fn, c) in FUSED_CASTS.items()})
OPS.update({n: _make_partial(n, fn, c) for n, (fn, c) in PARTIAL.items()})
OPS.update({n: _checked_arity(n, a) for n, a in MASK_OPS.items()})
