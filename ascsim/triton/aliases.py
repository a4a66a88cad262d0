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
        if fullname not in MODULES or (fullname == "triton" and _importer_is_torch()):
            return None
        return importlib.util.spec_from_loader(fullname, self.loader,
                                               is_package=fullname in PACKAGES)


def _importer_is_torch() -> bool:
    """Whether the module running ``import triton`` is torch's own (its compiler stack probes for
    a GPU Triton compiler, which the served names are not: it must find none)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (name.startswith("importlib") or frame.f_code.co_filename.startswith("<frozen")
                or name == __name__):
            return name == "torch" or name.startswith("torch.")
        frame = frame.f_back
    return False


class _NoTriton(importlib.abc.MetaPathFinder):
    """Answers ``import triton`` with ImportError (only while torch asks, see below)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "triton" or fullname.startswith("triton."):
            raise ImportError(f"no GPU Triton compiler in an ascsim run ({fullname})")
        return None


def _torch_sees_no_triton() -> None:
    """Make torch's own check (``torch.utils._triton.has_triton_package``, cached) answer no
    before the Triton names are served: torch's compiler stack (``torch._dynamo`` imports
    inductor) otherwise takes the served package for a GPU Triton compiler and imports
    compiler modules it does not have (``triton.backends.compiler``)."""
    if "torch" not in sys.modules:
        try:
            import torch  # noqa: F401
        except ImportError:
            return
    from torch.utils import _triton

    blocker = _NoTriton()
    saved = {n: sys.modules.pop(n) for n in list(sys.modules)
             if n == "triton" or n.startswith("triton.")}
    sys.meta_path.insert(0, blocker)
    try:
        _triton.has_triton_package.cache_clear()
        _triton.has_triton_package()
    finally:
        sys.meta_path.remove(blocker)
        sys.modules.update(saved)


def install() -> None:
    """Serve the Triton names in this process (idempotent); a ``triton`` imported before is
    replaced."""
    if not any(isinstance(f, TritonFinder) for f in sys.meta_path):
        _torch_sees_no_triton()
        sys.meta_path.insert(0, TritonFinder())
    for name in [n for n in sys.modules if n == "triton" or n.startswith("triton.")]:
        if not getattr(sys.modules[name], "__name__", "").startswith("ascsim."):
            del sys.modules[name]
