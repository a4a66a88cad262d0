"""``asc.language.core.dtype``: the element types and pyasc's ``KnownTypes`` namespace."""

from ascsim.asc.dtypes import (
    DataType,
    bfloat16,
    double,
    float16,
    float32,
    float64,
    float_,
    half,
    int8,
    int16,
    int32,
    int64,
    int_,
    uint8,
    uint16,
    uint32,
    uint64,
    void,
)


class KnownTypes:
    """Every element type by name (``KnownTypes.int32``), as pyasc's struct fields name them."""

    void = void
    int8 = int8
    int16 = int16
    int32 = int32
    int64 = int64
    float16 = float16
    float32 = float32
    float64 = float64
    bfloat16 = bfloat16
    uint8 = uint8
    uint16 = uint16
    uint32 = uint32
    uint64 = uint64
    bool_ = int8
    int_ = int_
    half = half
    float_ = float_
    double = double


__all__ = ["DataType", "KnownTypes", "bfloat16", "double", "float16", "float32", "float64",
           "float_", "half", "int8", "int16", "int32", "int64", "int_", "uint8", "uint16",
           "uint32", "uint64", "void"]
