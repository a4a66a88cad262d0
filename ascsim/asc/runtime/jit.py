"""``asc.runtime.jit``: the JIT entry points and the mock arguments of pyasc's unit tests."""

from __future__ import annotations

from ascsim.asc.jit import ConstExpr, JITFunction, jit
from ascsim.asc.runtime.mock import MockTensor, MockValue

__all__ = ["ConstExpr", "JITFunction", "MockTensor", "MockValue", "jit"]
