"""Scalar values of the kernel language: runtime ints and GM addresses.

pyasc traces a kernel into IR, so kernel parameters and ``get_block_idx()`` are IR values with
methods such as ``.ceildiv``. We execute kernels eagerly, so those are real ints that carry the
same methods (``RuntimeInt``), and pointer parameters are :class:`GlobalAddress` objects.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.dtypes import DataType, as_dtype
from ascsim.sim.lanes import Lanes


def _wrap(value):
    return RuntimeInt(value) if isinstance(value, int) and not isinstance(value, bool) else value


class RuntimeInt(int):
    """An int32 known only when the kernel runs (pyasc's ``PlainValue`` of integer type)."""

    __slots__ = ()

    def ceildiv(self, other) -> RuntimeInt:
        """Integer division rounding up: ``a.ceildiv(b) == (a + b - 1) // b``."""
        return RuntimeInt(-(-int(self) // int(other)))

    def cast(self, dtype) -> object:
        return as_dtype(dtype)(int(self))

    def __truediv__(self, other):
        # In the kernel language ``/`` between integers is integer division (C semantics).
        if isinstance(other, int):
            q = abs(int(self)) // abs(other)
            return RuntimeInt(q if (int(self) >= 0) == (other >= 0) else -q)
        return int(self) / other

    def __rtruediv__(self, other):
        if isinstance(other, int):
            return RuntimeInt(other).__truediv__(int(self))
        return other / int(self)

    def __pow__(self, other, mod=None):
        raise TypeError("'**' is not supported on runtime integers in kernels")


def _binary(name):
    base = getattr(int, name)

    def op(self, other):
        return _wrap(base(self, other)) if isinstance(other, int) else base(self, other)

    op.__name__ = name
    return op


def _unary(name):
    base = getattr(int, name)

    def op(self):
        return RuntimeInt(base(self))

    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__lshift__",
              "__rlshift__", "__rshift__", "__rrshift__", "__and__", "__rand__", "__or__",
              "__ror__", "__xor__", "__rxor__"):
    setattr(RuntimeInt, _name, _binary(_name))
for _name in ("__neg__", "__pos__", "__invert__", "__abs__"):
    setattr(RuntimeInt, _name, _unary(_name))


def ceildiv(a, b):
    """``asc.ceildiv(a, b)``: integer division rounding up."""
    return _wrap(-(-a // b))


class GlobalAddress:
    """A typed pointer into GM, as a kernel parameter (``asc.GlobalAddress``).

    ``addr + n`` moves the pointer by ``n`` elements, as in C. In a wave of cores the offset
    may be a lane value (one per core, :mod:`ascsim.sim.lanes`).
    """

    __slots__ = ("buffer", "offset", "dtype")

    def __init__(self, buffer, offset: int, dtype: DataType):
        self.buffer = buffer
        self.offset = offset if type(offset) is Lanes else int(offset)
        self.dtype = dtype

    def __add__(self, elements) -> GlobalAddress:
        if type(elements) is Lanes:
            return GlobalAddress(self.buffer, elements + self.offset, self.dtype)
        if not isinstance(elements, (int, np.integer)):
            raise TypeError(f"GlobalAddress + {type(elements).__name__}: only integer element "
                            "offsets can be added to an address")
        return GlobalAddress(self.buffer, self.offset + int(elements), self.dtype)

    __radd__ = __add__

    def __sub__(self, elements) -> GlobalAddress:
        return self + (-elements if type(elements) is Lanes else -int(elements))

    @property
    def byte_address(self) -> int:
        return self.buffer.address + self.offset * self.dtype.sizeof()

    def __repr__(self) -> str:
        return f"GlobalAddress({self.buffer.name}+{self.offset}, {self.dtype!r})"
