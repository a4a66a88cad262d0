"""Per-lane values: what the block index is while one Python run serves a wave of cores.

A wave (:mod:`ascsim.sim.wave`) runs a kernel's Python once for several cores, its *lanes*.
The only value that differs between the lanes at the start is the block index, so the
front-end hands the kernel a :class:`Lanes` for it: one integer per lane. Arithmetic with
integers and other lane values gives lane values again, lane by lane, with the semantics of the
kernel language's runtime integers (``/`` divides as C does). Such values flow into the few
front-end entry points that take GM offsets (a GM address plus an offset, a global tensor's
slice) and from there into instruction records, which the wave then executes once per lane with
each lane's value put in.

Every other use needs one Python value: ``bool`` (an ``if``, ``and``, ``while``), ``int``,
``index`` (a ``range`` bound, a slice, a numpy argument), ``hash`` (a dict key), ``float``,
``str``. Such a use returns the value when all lanes agree and otherwise raises
:class:`Diverged`: the lanes would run different Python from there, so the wave stops and the
launch runs per core. ``Lanes`` is deliberately not an ``int`` subclass, so that no C-level
read can take one lane's value silently.
"""

from __future__ import annotations

import numpy as np


class Diverged(BaseException):  # noqa: N818 - control flow, not an error
    """The lanes of a wave cannot go on as one Python run (``why`` says where and why).

    A BaseException, so that a kernel's or a front-end's ``except Exception`` does not take it
    for an error of its own: it always reaches the wave, which runs the launch per core."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def _c_div(a, b):
    """Integer division rounding toward zero (C, and the kernel language's ``/``)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (b >= 0), q, -q)


def _values(other):
    """``other`` as per-lane values (a Lanes' array, or a Python/numpy integer), or None."""
    if type(other) is Lanes:
        return other.values
    if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
        return int(other)
    return None


class Lanes:
    """One integer per lane of a wave (``values[i]`` is lane ``i``'s).

    Uniform, affine (``base + stride * lane``) and general vectors are one representation:
    :meth:`affine` says which a value is. Instances are immutable.
    """

    __slots__ = ("values",)

    def __init__(self, values):
        array = np.asarray(values)
        if array.ndim != 1 or not array.size:
            raise ValueError("a lane value needs one integer per lane")
        if array.dtype.kind not in "iub":
            raise TypeError(f"lane values are integers or booleans, not {array.dtype}")
        array.setflags(write=False)
        self.values = array

    @classmethod
    def arange(cls, base: int, count: int, stride: int = 1) -> Lanes:
        """``base + stride * lane`` for ``count`` lanes (a wave's block indices)."""
        return cls(base + stride * np.arange(count, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.values)

    def at(self, lane: int) -> int:
        """Lane ``lane``'s value, as a Python int (or bool)."""
        value = self.values[lane]
        return bool(value) if self.values.dtype.kind == "b" else int(value)

    def affine(self) -> tuple[int, int] | None:
        """``(base, stride)`` when the value is ``base + stride * lane`` (stride 0: uniform),
        else None."""
        v = self.values
        if len(v) == 1:
            return int(v[0]), 0
        stride = int(v[1]) - int(v[0])
        if np.array_equal(v, v[0] + stride * np.arange(len(v))):
            return int(v[0]), stride
        return None

    def uniform(self, use: str):
        """The one value of all lanes, for a use (``use``) that needs a Python value; raises
        :class:`Diverged` when the lanes disagree."""
        v = self.values
        if (v == v[0]).all():
            return self.at(0)
        raise Diverged(f"the lanes' values differ where the kernel needs one value ({use}): "
                       f"{self!r}")

    # -- uses that need one Python value
    def __bool__(self) -> bool:
        return bool(self.uniform("a condition"))

    def __int__(self) -> int:
        return int(self.uniform("int()"))

    def __index__(self) -> int:
        return int(self.uniform("an index or a range bound"))

    def __float__(self) -> float:
        return float(self.uniform("float()"))

    def __hash__(self) -> int:
        return hash(self.uniform("a dict key or set member"))

    def __str__(self) -> str:
        return str(self.uniform("a string"))

    def __format__(self, spec: str) -> str:
        return format(self.uniform("a formatted string"), spec)

    def __repr__(self) -> str:
        form = self.affine()
        if form is None:
            return f"Lanes({self.values.tolist()})"
        return f"Lanes({form[0]} + {form[1]}·lane, {len(self.values)} lanes)"

    def __array__(self, dtype=None, copy=None):
        # numpy would otherwise read the object as a scalar of one lane or fail obscurely.
        raise Diverged("a lane value was handed to numpy, which needs one value")

    # -- the kernel language's runtime-integer methods
    def ceildiv(self, other) -> Lanes:
        b = _values(other)
        if b is None:
            raise Diverged(f"ceildiv of a lane value by {type(other).__name__}")
        return Lanes(-(-self.values // b))

    def cast(self, dtype):
        raise Diverged("a lane value cast to a scalar type")

    def __pow__(self, other, mod=None):
        raise TypeError("'**' is not supported on runtime integers in kernels")

    # -- arithmetic and comparisons, lane by lane (filled in below)
    def _apply(self, other, fn, name: str):
        b = _values(other)
        if b is None:
            # Not NotImplemented: Python would turn that into a TypeError, which front-end
            # code may catch and take for something else.
            raise Diverged(f"{name} of a lane value and a {type(other).__name__}")
        return Lanes(fn(self.values, b))

    def __truediv__(self, other) -> Lanes:
        return self._apply(other, _c_div, "/")

    def __rtruediv__(self, other) -> Lanes:
        return self._apply(other, lambda a, b: _c_div(b, a), "/")

    def __neg__(self) -> Lanes:
        return Lanes(-self.values)

    def __pos__(self) -> Lanes:
        return self

    def __abs__(self) -> Lanes:
        return Lanes(np.abs(self.values))

    def __invert__(self) -> Lanes:
        return Lanes(~self.values)


def _binary(name: str, fn):
    def op(self, other):
        return self._apply(other, fn, name)
    op.__name__ = name
    return op


# name -> (a, b) -> result; the reflected forms swap the operands.
_OPERATIONS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "lshift": lambda a, b: a << b, "rshift": lambda a, b: a >> b,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
}
for _name, _fn in _OPERATIONS.items():
    setattr(Lanes, f"__{_name}__", _binary(f"__{_name}__", _fn))
    setattr(Lanes, f"__r{_name}__",
            _binary(f"__r{_name}__", lambda a, b, _fn=_fn: _fn(b, a)))

# Comparisons give per-lane booleans; an ``if`` on them asks for one value (``__bool__``).
_COMPARISONS = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
                "eq": np.equal, "ne": np.not_equal}
for _name, _fn in _COMPARISONS.items():
    setattr(Lanes, f"__{_name}__", _binary(f"__{_name}__", _fn))


def at_lane(value, lane: int):
    """``value`` as lane ``lane`` sees it: a Lanes' value there, anything else as it is."""
    return value.at(lane) if type(value) is Lanes else value
