"""``pypto_pro.runtime.jit``."""

from ascsim.pto.jit import PtoKernel, jit

__all__ = ["PtoKernel", "jit"]
