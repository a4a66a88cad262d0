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


# name -> (numpy function, instruction sequence)
MATH_OPS = {
    # tanh(x) = 1 - 2 / (exp(2x) + 1), with the input clamped first.
    "tanh": (_tanh, ("mins", "maxs", "muls", "exp", "adds", "div", "adds")),
    "exp": (np.exp, ("exp",)),
    "log": (np.log, ("ln",)),
    "sin": (np.sin, ("muls", "adds", "mul", "mul", "muls", "adds", "mul", "muls")),
    "cos": (np.cos, ("muls", "adds", "mul", "mul", "muls", "adds", "mul", "muls")),
    "sinh": (np.sinh, ("exp", "muls", "exp", "sub", "muls")),
    "cosh": (np.cosh, ("exp", "muls", "exp", "add", "muls")),
    "erf": (None, ("mins", "maxs", "mul", "muls", "adds", "mul", "adds", "mul", "div")),
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
}


def _erf(x):
    import torch

    return torch.special.erf(torch.from_numpy(np.ascontiguousarray(x))).numpy()


def _make(name, fn, steps):
    fn = fn or _erf

    def op(dst, src, count=None, temp_buffer=None, is_reuse_source=False, **kwargs):
        count = kwargs.pop("cal_count", count)
        unary_composite(name, steps, fn, dst, src, count, user_location())

    op.__name__ = name
    op.__doc__ = f"``asc.adv.{name}(dst, src, count=None, temp_buffer=None)``."
    return op


MATH = {name: _make(name, fn, steps) for name, (fn, steps) in MATH_OPS.items()}
