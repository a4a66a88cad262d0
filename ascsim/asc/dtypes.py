"""Element types of the kernel language (pyasc's ``asc.DataType``), mapped to numpy dtypes.

bf16 is stored as a true ``ml_dtypes.bfloat16`` so arithmetic rounds like the hardware does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class DataType:
    """One element type: its pyasc name and the numpy dtype that stores it."""

    name: str
    np_dtype: np.dtype = field(default=None, compare=False)
    #: ``np_dtype.name``, looked up once: numpy computes a dtype's name in Python on every
    #: access (about a microsecond), and vector APIs pass it with every call.
    np_name: str = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        if self.np_dtype is None:  # ``asc.DataType("int32")``: pyasc's by-name form
            object.__setattr__(self, "np_dtype", from_name(self.name).np_dtype)
        object.__setattr__(self, "np_name", self.np_dtype.name)

    def sizeof(self) -> int:
        """Bytes per element (``DataType.sizeof()`` in pyasc)."""
        return self.np_dtype.itemsize

    def is_int(self) -> bool:
        return self.np_dtype.kind in "iub"

    def is_unsigned(self) -> bool:
        return self.np_dtype.kind in "ub"

    def is_float(self) -> bool:
        return not self.is_int()

    def __call__(self, value):
        """``asc.float32(1.5)`` builds a scalar of this type."""
        return self.np_dtype.type(value)

    def __repr__(self) -> str:
        return f"asc.{self.name}"


def _t(name: str, np_dtype) -> DataType:
    return DataType(name, np.dtype(np_dtype))


int8 = _t("int8", np.int8)
int16 = _t("int16", np.int16)
int32 = _t("int32", np.int32)
int64 = _t("int64", np.int64)
uint8 = _t("uint8", np.uint8)
uint16 = _t("uint16", np.uint16)
uint32 = _t("uint32", np.uint32)
uint64 = _t("uint64", np.uint64)
float16 = _t("float16", np.float16)
float32 = _t("float32", np.float32)
float64 = _t("float64", np.float64)
bfloat16 = _t("bfloat16", ml_dtypes.bfloat16)
bool_ = _t("bool_", np.int8)
void = _t("void", np.uint8)

# pyasc's aliases.
int_ = int32
half = float16
float_ = float32
double = float64

ALL_TYPES: tuple[DataType, ...] = (
    int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, float32, float64, bfloat16,
)
_BY_NUMPY = {t.np_dtype: t for t in ALL_TYPES}
_BY_NAME = {t.name: t for t in ALL_TYPES} | {"half": half, "float": float32, "bf16": bfloat16}


def from_numpy(dt) -> DataType:
    """The DataType of a numpy dtype (``bool`` arrays map to uint8)."""
    dt = np.dtype(dt)
    if dt == np.bool_:
        return uint8
    try:
        return _BY_NUMPY[dt]
    except KeyError:
        raise TypeError(f"unsupported element type {dt} (supported: {sorted(_BY_NAME)})") from None


def from_name(name: str) -> DataType:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise TypeError(f"unknown data type {name!r} (known: {sorted(_BY_NAME)})") from None


def from_torch(torch_dtype) -> DataType:
    """The DataType of a torch dtype, e.g. ``torch.float16`` → ``float16``."""
    name = str(torch_dtype).removeprefix("torch.")
    if name == "bool":
        return uint8
    return from_name(name)


def as_dtype(value) -> DataType:
    """Accept a DataType, a numpy dtype, a torch dtype or a name."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str):
        return from_name(value)
    if type(value).__module__ == "torch":
        return from_torch(value)
    return from_numpy(value)
