"""Tiling parameter structs of ``asc.adv`` that the host fills and kernels read.

``TCubeTiling`` carries a Matmul tiling (pyasc-api §3.9): built directly with keywords
(``TCubeTiling(m=..., base_m=...)``) or filled in place by ``asc.lib.host``'s
``MultiCoreMatmulTiling.get_tiling``. Its field list is the one the tiling algorithm produces
(:data:`ascsim.tiling.TCUBE_TILING_FIELDS`), so the two cannot drift apart.
"""

from __future__ import annotations

from ascsim.asc.struct import Struct
from ascsim.tiling.matmul import TCUBE_TILING_FIELDS


class TCubeTiling(Struct):
    """Matmul tiling (Ascend C ``TCubeTiling``): every field an int32, default 0.

    Shapes are in elements: ``m, n, k_a, k_b`` the full GM matrices, ``single_core_*`` one
    core's share, ``base_*`` one Cube block; ``depth_*``/``step_*`` describe L1 caching,
    ``db_l0*`` L0 double buffering (1 = single, 2 = double), ``iterate_order`` 0 = M first.
    """

    _fields_ = tuple((name, "int32", 0) for name in TCUBE_TILING_FIELDS)


__all__ = ["TCubeTiling"]
