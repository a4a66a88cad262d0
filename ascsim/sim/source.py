"""Locating the kernel source line of the API call being executed.

Every instruction carries the user's ``file:line``. We find it by walking out of ascsim's own
frames; that costs a few frame hops per call, far less than the numpy work the call does.
"""

from __future__ import annotations

import functools
import os
import sys

import ascsim

_PACKAGE_DIR = os.path.dirname(os.path.abspath(ascsim.__file__)) + os.sep
# Kernels shipped with ascsim (examples, operators, the calibration kernels) live inside the
# package but are user code: their instructions carry their own lines.
_USER_CODE_DIRS = tuple(_PACKAGE_DIR + d + os.sep for d in ("ops", "examples", "calib"))

Location = tuple[str, int]
_cache: dict[str, bool] = {}
# id(code object) -> (the code object, None if it is ascsim-internal, else its locations by
# instruction offset). Keyed by id because a code object's hash digests its whole contents
# (bytecode, constants, names: microseconds per lookup); the stored object guards against a
# reused id. The locations are cached because ``f_lineno`` decodes the code's line table from
# its start on every access (microseconds in a long kernel function), and so that every call
# from one place returns the same tuple.
_code_cache: dict = {}
#: Entries the cache may hold before it is emptied: kernels compiled per launch bring new
#: code objects, which the cache would otherwise keep alive forever.
CACHE_LIMIT = 100_000


def _is_internal(filename: str) -> bool:
    hit = _cache.get(filename)
    if hit is None:
        hit = filename.startswith(_PACKAGE_DIR) and not filename.startswith(_USER_CODE_DIRS)
        _cache[filename] = hit
    return hit


def _code_entry(code) -> tuple:
    if len(_code_cache) >= CACHE_LIMIT:
        _code_cache.clear()
    entry = _code_cache[id(code)] = (code, None if _is_internal(code.co_filename) else {})
    return entry


def user_location(skip: int = 1) -> Location:
    """``(filename, lineno)`` of the innermost frame outside ascsim's internals."""
    frame = sys._getframe(skip)
    codes = _code_cache
    while frame is not None:
        code = frame.f_code
        entry = codes.get(id(code))
        if entry is None or entry[0] is not code:
            entry = _code_entry(code)
        places = entry[1]
        if places is not None:
            offset = frame.f_lasti
            loc = places.get(offset)
            if loc is None:
                loc = places[offset] = (code.co_filename, frame.f_lineno)
            return loc
        frame = frame.f_back
    return ("<unknown>", 0)


def format_location(loc: Location | None) -> str:
    if not loc:
        return "<unknown>"
    return f"{os.path.relpath(loc[0]) if os.path.isabs(loc[0]) else loc[0]}:{loc[1]}"


@functools.lru_cache(maxsize=4096)
def _real_path(path: str) -> str:
    return os.path.realpath(path)


def site_key(loc) -> tuple[str, int] | None:
    """(real path of the file, line) of a location: how a what-if names a kernel line
    (``LaunchOptions.dropped_syncs``, ``buffer_scale``) whatever path the line was run from."""
    if not loc:
        return None
    return (_real_path(loc[0]), int(loc[1]))
