"""``triton.language`` (``tl``) under ``ascsim run``: the names a Triton kernel calls.

Each name maps a Triton call form onto :mod:`ascsim.triton.semantic` (which keeps index
arithmetic and emits vector records for tiles) or :mod:`ascsim.triton.memory` (copies). A name
this module does not define is not supported yet: the kernel's ``tl.<name>`` raises
``AttributeError`` naming it.
"""

from __future__ import annotations

import builtins
import dis as _dis
import sys as _sys
import types as _types

import numpy as np

from ascsim.sim.source import user_location
from ascsim.triton import block_ptr as _block_ptr
from ascsim.triton import combine as _combine
from ascsim.triton import dot as _dot
from ascsim.triton import dtypes as _dtypes
from ascsim.triton import libdevice as _libdevice
from ascsim.triton import memory as _memory
from ascsim.triton import program as _program
from ascsim.triton import reorder as _reorder
from ascsim.triton import semantic as _semantic
from ascsim.triton.dtypes import (  # noqa: F401 - tl's names
    bfloat16,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    pointer_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ascsim.triton.errors import CompilationError, CompileTimeAssertionFailure
from ascsim.triton.semantic import constexpr as constexpr
from ascsim.triton.semantic import unwrap
from ascsim.triton.tensor import known, tensor

dtype = _dtypes.dtype
bool = int1  # noqa: A001 - tl.bool is Triton's name
float8e4nv = float8e5 = None  # Ascend A2/A3 have no fp8 vector types


# ---------------------------------------------------------------------- programs
def program_id(axis):
    """This program's index along grid ``axis`` (0, 1 or 2)."""
    axis = int(unwrap(axis))
    if axis not in (0, 1, 2):
        raise ValueError(f"program_id axis must be 0, 1 or 2, got {axis}")
    return known(np.int32(_program.current().pid[axis]), int32)


def num_programs(axis):
    """The grid's size along ``axis``."""
    axis = int(unwrap(axis))
    if axis not in (0, 1, 2):
        raise ValueError(f"num_programs axis must be 0, 1 or 2, got {axis}")
    return known(np.int32(_program.current().grid[axis]), int32)


# ---------------------------------------------------------------------- creation
def _static(value, what: str) -> int:
    value = unwrap(value)
    if isinstance(value, tensor):
        value = value.__index__()
    if not isinstance(value, (int, np.integer)):
        raise CompilationError(f"{what} must be a compile-time integer (tl.constexpr), "
                               f"got {value!r}")
    return int(value)


def arange(start, end):
    """``[start, end)`` as an int32 block. (Triton asks for a power-of-two length;
    triton-ascend takes any positive length.)"""
    start, end = _static(start, "arange's start"), _static(end, "arange's end")
    if end <= start:
        raise ValueError(f"arange's end must be greater than its start, got {start}..{end}")
    return known(np.arange(start, end, dtype=np.int32), int32)


def _shape(shape) -> tuple:
    shape = unwrap(shape)
    if isinstance(shape, (int, np.integer, tensor)):
        shape = (shape,)
    return tuple(_static(d, "a block dimension") for d in shape)


def full(shape, value, dtype):
    """A block of ``shape`` holding ``value`` (a constant the compiler materialises where a
    vector operation needs it)."""
    dtype = unwrap(dtype)
    return known(np.full(_shape(shape), unwrap(value), dtype=dtype.np_dtype), dtype)


def zeros(shape, dtype):
    return full(shape, 0, dtype)


def zeros_like(input):
    return zeros(input.shape, input.dtype)


def full_like(input, value):
    return full(input.shape, value, input.dtype)


def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    return _semantic.cast(input, dtype, fp_downcast_rounding, bitcast)


# ---------------------------------------------------------------------- memory
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="",
         cache_modifier="", eviction_policy="", volatile=False, _cube_operand=False):
    """GM -> UB (MTE2): see :mod:`ascsim.triton.memory` (and :mod:`ascsim.triton.block_ptr`
    for block pointers). ``_cube_operand`` (set by :mod:`ascsim.triton.cube_loads`): the
    value only feeds ``tl.dot``, the cube loads it (:mod:`ascsim.triton.dot`)."""
    pointer = unwrap(pointer)
    into = _dot.cube_load if _cube_operand else _memory.load
    if isinstance(pointer, _block_ptr.BlockPointer):
        padding = unwrap(padding_option)
        if padding not in _block_ptr.PADDING:
            raise ValueError(f"padding_option must be 'zero' or 'nan', got {padding!r}")
        return into(pointer.pointers(), pointer.mask(boundary_check),
                    _block_ptr.PADDING[padding], user_location())
    if boundary_check:
        raise CompilationError("tl.load: boundary_check applies to block pointers only")
    return into(pointer, unwrap(mask), unwrap(other), user_location())


def store(pointer, value, mask=None, boundary_check=(), cache_modifier="",
          eviction_policy=""):
    """UB -> GM (MTE3): see :mod:`ascsim.triton.memory`."""
    pointer = unwrap(pointer)
    if isinstance(pointer, _block_ptr.BlockPointer):
        mask, pointer = pointer.mask(boundary_check), pointer.pointers()
    elif boundary_check:
        raise CompilationError("tl.store: boundary_check applies to block pointers only")
    value, loc = unwrap(value), user_location()
    if _dot.is_cube(value) and _dot.store_from_l0c(pointer, value, unwrap(mask), loc):
        return
    _memory.store(pointer, _semantic.operand(value), unwrap(mask), loc)


def _discarded(frame) -> bool:
    """Whether the call being made in ``frame`` is a statement of its own (its result is
    popped at once): the compiler then emits no read of the old values."""
    key = (frame.f_code, frame.f_lasti)
    found = _DISCARDED.get(key)
    if found is None:
        ops = [i for i in _dis.get_instructions(frame.f_code) if i.opname != "CACHE"]
        found = False
        for here, after in zip(ops, ops[1:]):  # (f_lasti may point into the call's caches)
            if here.offset <= frame.f_lasti < after.offset:
                found = here.opname == "CALL" and after.opname == "POP_TOP"
                break
        _DISCARDED[key] = found
    return found


_DISCARDED: dict = {}


def _atomic(op: str):
    def atomic(pointer, val, mask=None, sem=None, scope=None):
        return _memory.atomic(op, unwrap(pointer), _semantic.operand(unwrap(val)), unwrap(mask),
                              user_location(), _discarded(_sys._getframe(1)))
    atomic.__name__ = f"atomic_{op}"
    atomic.__doc__ = f"``tl.atomic_{op}(pointer, val, mask=None)``: returns the old values"
    return atomic


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")
atomic_xchg = _atomic("xchg")


def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """``tl.atomic_cas(pointer, cmp, val)``: returns the old values."""
    return _memory.atomic_cas(unwrap(pointer), unwrap(cmp), unwrap(val), user_location())


def dot(input, other, acc=None, input_precision=None, allow_tf32=None,
        max_num_imprecise_acc=None, out_dtype=float32):
    """``input @ other (+ acc)`` on the cube (:mod:`ascsim.triton.dot`); fp16/bf16/fp32
    accumulate in fp32, int8 in int32."""
    return _dot.dot(input, other, acc, out_dtype, user_location())


make_block_ptr = _block_ptr.make_block_ptr
advance = _block_ptr.advance
make_tensor_descriptor = _block_ptr.make_tensor_descriptor


def load_tensor_descriptor(desc, offsets):
    return desc.load(offsets)


def store_tensor_descriptor(desc, offsets, value):
    return desc.store(offsets, value)


# ---------------------------------------------------------------------- arithmetic
def where(condition, x, y):
    return _semantic.where(condition, x, y)


class PropagateNan:
    """``tl.PropagateNan``: whether max/min propagate NaN (the vector unit's do)."""

    NONE = 0
    ALL = 0xFFFF


def maximum(x, y, propagate_nan=None):
    return _semantic.binary("maximum", x, y)


def minimum(x, y, propagate_nan=None):
    return _semantic.binary("minimum", x, y)


def clamp(x, min, max, propagate_nan=None):  # noqa: A002 - Triton's parameter names
    return minimum(maximum(x, min), max)


def cdiv(x, div):
    """``ceil(x / div)`` (integers: exactly, whatever the signs; floats: the rounded-up
    quotient, as triton-ascend's cdiv of float blocks gives)."""
    x, div = unwrap(x), unwrap(div)
    if isinstance(x, (int, np.integer)) and isinstance(div, (int, np.integer)):
        return -(-int(x) // int(div))
    return _semantic.binary("cdiv", x, div)


def fdiv(x, y, ieee_rounding=False):
    return _semantic.binary("truediv", x, y)


def div_rn(x, y):
    return _semantic.binary("truediv", x, y)


def fma(x, y, z):
    return x * y + z


def _unary(name: str):
    def op(x, *args, **kwargs):
        return _semantic.unary(name, x)
    op.__name__ = name
    op.__doc__ = f"``tl.{name}(x)``, element-wise"
    return op


exp = _unary("exp")
exp2 = _unary("exp2")
log = _unary("log")
log2 = _unary("log2")
sqrt = _unary("sqrt")
sqrt_rn = sqrt
rsqrt = _unary("rsqrt")
abs = _unary("abs")  # noqa: A001 - tl.abs
sigmoid = _unary("sigmoid")
floor = _unary("floor")
ceil = _unary("ceil")


sin = _libdevice.sin
cos = _libdevice.cos
erf = _libdevice.erf
tanh = _libdevice.tanh  # (``from triton.language.math import tanh``: tl.math is this module)


def _loc() -> str:
    loc = user_location()
    return f"{loc[0]}:{loc[1]}"


# ---------------------------------------------------------------------- reductions
def sum(input, axis=None, keep_dims=False, dtype=None):  # noqa: A001 - tl.sum
    return _semantic.reduce(input, "sum", axis, keep_dims, dtype)


def _extreme(how: str, input, axis, return_indices, keep_dims):
    if not return_indices:
        return _semantic.reduce(input, how, axis, keep_dims)
    # (the value and its first index: the reduction and the arg-reduction of the block)
    value = _semantic.reduce(input, how, axis, keep_dims)
    return value, _semantic.arg_reduce(input, how, axis, keep_dims)


def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True,  # noqa: A001
        keep_dims=False, propagate_nan=None):
    """``tl.max``; the vector unit's max propagates NaN, so ``propagate_nan`` changes
    nothing."""
    return _extreme("max", input, axis, return_indices, keep_dims)


def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True,  # noqa: A001
        keep_dims=False, propagate_nan=None):
    return _extreme("min", input, axis, return_indices, keep_dims)


def argmax(input, axis, tie_break_left=True, keep_dims=False):
    return _semantic.arg_reduce(input, "max", axis, keep_dims)


def argmin(input, axis, tie_break_left=True, keep_dims=False):
    return _semantic.arg_reduce(input, "min", axis, keep_dims)


def reduce(input, axis, combine_fn, keep_dims=False):
    """``tl.reduce``: ``combine_fn`` (a ``@triton.jit`` function) over ``axis`` (see
    :mod:`ascsim.triton.combine`)."""
    return _combine.reduce(input, axis, combine_fn, keep_dims)


def associative_scan(input, axis, combine_fn, reverse=False):
    """``tl.associative_scan``: the inclusive scan of ``combine_fn`` along ``axis``."""
    return _combine.scan(input, axis, combine_fn, reverse)


cumsum = _combine.cumsum
cumprod = _combine.cumprod
xor_sum = _combine.xor_sum


def sort(x, dim=None, descending=False):
    return _reorder.sort(x, dim, descending)


topk = _reorder.topk
flip = _reorder.flip
gather = _reorder.gather
histogram = _reorder.histogram
cat = _reorder.cat
join = _reorder.join
split = _reorder.split
interleave = _reorder.interleave
ravel = _reorder.ravel


def umulhi(x, y):
    """The high 32 bits of the 64-bit product of two 32-bit integers."""
    return _semantic.binary("umulhi", x, y)


def swizzle2d(i, j, size_i, size_j, size_g):
    """Row-major indices ``(i, j)`` of a ``size_i x size_j`` grid renumbered column-major
    within groups of ``size_g`` rows (Triton's documented ``swizzle2d``): index arithmetic."""
    linear = i * size_j + j
    group_size = size_g * size_j
    first_row = (linear // group_size) * size_g
    rows = minimum(size_i - first_row, size_g)
    return first_row + linear % rows, (linear % group_size) // rows


# ---------------------------------------------------------------------- shapes
def reshape(input, *shape, can_reorder=False):
    if len(shape) == 1 and isinstance(unwrap(shape[0]), (list, tuple)):
        shape = tuple(unwrap(shape[0]))
    return _semantic.reshape(input, shape)


view = reshape


def broadcast_to(input, *shape):
    if len(shape) == 1 and isinstance(unwrap(shape[0]), (list, tuple)):
        shape = tuple(unwrap(shape[0]))
    return _semantic.broadcast_to(input, shape)


def broadcast(input, other):
    a, b = _semantic.operands(input, other)
    shape = _semantic.broadcast_shape(a.shape, b.shape)
    return _semantic.broadcast_to(a, shape), _semantic.broadcast_to(b, shape)


def expand_dims(input, axis):
    return _semantic.expand_dims(input, axis)


def permute(input, *dims):
    if len(dims) == 1 and isinstance(unwrap(dims[0]), (list, tuple)):
        dims = tuple(unwrap(dims[0]))
    return _semantic.permute(input, dims)


def trans(input, *dims):
    if isinstance(input, _dot.GmBlock):  # a dot operand the cube loads: loaded transposed
        return input.trans(*dims)
    x = _semantic.operand(input)
    if not dims:
        dims = tuple(reversed(builtins.range(len(x.shape))))
    elif len(dims) == 1 and isinstance(unwrap(dims[0]), (list, tuple)):
        dims = tuple(unwrap(dims[0]))
    return _semantic.permute(x, dims)


# ---------------------------------------------------------------------- loops and hints
class range:  # noqa: N801 - tl.range
    """``tl.range(start, end, step, num_stages=..., loop_unroll_factor=..., ...)``: a loop
    whose bounds are known values; the pipelining options are the compiler's and change no
    result."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False,
                 **hints):
        args = (arg1,) if arg2 is None else (arg1, arg2)
        if step is not None:
            args = (*args, step)
        self._range = builtins.range(*(int(_static(a, "a loop bound")) for a in args))

    def __iter__(self):
        return iter(self._range)


class static_range(range):  # noqa: N801 - tl.static_range
    """A loop the compiler unrolls: the same iterations."""


def multiple_of(input, values):
    return input


def max_contiguous(input, values):
    return input


def max_constancy(input, values):
    return input


def assume(cond):
    return None


def debug_barrier():
    return None


def static_assert(cond, msg=""):
    if not builtins.bool(unwrap(cond)):
        raise CompileTimeAssertionFailure(f"{_loc()}: static_assert failed: {msg}")


def static_print(*values, sep=" ", end="\n", file=None, flush=False):
    builtins.print(*values, sep=sep, end=end)


def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """Refused: the assembly is written for a GPU (PTX) or for the device's own instruction
    set, which ascsim does not decode, so it has no meaning on the simulated chip."""
    raise CompilationError(f"{_loc()}: tl.inline_asm_elementwise is not supported by ascsim: "
                           "its assembly text is not decoded by the simulator (write the "
                           "operation with tl.* functions)")


def next_power_of_2(n):
    n = int(unwrap(n))
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


#: ``tl.math``: the element-wise math functions (a namespace of plain functions, so that
#: ``tl.math.exp(x)`` calls ``exp(x)``).
math = _types.SimpleNamespace(
    exp=exp, exp2=exp2, log=log, log2=log2, sqrt=sqrt, sqrt_rn=sqrt, rsqrt=rsqrt, abs=abs,
    sigmoid=sigmoid, floor=floor, ceil=ceil, fma=fma, fdiv=fdiv, div_rn=div_rn, erf=erf,
    sin=sin, cos=cos, max=maximum, min=minimum, umulhi=umulhi, cdiv=cdiv, clamp=clamp,
    tanh=_libdevice.tanh)
#: ``tl.extra.cann.libdevice`` without importing it (the import gives the same module).
extra = _types.SimpleNamespace(cann=_types.SimpleNamespace(libdevice=_libdevice))

__all__ = [name for name in dir() if not name.startswith("_")]
