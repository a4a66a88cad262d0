"""How much of pyasc's exported API ascsim provides (``ascsim info --api``).

The reference is ``api_names.yaml``: every name pyasc exports, per module, listed from the
``__all__`` lists of pyasc's source (for ``asc.runtime.*``, which has none, its modules' public
top-level definitions). Each name is, in ascsim:

- ``implemented``: it exists and works on the simulator;
- ``refuses``: it exists, and calling it raises :class:`NotOnSimulator` saying why it has no
  meaning on a simulator (made with :func:`refusing`);
- ``missing``: it does not exist.

``python -m ascsim.asc.api_coverage --extract PYASC_SRC`` rebuilds the list from a pyasc source
tree (the folder holding ``python/asc`` or ``asc``); it reads names only.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import yaml

NAMES_FILE = Path(__file__).with_name("api_names.yaml")
#: Our module for each pyasc module of the list.
OUR_MODULES = {
    "asc": "ascsim.asc",
    "asc.adv": "ascsim.asc.adv",
    "asc.lib.host": "ascsim.asc.lib.host",
    "asc.lib.runtime": "ascsim.asc.lib.runtime",
    "asc.runtime.config": "ascsim.asc.runtime.config",
    "asc.runtime.jit": "ascsim.asc.runtime.jit",
    "asc.runtime.launcher": "ascsim.asc.runtime.launcher",
    "asc.runtime.compiler": "ascsim.asc.runtime.compiler",
}
#: Where each listed module's names come from in pyasc's source: an ``__init__.py`` with an
#: ``__all__`` (``all``), or a module whose public top-level definitions are its API (``defs``).
SOURCES = {
    "asc": ("asc/__init__.py", "all"),
    "asc.adv": ("asc/language/adv/__init__.py", "all"),
    "asc.lib.host": ("asc/lib/host/__init__.py", "all"),
    "asc.lib.runtime": ("asc/lib/runtime/__init__.py", "all"),
    "asc.runtime.config": ("asc/runtime/config.py", "defs"),
    "asc.runtime.jit": ("asc/runtime/jit.py", "defs"),
    "asc.runtime.launcher": ("asc/runtime/launcher.py", "defs"),
    "asc.runtime.compiler": ("asc/runtime/compiler.py", "defs"),
}
#: The names in the list that are subpackages in pyasc (``asc.adv``, ...). Any other listed name
#: that is a module in ascsim (``asc.adv.softmax``, a function in pyasc) is not that name.
PYASC_SUBPACKAGES = {"asc": frozenset({"adv", "basic", "core", "fwk"})}
STATES = ("implemented", "refuses", "missing")
REFUSES_ATTR = "__ascsim_refuses__"


class NotOnSimulator(RuntimeError):
    """A pyasc name that has no meaning on a simulator was called."""


def refusing(qualname: str, reason: str):
    """A stand-in for pyasc's ``qualname`` that raises :class:`NotOnSimulator` with ``reason``."""

    def refuse(*args, **kwargs):
        raise NotOnSimulator(f"{qualname} is not meaningful on a simulator: {reason}")

    refuse.__name__ = qualname.rpartition(".")[2]
    refuse.__qualname__ = qualname
    refuse.__doc__ = f"Not meaningful on a simulator: {reason}"
    setattr(refuse, REFUSES_ATTR, reason)
    return refuse


@functools.cache
def reference_names() -> dict[str, tuple[str, ...]]:
    """pyasc's exported names per module, from api_names.yaml."""
    data = yaml.safe_load(NAMES_FILE.read_text())
    return {module: tuple(names) for module, names in data["modules"].items()}


def state_of(module, name: str, subpackages: frozenset = frozenset()) -> str:
    """``implemented`` / ``refuses`` / ``missing`` for ``name`` in our ``module`` (or None);
    ``subpackages``: the names that are modules in pyasc too."""
    if module is None or not hasattr(module, name):
        return "missing"
    value = getattr(module, name)
    if isinstance(value, types.ModuleType) and name not in subpackages:
        return "missing"  # one of our submodules, not pyasc's function or class of that name
    return "refuses" if hasattr(value, REFUSES_ATTR) else "implemented"


@dataclass
class ModuleCoverage:
    """The names of one pyasc module, sorted by their state in ascsim."""

    module: str
    names: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in STATES})

    @property
    def total(self) -> int:
        return sum(len(v) for v in self.names.values())

    def count(self, state: str) -> int:
        return len(self.names[state])


def _our_module(name: str):
    try:
        return importlib.import_module(OUR_MODULES[name])
    except ModuleNotFoundError:
        return None


def coverage(reference: dict[str, tuple[str, ...]] | None = None,
             modules: dict | None = None) -> list[ModuleCoverage]:
    """Coverage per module; ``modules`` maps a pyasc module name to our module object (default:
    the modules of OUR_MODULES)."""
    reference = reference_names() if reference is None else reference
    result = []
    for name, names in reference.items():
        ours = modules[name] if modules is not None else _our_module(name)
        cov = ModuleCoverage(name)
        subpackages = PYASC_SUBPACKAGES.get(name, frozenset())
        for exported in names:
            cov.names[state_of(ours, exported, subpackages)].append(exported)
        result.append(cov)
    return result


# -- rebuilding the list from pyasc's source ------------------------------------------------

def _all_of(path: Path, seen: frozenset = frozenset()) -> list[str]:
    """The names an ``__init__.py``'s ``__all__`` lists, following ``__all__.extend(x_all)``
    where ``x_all`` was imported as another package's ``__all__``."""
    tree = ast.parse(path.read_text())
    imported_alls: dict[str, Path] = {}
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                if alias.name == "__all__" and node.module:
                    target = path.parent / node.module.replace(".", "/") / "__init__.py"
                    imported_alls[alias.asname or alias.name] = target
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            names = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        elif isinstance(node, ast.AugAssign) and getattr(node.target, "id", "") == "__all__":
            names += [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and getattr(node.value.func, "attr", "") == "extend"
              and getattr(node.value.func.value, "id", "") == "__all__"):
            arg = node.value.args[0]
            if isinstance(arg, ast.Name) and arg.id in imported_alls:
                target = imported_alls[arg.id]
                if target not in seen:
                    names += _all_of(target, seen | {path})
            elif isinstance(arg, (ast.List, ast.Tuple)):
                names += [e.value for e in arg.elts if isinstance(e, ast.Constant)]
    return names


def _public_defs(path: Path) -> list[str]:
    """Public classes, functions and assigned names defined at a module's top level."""
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return [n for n in dict.fromkeys(names) if not n.startswith("_")]


def extract_names(source: Path) -> dict[str, list[str]]:
    """Every listed module's exported names, read from a pyasc source tree."""
    root = source / "python" if (source / "python" / "asc").is_dir() else source
    out = {}
    for module, (relative, how) in SOURCES.items():
        path = root / relative
        if not path.is_file():
            raise FileNotFoundError(f"{path}: not in the pyasc source tree {source}")
        names = _all_of(path) if how == "all" else _public_defs(path)
        out[module] = list(dict.fromkeys(names))
    return out


def dump_names(names: dict[str, list[str]], origin: str) -> str:
    header = ("# pyasc's exported names, per module (names only). Rebuilt with\n"
              "#   python -m ascsim.asc.api_coverage --extract PYASC_SRC --origin ORIGIN\n"
              "# from the __all__ lists (asc, asc.adv, asc.lib.host, asc.lib.runtime) and the\n"
              "# public top-level definitions of asc.runtime.{config,jit,launcher,compiler}.\n")
    body = yaml.safe_dump({"origin": origin, "modules": names}, sort_keys=False, width=100)
    return header + body


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="rebuild api_names.yaml from pyasc's source")
    p.add_argument("--extract", type=Path, required=True, metavar="PYASC_SRC")
    p.add_argument("--origin", default="hicann/pyasc", help="repository@commit of the source")
    ns = p.parse_args(argv)
    sys.stdout.write(dump_names(extract_names(ns.extract), ns.origin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
