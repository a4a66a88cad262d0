"""``import triton`` under ``ascsim run``: the top-level names of triton-ascend's package.

``triton.jit`` makes a kernel (:mod:`ascsim.triton.jit`), ``triton.language`` is
:mod:`ascsim.triton.language`, ``triton.runtime.driver`` describes the simulated chip, and
``triton.cdiv`` / ``triton.next_power_of_2`` are the host helpers kernels' launchers use.
"""

from __future__ import annotations

from ascsim.triton import errors as compiler  # noqa: F401 - triton.compiler.errors
from ascsim.triton import language, runtime
from ascsim.triton.autotune import Config, autotune, heuristics
from ascsim.triton.errors import CompilationError, OutOfResources
from ascsim.triton.jit import JITFunction, jit

#: The triton-ascend release whose language this front-end serves.
__version__ = "3.2.0"


def cdiv(x: int, y: int) -> int:
    """``ceil(x / y)`` for integers."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= ``n`` (1 for ``n <= 1``)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


__all__ = ["CompilationError", "Config", "JITFunction", "OutOfResources", "autotune", "cdiv",
           "heuristics", "jit", "language", "next_power_of_2", "runtime"]
