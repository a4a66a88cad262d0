"""``triton.compiler.errors``: the errors a Triton kernel's compilation raises.

triton-ascend reports what its compiler (BiShengIR) refuses as ``MLIRCompilationError``, with
the compiler's message (``ub overflow, requires ... bits while ... bits available!``); Triton's
front end reports a kernel it cannot compile as ``CompilationError``. Both name the kernel's line
here.
"""

from __future__ import annotations

import sys


class CompilationError(Exception):
    """A kernel Triton's front end cannot compile (an unsupported construct, a bad argument)."""


class CompileTimeAssertionFailure(CompilationError):
    """A ``tl.static_assert`` that does not hold."""


class MLIRCompilationError(CompilationError):
    """What triton-ascend's backend compiler refuses (``ub overflow`` ...)."""


class OutOfResources(Exception):
    """A launch that asks for more than the device has (triton.runtime.errors)."""

    def __init__(self, required, limit, name):
        self.required, self.limit, self.name = required, limit, name
        super().__init__(f"out of resource: {name}, Required: {required}, "
                         f"Hardware limit: {limit}")


__all__ = ["CompilationError", "CompileTimeAssertionFailure", "MLIRCompilationError",
           "OutOfResources"]


#: ``triton.compiler.errors`` is this module too (``triton.compiler`` serves it): the name
#: ``errors`` on it lets ``triton.compiler.errors.CompilationError`` resolve without an import.
errors = sys.modules[__name__]
