"""A user's cann-bench operator package: where it is, how its operator is found, one watched call.

``ascsim bench <op> --package DIR`` takes the package from a directory (nothing installed: the
directory goes first on the import path of the process that runs the cases) or, for a package
installed with ``pip install DIR``, from its module name (``--package cann_bench``). In a
directory it looks, in this order, for

1. ``DIR/cann_bench/`` — the layout of a cann-bench submission (``impl/`` holding the
   ``cann_bench`` package, its pyproject or setup.py beside it); the operator is
   ``cann_bench.<op>``, as the evaluator finds it in ``dir(cann_bench)``;
2. ``DIR/<op>/`` — one operator's package (``<op>/__init__.py`` exporting ``<op>``, usually
   from its ``dispatcher.py``);
3. ``DIR`` itself being a package (``DIR/__init__.py``) that exports ``<op>``.

The operator is called the way the evaluator calls it, ``op(*inputs, **attrs)`` (conv:
``strides=, pads=, dilations=`` keywords), and returns the output tensor. :func:`watched_call`
makes one such call under the simulator and the submission rules (:mod:`ascsim.bench.rules`).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ascsim.bench.opinfo import OpTiming, normalize_info
from ascsim.bench.rules import (
    Violation,
    WrapperWatch,
    outputs_violations,
    workspace_bytes,
)
from ascsim.session import SESSION
from ascsim.sim.l2_carry import carried_l2

SUBMISSION_PACKAGE = "cann_bench"
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class PackageSource:
    """Where an operator package comes from.

    ``path``: the directory put first on the import path (None for an installed package);
    ``module``: the module imported; ``label``: how reports name it.
    """

    path: str | None
    module: str
    label: str


def resolve_package(text: str, op: str) -> PackageSource:
    """The :class:`PackageSource` that ``--package TEXT`` names for operator ``op``, or a
    ValueError saying why it names none."""
    where = Path(text)
    if where.is_dir():
        root = where.resolve()
        if (root / SUBMISSION_PACKAGE / "__init__.py").is_file():
            return PackageSource(str(root), SUBMISSION_PACKAGE, f"{SUBMISSION_PACKAGE} ({text})")
        if (root / op / "__init__.py").is_file():
            return PackageSource(str(root), op, f"{op} ({text})")
        if (root / "__init__.py").is_file() and _MODULE_NAME.match(root.name):
            return PackageSource(str(root.parent), root.name, f"{root.name} ({text})")
        raise ValueError(f"--package {text}: the directory holds no {SUBMISSION_PACKAGE}/ "
                         f"package, no {op}/ package and is no package itself (no "
                         "__init__.py)")
    if where.exists():
        raise ValueError(f"--package {text}: not a directory")
    if _MODULE_NAME.match(text) and importlib.util.find_spec(text.split(".")[0]) is not None:
        return PackageSource(None, text, f"{text} (installed)")
    raise ValueError(f"--package {text}: no such directory, and no installed module of that "
                     "name")


def import_operator(source: PackageSource, op: str) -> Callable:
    """Import the package and return its operator (call in the process that runs the cases:
    the package's modules load there, with ``asc`` and the NPU stand-in installed)."""
    if source.path is not None and source.path not in sys.path:
        sys.path.insert(0, source.path)
    module = importlib.import_module(source.module)
    fn = getattr(module, op, None)
    if isinstance(fn, types.ModuleType):  # the op's sub-package, exporting the function
        fn = getattr(fn, op, None)
    if fn is None or not callable(fn) or isinstance(fn, type):
        public = sorted(n for n in dir(module) if not n.startswith("_"))
        raise ImportError(f"package {source.module} has no operator function {op!r} "
                          f"(it exports {public})")
    return fn


@dataclass
class CallRecord:
    """One watched call: its result, timing (None when no kernel ran) and broken rules."""

    out: object
    timing: OpTiming | None
    violations: list[Violation] = field(default_factory=list)


def watched_call(fn: Callable, args: tuple, kwargs: dict,
                 expected: tuple[tuple[torch.dtype, tuple[int, ...]], ...]) -> CallRecord:
    """``fn(*args, **kwargs)`` on the simulated SoC with its kernels' reports collected and
    the wrapper watched; ``expected``: (dtype, shape) of each output the case needs.
    Exceptions from the package propagate."""
    with SESSION.values(True), SESSION.collect() as run:
        watch = WrapperWatch()
        with watch, carried_l2():  # one timed call: L2 is flushed before it, not inside it
            out = fn(*args, **kwargs)
    violations = list(watch.violations)
    violations += outputs_violations(out, expected)
    if not run.reports:
        violations.append(Violation("no_kernel", "the call launched no simulated kernel"))
        return CallRecord(out, None, violations)
    notes = ["package: workspace = what the wrapper allocated besides the result; "
             "cross-core hand-offs are not counted"]
    notes += [f"kernel {r.kernel}: {f.category} finding of the dynamic checks: {f.message}"
              for r in run.reports for f in r.findings]
    info = {"device_time_us": sum(r.device_time_us for r in run.reports),
            "kernels": run.reports, "cross_core_handoffs": 0,
            "workspace_bytes": workspace_bytes(watch.allocated, out), "notes": notes}
    return CallRecord(out, normalize_info(info), violations)
