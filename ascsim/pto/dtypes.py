"""PyPTO Pro's element types (``pl.DT_FP16`` ...), mapped to the numpy dtypes that store them.

Sub-byte and 8-bit float types are stored as ml_dtypes types where one exists; the rest
(``HF4``/``HF8``, the E8M0 scale type's siblings) are stored as their raw bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class DataType:
    """One element type: its PyPTO name (``FP16``), its width in bits and its numpy storage."""

    name: str
    bits: int
    np_dtype: np.dtype = field(compare=False)
    kind: str = field(compare=False, default="float")  # float, int, uint, bool

    def get_bit(self) -> int:
        return self.bits

    def is_float(self) -> bool:
        return self.kind == "float"

    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    def is_signed_int(self) -> bool:
        return self.kind == "int"

    def is_unsigned_int(self) -> bool:
        return self.kind == "uint"

    @property
    def nbytes(self) -> int:
        """Bytes per element (sub-byte types count as one byte per element here)."""
        return max(1, self.bits // 8)

    @property
    def packed(self) -> bool:
        """Whether elements are 4-bit codes stored two to a byte (the MXFP4 types)."""
        return self.name in PACKED_NIBBLES

    @property
    def element_bytes(self) -> float:
        """Bytes an element takes in a tile's layout: 0.5 for the packed 4-bit types."""
        return 0.5 if self.packed else self.nbytes

    def to_c_type_string(self) -> str:
        return C_TYPES.get(self.name, self.name.lower())

    def __repr__(self) -> str:
        return f"pl.DT_{self.name}"


C_TYPES = {"FP16": "half", "BF16": "bfloat16_t", "FP32": "float", "INT8": "int8_t",
           "INT16": "int16_t", "INT32": "int32_t", "INT64": "int64_t", "UINT8": "uint8_t",
           "UINT16": "uint16_t", "UINT32": "uint32_t", "UINT64": "uint64_t", "BOOL": "bool"}

# name -> (bits, numpy storage, kind)
_TABLE = {
    "BOOL": (8, np.bool_, "bool"),
    "INT4": (4, np.int8, "int"), "INT8": (8, np.int8, "int"), "INT16": (16, np.int16, "int"),
    "INT32": (32, np.int32, "int"), "INT64": (64, np.int64, "int"),
    "UINT4": (4, np.uint8, "uint"), "UINT8": (8, np.uint8, "uint"),
    "UINT16": (16, np.uint16, "uint"), "UINT32": (32, np.uint32, "uint"),
    "UINT64": (64, np.uint64, "uint"),
    "FP16": (16, np.float16, "float"), "BF16": (16, ml_dtypes.bfloat16, "float"),
    "FP32": (32, np.float32, "float"),
    "FP8E4M3FN": (8, ml_dtypes.float8_e4m3fn, "float"),
    "FP8E5M2": (8, ml_dtypes.float8_e5m2, "float"),
    "FP8E8M0": (8, ml_dtypes.float8_e8m0fnu, "float"),
    "FP4": (4, np.uint8, "float"), "FP4E2M1": (4, np.uint8, "float"),
    "FP4E1M2": (4, np.uint8, "float"), "HF4": (4, np.uint8, "float"),
    "HF8": (8, np.uint8, "float"),
    "INDEX": (64, np.int64, "int"),
}

TYPES: dict[str, DataType] = {name: DataType(name, bits, np.dtype(store), kind)
                              for name, (bits, store, kind) in _TABLE.items()}

#: The torch dtype a launch argument must have for a parameter of each type (by torch name).
TORCH_NAMES = {"FP16": "float16", "BF16": "bfloat16", "FP32": "float32", "INT8": "int8",
               "INT16": "int16", "INT32": "int32", "INT64": "int64", "UINT8": "uint8",
               "UINT64": "uint64", "BOOL": "bool", "HF8": "uint8"}


#: PyPTO types stored as bytes whose values the machine decodes itself: type name -> the
#: machine's format name (an Mmad's ``dtype``, a FixPipe's ``dst_format``).
BYTE_FORMATS = {"HF8": "hifloat8"}
#: The MXFP4 element types: 4-bit codes, two to a byte (low four bits first), in GM and in
#: tiles alike (PyPTO Pro matmul_mx.md); machine format names of :mod:`ascsim.sim.fp4`.
PACKED_NIBBLES = {"FP4E2M1": "float4_e2m1", "FP4E1M2": "float4_e1m2"}


#: Float types stored as raw bytes: the values are codes that only the units made for them
#: decode (the Cube and FixPipe for HF8), not numbers the vector unit could compute on.
CODED_FLOATS = frozenset(name for name, (_, store, kind) in _TABLE.items()
                         if kind == "float" and np.dtype(store).kind == "u")


def machine_type(dtype: DataType) -> str:
    """The name the machine's records use for values of ``dtype``: its byte format, else the
    numpy type it is stored as."""
    return BYTE_FORMATS.get(dtype.name) or PACKED_NIBBLES.get(dtype.name, dtype.np_dtype.name)


def from_numpy(dtype: np.dtype) -> DataType:
    """The PyPTO type stored as numpy ``dtype`` (the first match of the table)."""
    dtype = np.dtype(dtype)
    for name in ("FP16", "BF16", "FP32", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16",
                 "UINT32", "UINT64", "BOOL", "FP8E4M3FN", "FP8E5M2", "FP8E8M0"):
        if TYPES[name].np_dtype == dtype:
            return TYPES[name]
    raise TypeError(f"no PyPTO data type is stored as {dtype}")


def is_dtype(value) -> bool:
    return isinstance(value, DataType)
