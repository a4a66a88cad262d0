"""``asc.lib.host``: pyasc's host-side tiling library, backed by ascsim's own algorithm.

A script builds a Matmul tiling exactly as with pyasc::

    import asc.lib.host as host
    mt = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    mt.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16)
    ...
    tiling = asc.adv.TCubeTiling()
    assert mt.get_tiling(tiling) == 0

The algorithm itself lives in :mod:`ascsim.tiling` (see ``docs/tiling.md``).
"""

from ascsim.asc.adv.tiling_structs import TCubeTiling

from .enums import (
    CoreMemType,
    CubeFormat,
    DataType,
    DequantType,
    MatrixMadType,
    MatrixTraverse,
    ScheduleType,
    TPosition,
)
from .matmul_tiling import (
    BatchMatmulTiling,
    MatmulApiTiling,
    MatmulApiTilingBase,
    MatmulConfigParams,
    MultiCoreMatmulTiling,
)
from .platform import PlatformAscendC, PlatformAscendCManager, get_ascendc_platform

__all__ = [
    "BatchMatmulTiling",
    "CoreMemType",
    "CubeFormat",
    "DataType",
    "DequantType",
    "MatmulApiTiling",
    "MatmulApiTilingBase",
    "MatmulConfigParams",
    "MatrixMadType",
    "MatrixTraverse",
    "MultiCoreMatmulTiling",
    "PlatformAscendC",
    "PlatformAscendCManager",
    "ScheduleType",
    "TCubeTiling",
    "TPosition",
    "get_ascendc_platform",
]
