"""Locating the kernel source line of the API call being executed.

Every instruction carries the user's ``file:line``. We find it by walking out of ascsim's own
frames; that costs a few frame hops per call, far less than the numpy work the call does.
"""

from __future__ import annotations

import os
import sys

import ascsim

_PACKAGE_DIR = os.path.dirname(os.path.abspath(ascsim.__file__)) + os.sep
# Kernels shipped with ascsim (examples, operators) live inside the package but are user code.
_USER_CODE_DIRS = tuple(_PACKAGE_DIR + d + os.sep for d in ("ops", "examples"))

Location = tuple[str, int]
_cache: dict[str, bool] = {}
# id(code object) -> (the code object, whether it is ascsim-internal): saves the file-name test
# on every hop. Keyed by id because a code object's hash digests its whole contents (bytecode,
# constants, names: microseconds per lookup); the stored object guards against a reused id.
_code_cache: dict = {}


def _is_internal(filename: str) -> bool:
    hit = _cache.get(filename)
    if hit is None:
        hit = filename.startswith(_PACKAGE_DIR) and not filename.startswith(_USER_CODE_DIRS)
        _cache[filename] = hit
    return hit


def user_location(skip: int = 1) -> Location:
    """``(filename, lineno)`` of the innermost frame outside ascsim's internals."""
    frame = sys._getframe(skip)
    codes = _code_cache
    while frame is not None:
        code = frame.f_code
        entry = codes.get(id(code))
        if entry is None or entry[0] is not code:
            entry = codes[id(code)] = (code, _is_internal(code.co_filename))
        if not entry[1]:
            break
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


def format_location(loc: Location | None) -> str:
    if not loc:
        return "<unknown>"
    return f"{os.path.relpath(loc[0]) if os.path.isabs(loc[0]) else loc[0]}:{loc[1]}"
