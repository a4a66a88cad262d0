"""PyPTO Pro's diagnostic classes, under the names its tests catch
(``pypto_pro.language.parser.diagnostics._exceptions``).

PyPTO Pro raises them when it parses a kernel, at the first launch; ascsim raises them at the
same launch, from the statement concerned, with the kernel's ``file:line`` in the message.
"""

from __future__ import annotations

from ascsim.isa.errors import KernelError


class ParserError(KernelError):
    """A kernel that PyPTO Pro's parser refuses."""


class ParserSyntaxError(ParserError):
    """An invalid value or call form."""


class ParserTypeError(ParserError):
    """An operand of the wrong type."""


class FinalRejectionError(ParserTypeError):
    """A call form rejected outright (``make_tile`` without ``addr=``)."""


class UndefinedVariableError(ParserError):
    """A name the kernel uses that is bound nowhere."""


class UnsupportedFeatureError(ParserError):
    """Python that PyPTO Pro kernels may not use."""


class SSAViolationError(ParserError):
    """A name assigned in a way PyPTO Pro's single-assignment form cannot express."""


class InvalidOperationError(ParserError):
    """An operation PyPTO Pro refuses in the place it is called."""


class ScopeIsolationError(ParserError):
    """A value used outside the section (cube or vector) that defines it."""


__all__ = ["FinalRejectionError", "InvalidOperationError", "ParserError", "ParserSyntaxError",
           "ParserTypeError", "SSAViolationError", "ScopeIsolationError",
           "UndefinedVariableError", "UnsupportedFeatureError"]
