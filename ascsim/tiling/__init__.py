"""Tiling algorithms: how to cut an operator's work over cores and on-chip buffers.

:mod:`ascsim.tiling.matmul` is ascsim's own Matmul tiling (what CANN's
``MultiCoreMatmulTiling`` does for pyasc's ``asc.lib.host``); it knows nothing of pyasc's
names and depends only on a SoC record.
"""

from .matmul import (
    TCUBE_TILING_FIELDS,
    MatmulTiling,
    MatmulTilingRequest,
    TilingError,
    compute_matmul_tiling,
    default_core_count,
    k_alignment,
    solve_matmul_tiling,
)

__all__ = [
    "TCUBE_TILING_FIELDS",
    "MatmulTiling",
    "MatmulTilingRequest",
    "TilingError",
    "compute_matmul_tiling",
    "default_core_count",
    "k_alignment",
    "solve_matmul_tiling",
]
