"""Running an unmodified pyasc script on the simulator.

The script's ``import asc`` (and ``asc.lib.runtime``, ``asc.runtime.config``, ...) resolve to
``ascsim.asc`` through aliases in ``sys.modules``; no top-level ``asc`` package is installed.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import runpy
import sys
from dataclasses import dataclass

from ascsim.asc.runtime.config import NPU_UNAVAILABLE
from ascsim.session import SESSION

ALIAS = "asc"
TARGET = "ascsim.asc"


def install_asc_alias() -> None:
    """Make ``import asc`` and every ``asc.<sub>`` resolve to ``ascsim.asc``."""
    package = importlib.import_module(TARGET)
    for info in pkgutil.walk_packages(package.__path__, TARGET + "."):
        importlib.import_module(info.name)
    for name, module in list(sys.modules.items()):
        if name == TARGET or name.startswith(TARGET + "."):
            sys.modules.setdefault(ALIAS + name[len(TARGET):], module)


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


class NpuRequested(RuntimeError):
    """The script asked for the NPU backend, which only Huawei's pyasc with CANN provides."""


def run_script(path: str, args: list[str]) -> None:
    """Run ``path`` as ``__main__`` with ``args``, with ``asc`` served by the simulator."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such script: {path}")
    peeked = peek_script_args(args)
    if peeked.backend is not None and peeked.backend.upper() == "NPU":
        raise NpuRequested(NPU_UNAVAILABLE)
    if peeked.platform:
        SESSION.request_soc(peeked.platform)
    install_asc_alias()
    script_dir = os.path.dirname(os.path.abspath(path))
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *args]
    sys.path.insert(0, script_dir)
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
