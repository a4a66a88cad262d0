"""Triton's element types (``tl.float32``, ``tl.int1``, pointer types) and its type promotion.

The promotion rules are Triton's (its language reference, "type promotion"): two floats give
the wider (fp16 with bf16 gives fp32); a float with an integer gives the float; two integers give
the wider, and of equal width the unsigned one; a Python ``int`` takes the tensor's type, a
Python ``float`` the tensor's float type or fp32 next to an integer tensor; ``int1`` (bool)
with anything gives the other type.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class dtype:  # noqa: N801 - Triton's own name
    """An element type: its Triton name (``fp32``), numpy type, kind (``float``/``int``/
    ``uint``/``bool``) and width in bits."""

    name: str
    np_dtype: np.dtype
    kind: str
    bits: int

    def is_floating(self) -> bool:
        return self.kind == "float"

    def is_int(self) -> bool:
        return self.kind in ("int", "uint", "bool")

    def is_int_signed(self) -> bool:
        return self.kind == "int"

    def is_int_unsigned(self) -> bool:
        return self.kind == "uint"

    def is_bool(self) -> bool:
        return self.kind == "bool"

    def is_ptr(self) -> bool:
        return False

    def is_fp16(self) -> bool:
        return self.name == "fp16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "fp32"

    @property
    def primitive_bitwidth(self) -> int:
        return self.bits

    @property
    def scalar(self) -> dtype:
        return self

    def __repr__(self) -> str:
        return f"triton.language.{self.name}"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class pointer_type:  # noqa: N801 - Triton's own name
    """A pointer to elements of ``element_ty`` in GM."""

    element_ty: dtype

    def is_ptr(self) -> bool:
        return True

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    @property
    def scalar(self) -> pointer_type:
        return self

    @property
    def name(self) -> str:
        return f"pointer<{self.element_ty.name}>"

    def __repr__(self) -> str:
        return self.name


int1 = dtype("int1", np.dtype(np.bool_), "bool", 1)
int8 = dtype("int8", np.dtype(np.int8), "int", 8)
int16 = dtype("int16", np.dtype(np.int16), "int", 16)
int32 = dtype("int32", np.dtype(np.int32), "int", 32)
int64 = dtype("int64", np.dtype(np.int64), "int", 64)
uint8 = dtype("uint8", np.dtype(np.uint8), "uint", 8)
uint16 = dtype("uint16", np.dtype(np.uint16), "uint", 16)
uint32 = dtype("uint32", np.dtype(np.uint32), "uint", 32)
uint64 = dtype("uint64", np.dtype(np.uint64), "uint", 64)
float16 = dtype("fp16", np.dtype(np.float16), "float", 16)
bfloat16 = dtype("bf16", np.dtype(ml_dtypes.bfloat16), "float", 16)
float32 = dtype("fp32", np.dtype(np.float32), "float", 32)
float64 = dtype("fp64", np.dtype(np.float64), "float", 64)

ALL = (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16,
       float32, float64)
#: Triton's aliases of these types, as ``tl.<name>``.
ALIASES = {"float16": float16, "bfloat16": bfloat16, "float32": float32, "float64": float64,
           "int1": int1, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
           "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
           "bool": int1}
_BY_NP = {t.np_dtype: t for t in ALL}
#: torch dtype name -> element type.
TORCH_NAMES = {"float16": float16, "bfloat16": bfloat16, "float32": float32,
               "float64": float64, "int8": int8, "int16": int16, "int32": int32,
               "int64": int64, "uint8": uint8, "bool": int1, "uint16": uint16,
               "uint32": uint32, "uint64": uint64}


def from_numpy(np_dtype) -> dtype:
    return _BY_NP[np.dtype(np_dtype)]


def promote(a: dtype, b: dtype) -> dtype:
    """The type of a binary operation on tensors of types ``a`` and ``b``."""
    if a == b:
        return a
    if a.kind == "bool":
        return b
    if b.kind == "bool":
        return a
    if a.is_floating() and b.is_floating():
        if a.bits == b.bits:  # fp16 with bf16
            return float32
        return a if a.bits > b.bits else b
    if a.is_floating():
        return a
    if b.is_floating():
        return b
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if a.kind == "uint" else b


def of_python_scalar(value, other: dtype | None) -> dtype:
    """The type a Python number takes next to a tensor of type ``other`` (None: alone)."""
    if isinstance(value, bool):
        return other if other is not None else int1
    if isinstance(value, int):
        if other is not None and other.kind != "bool":
            return other
        return int32 if -2**31 <= value < 2**31 else int64
    if other is not None and other.is_floating():
        return other
    return float32
