"""Host<->device parameter structs (pyasc's ``asc.Struct``), e.g. ``TCubeTiling``.

A struct is declared as a class with a ``_fields_`` table of ``(name, dtype_name, default)``,
or in the style of pyasc's ``asc.language.core.struct``: class members ``Field(dtype=...,
default=...)`` and ``StructField(OtherStruct)`` (a nested struct), in declaration order. On the
host it is built with keywords and can be packed to bytes like the ctypes original; inside a
kernel its integer fields read as runtime ints.
"""

from __future__ import annotations

import ctypes
from typing import ClassVar

from ascsim.asc.values import RuntimeInt
from ascsim.sim.scheduler import in_kernel

_CTYPES = {
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
}


class Field:
    """A scalar member of a struct: ``Field(dtype=KnownTypes.int32, default=0)``."""

    def __init__(self, dtype, default=0, name: str | None = None):
        type_name = getattr(dtype, "name", dtype)
        if type_name not in _CTYPES:
            raise TypeError(f"a struct field cannot hold {type_name!r} (it can hold "
                            f"{', '.join(sorted(_CTYPES))})")
        self.type_name = type_name
        self.default = default
        self.name = name


class StructField:
    """A nested struct member: ``StructField(OtherStruct)``; all zeros unless ``default``."""

    def __init__(self, struct_cls, default=None, name: str | None = None):
        if not (isinstance(struct_cls, type) and issubclass(struct_cls, Struct)):
            raise TypeError(f"StructField needs a Struct subclass, got {struct_cls!r}")
        self.struct_cls = struct_cls
        self.default = default
        self.name = name


def _declared_fields(cls) -> tuple | None:
    """``_fields_`` of a class declared with Field/StructField members (None if it has none);
    the members are removed from the class so that reads reach the values."""
    members = [(name, member) for name, member in vars(cls).items()
               if isinstance(member, (Field, StructField))]
    if not members:
        return None
    table = []
    for name, member in members:
        delattr(cls, name)
        kind = member.type_name if isinstance(member, Field) else member.struct_cls
        table.append((member.name or name, kind, member.default))
    return tuple(table)


def _ctype_of(kind):
    return kind._ctype if isinstance(kind, type) else _CTYPES[kind]


class Struct:
    """Base class: subclasses set ``_fields_ = (("name", "int32", default), ...)``."""

    _fields_: ClassVar[tuple[tuple[str, str, int | float], ...]] = ()
    _ctype: ClassVar[type[ctypes.Structure] | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        declared = _declared_fields(cls)
        if declared is not None:
            cls._fields_ = declared
        cls._ctype = type(
            f"_{cls.__name__}_C",
            (ctypes.Structure,),
            {"_fields_": [(name, _ctype_of(ty)) for name, ty, _ in cls._fields_]},
        )
        cls._field_names = frozenset(name for name, _, _ in cls._fields_)
        cls._nested = {name: ty for name, ty, _ in cls._fields_ if isinstance(ty, type)}

    def __init__(self, **values):
        c = self._ctype()
        object.__setattr__(self, "_c", c)
        for name, _, default in self._fields_:
            if default is not None:
                setattr(self, name, default)
        for name, value in values.items():
            setattr(self, name, value)

    @classmethod
    def _over(cls, c):
        """A struct of this type whose fields live in ctypes object ``c`` (a nested member)."""
        view = cls.__new__(cls)
        object.__setattr__(view, "_c", c)
        return view

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._field_names:
            nested = self._nested.get(name)
            if nested is not None:
                return nested._over(getattr(self._c, name))
            value = getattr(self._c, name)
            if type(value) is int and in_kernel():
                return RuntimeInt(value)  # a struct built in a kernel holds runtime values
            return value
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __setattr__(self, name, value):
        if name not in self._field_names:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r}; fields: {sorted(self._field_names)}"
            )
        nested = self._nested.get(name)
        if nested is not None:
            if not isinstance(value, nested):
                raise TypeError(f"{type(self).__name__}.{name} holds a {nested.__name__}, got "
                                f"{type(value).__name__}")
            value = value._c
        setattr(self._c, name, value)

    def fields(self) -> dict[str, int | float]:
        """All fields as a plain dict, in declaration order (a nested struct as a struct)."""
        return {name: getattr(self, name) for name, _, _ in self._fields_}

    def addressof(self) -> int:
        return ctypes.addressof(self._c)

    def pack(self) -> bytes:
        return bytes(self._c)

    def copy(self):
        return type(self)(**{name: value.copy() if isinstance(value, Struct) else value
                             for name, value in self.fields().items()})

    def __eq__(self, other):
        return type(other) is type(self) and self.fields() == other.fields()

    def __repr__(self):
        body = ", ".join(f"{k}={v}" for k, v in self.fields().items() if v)
        return f"{type(self).__name__}({body})"
