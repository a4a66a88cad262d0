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
# (id(code object), instruction offset) -> (the code object, line): ``f_lineno`` decodes the
# code's line table from its start on every access, microseconds in a long kernel function.
_line_cache: dict = {}
#: Entries either cache may hold before it is emptied: kernels compiled per launch bring new
#: code objects, which the caches would otherwise keep alive forever.
CACHE_LIMIT = 100_000


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
            if len(codes) >= CACHE_LIMIT:
                codes.clear()
            entry = codes[id(code)] = (code, _is_internal(code.co_filename))
        if not entry[1]:
            break
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0)
    return (code.co_filename, _line(frame, code))


def _line(frame, code) -> int:
    """The frame's current line, from the cache of (code, instruction offset) -> line."""
    key = (id(code), frame.f_lasti)
    entry = _line_cache.get(key)
    if entry is None or entry[0] is not code:
        if len(_line_cache) >= CACHE_LIMIT:
            _line_cache.clear()
        entry = _line_cache[key] = (code, frame.f_lineno)
    return entry[1]


def format_location(loc: Location | None) -> str:
    if not loc:
        return "<unknown>"
    return f"{os.path.relpath(loc[0]) if os.path.isabs(loc[0]) else loc[0]}:{loc[1]}"
