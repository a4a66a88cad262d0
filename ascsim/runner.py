"""Running an unmodified pyasc script, or a module such as pytest, on the simulator.

The script's ``import asc`` (and ``asc.lib.runtime``, ``asc.runtime.config``, ...) resolve to
``ascsim.asc`` through aliases in ``sys.modules``; no top-level ``asc`` package is installed.
``import torch_npu`` and ``torch.npu`` are served by the NPU stand-in (:mod:`ascsim.npu`). Both
exist only inside the process that ``ascsim run`` starts.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import runpy
import sys
import traceback
from dataclasses import dataclass
from types import TracebackType

from ascsim import npu
from ascsim.pto import aliases as pto_aliases
from ascsim.session import SESSION
from ascsim.triton import aliases as triton_aliases

ALIAS = "asc"
TARGET = "ascsim.asc"


def install_asc_alias() -> None:
    """Make ``import asc`` and every ``asc.<sub>`` resolve to ``ascsim.asc``.

    The modules also take pyasc's names (``asc.__name__ == "asc"``, ``asc.language.__name__ ==
    "asc.language"``, and the same in ``__spec__``), which pyasc's own tests check.
    """
    package = importlib.import_module(TARGET)
    for info in pkgutil.walk_packages(package.__path__, TARGET + "."):
        importlib.import_module(info.name)
    for name, module in list(sys.modules.items()):
        if name == TARGET or name.startswith(TARGET + "."):
            alias = ALIAS + name[len(TARGET):]
            sys.modules.setdefault(alias, module)
            _rename(module, alias)


def _rename(module, alias: str) -> None:
    is_package = hasattr(module, "__path__")
    module.__name__ = alias
    module.__package__ = alias if is_package else alias.rpartition(".")[0]
    spec = getattr(module, "__spec__", None)
    if spec is not None:
        spec.name = alias


def install_frontends() -> None:
    """Everything an unmodified script may import: ``asc``, ``pypto_pro`` (and ``pypto``),
    ``triton`` and the NPU stand-in."""
    install_asc_alias()
    pto_aliases.install()
    triton_aliases.install()
    npu.install()


@dataclass(frozen=True)
class ScriptArgs:
    """The pyasc example convention: ``-r BACKEND -v PLATFORM`` among the script's arguments."""

    backend: str | None
    platform: str | None


def peek_script_args(args: list[str]) -> ScriptArgs:
    found: dict[str, str] = {}
    for i, arg in enumerate(args):
        for flag in ("-r", "-v"):
            if arg == flag and i + 1 < len(args):
                found[flag] = args[i + 1]
            elif arg.startswith(flag + "=") or (arg.startswith(flag) and len(arg) > 2
                                                and not arg.startswith("--")):
                found[flag] = arg[len(flag):].lstrip("=")
    return ScriptArgs(found.get("-r"), found.get("-v"))


def _apply_script_args(args: list[str]) -> None:
    peeked = peek_script_args(args)
    if peeked.platform:
        SESSION.request_soc(peeked.platform)
    if peeked.backend is not None and peeked.backend.upper() == "NPU":
        npu.notice("-r NPU")


def run_script(path: str, args: list[str]) -> None:
    """Run ``path`` as ``__main__`` with ``args``, with ``asc`` served by the simulator."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such script: {path}")
    _apply_script_args(args)
    install_frontends()
    script_dir = os.path.dirname(os.path.abspath(path))
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *args]
    sys.path.insert(0, script_dir)
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def run_module(name: str, args: list[str]) -> None:
    """Run module ``name`` as ``python -m name args`` does (e.g. ``pytest FILE``), with the
    front-ends installed for the whole process.

    ``args`` belong to the module alone (pytest's ``-v`` is verbosity, not a platform): the
    simulated SoC comes from ``ascsim run --soc`` or the script's own ``set_platform``.
    """
    if not name or name.startswith("-"):
        raise ValueError(f"invalid module name {name!r}: expected e.g. 'pytest'")
    install_frontends()
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.path.insert(0, os.getcwd())  # as ``python -m`` does, before looking the module up
    try:
        if importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError(f"no module named {name!r}", name=name)
        sys.argv = [name, *args]  # runpy replaces argv[0] with the module's file
        runpy.run_module(name, run_name="__main__", alter_sys=True)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


#: Modules whose frames lead into the user's code under ``ascsim run``: the command, this
#: runner and runpy. ``python script.py`` shows none of their like, so neither do we.
MACHINERY_MODULES = frozenset({"ascsim.cli", "ascsim.runner", "runpy"})
#: Modules whose frames sit between the user's call and the library it calls: the wrappers
#: that explain a failed comparison (ascsim/assert_hooks.py). Dropped wherever they are.
WRAPPER_MODULES = frozenset({"ascsim.assert_hooks"})
#: ``ASCSIM_FULL_TRACEBACK=1`` keeps every frame (for debugging ascsim itself).
FULL_TRACEBACK_ENV = "ASCSIM_FULL_TRACEBACK"


def _from_user_code(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` without its leading machinery frames (None when no frame is the user's: the
    error came before their code ran, e.g. a syntax error, and its message says where)."""
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in MACHINERY_MODULES:
        tb = tb.tb_next
    return _without_wrappers(tb)


def _without_wrappers(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` without the frames of :data:`WRAPPER_MODULES` (rebuilt from the first one on)."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    if not any(f.tb_frame.f_globals.get("__name__") in WRAPPER_MODULES for f in frames):
        return frames[0] if frames else None
    rebuilt = None
    for frame in reversed(frames):
        if frame.tb_frame.f_globals.get("__name__") not in WRAPPER_MODULES:
            rebuilt = TracebackType(rebuilt, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return rebuilt


def print_script_error(exc: BaseException, file=None) -> None:
    """Print the traceback of an exception that escaped the user's script or module as Python
    itself would for ``python script.py``: from the script's frame down, the chained
    exceptions the same way."""
    if os.environ.get(FULL_TRACEBACK_ENV) != "1":
        seen: set[int] = set()
        chain: BaseException | None = exc
        while chain is not None and id(chain) not in seen:
            seen.add(id(chain))
            chain.__traceback__ = _from_user_code(chain.__traceback__)
            chain = chain.__cause__ or chain.__context__
    traceback.print_exception(type(exc), exc, exc.__traceback__,
                              file=sys.stderr if file is None else file)
