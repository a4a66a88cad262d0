"""Access to the core that is executing kernel code, and to the kernel's source line."""

from __future__ import annotations

from ascsim.sim.scheduler import current_core, current_scheduler
from ascsim.sim.source import user_location

__all__ = ["current_core", "current_scheduler", "user_location"]
