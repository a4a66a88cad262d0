"""``triton.language.extra.cann.libdevice`` and the ``tl.math`` functions the vector unit has no
single instruction for (``sin``, ``acos``, ``erf``, ``isnan`` ...).

CANN's libdevice computes each of them as a routine of vector instructions (range reduction,
a polynomial, a fix-up). Here each call is one :class:`~ascsim.isa.VectorSequence` over a fresh
tile: its numerical definition is the function's (numpy or torch, computed in fp32 for fp16 and
bf16 inputs and rounded once to the result's type), and it is priced as a chain of dependent
vector passes. **No instruction count of CANN's libdevice routines is published**: a
transcendental function is priced as :data:`TRANSCENDENTAL` (eight dependent multiply-add
passes -- a degree-8 polynomial by Horner's rule -- after the range reduction's multiply), a
rounding or a predicate as one pass.
"""

from __future__ import annotations

import numpy as np

from ascsim.sim.source import user_location
from ascsim.triton import dtypes, semantic, vector
from ascsim.triton import program as _program
from ascsim.triton.errors import CompilationError
from ascsim.triton.tensor import known, tensor

#: Cost steps (cost classes of the SoC's vector table) of one routine.
TRANSCENDENTAL = ("muls",) + ("mul", "add") * 8
ONE_PASS = ("add",)


def _torch(name: str):
    def fn(x):
        import torch

        return getattr(torch.special if hasattr(torch.special, name) else torch, name)(
            torch.from_numpy(np.ascontiguousarray(x))).numpy()
    return fn


#: name -> (numpy-level definition on fp32/fp64 arrays, cost steps, result: "float" | "bool")
UNARY = {
    "sin": (np.sin, TRANSCENDENTAL, "float"), "cos": (np.cos, TRANSCENDENTAL, "float"),
    "tan": (np.tan, TRANSCENDENTAL, "float"), "asin": (np.arcsin, TRANSCENDENTAL, "float"),
    "acos": (np.arccos, TRANSCENDENTAL, "float"), "atan": (np.arctan, TRANSCENDENTAL, "float"),
    "sinh": (np.sinh, TRANSCENDENTAL, "float"), "cosh": (np.cosh, TRANSCENDENTAL, "float"),
    "tanh": (np.tanh, TRANSCENDENTAL, "float"), "asinh": (np.arcsinh, TRANSCENDENTAL, "float"),
    "acosh": (np.arccosh, TRANSCENDENTAL, "float"),
    "atanh": (np.arctanh, TRANSCENDENTAL, "float"),
    "erf": (_torch("erf"), TRANSCENDENTAL, "float"),
    "erfinv": (_torch("erfinv"), TRANSCENDENTAL, "float"),
    "lgamma": (_torch("lgamma"), TRANSCENDENTAL, "float"),
    "gamma": (lambda x: np.exp(_torch("lgamma")(x)) * np.where(
        (x < 0) & (np.floor(x) % 2 == 1), -1.0, 1.0).astype(x.dtype), TRANSCENDENTAL, "float"),
    "cyl_bessel_i0": (np.i0, TRANSCENDENTAL, "float"),
    "expm1": (np.expm1, TRANSCENDENTAL, "float"), "log1p": (np.log1p, TRANSCENDENTAL, "float"),
    "log10": (np.log10, TRANSCENDENTAL, "float"), "cbrt": (np.cbrt, TRANSCENDENTAL, "float"),
    "exp": (np.exp, TRANSCENDENTAL, "float"), "exp2": (np.exp2, TRANSCENDENTAL, "float"),
    "log": (np.log, TRANSCENDENTAL, "float"), "log2": (np.log2, TRANSCENDENTAL, "float"),
    "fast_expf": (np.exp, TRANSCENDENTAL, "float"),
    "trunc": (np.trunc, ONE_PASS, "float"), "rint": (np.rint, ONE_PASS, "float"),
    "nearbyint": (np.rint, ONE_PASS, "float"),
    "round": (lambda x: np.trunc(x + np.copysign(np.asarray(0.5, x.dtype), x)), ONE_PASS,
              "float"),
    "isnan": (np.isnan, ONE_PASS, "bool"), "isinf": (np.isinf, ONE_PASS, "bool"),
    "finitef": (np.isfinite, ONE_PASS, "bool"), "isfinited": (np.isfinite, ONE_PASS, "bool"),
    "signbit": (np.signbit, ONE_PASS, "bool"),
}
BINARY = {
    "atan2": (np.arctan2, TRANSCENDENTAL), "hypot": (np.hypot, TRANSCENDENTAL),
    "pow": (np.power, TRANSCENDENTAL), "fmod": (np.fmod, ("div", "mul", "sub")),
    "copysign": (np.copysign, ONE_PASS), "nextafter": (np.nextafter, ONE_PASS),
    "fast_dividef": (np.divide, ("div",)),
}


#: Routines evaluated in the input's own type (fp16 stays fp16): the device's fp16
#: ``cyl_bessel_i0`` follows an fp16 evaluation of its series -- triton-ascend's test compares
#: it with numpy's ``np.i0`` on fp16 values to 1e-3, which an fp32 evaluation misses by 0.3 %.
NATIVE_PRECISION = {"cyl_bessel_i0"}


def _wide(dtype) -> np.dtype:
    return np.dtype(np.float64 if dtype.bits == 64 else np.float32)


def _routine(name: str, fn, steps, result_kind: str, args: tuple) -> tensor:
    loc = user_location()
    args = tuple(semantic.operand(a) for a in args)
    dtype = args[0].dtype
    for a in args[1:]:
        dtype = dtypes.promote(dtype, a.dtype)
    if result_kind == "bool" and not dtype.is_floating():  # the predicates take floats only
        raise CompilationError(f"{loc[0]}:{loc[1]}: libdevice.{name}: Expected dtype "
                               f"fp16/fp32/bf16, but got {dtype}")
    if not dtype.is_floating():
        dtype = dtypes.float32
    shape = semantic.broadcast_shape(*(a.shape for a in args))
    wide = dtype.np_dtype if name in NATIVE_PRECISION else _wide(dtype)
    out_dtype = dtypes.int1 if result_kind == "bool" else dtype
    if all(a.known is not None for a in args):
        with np.errstate(all="ignore"):
            values = fn(*(np.broadcast_to(a.known.astype(wide), shape) for a in args))
        return known(np.asarray(values).astype(out_dtype.np_dtype), out_dtype)
    tiles = []
    for a in args:
        a = semantic.cast(a, dtype, loc=loc) if a.dtype != dtype else a
        a = semantic.as_tile(a, loc)
        if a.index is not None or a.shape != shape:  # the routine reads plain operands
            a = vector.elementwise("copy", dtype, shape, (a,), loc=loc)
        tiles.append(a)
    prog = _program.current()
    out = vector.new_tile(prog, out_dtype, shape, loc)
    n = out.numel
    size = max(dtype.np_dtype.itemsize, 1)

    def compute(*views):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(v.astype(wide) for v in views))).reshape(-1)

    rec = vector.VectorSequence(
        name, vector.region(prog, out)._replace(count=n),
        tuple(vector.region(prog, t)._replace(count=n) for t in tiles), compute, steps,
        vector._repeats(n, size), dtype.np_dtype.name, loc)
    prog.order.issue("V", rec, tuple(t.alloc for t in tiles), (out.alloc,), loc)
    return out


def _make_unary(name: str):
    fn, steps, kind = UNARY[name]

    def op(x, *rest, **kwargs):
        return _routine(name, fn, steps, kind, (x,))
    op.__name__ = name
    op.__doc__ = f"``libdevice.{name}(x)``, element-wise"
    return op


def _make_binary(name: str):
    fn, steps = BINARY[name]

    def op(x, y, *rest, **kwargs):
        return _routine(name, fn, steps, "float", (x, y))
    op.__name__ = name
    op.__doc__ = f"``libdevice.{name}(x, y)``, element-wise"
    return op


for _name in UNARY:
    globals()[_name] = _make_unary(_name)
for _name in BINARY:
    globals()[_name] = _make_binary(_name)


def relu(x):
    return semantic.unary("relu", x)


def div_rn(x, y):
    return semantic.binary("truediv", x, y)


def fabs(x):
    return semantic.unary("abs", x)


def __getattr__(name: str):
    raise AttributeError(f"libdevice.{name} is not supported by ascsim yet")

