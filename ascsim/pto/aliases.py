"""``import pypto_pro...`` and ``import pypto`` inside an ``ascsim run`` process.

A meta-path finder serves the PyPTO Pro module names from :mod:`ascsim.pto` on demand; nothing
named ``pypto_pro`` or ``pypto`` is installed. The first ``import pypto_pro`` makes the 950
(``Ascend950PR_9579``) the simulated part unless one was chosen, since PyPTO Pro runs on nothing
else.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

from ascsim.pto.platform import DEFAULT_PTO_SOC
from ascsim.session import SESSION

#: PyPTO Pro module name -> the ascsim module that serves it (None: an empty package).
MODULES = {
    "pypto_pro": "ascsim.pto.package",
    "pypto_pro.language": "ascsim.pto.language",
    "pypto_pro.language.parser": None,
    "pypto_pro.language.parser.diagnostics": None,
    "pypto_pro.language.parser.diagnostics._exceptions": "ascsim.pto.errors",
    "pypto_pro.runtime": "ascsim.pto.runtime",
    "pypto_pro.runtime.tilingkey": "ascsim.pto.runtime.tilingkey",
    "pypto_pro.runtime.platform": "ascsim.pto.runtime.platform",
    "pypto_pro.runtime.jit": "ascsim.pto.runtime.jit",
    "pypto": "ascsim.pto.pypto_module",
}


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        target = MODULES[spec.name]
        if target is None:
            module = types.ModuleType(spec.name)
            module.__path__ = []
            return module
        if spec.name == "pypto_pro":
            SESSION.prefer_soc(DEFAULT_PTO_SOC)
        return importlib.import_module(target)

    def exec_module(self, module) -> None:
        """The serving module is imported already."""


class PtoFinder(importlib.abc.MetaPathFinder):
    """Finds the PyPTO Pro names of :data:`MODULES`."""

    loader = _Loader()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self.loader,
                                               is_package=fullname.count(".") < 2
                                               or MODULES[fullname] is None)


def install() -> None:
    """Serve the PyPTO Pro names in this process (idempotent)."""
    if not any(isinstance(f, PtoFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, PtoFinder())
