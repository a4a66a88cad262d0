"""Element-wise math of the high-level API: ``asc.adv.tanh``, ``exp``, ``sigmoid``-style helpers.

Each entry gives the numpy function and the basic-instruction sequence the library runs for it,
which is what the timing model charges.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.adv.composite import unary_composite
from ascsim.asc.context import user_location


def _tanh(x):
    return np.tanh(x)


# name -> (numpy function or the name of one of _TORCH_FUNCTIONS, instruction sequence)
MATH_OPS = {
    # tanh(x) = 1 - 2 / (exp(2x) + 1), with the input clamped first.
    "tanh": (_tanh, ("mins", "maxs", "muls", "exp", "adds", "div", "adds")),
    "exp": (np.exp, ("exp",)),
    "log": (np.log, ("ln",)),
    "sin": (np.sin, ("muls", "adds", "mul", "mul", "muls", "adds", "mul", "muls")),
    "cos": (np.cos, ("muls", "adds", "mul", "mul", "muls", "adds", "mul", "muls")),
    "sinh": (np.sinh, ("exp", "muls", "exp", "sub", "muls")),
    "cosh": (np.cosh, ("exp", "muls", "exp", "add", "muls")),
    "erf": ("erf", ("mins", "maxs", "mul", "muls", "adds", "mul", "adds", "mul", "div")),
    "floor": (np.floor, ("cast", "cast")),
    "ceil": (np.ceil, ("cast", "cast")),
    "round": (np.round, ("cast", "cast")),
    "trunc": (np.trunc, ("cast", "cast")),
    "frac": (lambda x: x - np.trunc(x), ("cast", "cast", "sub")),
    "sign": (np.sign, ("compare", "select", "compare", "select")),
    "atan": (np.arctan, ("abs", "mins", "div", "mul", "muls", "adds", "mul", "adds", "mul")),
    "asin": (np.arcsin, ("abs", "mul", "muls", "adds", "sqrt", "mul", "adds", "mul")),
    "acos": (np.arccos, ("abs", "mul", "muls", "adds", "sqrt", "mul", "adds", "mul")),
    "tan": (np.tan, ("muls", "adds", "mul", "mul", "muls", "adds", "div")),
    # acosh(x) = ln(x + sqrt(x^2 - 1))
    "acosh": (np.arccosh, ("mul", "adds", "sqrt", "add", "ln")),
    # asinh(x) = sign(x) ln(|x| + sqrt(x^2 + 1))
    "asinh": (np.arcsinh, ("abs", "mul", "adds", "sqrt", "add", "ln", "compare", "select")),
    # atanh(x) = ln((1 + x) / (1 - x)) / 2
    "atanh": (np.arctanh, ("adds", "muls", "adds", "div", "ln", "muls")),
    # erfc(x) = 1 - erf(x): erf's polynomial, then the subtraction
    "erfc": ("erfc", ("mins", "maxs", "mul", "muls", "adds", "mul", "adds", "mul", "div", "muls",
                      "adds")),
    # digamma: the recurrence up to x >= 10 (six shifted reciprocals), then the asymptotic series
    "digamma": ("digamma", ("adds", "div") * 6 + ("ln", "reciprocal", "mul", "muls", "adds",
                                                   "mul", "adds", "mul", "sub", "add")),
    # lgamma: the same recurrence as products, then Stirling's series
    "lgamma": ("lgamma", ("adds", "mul") * 6 + ("ln", "sub", "adds", "ln", "mul", "sub",
                                                "reciprocal", "muls", "adds", "add")),
}

#: The functions numpy lacks, from PyTorch (fp32 in, fp32 out).
_TORCH_FUNCTIONS = {"erf": "erf", "erfc": "erfc", "digamma": "digamma", "lgamma": "gammaln"}


def _torch_function(name: str):
    def fn(x):
        import torch

        tensor = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
        return getattr(torch.special, _TORCH_FUNCTIONS[name])(tensor).numpy()

    fn.__name__ = name
    return fn


def _make(name, fn, steps):
    if isinstance(fn, str):  # a function numpy lacks
        fn = _torch_function(fn)

    def op(dst, src, count=None, temp_buffer=None, is_reuse_source=False, **kwargs):
        count = kwargs.pop("cal_count", count)
        unary_composite(name, steps, fn, dst, src, count, user_location())

    op.__name__ = name
    op.__doc__ = f"``asc.adv.{name}(dst, src, count=None, temp_buffer=None)``."
    return op


MATH = {name: _make(name, fn, steps) for name, (fn, steps) in MATH_OPS.items()}
