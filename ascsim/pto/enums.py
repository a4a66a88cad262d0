"""PyPTO Pro's enumerations (memory spaces, layouts, pipes, sync modes, cast modes, ...).

Values follow PyPTO Pro's where its reference gives them (cross-core modes 0..3, layout codes);
the rest only need to be distinct.
"""

from __future__ import annotations

from enum import IntEnum


class MemorySpace(IntEnum):
    """Where a tile lives: ``Vec`` = UB, ``Mat`` = L1, ``Left``/``Right`` = L0A/L0B,
    ``Acc`` = L0C, ``Bias`` = the bias table, ``Scaling`` = the fixpipe buffer."""

    DDR = 0
    Vec = 1
    Mat = 2
    Left = 3
    Right = 4
    Acc = 5
    Bias = 6
    Scaling = 7
    ScaleLeft = 8
    ScaleRight = 9


#: Memory space -> the machine's local memory name.
SPACE_MEMORY = {MemorySpace.Vec: "UB", MemorySpace.Mat: "L1", MemorySpace.Left: "L0A",
                MemorySpace.Right: "L0B", MemorySpace.Acc: "L0C", MemorySpace.Bias: "BT",
                MemorySpace.Scaling: "FB", MemorySpace.ScaleLeft: "L0AMX",
                MemorySpace.ScaleRight: "L0BMX"}

#: Address alignment ``make_tile`` checks, in bytes (spaces not listed are unchecked).
SPACE_ALIGNMENT = {MemorySpace.Vec: 32, MemorySpace.Mat: 32, MemorySpace.ScaleLeft: 32,
                   MemorySpace.ScaleRight: 32, MemorySpace.Left: 512, MemorySpace.Right: 512,
                   MemorySpace.Acc: 64}


class TensorLayout(IntEnum):
    """Element order of a tile: plain row-major (ND), column-major (DN), or 2-D fractals:
    ``NZ`` = column of row-major fractals, ``ZN`` = rows of column-major fractals, ``ZZ``
    = rows of row-major fractals, ``NN`` = columns of column-major fractals."""

    ND = 0
    DN = 1
    NZ = 2
    ZN = 3
    NN = 4
    ZZ = 5


class TilePad(IntEnum):
    null = 0
    zero = 1
    max = 2
    min = 3


class CompactMode(IntEnum):
    Null = 0
    Normal = 1
    RowPlusOne = 2


class FillPadMode(IntEnum):
    NORMAL = 0
    EXPAND = 1
    INPLACE = 2


class PipeType(IntEnum):
    """The pipes of a core; ``ALL`` names every pipe in a barrier."""

    MTE1 = 0
    MTE2 = 1
    MTE3 = 2
    M = 3
    V = 4
    S = 5
    FIX = 6
    ALL = 7


#: PipeType -> the machine's pipe name.
PIPE_NAMES = {PipeType.MTE1: "MTE1", PipeType.MTE2: "MTE2", PipeType.MTE3: "MTE3",
              PipeType.M: "M", PipeType.V: "V", PipeType.S: "S", PipeType.FIX: "FIX",
              PipeType.ALL: "ALL"}


class CrossCoreSyncMode(IntEnum):
    INTER_BLOCK = 0
    INTER_SUBBLOCK = 1
    INTRA_BLOCK = 2
    UNICAST_BLOCK = 3


class SyncCoreType(IntEnum):
    MIX = 0
    AIV_ONLY = 1
    AIC_ONLY = 2


class SyncAllMode(IntEnum):
    HARD = 0
    SOFT = 1


class AccToVecMode(IntEnum):
    SingleModeVec0 = 0
    SingleModeVec1 = 1
    DualModeSplitM = 2
    DualModeSplitN = 3


class AccPhase(IntEnum):
    Unspecified = 0
    Partial = 1
    Final = 2


class STPhase(IntEnum):
    Unspecified = 0
    Partial = 1
    Final = 2


class ReluPreMode(IntEnum):
    NoRelu = 0
    NormalRelu = 1


class AtomicType(IntEnum):
    AtomicNone = 0
    AtomicAdd = 1
    AtomicMax = 2
    AtomicMin = 3


#: AtomicType -> the machine's combine rule for a copy into GM.
ATOMIC_RULES = {AtomicType.AtomicNone: None, AtomicType.AtomicAdd: "add",
                AtomicType.AtomicMax: "max", AtomicType.AtomicMin: "min"}


class RoundMode(IntEnum):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


#: RoundMode -> the machine's rounding (ascsim.sim.numerics).
ROUNDING = {RoundMode.CAST_NONE: "none", RoundMode.CAST_RINT: "rint",
            RoundMode.CAST_ROUND: "round", RoundMode.CAST_FLOOR: "floor",
            RoundMode.CAST_CEIL: "ceil", RoundMode.CAST_TRUNC: "trunc", RoundMode.CAST_ODD: "odd"}


class QuantMode(IntEnum):
    SYM = 0
    ASYM = 1


class CacheLine(IntEnum):
    SINGLE_CACHE_LINE = 0
    ENTIRE_DATA_CACHE = 1


class DcciDst(IntEnum):
    AUTO = 0
    UB = 1
    OUT = 2
    ATOMIC = 3


class CmpMode(IntEnum):
    EQ = 0
    NE = 1
    LT = 2
    GT = 3
    GE = 4
    LE = 5
