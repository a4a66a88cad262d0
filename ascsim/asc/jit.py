"""``@asc.jit``: kernels and device helpers, and the ``kernel[core_num, stream](...)`` launch."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Generic, TypeVar

from ascsim.asc import jit_rewrite
from ascsim.asc.jit_options import (
    OPTION_NAMES,
    LaunchOptions,
    check_option_names,
    compile_options,
)
from ascsim.asc.launcher import run_launch
from ascsim.asc.runtime.mock import host_value
from ascsim.sim import scheduler
from ascsim.sim.errors import KernelError

T = TypeVar("T")


class ConstExpr(Generic[T]):
    """Annotation of a compile-time constant parameter: ``n: asc.ConstExpr[int]``."""


def _is_constexpr(annotation) -> bool:
    if isinstance(annotation, str):
        return "ConstExpr" in annotation
    return getattr(annotation, "__origin__", None) is ConstExpr or annotation is ConstExpr


def _loop_tick() -> None:
    scheduler.current_core().loop_iteration()


def _iterate(loop) -> Any:
    """Iterations of a ``with x.iterate() as count`` construct."""
    iterations = getattr(loop, "__ascsim_iterations__", None)
    if iterations is None:
        raise TypeError(f"'with ... .iterate()' expects a Matmul iteration, got "
                        f"{type(loop).__name__}")
    return iterations()


_HELPERS = {jit_rewrite.TICK: _loop_tick, jit_rewrite.ITERATE: _iterate}

KERNEL_TYPE_KINDS = {0: "AIV_ONLY", 1: "AIC_ONLY"}  # other KernelType values are MIX kinds


class JITFunction:
    """A function decorated with ``@asc.jit``."""

    def __init__(self, fn, options: dict):
        check_option_names(options)
        self.fn = fn
        self.options = dict(options)
        self.signature = inspect.signature(fn)
        clash = sorted(set(self.signature.parameters) & OPTION_NAMES)
        if clash:
            raise RuntimeError(f"kernel parameter name(s) {clash} clash with jit option names")
        self.constexpr = {name for name, p in self.signature.parameters.items()
                          if _is_constexpr(p.annotation)}
        self._compiled: dict[bool, Any] = {}
        functools.update_wrapper(self, fn)

    def compiled(self, is_kernel: bool):
        fn = self._compiled.get(is_kernel)
        if fn is None:
            fn = jit_rewrite.rewrite(self.fn, _HELPERS, is_kernel)
            self._compiled[is_kernel] = fn
        return fn

    def __ascsim_prepare__(self) -> None:
        """Compile the body now rather than at its first use: as a kernel, or as a device
        helper when it cannot be a kernel. A tuning target's kernels are prepared when the
        target is loaded, so forked workers inherit the compiled body instead of each
        compiling it again. Never raises for a body that is wrong either way: that error is
        reported at the launch or call, with the kernel's line, as without preparing."""
        for is_kernel in (True, False):
            try:
                self.compiled(is_kernel)
            except KernelError:
                continue
            if is_kernel:
                self.kernel_kind(self.options)  # parses the source for the Matmul API once
            return

    def __getitem__(self, launch) -> _Launcher:
        if not isinstance(launch, tuple):
            launch = (launch,)
        return _Launcher(self, LaunchOptions(*launch))

    def __call__(self, *args, **kwargs):
        if not scheduler.in_kernel():
            raise RuntimeError(
                f"launch the kernel {self.fn.__name__!r} with {self.fn.__name__}[core_num]"
                "(...) or [core_num, stream](...)")
        # A device helper called from a kernel: run it inline (pyasc inlines it too).
        return self.compiled(False)(*args, **kwargs)

    def kernel_kind(self, options: dict) -> str:
        kernel_type = options.get("kernel_type")
        if kernel_type is not None:
            return KERNEL_TYPE_KINDS.get(int(kernel_type), "MIX")
        if options.get("matmul_cube_only"):
            return "AIC_ONLY"
        uses_matmul = self.__dict__.get("_uses_matmul")
        if uses_matmul is None:  # parsing the source on every launch costs milliseconds
            uses_matmul = self._uses_matmul = jit_rewrite.uses_call(self.fn, "register_matmul")
        return "MIX" if uses_matmul else "AIV_ONLY"

    def __repr__(self) -> str:
        return f"<asc.jit kernel {self.fn.__name__}>"


class _Launcher:
    def __init__(self, jit_fn: JITFunction, launch: LaunchOptions):
        self.jit_fn = jit_fn
        self.launch = launch

    def __call__(self, *args, **kwargs):
        jit_fn = self.jit_fn
        options = dict(jit_fn.options)
        for name in list(kwargs):
            if name in OPTION_NAMES:
                options[name] = kwargs.pop(name)
        compile_options(options)  # validates values
        try:
            bound = jit_fn.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"kernel {jit_fn.fn.__name__}: {exc}") from None
        bound.apply_defaults()
        body = jit_fn.compiled(True)
        arguments = {name: host_value(value) for name, value in bound.arguments.items()}
        return run_launch(jit_fn.fn.__name__, body, arguments, jit_fn.constexpr,
                          int(self.launch.core_num), jit_fn.kernel_kind(options),
                          vf_fusion=bool(options.get("vf_fusion")))


def jit(fn=None, **options):
    """``@asc.jit`` or ``@asc.jit(option=value, ...)``."""
    if fn is not None and callable(fn) and not options:
        return JITFunction(fn, {})
    if fn is not None:
        raise TypeError("use @asc.jit or @asc.jit(option=value, ...)")
    check_option_names(options)
    return lambda f: JITFunction(f, options)


__all__ = ["ConstExpr", "JITFunction", "KernelError", "jit"]
