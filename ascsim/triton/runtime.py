"""``triton.runtime``: the driver, the JIT function class and the runtime errors."""

from __future__ import annotations

from ascsim.triton import driver
from ascsim.triton.errors import OutOfResources
from ascsim.triton.jit import JITFunction, jit

KernelInterface = JITFunction

__all__ = ["JITFunction", "KernelInterface", "OutOfResources", "driver", "jit"]
