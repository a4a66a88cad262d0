"""The enumerations of PyPTO Pro's register-level vector functions (``pl.MaskPattern`` ...).

Members as PyPTO Pro's VF type pages list them (``api/operation/vf_computation/types``); their
values only need to be distinct. Passing a bare int where one of these is expected is refused,
as PyPTO Pro's parser refuses it.
"""

from __future__ import annotations

from enum import Enum


class MaskPattern(Enum):
    ALL = "all"
    ALLF = "allf"
    VL1 = 1
    VL2 = 2
    VL3 = 3
    VL4 = 4
    VL8 = 8
    VL16 = 16
    VL32 = 32
    VL64 = 64
    VL128 = 128
    M3 = "m3"
    M4 = "m4"
    H = "h"
    Q = "q"


class MergeMode(Enum):
    ZEROING = 0
    MERGING = 1


class ReduceMode(Enum):
    SUM = 0
    MAX = 1
    MIN = 2


class CompareMode(Enum):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


class DuplicatePos(Enum):
    LOWEST = 0
    HIGHEST = 1


class CastLayout(Enum):
    """Which part of the wider register's lanes a width-changing cast uses: ZERO the even
    lanes, ONE the odd ones (TWO, THREE: the 4x FP4 cases)."""

    ZERO = 0
    ONE = 1
    TWO = 2
    THREE = 3


class VFRoundMode(Enum):
    CAST_ROUND = "round"
    CAST_RINT = "rint"
    CAST_FLOOR = "floor"
    CAST_CEIL = "ceil"
    CAST_TRUNC = "trunc"
    CAST_ODD = "odd"
    CAST_HYBRID = "rint"  # no semantics published beyond "hybrid": rounded to nearest even


class SaturateMode(Enum):
    OFF = 0
    ON = 1


class BinType(Enum):
    BIN0 = 0
    BIN1 = 1


class HistType(Enum):
    ACCUMULATE = 0
    FREQUENCY = 1


class SqueezeMode(Enum):
    NO_STORE_REG = 0
    STORE_REG = 1


class PackPart(Enum):
    LOWER = 0
    UPPER = 1


class MaskWidth(Enum):
    B32 = 4
    B16 = 2


class LoadDist(Enum):
    """(distribution, element bytes of its granularity or None: the register's type)."""

    NORM = ("norm", None)
    BRC = ("brc", None)
    BRC_B8 = ("brc", 1)
    BRC_B16 = ("brc", 2)
    BRC_B32 = ("brc", 4)
    US = ("us", None)
    US_B8 = ("us", 1)
    US_B16 = ("us", 2)
    DS = ("ds", None)
    DS_B8 = ("ds", 1)
    DS_B16 = ("ds", 2)
    UNPK = ("unpk", None)
    UNPK_B8 = ("unpk", 1)
    UNPK_B16 = ("unpk", 2)
    UNPK_B32 = ("unpk", 4)
    UNPK4 = ("unpk4", 1)
    BLK = ("blk", None)
    E2B = ("e2b", None)
    E2B_B16 = ("e2b", 2)
    E2B_B32 = ("e2b", 4)
    DINTLV_B8 = ("dintlv", 1)
    DINTLV_B16 = ("dintlv", 2)
    DINTLV_B32 = ("dintlv", 4)


class StoreDist(Enum):
    NORM = ("norm", None)
    NORM_B16 = ("norm", 2)
    FIRST_ELEMENT = ("first", None)
    PACK = ("pack", None)
    PACK4 = ("pack4", None)
    INTLV = ("intlv", None)
    INTLV_B32 = ("intlv", 4)


class DataCopyMode(Enum):
    NORM = 0
    DATA_BLOCK_COPY = 1
    DATA_BLOCK_LOAD = 1  # PyPTO Pro's legacy alias of DATA_BLOCK_COPY


class MemBarMode(Enum):
    VST_VLD = 0
    VLD_VST = 1
    VST_VST = 2
    VST_LD = 3
    VST_ST = 4
    VLD_ST = 5
    ST_VLD = 6
    ST_VST = 7
    LD_VST = 8
    VV_ALL = 9
    VS_ALL = 10
    SV_ALL = 11


class IndexOrder(Enum):
    INCREASE_ORDER = 0
    DECREASE_ORDER = 1


#: The enumerations ``pl`` exports, by name.
ENUMS = {cls.__name__: cls for cls in (
    MaskPattern, MergeMode, ReduceMode, CompareMode, DuplicatePos, CastLayout, VFRoundMode,
    SaturateMode, BinType, HistType, SqueezeMode, PackPart, MaskWidth, LoadDist, StoreDist,
    DataCopyMode, MemBarMode, IndexOrder)}
