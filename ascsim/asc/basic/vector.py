"""Element-wise vector instructions, in count form and in mask/repeat form.

Every op is one line of a table: its name, the shape of its operands, the numpy function that
computes it and the cost class it is priced by. Values are computed in fp32 for fp16/bf16 operands
(as the vector unit's datapath does) and rounded once to the destination type.

Count form:        ``op(dst, src0[, src1 | scalar], count)``
Mask/repeat form:  ``op(dst, src0[, src1 | scalar], mask, repeat_times, repeat_params)`` where
``mask`` is an element count per 256-byte repeat or two uint64 bit-mask words.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic._exec import (
    access_of,
    check_repeat,
    count_repeats,
    execute,
    mask_positions,
    repeat_indices,
    strided_view,
    vector_cycles,
)
from ascsim.asc.context import user_location
from ascsim.asc.params import BinaryRepeatParams, UnaryRepeatParams
from ascsim.sim.errors import KernelError
from ascsim.sim.numerics import LOW_PRECISION, widen_to_fp32


def compute_dtype(arr: np.ndarray) -> np.ndarray:
    """Operands as the datapath sees them: fp16/bf16 widened to fp32."""
    return widen_to_fp32(arr) if arr.dtype in LOW_PRECISION else arr


def _relu(x):
    return np.maximum(x, 0)


def _leaky_relu(x, alpha):
    scaled = x * alpha
    if 0 < alpha <= 1:  # then max(x, alpha*x) is x where x >= 0 and alpha*x below: one pass
        return np.maximum(x, scaled, out=scaled)  # and one array fewer than np.where
    return np.where(x >= 0, x, scaled)


# name -> (numpy function, cost class). The function takes the sources (and scalar) in order.
BINARY_OPS = {
    "add": (np.add, "add"),
    "sub": (np.subtract, "sub"),
    "mul": (np.multiply, "mul"),
    "div": (np.divide, "div"),
    "max": (np.maximum, "max"),
    "min": (np.minimum, "min"),
    "bitwise_and": (np.bitwise_and, "add"),
    "bitwise_or": (np.bitwise_or, "add"),
    "add_relu": (lambda a, b: _relu(a + b), "add"),
    "sub_relu": (lambda a, b: _relu(a - b), "sub"),
}
SCALAR_OPS = {
    "adds": (np.add, "adds"),
    "muls": (np.multiply, "muls"),
    "maxs": (np.maximum, "maxs"),
    "mins": (np.minimum, "mins"),
    "leaky_relu": (_leaky_relu, "leaky_relu"),
    "shift_left": (np.left_shift, "adds"),
    "shift_right": (np.right_shift, "adds"),
}
UNARY_OPS = {
    "abs": (np.abs, "abs"),
    "exp": (np.exp, "exp"),
    "ln": (np.log, "ln"),
    "relu": (_relu, "relu"),
    "sqrt": (np.sqrt, "sqrt"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), "rsqrt"),
    "reciprocal": (lambda x: 1 / x, "reciprocal"),
    "bitwise_not": (np.invert, "abs"),
}
# Ops that also read their destination: dst = f(src..., scalar, dst).
DST_READING_OPS = {
    "axpy": (lambda src, alpha, dst: src * alpha + dst, "axpy", "scalar"),
    "fused_mul_add": (lambda a, b, dst: a * dst + b, "mul", "binary"),
    "mul_add_dst": (lambda a, b, dst: a * b + dst, "mul", "binary"),
    "fused_mul_add_relu": (lambda a, b, dst: _relu(a * dst + b), "mul", "binary"),
}


# ------------------------------------------------------------------------- argument forms
class _Form:
    __slots__ = ("count", "mask", "repeat_times", "params")

    def __init__(self, count=None, mask=None, repeat_times=None, params=None):
        self.count = count
        self.mask = mask
        self.repeat_times = repeat_times
        self.params = params


def parse_form(args: tuple, kwargs: dict, params_type, name: str, loc) -> _Form:
    """Tell count form from mask/repeat form and pull out their arguments."""
    if not kwargs and len(args) == 1:  # ``op(dst, src..., count)``: by far the usual call
        count = int(args[0])
        if count < 0:
            raise KernelError(f"{name}: count {count} is negative", loc)
        return _Form(count=count)
    kwargs = dict(kwargs)
    kwargs.pop("is_set_mask", None)
    count = kwargs.pop("count", kwargs.pop("cal_count", None))
    mask = kwargs.pop("mask", None)
    repeat_times = kwargs.pop("repeat_times", kwargs.pop("repeat_time", None))
    params = kwargs.pop("repeat_params", None)
    if kwargs:
        raise KernelError(f"{name}: unexpected keyword argument(s) {sorted(kwargs)}", loc)
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
            rest.pop(0)  # is_set_mask
        if rest:
            raise KernelError(f"{name}: too many arguments", loc)
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


# ------------------------------------------------------------------------- the engine
def elementwise(name: str, cost_op: str, fn, dst, srcs, scalars, form: _Form, loc,
                reads_dst: bool = False, out_fn=None) -> None:
    """Run ``dst = fn(*srcs, *scalars[, dst])`` over the elements the form selects."""
    tensors = (dst, *srcs)
    widest = _check_operands(name, tensors, loc)
    if form.count is not None:
        n = form.count
        src_views = [s.elements(0, n, loc) for s in srcs]
        dst_view = dst.elements(0, n, loc)
        dst_index = slice(None)
        repeats = count_repeats(n, widest)
        reads = [s.access(0, n) for s in srcs]
        writes = [dst.access(0, n)]
        operands = [compute_dtype(v) for v in src_views]  # the views are the whole operands
    else:
        roles = ("src",) if len(srcs) == 1 else ("src0", "src1")[: len(srcs)]
        per_repeat = 256 // widest
        positions = mask_positions(form.mask, per_repeat, loc)
        index_of = {}
        for role, t in (("dst", dst), *zip(roles, srcs)):
            blk, rep = operand_strides(form.params, role)
            index_of[role] = repeat_indices(positions, form.repeat_times, t.dtype.sizeof(),
                                            blk, rep)
        dst_index = index_of["dst"]
        src_index = [index_of[r] for r in roles[: len(srcs)]]
        src_views = [strided_view(s, i, loc) for s, i in zip(srcs, src_index)]
        dst_view = strided_view(dst, dst_index, loc)
        repeats = form.repeat_times
        reads = [access_of(s, i) for s, i in zip(srcs, src_index)]
        writes = [access_of(dst, dst_index)]
        operands = [compute_dtype(v[i]) for v, i in zip(src_views, src_index)]
    src_dtype = srcs[0].dtype.np_dtype if srcs else dst.dtype.np_dtype
    # A scalar operand has the source's type on the device; round it there first.
    consts = [np.asarray(s, dtype=src_dtype).astype(operands[0].dtype if operands else src_dtype)
              for s in scalars]
    if reads_dst:
        operands_dst = [compute_dtype(dst_view[dst_index])]
        reads = reads + writes
    else:
        operands_dst = []
    with np.errstate(all="ignore"):
        if fn is None:  # a fill: the one scalar is the value (duplicate)
            result = np.broadcast_to(consts[0], np.shape(dst_view[dst_index]))
        else:
            result = fn(*operands, *consts, *operands_dst)
    if out_fn is not None:
        out_fn(dst_view, dst_index, result)
    else:
        # No intermediate copy when the result already has the destination's type: the
        # assignment copies (numpy buffers it when the result overlaps the destination).
        dst_view[dst_index] = np.asarray(result).astype(dst.dtype.np_dtype, copy=False)
    busy, latency = vector_cycles(cost_op, (srcs[0] if srcs else dst).dtype.name, repeats)
    execute("V", name, busy, latency, loc, tensors, tuple(reads), tuple(writes))


def _check_operands(name: str, tensors, loc) -> int:
    """Fail unless every operand is an allocated UB tensor; returns the widest element size."""
    widest = 0
    for t in tensors:
        mem = t.mem
        if mem is None:
            raise KernelError(f"{name}: a tensor operand is not allocated", loc)
        if mem.name != "UB":
            raise KernelError(f"{name}: vector instructions work on UB tensors, got a tensor in "
                              f"{mem.name}", loc)
        size = t.dtype.np_dtype.itemsize
        if size > widest:
            widest = size
    return widest


def _make_binary(name, fn, cost_op):
    def op(dst, src0, src1, *args, **kwargs):
        loc = user_location()
        form = parse_form(args, kwargs, BinaryRepeatParams, name, loc)
        elementwise(name, cost_op, fn, dst, (src0, src1), (), form, loc)

    op.__name__ = name
    op.__doc__ = f"``{name}(dst, src0, src1, count)`` or mask/repeat form (BinaryRepeatParams)."
    return op


def _make_scalar(name, fn, cost_op):
    def op(dst, src, scalar, *args, **kwargs):
        loc = user_location()
        form = parse_form(args, kwargs, UnaryRepeatParams, name, loc)
        elementwise(name, cost_op, fn, dst, (src,), (scalar,), form, loc)

    op.__name__ = name
    op.__doc__ = f"``{name}(dst, src, scalar, count)`` or mask/repeat form (UnaryRepeatParams)."
    return op


def _make_unary(name, fn, cost_op):
    def op(dst, src, *args, **kwargs):
        loc = user_location()
        form = parse_form(args, kwargs, UnaryRepeatParams, name, loc)
        elementwise(name, cost_op, fn, dst, (src,), (), form, loc)

    op.__name__ = name
    op.__doc__ = f"``{name}(dst, src, count)`` or mask/repeat form (UnaryRepeatParams)."
    return op


def _make_dst_reading(name, fn, cost_op, shape):
    if shape == "scalar":
        def op(dst, src, scalar, *args, **kwargs):
            loc = user_location()
            form = parse_form(args, kwargs, UnaryRepeatParams, name, loc)
            elementwise(name, cost_op, fn, dst, (src,), (scalar,), form, loc, reads_dst=True)
    else:
        def op(dst, src0, src1, *args, **kwargs):
            loc = user_location()
            form = parse_form(args, kwargs, BinaryRepeatParams, name, loc)
            elementwise(name, cost_op, fn, dst, (src0, src1), (), form, loc, reads_dst=True)
    op.__name__ = name
    return op


OPS: dict[str, object] = {}
OPS.update({n: _make_binary(n, f, c) for n, (f, c) in BINARY_OPS.items()})
OPS.update({n: _make_scalar(n, f, c) for n, (f, c) in SCALAR_OPS.items()})
OPS.update({n: _make_unary(n, f, c) for n, (f, c) in UNARY_OPS.items()})
OPS.update({n: _make_dst_reading(n, f, c, s) for n, (f, c, s) in DST_READING_OPS.items()})
