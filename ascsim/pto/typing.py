"""Parameter annotations of ``@pl.jit`` kernels: ``pl.Tensor[[d0, d1], dtype]``, ``pl.Ptr[dtype]``,
``pl.DYNAMIC`` / ``pl.STATIC`` dimensions and scalar dtypes."""

from __future__ import annotations

from dataclasses import dataclass

from ascsim.pto.dtypes import DataType
from ascsim.pto.enums import TensorLayout


class _DimMarker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"pl.{self.name}"


DYNAMIC = _DimMarker("DYNAMIC")
STATIC = _DimMarker("STATIC")


@dataclass(frozen=True)
class TensorSpec:
    """What a ``pl.Tensor[...]`` annotation demands of its argument."""

    dims: tuple  # ints, DYNAMIC, STATIC, or Ellipsis (remaining dims STATIC)
    dtype: DataType
    layout: TensorLayout = TensorLayout.ND


@dataclass(frozen=True)
class PtrSpec:
    dtype: DataType


class Tensor:
    """``pl.Tensor[[d0, ...], dtype(, layout)]``."""

    def __class_getitem__(cls, item):
        if not isinstance(item, tuple) or len(item) < 2:
            raise TypeError("pl.Tensor[...] takes [dims], dtype and optionally a layout")
        dims, dtype, *rest = item
        if not isinstance(dims, (list, tuple)):
            dims = [dims]
        layout = TensorLayout(rest[0]) if rest and isinstance(rest[0], (int,)) else \
            TensorLayout.ND
        return TensorSpec(tuple(dims), dtype, layout)


class Ptr:
    """``pl.Ptr[dtype]``: a raw GM pointer parameter."""

    def __class_getitem__(cls, dtype):
        return PtrSpec(dtype)


class Tile:
    """``pl.Tile`` / ``pl.Tile[[rows, cols], dtype]``: the annotation of a helper's tile
    parameter (helpers are inlined, so it checks nothing)."""

    def __class_getitem__(cls, item):
        return cls


class Scalar:
    """``pl.Scalar[dtype]`` (annotation of helper parameters)."""

    def __class_getitem__(cls, dtype):
        return dtype
