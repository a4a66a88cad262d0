"""Element-wise tile operations on the vector unit (UB tiles, ``V`` pipe).

PyPTO Pro writes the output first (``pl.add(out, a, b)``), computes over the output's valid
window, never broadcasts and never promotes types. A right operand that is not a tile makes the
scalar form of the op (``add`` -> ``adds``). Each call is one :class:`~ascsim.isa.Vector`
record naming a row of the machine's vector table: in count form when every operand's window
is one contiguous run, else with one element index array per operand (the window's rows
inside each tile's frame) and one repeat per 256 bytes of each row.
"""

from __future__ import annotations

from ascsim.isa import Vector
from ascsim.pto.enums import ROUNDING, MemorySpace, RoundMode
from ascsim.pto.ops.common import KernelError, current_core, expect_space, user_location
from ascsim.pto.tile import Tile

REPEAT_BYTES = 256


def elementwise(unit_op: str, out: Tile, srcs: tuple, scalars: tuple, op: str, loc,
                attrs=None, window=None) -> None:
    """Run the vector unit's ``unit_op`` over ``window`` (default: the output's valid
    window) of ``out`` and ``srcs``."""
    if not isinstance(out, Tile):
        raise KernelError(f"{op}: the output must be a tile, got {type(out).__name__}", loc)
    tiles = (out, *srcs)
    for t in tiles:
        if not isinstance(t, Tile):
            raise KernelError(f"{op}: operands must be tiles, got {type(t).__name__}", loc)
        expect_space(t, (MemorySpace.Vec,), op, "every operand", loc)
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
    elementwise("cast", out, (src,), (), "cast", loc,
                attrs=(ROUNDING[rm], f"RoundMode.{rm.name}"))


OPS: dict = {}
OPS.update({n: _make_binary(n, t, s) for n, (t, s) in BINARY.items()})
OPS.update({n: _make_scalar(n, u) for n, u in SCALAR.items()})
OPS.update({n: _make_unary(n, u) for n, u in UNARY.items()})
OPS.update({n: _make_dst_reading(n, u) for n, u in DST_READING.items()})
OPS.update({"xor": xor, "addc": addc, "axpy": axpy, "expands": expands, "cast": cast})
