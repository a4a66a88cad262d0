"""TilingData arguments: a ``@dataclass`` instance passed last to a ``@pl.jit`` kernel.

Its fields are ``int`` (int64 on the device), ``float`` (float32), ``bool`` or fixed arrays
``T[N]`` of those (``N`` a literal from 1 to 2048; written with ``from __future__ import
annotations``, so the annotation is read as text). The kernel reads ``tiling.f`` and
``tiling.arr[k]`` as runtime values. On the device the instance is serialised into a buffer; here
the kernel gets a copy of it with every value converted to its C type (an ``int`` wraps to 64
bits, a ``float`` rounds to float32), and the same checks reject a malformed class or instance.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass

import numpy as np

#: Scalar annotation -> the numpy type that holds it on the device.
SCALARS = {"int": np.dtype(np.int64), "float": np.dtype(np.float32), "bool": np.dtype(np.bool_)}
MAX_ARRAY = 2048


@dataclass(frozen=True)
class FieldType:
    """One TilingData field: its element type and, for ``T[N]``, its length."""

    dtype: np.dtype
    size: int | None = None


def field_type(annotation) -> FieldType:
    """The :class:`FieldType` of an annotation (``int``, ``"float"``, ``"int[4]"``)."""
    if isinstance(annotation, type):
        annotation = annotation.__name__
    if not isinstance(annotation, str):
        raise TypeError(f"expected int, float, bool or T[N], got {annotation!r}")
    try:
        node = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        raise ValueError(f"invalid annotation {annotation!r}") from None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return field_type(node.value)  # a quoted annotation under postponed evaluation
    if isinstance(node, ast.Name):
        if node.id not in SCALARS:
            raise TypeError(f"unsupported scalar type {node.id!r} (int, float or bool)")
        return FieldType(SCALARS[node.id])
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
        raise TypeError(f"expected a scalar type or a fixed array T[N], got {annotation!r}")
    if node.value.id not in SCALARS:
        raise TypeError(f"array element type must be int, float or bool, got "
                        f"{node.value.id!r}")
    size = node.slice
    if not isinstance(size, ast.Constant) or isinstance(size.value, bool) \
            or not isinstance(size.value, int) or size.value <= 0:
        raise ValueError("array size must be a positive integer literal")
    if size.value > MAX_ARRAY:
        raise ValueError(f"array size must not exceed {MAX_ARRAY}, got {size.value}")
    return FieldType(SCALARS[node.value.id], size.value)


def tiling_fields(cls) -> dict[str, FieldType]:
    """The fields of a TilingData class, checked."""
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"not a valid tiling class: {cls!r} (expected a dataclass)")
    fields = dataclasses.fields(cls)
    if not fields:
        raise ValueError(f"not a valid tiling class: {cls!r} (it has no fields)")
    out = {}
    for f in fields:
        try:
            out[f.name] = field_type(f.type)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"invalid tiling field {f.name!r} annotation {f.type!r}: "
                             f"{exc}") from None
    return out


def _scalar(value, dtype: np.dtype, where: str):
    if dtype.kind == "b":
        if not isinstance(value, (bool, np.bool_, int)):
            raise TypeError(f"{where} expects a bool, got {type(value).__name__}")
        return bool(value)
    if dtype.kind == "f":
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise TypeError(f"{where} expects a float, got {type(value).__name__}")
        return float(np.float32(value))
    if isinstance(value, (bool, float)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{where} expects an int, got {type(value).__name__}")
    return int(np.asarray(int(value) & (2 ** 64 - 1), dtype=np.uint64).astype(np.int64))


def device_copy(instance):
    """The instance the kernel sees: a copy whose values have their device types."""
    values = {}
    for name, ftype in tiling_fields(type(instance)).items():
        value = getattr(instance, name)
        where = f"tiling field {name!r}"
        if ftype.size is None:
            values[name] = _scalar(value, ftype.dtype, where)
            continue
        if not isinstance(value, (list, tuple, np.ndarray)):
            raise TypeError(f"{where} expects a list of {ftype.size} values, got "
                            f"{type(value).__name__}")
        if len(value) != ftype.size:
            raise ValueError(f"Tiling field '{name}' expected {ftype.size} elements, got "
                             f"{len(value)}")
        values[name] = [_scalar(v, ftype.dtype, f"{where}[{i}]") for i, v in enumerate(value)]
    copy = object.__new__(type(instance))
    for name, value in values.items():
        object.__setattr__(copy, name, value)
    return copy
