"""What a trial runs: a Python callable, or ``path/to/script.py:entry`` (the CLI's target).

A script target is loaded in each worker process from its path (as a module, not as
``__main__``, so its ``if __name__ == "__main__":`` block does not run), with ``import asc``
served by the simulator and the script's folder on ``sys.path`` like ``ascsim run`` does. Only
the path and the entry's name travel to the workers.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Scripts already loaded in this process, by absolute path.
_LOADED: dict[str, dict[str, Any]] = {}


class TargetError(ValueError):
    """The target cannot be found or loaded; the message says which part is wrong."""


def _prepare(namespace: dict[str, Any]) -> None:
    """Let the script's kernels do their one-off work (an ``@asc.jit`` kernel compiles its
    body) while the script is loaded: the parent loads it before it forks the workers, so
    each worker starts with that work done instead of repeating it in its first trial."""
    for value in list(namespace.values()):
        prepare = getattr(type(value), "__ascsim_prepare__", None)
        if prepare is not None:
            prepare(value)


def _load(path: str) -> dict[str, Any]:
    namespace = _LOADED.get(path)
    if namespace is None:
        from ascsim.runner import install_asc_alias
        from ascsim.triton import aliases as triton_aliases

        install_asc_alias()
        triton_aliases.install()  # (a Triton script's `import triton`)
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        namespace = runpy.run_path(path, run_name="ascsim_tune_target")
        _prepare(namespace)
        _LOADED[path] = namespace
    return namespace


@dataclass(frozen=True)
class ScriptTarget:
    """``entry`` of the script at ``path``, called with a configuration's knobs."""

    path: str
    entry: str
    _fn: list = field(default_factory=list, compare=False, repr=False)

    def resolve(self) -> Callable[..., Any]:
        if not self._fn:
            namespace = _load(self.path)
            fn = namespace.get(self.entry)
            if not callable(fn):
                raise TargetError(f"{self.path} has no function {self.entry!r}")
            self._fn.append(fn)
        return self._fn[0]

    def __call__(self, **config: Any) -> Any:
        return self.resolve()(**config)

    def __getstate__(self) -> dict:
        return {"path": self.path, "entry": self.entry}  # the function is loaded again there

    def __setstate__(self, state: dict) -> None:
        object.__setattr__(self, "path", state["path"])
        object.__setattr__(self, "entry", state["entry"])
        object.__setattr__(self, "_fn", [])

    def __str__(self) -> str:
        return f"{self.path}:{self.entry}"


def parse_target(text: str) -> ScriptTarget:
    """``path/to/script.py:entry`` -> a ScriptTarget (checked to load here, once)."""
    path, sep, entry = text.rpartition(":")
    if not sep or not path or not entry.isidentifier():
        raise TargetError(f"target {text!r} must be path/to/script.py:function")
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise TargetError(f"target {text!r}: no such script {path}")
    target = ScriptTarget(path, entry)
    target.resolve()
    return target
