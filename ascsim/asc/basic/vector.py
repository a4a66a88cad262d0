"""Element-wise vector instructions, in count form and in mask/repeat form.

Every op is one line of a table: its pyasc name and the vector unit's op it is (whose numpy
function and cost class are in :mod:`ascsim.sim.exec_vector`), grouped by the shape of its
operands. A call becomes one :class:`~ascsim.isa.instr.Vector` record: the count form names the
first ``count`` elements, the mask/repeat form becomes one element index array per operand.

Count form:        ``op(dst, src0[, src1 | scalar], count)``
Mask/repeat form:  ``op(dst, src0[, src1 | scalar], mask, repeat_times, repeat_params)`` where
``mask`` is an element count per 256-byte repeat or two uint64 bit-mask words.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic.mask import note_own_mask
from ascsim.asc.basic.mask import registers as mask_registers
from ascsim.asc.context import current_core, user_location
from ascsim.asc.errors import CallFormError
from ascsim.asc.params import BinaryRepeatParams, UnaryRepeatParams
from ascsim.isa import (
    REPEAT_BYTES,
    KernelError,
    Vector,
    check_repeat,
    mask_positions,
    repeat_indices,
)

# pyasc name -> the vector unit's op (ascsim.sim.exec_vector.VECTOR_OPS), by operand shape.
BINARY_OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min",
              "bitwise_and": "and", "bitwise_or": "or", "add_relu": "add_relu",
              "sub_relu": "sub_relu"}
SCALAR_OPS = {"adds": "adds", "muls": "muls", "maxs": "maxs", "mins": "mins",
              "leaky_relu": "leaky_relu", "shift_left": "shl", "shift_right": "shr"}
UNARY_OPS = {"abs": "abs", "exp": "exp", "ln": "ln", "relu": "relu", "sqrt": "sqrt",
             "rsqrt": "rsqrt", "reciprocal": "reciprocal", "bitwise_not": "not"}
# Ops that also read their destination: dst = f(src..., scalar, dst); "scalar" or "binary".
DST_READING_OPS = {"axpy": ("axpy", "scalar"), "fused_mul_add": ("fused_mul_add", "binary"),
                   "mul_add_dst": ("mul_add_dst", "binary"),
                   "fused_mul_add_relu": ("fused_mul_add_relu", "binary")}


# ------------------------------------------------------------------------- argument forms
class _Form:
    """The elements a call selects: ``count`` contiguous ones, or ``mask`` per repeat over
    ``repeat_times`` repeats laid out by ``params``, or (counter mode, ``is_set_mask=False``)
    ``counter`` elements laid out by ``params``, the last repeat partial. ``own_mask``: the
    mask came with the call (not from the mask registers), so the call leaves it there."""

    __slots__ = ("count", "mask", "repeat_times", "params", "counter", "own_mask")

    def __init__(self, count=None, mask=None, repeat_times=None, params=None, counter=None,
                 own_mask=True):
        self.count = count
        self.mask = mask
        self.repeat_times = repeat_times
        self.params = params
        self.counter = counter
        self.own_mask = own_mask

    def leave_mask(self, per_repeat: int, loc) -> None:
        """The call's effect on the mask registers (see :func:`note_own_mask`)."""
        if self.count is not None:
            note_own_mask(None, per_repeat, loc)
        elif self.mask is not None and self.own_mask:
            note_own_mask(self.mask, per_repeat, loc)


def parse_form(args: tuple, kwargs: dict, params_type, name: str, loc) -> _Form:
    """Tell count form from mask/repeat form and pull out their arguments."""
    if not kwargs and len(args) == 1:  # ``op(dst, src..., count)``: by far the usual call
        count = int(args[0])
        if count < 0:
            raise KernelError(f"{name}: count {count} is negative", loc)
        return _Form(count=count)
    kwargs = dict(kwargs)
    is_set_mask = kwargs.pop("is_set_mask", True)
    count = kwargs.pop("count", kwargs.pop("cal_count", None))
    mask = kwargs.pop("mask", None)
    repeat_times = kwargs.pop("repeat_times", kwargs.pop("repeat_time", None))
    params = kwargs.pop("repeat_params", None)
    if kwargs:
        raise CallFormError(f"{name}: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    rest = list(args)
    if count is None and mask is None and len(rest) == 1:
        count = rest.pop()
    elif rest:
        if mask is None:
            mask = rest.pop(0)
        if rest and repeat_times is None:
            repeat_times = rest.pop(0)
        if rest and params is None:
            params = rest.pop(0)
        if rest and isinstance(rest[0], bool):
            is_set_mask = rest.pop(0)
        if rest:
            raise KernelError(f"{name}: too many arguments", loc)
    if not is_set_mask:  # the mask registers decide, whatever mask was passed
        if mask is None or repeat_times is None:
            raise KernelError(f"{name}(is_set_mask=False) is a mask/repeat form: pass "
                              "MASK_PLACEHOLDER, repeat_times and repeat_params", loc)
        reg = mask_registers()
        params = params if params is not None else params_type()
        if reg.mode == "counter":  # repeat_times follows from the count
            return _Form(counter=reg.low, params=params, own_mask=False)
        return _Form(mask=[reg.low, reg.high], repeat_times=check_repeat(repeat_times, loc),
                     params=params, own_mask=False)
    if count is not None:
        count = int(count)
        if count < 0:
            raise KernelError(f"{name}: count {count} is negative", loc)
        return _Form(count=count)
    if mask is None or repeat_times is None:
        raise KernelError(f"{name}: give either count, or mask, repeat_times and repeat_params",
                          loc)
    if params is None:
        params = params_type()
    return _Form(mask=mask, repeat_times=check_repeat(repeat_times, loc), params=params)


def operand_strides(params, role: str) -> tuple[int, int]:
    """(block stride, repeat stride) of operand ``role`` ('dst', 'src0', 'src1', 'src')."""
    if role == "src" and not hasattr(params, "src_blk_stride"):
        role = "src0"
    if role in ("src0", "src1") and not hasattr(params, f"{role}_blk_stride"):
        role = "src"
    return getattr(params, f"{role}_blk_stride"), getattr(params, f"{role}_rep_stride")


# ------------------------------------------------------------------------- to records
def vector_op(op: str, dst, srcs, scalars, form: _Form, loc, attrs=None, name=None):
    """Execute vector op ``op`` on ``dst`` and ``srcs`` over the elements ``form`` selects."""
    if form.count is not None:
        n = form.count
        rec = Vector(op, dst.region(n), tuple(s.region(n) for s in srcs), loc, tuple(scalars),
                     attrs=attrs)
    else:
        roles = ("src",) if len(srcs) == 1 else ("src0", "src1")[: len(srcs)]
        widest = max(t.dtype.sizeof() for t in (dst, *srcs))
        per_repeat = REPEAT_BYTES // widest
        if form.counter is not None:  # every position of each repeat, cut after the count
            positions, repeats = np.arange(per_repeat), -(-form.counter // per_repeat)
        else:
            positions, repeats = mask_positions(form.mask, per_repeat, loc), form.repeat_times
        lanes = tuple(
            repeat_indices(positions, repeats, t.dtype.sizeof(),
                           *operand_strides(form.params, role))[:form.counter]
            for role, t in (("dst", dst), *zip(roles, srcs)))
        rec = Vector(op, dst.region(), tuple(s.region() for s in srcs), loc, tuple(scalars),
                     lanes, repeats, attrs)
    result = current_core().execute(rec)
    form.leave_mask(REPEAT_BYTES // max(t.dtype.sizeof() for t in (dst, *srcs)), loc)
    return result


def _make_binary(name, unit_op):
    def op(dst, src0, src1, *args, **kwargs):
        loc = user_location()
        form = parse_form(args, kwargs, BinaryRepeatParams, name, loc)
        vector_op(unit_op, dst, (src0, src1), (), form, loc)

    op.__name__ = name
    op.__doc__ = f"``{name}(dst, src0, src1, count)`` or mask/repeat form (BinaryRepeatParams)."
    return op


def _make_scalar(name, unit_op):
    def op(dst, src, scalar, *args, **kwargs):
        loc = user_location()
        form = parse_form(args, kwargs, UnaryRepeatParams, name, loc)
        vector_op(unit_op, dst, (src,), (scalar,), form, loc)

    op.__name__ = name
    op.__doc__ = f"``{name}(dst, src, scalar, count)`` or mask/repeat form (UnaryRepeatParams)."
    return op


def _make_unary(name, unit_op):
    def op(dst, src, *args, **kwargs):
        loc = user_location()
        form = parse_form(args, kwargs, UnaryRepeatParams, name, loc)
        vector_op(unit_op, dst, (src,), (), form, loc)

    op.__name__ = name
    op.__doc__ = f"``{name}(dst, src, count)`` or mask/repeat form (UnaryRepeatParams)."
    return op


def _make_dst_reading(name, unit_op, shape):
    if shape == "scalar":
        def op(dst, src, scalar, *args, **kwargs):
            loc = user_location()
            form = parse_form(args, kwargs, UnaryRepeatParams, name, loc)
            vector_op(unit_op, dst, (src,), (scalar,), form, loc)
    else:
        def op(dst, src0, src1, *args, **kwargs):
            loc = user_location()
            form = parse_form(args, kwargs, BinaryRepeatParams, name, loc)
            vector_op(unit_op, dst, (src0, src1), (), form, loc)
    op.__name__ = name
    return op


OPS: dict[str, object] = {}
OPS.update({n: _make_binary(n, u) for n, u in BINARY_OPS.items()})
OPS.update({n: _make_scalar(n, u) for n, u in SCALAR_OPS.items()})
OPS.update({n: _make_unary(n, u) for n, u in UNARY_OPS.items()})
OPS.update({n: _make_dst_reading(n, u, s) for n, (u, s) in DST_READING_OPS.items()})
