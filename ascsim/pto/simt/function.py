"""``@pl.simt.function``: SIMT functions (launchable with ``max_threads``, else callees).

A SIMT function is compiled once (:mod:`ascsim.pto.simt.rewrite`) on its first use. Called
from a SIMT body it runs in its caller's threads (under the caller's mask); outside a SIMT body
it is refused, as PyPTO Pro refuses it.
"""

from __future__ import annotations

import ast
import functools
import inspect

import numpy as np

from ascsim.pto.dtypes import DataType
from ascsim.pto.errors import ParserSyntaxError
from ascsim.pto.parse import source_tree
from ascsim.pto.simt import rewrite, threads
from ascsim.sim.source import user_location

#: The helper each rewritten name stands for.
HELPER_VALUES = {
    rewrite.LOAD: threads.load, rewrite.STORE: threads.store, rewrite.MERGE: threads.merge,
    rewrite.BRANCH: threads.Branch, rewrite.LOOP: threads.Loop,
    rewrite.SELECT: threads.select, rewrite.AND: threads.logical_and,
    rewrite.OR: threads.logical_or, rewrite.NOT: threads.logical_not,
    rewrite.MIN: threads.minimum, rewrite.MAX: threads.maximum, rewrite.CAST: threads.cast,
    rewrite.OPS: threads.count_ops}


class SimtFunction:
    """A function decorated ``@pl.simt.function`` (``max_threads``: launchable)."""

    def __init__(self, fn, max_threads: int | None):
        if max_threads is not None and (isinstance(max_threads, bool)
                                        or not isinstance(max_threads, int)
                                        or max_threads <= 0):
            raise ValueError(f"@pl.simt.function: max_threads must be a positive int, got "
                             f"{max_threads!r}")
        self.fn = fn
        self.max_threads = max_threads
        self.name = fn.__name__
        self.signature = inspect.signature(fn)
        self._compiled = None
        self._why = None
        functools.update_wrapper(self, fn)

    @property
    def launchable(self) -> bool:
        return self.max_threads is not None

    def compiled(self):
        """The rewritten function (compiled on first use)."""
        if self._compiled is None:
            factory, self._why = rewrite.compile_simt(self.fn)
            cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()))
            self._compiled = factory(**HELPER_VALUES,
                                     **{n: c.cell_contents for n, c in cells.items()})
        return self._compiled

    def per_thread_reason(self, seen: set | None = None) -> str | None:
        """Why a launch of this function runs thread by thread (None: all threads at once):
        its own control flow or a callee's."""
        self.compiled()
        if self._why:
            return f"{self.name}, {self._why}"
        seen = set() if seen is None else seen
        seen.add(self)
        for callee in self.callees():
            if callee not in seen:
                why = callee.per_thread_reason(seen)
                if why:
                    return why
        return None

    def callees(self) -> list:
        """The SIMT functions this one calls by name."""
        node, _, _ = source_tree(self.fn)
        names = {sub.func.id for sub in ast.walk(node)
                 if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)}
        scope = dict(self.fn.__globals__)
        for name, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()):
            scope[name] = cell.cell_contents
        return [scope[n] for n in sorted(names) if isinstance(scope.get(n), SimtFunction)]

    def bind(self, args: tuple) -> list:
        """The launch (or call) arguments as the body sees them: scalars converted to their
        annotated ``pl.DT_*`` types."""
        try:
            bound = self.signature.bind(*args)
        except TypeError as exc:
            raise ParserSyntaxError(f"SIMT function '{self.name}': {exc}",
                                    user_location()) from None
        values = []
        for name, value in bound.arguments.items():
            annotation = self.signature.parameters[name].annotation
            values.append(_typed(annotation, value))
        return values

    def __call__(self, *args, **kwargs):
        if not threads.RUNS:
            raise ParserSyntaxError(f"SIMT function '{self.name}' can only be called from a "
                                    "SIMT function; launch it with pl.simt.launch from a "
                                    "vector section", user_location())
        if kwargs:
            raise ParserSyntaxError(f"SIMT function '{self.name}' takes positional arguments "
                                    "only", user_location())
        return self.compiled()(*self.bind(args))

    def __repr__(self) -> str:
        kind = f"max_threads={self.max_threads}" if self.launchable else "callee"
        return f"<pl.simt.function {self.name} ({kind})>"


def _typed(annotation, value):
    """A scalar as a variable of its ``pl.DT_*`` annotation holds it (FP32 as float32)."""
    if not isinstance(annotation, DataType) or isinstance(value, np.ndarray) or not isinstance(
            value, (int, float, np.generic)) or isinstance(value, bool):
        return value
    if annotation.kind == "float":
        return annotation.np_dtype.type(value)
    return value


def simt_function(fn=None, *, max_threads: int | None = None):
    """``@pl.simt.function`` / ``@pl.simt.function(max_threads=N)``."""
    def decorate(f):
        if not inspect.isfunction(f):
            raise TypeError(f"@pl.simt.function decorates a function, got {type(f).__name__}")
        return SimtFunction(f, max_threads)
    return decorate(fn) if fn is not None else decorate
