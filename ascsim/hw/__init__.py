"""SoC specifications: core counts, clocks, buffer sizes, data paths, bandwidths and costs.

``get_soc("Ascend910B1")`` returns a frozen :class:`SocSpec`; :func:`soc_names` lists the
table. The records are defined in :mod:`ascsim.hw.spec`, the numbers (each with its source)
in :mod:`ascsim.hw.socs`.
"""

from .socs import DEFAULT_SOC, SOCS, get_soc, soc_names
from .spec import (
    ALL_PATHS,
    BUFFER_NAMES,
    PATH_PIPE,
    Bandwidths,
    CubeCost,
    SocSpec,
    TimingParams,
    VectorCost,
    dtype_key,
)

__all__ = [
    "ALL_PATHS",
    "BUFFER_NAMES",
    "DEFAULT_SOC",
    "PATH_PIPE",
    "SOCS",
    "Bandwidths",
    "CubeCost",
    "SocSpec",
    "TimingParams",
    "VectorCost",
    "dtype_key",
    "get_soc",
    "soc_names",
]
