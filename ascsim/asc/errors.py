"""Errors of the pyasc front-end that are not faults of the machine."""

from __future__ import annotations

from ascsim.isa.errors import KernelError


class CallFormError(KernelError, TypeError):
    """A call of the pyasc API in a form pyasc does not accept (an unknown keyword argument,
    ...). pyasc's compile step rejects such a call, so it stops even a launch that pyasc would
    only compile (see :mod:`ascsim.asc.launcher`); the message names the kernel's line."""


__all__ = ["CallFormError"]
