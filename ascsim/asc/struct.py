"""Host<->device parameter structs (pyasc's ``asc.Struct``), e.g. ``TCubeTiling``.

A struct is declared as a class with a ``_fields_`` table of ``(name, dtype_name, default)``.
On the host it is built with keywords and can be packed to bytes like the ctypes original; inside a
kernel its integer fields read as runtime ints.
"""

from __future__ import annotations

import ctypes
from typing import ClassVar

_CTYPES = {
    "int32": ctypes.c_int32,
    "uint32": ctypes.c_uint32,
    "int64": ctypes.c_int64,
    "float32": ctypes.c_float,
}


class Struct:
    """Base class: subclasses set ``_fields_ = (("name", "int32", default), ...)``."""

    _fields_: ClassVar[tuple[tuple[str, str, int | float], ...]] = ()
    _ctype: ClassVar[type[ctypes.Structure] | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._ctype = type(
            f"_{cls.__name__}_C",
            (ctypes.Structure,),
            {"_fields_": [(name, _CTYPES[ty]) for name, ty, _ in cls._fields_]},
        )
        cls._field_names = frozenset(name for name, _, _ in cls._fields_)

    def __init__(self, **values):
        c = self._ctype()
        object.__setattr__(self, "_c", c)
        for name, _, default in self._fields_:
            setattr(c, name, default)
        for name, value in values.items():
            setattr(self, name, value)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._field_names:
            return getattr(self._c, name)
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __setattr__(self, name, value):
        if name not in self._field_names:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r}; fields: {sorted(self._field_names)}"
            )
        setattr(self._c, name, value)

    def fields(self) -> dict[str, int | float]:
        """All fields as a plain dict, in declaration order."""
        return {name: getattr(self._c, name) for name, _, _ in self._fields_}

    def addressof(self) -> int:
        return ctypes.addressof(self._c)

    def pack(self) -> bytes:
        return bytes(self._c)

    def copy(self):
        return type(self)(**self.fields())

    def __eq__(self, other):
        return type(other) is type(self) and self.fields() == other.fields()

    def __repr__(self):
        body = ", ".join(f"{k}={v}" for k, v in self.fields().items() if v)
        return f"{type(self).__name__}({body})"
