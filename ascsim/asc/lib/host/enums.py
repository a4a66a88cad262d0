"""Enumerations of pyasc's host tiling library (``asc.lib.host``, pyasc-api §3.10).

These are distinct from the kernel-side ``asc.TPosition`` / ``asc.CubeFormat``: pyasc binds
them from CANN's ``matmul_tiling`` namespace. Member names follow pyasc; ``DataType`` values
follow the public GE data-type numbering. Each enum that the tiling algorithm reads has a
table from member to the algorithm's spelling.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from types import MappingProxyType


class TPosition(IntEnum):
    """Logical buffer positions (GM, L1 A1/B1, L0 A2/B2, UB VECIN/VECOUT/VECCALC, ...)."""

    GM = 0
    A1 = 1
    A2 = 2
    B1 = 3
    B2 = 4
    C1 = 5
    C2 = 6
    CO1 = 7
    CO2 = 8
    VECIN = 9
    VECOUT = 10
    VECCALC = 11
    LCM = 12
    SPM = 13
    SHM = 14
    TSCM = 15
    MAX = 16


class CubeFormat(IntEnum):
    """Matrix layouts in memory."""

    ND = 0
    NZ = 1
    ZN = 2
    ZZ = 3
    NN = 4
    ND_ALIGN = 5
    SCALAR = 6
    VECTOR = 7
    ROW_MAJOR = 8
    COLUMN_MAJOR = 9


class DataType(IntEnum):
    """Element types. ``DT_BFLOAT16`` is another name of ``DT_BF16``."""

    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_QINT8 = 18
    DT_QINT16 = 19
    DT_QINT32 = 20
    DT_QUINT8 = 21
    DT_QUINT16 = 22
    DT_STRING_REF = 24
    DT_DUAL = 25
    DT_VARIANT = 26
    DT_BF16 = 27
    DT_BFLOAT16 = 27
    DT_UNDEFINED = 28
    DT_INT4 = 29
    DT_UINT1 = 30
    DT_INT2 = 31
    DT_HIFLOAT8 = 34
    DT_FLOAT8_E5M2 = 35
    DT_FLOAT8_E4M3FN = 36
    DT_MAX = 64


class MatrixTraverse(IntEnum):
    """Walk order of a core's base blocks: NOSET lets the tiling choose."""

    NOSET = 0
    FIRSTM = 1
    FIRSTN = 2


class MatrixMadType(IntEnum):
    NORMAL = 0
    HF32 = 1
    MXMODE = 2


class DequantType(IntEnum):
    SCALAR = 0
    TENSOR = 1


class ScheduleType(IntEnum):
    INNER_PRODUCT = 0
    OUTER_PRODUCT = 1


class CoreMemType(IntEnum):
    """On-core memories whose size ``PlatformAscendC.get_core_mem_size`` reports."""

    L0_A = 0
    L0_B = 1
    L0_C = 2
    L1 = 3
    L2 = 4
    UB = 5
    HBM = 6
    FB = 7
    BT = 8


#: Host DataType -> dtype name of the tiling algorithm (types a Matmul can use).
DTYPE_NAMES: Mapping[DataType, str] = MappingProxyType({
    DataType.DT_FLOAT: "float32", DataType.DT_FLOAT16: "float16",
    DataType.DT_BF16: "bfloat16", DataType.DT_INT8: "int8", DataType.DT_UINT8: "uint8",
    DataType.DT_INT4: "int4", DataType.DT_INT16: "int16", DataType.DT_INT32: "int32",
    DataType.DT_HIFLOAT8: "hifloat8", DataType.DT_FLOAT8_E5M2: "float8_e5m2",
    DataType.DT_FLOAT8_E4M3FN: "float8_e4m3fn",
})  # fmt: skip

#: MatrixTraverse -> the algorithm's traverse name.
TRAVERSE_NAMES: Mapping[MatrixTraverse, str] = MappingProxyType(
    {MatrixTraverse.NOSET: "NOSET", MatrixTraverse.FIRSTM: "FIRSTM",
     MatrixTraverse.FIRSTN: "FIRSTN"}
)  # fmt: skip
