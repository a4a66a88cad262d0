"""``import triton`` and ``import triton.language as tl`` inside an ``ascsim run`` process.

A meta-path finder serves the Triton module names from :mod:`ascsim.triton` on demand, ahead of
any installed ``triton`` package; nothing named ``triton`` is installed by ascsim.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

#: Triton module name -> the ascsim module that serves it (None: an empty package).
MODULES = {
    "triton": "ascsim.triton.package",
    "triton.language": "ascsim.triton.language",
    "triton.language.core": "ascsim.triton.language",
    "triton.language.math": "ascsim.triton.language",
    "triton.runtime": "ascsim.triton.runtime",
    "triton.runtime.jit": "ascsim.triton.jit",
    "triton.runtime.driver": "ascsim.triton.driver",
    "triton.runtime.libentry": "ascsim.triton.libentry",
    "triton.runtime.errors": "ascsim.triton.errors",
    "triton.runtime.autotuner": "ascsim.triton.autotune",
    "triton.compiler": "ascsim.triton.errors",
    "triton.compiler.errors": "ascsim.triton.errors",
    "triton.language.extra": "ascsim.triton.extra",
    "triton.language.extra.libdevice": "ascsim.triton.libdevice",
    "triton.language.extra.cann": None,
    "triton.language.extra.cann.libdevice": "ascsim.triton.libdevice",
    "triton.language.extra.cann.extension": "ascsim.triton.extension",
    "triton.language.extra.ascend": None,
    "triton.language.extra.ascend.libdevice": "ascsim.triton.libdevice",
}
PACKAGES = {"triton", "triton.language", "triton.runtime", "triton.compiler",
            "triton.language.extra", "triton.language.extra.cann", "triton.language.extra.ascend"}


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        target = MODULES[spec.name]
        if target is None:  # a namespace of the Triton tree with nothing of its own
            module = types.ModuleType(spec.name)
            module.__path__ = []
            return module
        return importlib.import_module(target)

    def exec_module(self, module) -> None:
        """The serving module is imported already."""


class TritonFinder(importlib.abc.MetaPathFinder):
    """Finds the Triton names of :data:`MODULES`."""

    loader = _Loader()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self.loader,
                                               is_package=fullname in PACKAGES)


def install() -> None:
    """Serve the Triton names in this process (idempotent); a ``triton`` imported before is
    replaced."""
    if not any(isinstance(f, TritonFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TritonFinder())
    for name in [n for n in sys.modules if n == "triton" or n.startswith("triton.")]:
        if not getattr(sys.modules[name], "__name__", "").startswith("ascsim."):
            del sys.modules[name]
