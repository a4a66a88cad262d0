"""``pypto_pro.runtime.platform``."""

from ascsim.pto.platform import PlatformInfo, get_platform_info

__all__ = ["PlatformInfo", "get_platform_info"]
