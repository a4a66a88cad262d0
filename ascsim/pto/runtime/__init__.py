"""``pypto_pro.runtime``: the host side of PyPTO Pro (jit, platform info, tiling keys)."""

from ascsim.pto.jit import jit
from ascsim.pto.platform import PlatformInfo, get_platform_info
from ascsim.pto.runtime.tilingkey import TilingKeyField

__all__ = ["PlatformInfo", "TilingKeyField", "get_platform_info", "jit"]
