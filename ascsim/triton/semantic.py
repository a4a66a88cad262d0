"""What each Triton operation means for the three kinds of values (:mod:`ascsim.triton.tensor`).

Known values compute here, in numpy at the device's widths (they are the compiler's address and
mask arithmetic); anything that involves a tile becomes vector records
(:mod:`ascsim.triton.vector`). Type promotion is Triton's (:mod:`ascsim.triton.dtypes`).
"""

from __future__ import annotations

import numpy as np

from ascsim.sim.source import user_location
from ascsim.triton import dot as _dot
from ascsim.triton import dtypes, vector
from ascsim.triton.errors import CompilationError
from ascsim.triton.tensor import known, tensor


class constexpr:  # noqa: N801 - Triton's own name
    """``tl.constexpr``: as an annotation, a parameter whose value is fixed at compile time;
    as a value, that value."""

    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __index__(self):
        return self.value.__index__()

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __bool__(self):
        return bool(self.value)

    def __eq__(self, other):
        return self.value == unwrap(other)

    def __hash__(self):
        return hash(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.value, name)


def _delegate(name):
    def op(self, *others):
        return getattr(self.value, name)(*(unwrap(o) for o in others))
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__lt__", "__le__", "__gt__", "__ge__", "__ne__", "__neg__",
              "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__pow__"):
    setattr(constexpr, _name, _delegate(_name))


def unwrap(value):
    return value.value if isinstance(value, constexpr) else value


def fail(loc, text: str):
    raise CompilationError(f"{loc[0]}:{loc[1]}: {text}")


# ---------------------------------------------------------------------- operands
def operand(value, other_dtype=None) -> tensor:
    """``value`` (a tensor, a Python number, a constexpr) as a tensor."""
    value = unwrap(value)
    if isinstance(value, tensor):
        if type(value) is _dot.CubeTensor:  # a tl.dot result used by the vector unit
            return _dot.to_ub(value)
        return value
    refuse = getattr(value, "refuse", None)
    if refuse is not None:  # a block atomic's old values (ascsim.triton.memory.OldValues)
        refuse()
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        if isinstance(value, (np.number, np.bool_)):
            value = value.item()
        return known(value, dtypes.of_python_scalar(value, other_dtype))
    raise TypeError(f"cannot use a {type(value).__name__} as a Triton value")


def operands(a, b) -> tuple[tensor, tensor]:
    a, b = unwrap(a), unwrap(b)
    if type(a) is _dot.CubeTensor:
        a = _dot.to_ub(a)
    if type(b) is _dot.CubeTensor:
        b = _dot.to_ub(b)
    if isinstance(a, tensor) and not isinstance(b, tensor):
        return a, operand(b, _elem(a))
    if isinstance(b, tensor) and not isinstance(a, tensor):
        return operand(a, _elem(b)), b
    return operand(a), operand(b)


def _elem(t: tensor):
    return None if t.dtype.is_ptr() else t.dtype


def scalar_of(t: tensor):
    """The one value of a known tensor that holds a single value, else None."""
    if t.known is None:
        return None
    flat = t.known.reshape(-1)
    if flat.size == 1:
        return flat[0].item()
    first = flat[0]
    if (flat == first).all():
        return first.item()
    return None


def broadcast_shape(*shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"incompatible block shapes {[list(s) for s in shapes]}") from None


def as_tile(t: tensor, loc) -> tensor:
    """A tile holding ``t``: a known value that is one value everywhere becomes a fill."""
    if t.is_tile:
        return t
    value = scalar_of(t)
    if value is None:
        if t.dtype.is_ptr():
            fail(loc, "a block of pointers used as data is not supported")
        return vector.materialise(t.known, t.dtype, loc)
    return vector.fill(t.dtype, t.shape, value, loc)


# ---------------------------------------------------------------------- known arithmetic
def _c_div(a, b):
    """Integer division truncating toward zero (the device's, and C's)."""
    with np.errstate(all="ignore"):
        q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
        return np.where((a < 0) != (b < 0), -q, q).astype(np.result_type(a, b))


KNOWN_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": _c_div, "mod": np.fmod, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "shl": np.left_shift, "shr": np.right_shift,
    "maximum": np.maximum, "minimum": np.minimum, "umulhi": lambda a, b: _umulhi(a, b),
    "cdiv": lambda a, b: _cdiv(a, b),
}


def _cdiv(a, b):
    """``ceil(a / b)``: exact for integers of any sign, a rounded-up quotient for floats."""
    if a.dtype.kind == "f":
        return np.ceil(a / b)
    return -np.floor_divide(-a, np.where(b == 0, 1, b))


def _umulhi(a, b):
    """The high half of the double-width product of two 32-bit integers."""
    wide = np.uint64 if a.dtype.kind == "u" else np.int64
    return ((a.astype(wide) * b.astype(wide)) >> 32).astype(a.dtype)


#: Binary ops the vector unit has no single instruction for on two tiles: one routine each
#: (numerical definition, cost steps). Integer division truncates toward zero as the device's
#: (and C's) does: a conversion to fp32, a divide and a conversion back.
TILE_ROUTINES = {
    "floordiv": (_c_div, ("cast", "div", "cast")),
    "floor_div_float": (np.floor_divide, ("div", "cast")),
    "shl": (np.left_shift, ("shl",)),
    "shr": (np.right_shift, ("shr",)),
    "umulhi": (_umulhi, ("mul", "mul", "add")),
    "cdiv": (_cdiv, ("div", "cast")),
}
#: Shifts by a scalar count: the vector unit's own instruction.
SCALAR_SHIFTS = {"shl": "shl", "shr": "shr"}
KNOWN_COMPARE = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                 "eq": np.equal, "ne": np.not_equal}

#: Triton op -> (unit op on two tiles, with a scalar on the right, with a scalar on the left)
VECTOR_BINARY = {
    "add": ("add", "adds", "adds"), "sub": ("sub", "subs", "rsubs"),
    "mul": ("mul", "muls", "muls"), "truediv": ("div", "divs", "rdivs"),
    "maximum": ("max", "maxs", "maxs"), "minimum": ("min", "mins", "mins"),
    "and": ("and", "ands", "ands"), "or": ("or", "ors", "ors"),
    "xor": ("xor", "xors", "xors"), "mod": ("rem", "rems", None),
}


def binary(op: str, a, b):
    if op == "add" and (type(a) is _dot.CubeTensor or type(b) is _dot.CubeTensor):
        accumulated = _dot.add(unwrap(a), unwrap(b))  # acc + tl.dot(x, y): in L0C
        if accumulated is not None:
            return accumulated
    a, b = operands(a, b)
    if a.dtype.is_ptr() or b.dtype.is_ptr():
        return _pointer_arith(op, a, b)
    dtype = dtypes.promote(a.dtype, b.dtype)
    if op == "truediv" and not dtype.is_floating():
        dtype = dtypes.float32
    if op == "floordiv" and dtype.is_floating():
        op = "floor_div_float"
    shape = broadcast_shape(a.shape, b.shape)
    if a.known is not None and b.known is not None:
        fn = np.floor_divide if op == "floor_div_float" else KNOWN_BINARY[op]
        with np.errstate(all="ignore"):
            result = fn(a.known.astype(dtype.np_dtype), b.known.astype(dtype.np_dtype))
        return known(np.asarray(result), dtype)
    loc = user_location()
    if op in MASK_OPS and (a.packed or b.packed):
        return _mask_binary(op, a, b, loc)
    routine = TILE_ROUTINES.get(op)
    if routine is not None:
        return _tile_routine(op, routine, a, b, dtype, shape, loc)
    units = VECTOR_BINARY.get(op)
    if units is None:
        fail(loc, f"the {op} operator on loaded data is not supported yet")
    a, b = _to_type(a, dtype, loc), _to_type(b, dtype, loc)
    a_scalar, b_scalar = scalar_of(a), scalar_of(b)
    if a.is_tile and b.is_tile:
        return vector.elementwise(units[0], dtype, shape, (a, b), loc=loc)
    if a.is_tile and b_scalar is not None:
        return vector.elementwise(units[1], dtype, shape, (a,),
                                  (dtype.np_dtype.type(b_scalar),), loc=loc)
    if b.is_tile and a_scalar is not None and units[2] is not None:
        return vector.elementwise(units[2], dtype, shape, (b,),
                                  (dtype.np_dtype.type(a_scalar),), loc=loc)
    return vector.elementwise(units[0], dtype, shape, (as_tile(a, loc), as_tile(b, loc)),
                              loc=loc)


def _tile_routine(op: str, routine, a: tensor, b: tensor, dtype, shape, loc) -> tensor:
    if op in ("shl", "shr", "floordiv", "umulhi") and not dtype.is_int():
        fail(loc, f"the {op} operator needs integers, got {dtype}")
    a, b = _to_type(a, dtype, loc), _to_type(b, dtype, loc)
    count = scalar_of(b)
    if op in SCALAR_SHIFTS and a.is_tile and count is not None:
        return vector.elementwise(SCALAR_SHIFTS[op], dtype, shape, (broadcast_to(a, shape),),
                                  (dtype.np_dtype.type(count),), loc=loc)
    tiles = tuple(vector.plain(broadcast_to(as_tile(t, loc), shape), loc) for t in (a, b))
    fn, steps = routine
    return vector.routine(op, dtype, shape, tiles, fn, steps, loc)


MASK_OPS = {"and": "and", "or": "or", "xor": "xor"}


def _mask_binary(op: str, a: tensor, b: tensor, loc) -> tensor:
    """``&``, ``|``, ``^`` of two masks, one of them packed: byte-wise on packed masks."""
    a, b = as_mask(a, loc), as_mask(b, loc)
    if a.shape != b.shape or a.index is not None or b.index is not None:
        fail(loc, "combining masks of different shapes or views is not supported yet")
    return vector.mask_bytes(MASK_OPS[op], a, b, loc)


def as_mask(t: tensor, loc) -> tensor:
    """``t`` as a packed mask tile (a known mask is materialised; data compares != 0)."""
    if t.packed:
        return t
    if t.known is not None:
        # (a mask from index arithmetic next to one from data: its flags as bytes in UB)
        t = as_tile(known(np.asarray(t.known != 0).astype(np.int8), dtypes.int8), loc)
    dtype = dtypes.int8 if t.dtype.kind == "bool" else t.dtype
    if t.dtype.kind == "bool":
        t = tensor(dtypes.int8, t.shape, alloc=t.alloc, index=t.index)  # bytes 0/1
    return vector.compare("ne", t, dtype.np_dtype.type(0), t.shape, loc)


def _to_type(t: tensor, dtype, loc) -> tensor:
    if t.dtype == dtype and not t.packed:
        return t
    return cast(t, dtype, loc=loc)


def _pointer_arith(op: str, a: tensor, b: tensor) -> tensor:
    loc = user_location()
    ptr, offset = (a, b) if a.dtype.is_ptr() else (b, a)
    if op not in ("add", "sub") or offset.dtype.is_ptr() or (op == "sub" and ptr is b):
        fail(loc, f"pointer arithmetic supports pointer + and - integer offsets, got {op}")
    if not offset.dtype.is_int():
        fail(loc, f"pointer offsets must be integers, got {offset.dtype}")
    if offset.known is None:
        # Offsets computed from loaded data (a gather or scatter through indices): the
        # compiler's scalar loop reads each offset to address its element, so the pointer is
        # known from here on; the copy of the access then takes the discrete path.
        offset = known(vector.read_block(vector.plain(offset, loc)), offset.dtype)
    step = offset.known.astype(np.int64)
    values = ptr.known + step if op == "add" else ptr.known - step
    return tensor(ptr.dtype, values.shape, known=values, gm=ptr.gm)


def compare(cmp: str, a, b):
    a, b = operands(a, b)
    shape = broadcast_shape(a.shape, b.shape)
    if a.known is not None and b.known is not None:
        if a.dtype.is_ptr() or b.dtype.is_ptr():
            return known(KNOWN_COMPARE[cmp](a.known, b.known), dtypes.int1)
        dtype = dtypes.promote(a.dtype, b.dtype)
        result = KNOWN_COMPARE[cmp](a.known.astype(dtype.np_dtype),
                                    b.known.astype(dtype.np_dtype))
        return known(np.broadcast_to(result, shape), dtypes.int1)
    loc = user_location()
    if a.dtype.is_ptr() or b.dtype.is_ptr():
        fail(loc, "comparisons of pointers to loaded data are not supported")
    dtype = dtypes.promote(a.dtype, b.dtype)
    if dtype.kind == "bool":
        dtype = dtypes.int8  # masks compare as bytes
    if not a.is_tile:  # the vector unit compares a tile with a scalar on the right
        a, b, cmp = b, a, SWAPPED[cmp]
    a = _to_type(a, dtype, loc)
    b_scalar = scalar_of(b)
    if b_scalar is not None:
        return vector.compare(cmp, a, dtype.np_dtype.type(b_scalar), shape, loc)
    return vector.compare(cmp, a, _to_type(as_tile(b, loc), dtype, loc), shape, loc)


SWAPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}


# ---------------------------------------------------------------------- unary and math
KNOWN_UNARY = {
    "neg": np.negative, "not": np.invert, "abs": np.abs, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "exp2": np.exp2, "log2": np.log2,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "floor": np.floor, "ceil": np.ceil,
    "reciprocal": lambda x: 1 / x, "relu": lambda x: np.maximum(x, 0),
}
#: Triton op -> the chain of vector unit steps: (unit op, scalar or None)
VECTOR_UNARY = {
    "neg": (("neg", None),), "not": (("not", None),), "abs": (("abs", None),),
    "exp": (("exp", None),), "log": (("ln", None),), "sqrt": (("sqrt", None),),
    "rsqrt": (("rsqrt", None),), "reciprocal": (("reciprocal", None),),
    "relu": (("relu", None),),
    "exp2": (("muls", float(np.log(2.0))), ("exp", None)),
    "log2": (("ln", None), ("muls", float(1 / np.log(2.0)))),
    "sigmoid": (("neg", None), ("exp", None), ("adds", 1.0), ("reciprocal", None)),
}
ROUNDINGS = {"floor": np.floor, "ceil": np.ceil}
#: ``exp2`` and ``log2``: a scale and an exp / ln on the vector unit, the intermediate kept in
#: fp32 (a chain of fp16 instructions would round it: triton-ascend's fp16 exp2 matches torch
#: to 1e-3, which a rounded ``x * ln 2`` misses near 16).
ROUTINES = {"exp2": (np.exp2, ("muls", "exp")), "log2": (np.log2, ("ln", "muls"))}
FLOAT_ONLY = {"exp", "log", "sqrt", "rsqrt", "exp2", "log2", "sigmoid", "reciprocal",
              "floor", "ceil"}


def unary(op: str, x):
    x = operand(x)
    if x.known is not None:
        dtype = x.dtype
        with np.errstate(all="ignore"):
            if op in FLOAT_ONLY and not dtype.is_floating():
                dtype = dtypes.float32
            values = KNOWN_UNARY[op](x.known.astype(dtype.np_dtype))
        return known(np.asarray(values), dtype)
    loc = user_location()
    if x.packed:
        if op != "not":
            fail(loc, f"tl.{op} of a mask is not supported")
        return vector.mask_bytes("not", x if x.index is None else
                                 as_mask(cast(x, dtypes.int8, loc=loc), loc), None, loc)
    if op in ROUNDINGS:  # the vector unit's conversion with a rounding mode: one pass
        from ascsim.triton import libdevice

        return libdevice._routine(op, ROUNDINGS[op], libdevice.ONE_PASS, "float", (x,))
    if op in ROUTINES:  # a fixed chain computed at once and rounded once (fp16: 1e-3 close)
        from ascsim.triton import libdevice

        fn, steps = ROUTINES[op]
        return libdevice._routine(op, fn, steps, "float", (x,))
    steps = VECTOR_UNARY.get(op)
    if steps is None:
        fail(loc, f"tl.{op} on loaded data is not supported yet")
    if op in FLOAT_ONLY and not x.dtype.is_floating():
        x = cast(x, dtypes.float32, loc=loc)
    for unit, scalar in steps:
        scalars = () if scalar is None else (x.dtype.np_dtype.type(scalar),)
        x = vector.elementwise(unit, x.dtype, x.shape, (x,), scalars, loc=loc)
    return x


# ---------------------------------------------------------------------- casts
def _round_mode(src, dst, rounding) -> tuple[str, str]:
    if rounding is not None:
        rounding = unwrap(rounding)
        mode = {"rtne": "rint", "rtz": "trunc"}.get(rounding)
        if mode is None:
            raise ValueError(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rounding!r}")
        return mode, rounding
    if src.is_floating() and not dst.is_floating():
        return "trunc", "rtz"  # float -> int truncates toward zero, as in C
    return "rint", "rtne"


def cast(x, dtype, fp_downcast_rounding=None, bitcast=False, loc=None):
    dtype = unwrap(dtype)
    if type(x) is _dot.CubeTensor and not bitcast and fp_downcast_rounding in (None, "rtne"):
        converted = _dot.cast(x, dtype, loc or user_location())  # FixPipe's conversion
        if converted is not None:
            return converted
    x = operand(x)
    if dtype.is_ptr() or x.dtype.is_ptr():
        fail(loc or user_location(), "pointer casts are not supported yet")
    if x.dtype == dtype and not x.packed:
        return x
    if x.packed:  # a packed mask as values: 1 where set, 0 elsewhere
        loc = loc or user_location()
        if dtype.kind == "bool":
            return x
        target = dtypes.int8 if dtype.kind == "bool" else dtype
        ones = vector.fill(target, x.shape, 1, loc)
        return vector.select(x, ones, 0, target, x.shape, loc)
    if bitcast:
        if x.known is not None:
            return known(x.known.view(dtype.np_dtype), dtype)
        fail(loc or user_location(), "a bitcast of loaded data is not supported yet")
    if x.known is not None:
        with np.errstate(all="ignore"):
            if dtype.kind == "bool":
                return known(x.known != 0, dtype)
            return known(x.known.astype(dtype.np_dtype), dtype)
    loc = loc or user_location()
    if dtype.kind == "bool":
        return as_mask(x, loc)
    if x.dtype.kind == "bool":  # bytes 0/1 loaded from a bool tensor
        x = tensor(dtypes.uint8, x.shape, alloc=x.alloc, index=x.index)
    mode = _round_mode(x.dtype, dtype, fp_downcast_rounding)
    return vector.elementwise("cast", dtype, x.shape, (x,), attrs=mode, loc=loc)


# ---------------------------------------------------------------------- shapes and views
def _view(x: tensor, index: np.ndarray, shape) -> tensor:
    return tensor(x.dtype, shape, alloc=x.alloc, index=index, gm=x.gm, packed=x.packed)


def subscript(x, key):
    x = operand(x)
    key = key if isinstance(key, tuple) else (key,)
    for k in key:
        if not (k is None or k is Ellipsis or (isinstance(k, slice) and k == slice(None))):
            raise CompilationError(f"block subscripts take only None and ':', got {k!r}")
    if x.known is not None:
        values = x.known[key]
        return tensor(x.dtype, values.shape, known=values, gm=x.gm)
    index = x.lanes()[key]
    return _view(x, index, index.shape)


def reshape(x, shape):
    x = operand(x)
    shape = tuple(int(unwrap(d)) for d in shape)
    if x.known is not None:
        values = x.known.reshape(shape)
        return tensor(x.dtype, shape, known=values, gm=x.gm)
    if x.index is None:
        return tensor(x.dtype, shape, alloc=x.alloc, packed=x.packed)
    return _view(x, x.index.reshape(shape), shape)


def broadcast_to(x, shape):
    x = operand(x)
    shape = tuple(int(unwrap(d)) for d in shape)
    if x.shape == shape:
        return x
    if x.known is not None:
        values = np.broadcast_to(x.known, shape)
        return tensor(x.dtype, shape, known=values, gm=x.gm)
    return _view(x, np.broadcast_to(x.lanes(), shape), shape)


def expand_dims(x, axis):
    x = operand(x)
    axes = axis if isinstance(axis, (list, tuple)) else (axis,)
    shape = list(x.shape)
    for a in sorted(int(unwrap(a)) % (len(shape) + len(axes)) for a in axes):
        shape.insert(a, 1)
    return reshape(x, shape)


def permute(x, dims):
    x = operand(x)
    dims = tuple(int(unwrap(d)) for d in dims)
    if x.known is not None:
        values = np.transpose(x.known, dims)
        return tensor(x.dtype, values.shape, known=values, gm=x.gm)
    index = np.transpose(x.lanes(), dims)
    return _view(x, index, index.shape)


# ---------------------------------------------------------------------- reductions
KNOWN_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min}


def _sum_type(dtype):
    """The result type of a sum: integers narrower than 32 bits accumulate in int32."""
    if dtype.is_int() and dtype.bits < 32:
        return dtypes.int32
    return dtype


def reduce(x, how: str, axis=None, keep_dims=False, dtype=None):
    x = operand(x)
    axis = unwrap(axis)
    ndim = len(x.shape)
    if axis is not None:
        axis = int(axis)
        if not -ndim <= axis < ndim:
            raise ValueError(f"reduction axis {axis} is out of range for a {ndim}-D block")
        axis %= ndim
    out_dtype = unwrap(dtype) or (_sum_type(x.dtype) if how == "sum" else x.dtype)
    if x.known is not None:
        values = KNOWN_REDUCE[how](x.known.astype(out_dtype.np_dtype), axis=axis,
                                   keepdims=bool(keep_dims))
        return known(np.asarray(values), out_dtype)
    loc = user_location()
    x = _to_type(x, out_dtype, loc)
    if how == "sum" and out_dtype.name in ("fp16", "bf16"):
        # Half-precision sums accumulate in fp32 and are rounded once (triton-ascend's fp16
        # sums match an fp32 reference to 1e-3; a tree of fp16 adds does not).
        wide = reduce(cast(x, dtypes.float32, loc=loc), how, axis, keep_dims)
        return cast(wide, out_dtype, loc=loc)
    if axis is None or ndim <= 1:
        out = vector.reduce_all(how, x, loc)
        shape = (1,) * ndim if keep_dims else ()
    else:
        out = vector.reduce_axis(how, x, axis, loc)
        shape = x.shape[:axis] + ((1,) if keep_dims else ()) + x.shape[axis + 1:]
    return reshape(out, shape) if out.shape != shape else out


# ---------------------------------------------------------------------- choice
def where(condition, x, y):
    condition = operand(condition)
    x, y = operands(x, y)
    dtype = dtypes.promote(x.dtype, y.dtype)
    shape = broadcast_shape(condition.shape, x.shape, y.shape)
    if condition.known is None:
        return _select(condition, x, y, dtype, shape)
    keep = np.broadcast_to(condition.known.astype(bool), shape)
    if x.known is not None and y.known is not None:
        values = np.where(keep, x.known.astype(dtype.np_dtype), y.known.astype(dtype.np_dtype))
        return known(values, dtype)
    loc = user_location()
    x, y = _to_type(x, dtype, loc), _to_type(y, dtype, loc)
    if keep.all():
        return broadcast_to(as_tile(x, loc), shape)
    if not keep.any():
        return broadcast_to(as_tile(y, loc), shape)
    # The compiler's masked vector ops: the false side first, then the true side's lanes.
    y_scalar = scalar_of(y)
    if y.is_tile:
        out = vector.elementwise("copy", dtype, shape, (y,), loc=loc)
    elif y_scalar is not None:
        out = vector.fill(dtype, shape, y_scalar, loc)
    else:
        out = vector.elementwise("copy", dtype, shape, (as_tile(y, loc),), loc=loc)
    positions = np.flatnonzero(keep.reshape(-1))
    x_scalar = scalar_of(x)
    vector.overwrite(out, positions, x if x.is_tile else
                     (x_scalar if x_scalar is not None else as_tile(x, loc)), loc)
    return out


def _select(condition: tensor, x: tensor, y: tensor, dtype, shape) -> tensor:
    """``tl.where`` on a data-dependent condition: the vector unit's select by a mask."""
    loc = user_location()
    mask = as_mask(condition, loc)
    x, y = _to_type(x, dtype, loc), _to_type(y, dtype, loc)
    if not x.is_tile:
        x = as_tile(x, loc)
    y_scalar = scalar_of(y)
    if y_scalar is not None:
        return vector.select(mask, x, y_scalar, dtype, shape, loc)
    return vector.select(mask, x, as_tile(y, loc), dtype, shape, loc)


def arg_reduce(x, how: str, axis, keep_dims=False) -> tensor:
    """``tl.argmax`` / ``tl.argmin``: int32 indices of the first extreme along ``axis``."""
    x = operand(x)
    axis = unwrap(axis)
    ndim = len(x.shape)
    if axis is not None:
        axis = int(axis) % max(ndim, 1)
    if x.known is not None:
        fn = np.argmax if how == "max" else np.argmin
        return known(np.asarray(fn(x.known, axis=axis)).astype(np.int32), dtypes.int32)
    loc = user_location()
    if x.dtype.bits < 16 or x.dtype.kind == "bool":  # the index needs more bits than 8
        # (16 bits hold every 8-bit value exactly: a wider copy would hold UB the device's
        # argmax of an int8 block does not need)
        x = cast(x, dtypes.from_numpy("int16") if x.dtype.is_int() else dtypes.float16,
                 loc=loc)
    raw = vector.arg_reduce(how, x, None if ndim <= 1 else axis, loc)
    out = cast(raw, dtypes.int32, loc=loc) if raw.dtype.bits != 32 else tensor(
        dtypes.int32, raw.shape, alloc=raw.alloc, index=raw.index)
    if keep_dims and axis is not None:
        out = expand_dims(out, axis)
    return out
