"""``triton.autotune``, ``triton.heuristics`` and ``triton.Config``, choosing by simulated time.

On the device the autotuner times every configuration of a kernel's meta-parameters and keeps
the fastest per value of its ``key`` arguments. Here every configuration runs on the simulated
chip and is ranked by its simulated device time (``KernelReport.device_time_us``): the same
choice the device would make if the model's times are right, and reproducible. Configurations
that cannot compile (UB overflow, a compile-time assertion, out of resources) are skipped, as
Triton skips them. The tuning runs are launches like any other (a profile of the device shows
them too); the last launch is the chosen configuration's.

``restore_value`` / ``reset_to_zero`` name tensor arguments that a run changes in place: they
are put back (or zeroed) before each tuning run and before the final one, as Triton does.
"""

from __future__ import annotations

import functools
import os
import time

from ascsim.sim.host import is_torch_tensor
from ascsim.triton.errors import CompilationError, OutOfResources
from ascsim.triton.jit import JITFunction
from ascsim.triton.semantic import unwrap

PRINT_AUTOTUNING = "TRITON_PRINT_AUTOTUNING"


class Config:
    """One configuration: meta-parameter values (``kwargs``) and compiler options."""

    def __init__(self, kwargs, num_warps=None, num_stages=None, num_ctas=None, maxnreg=None,
                 pre_hook=None, **options):
        self.kwargs = dict(kwargs)
        self.num_warps, self.num_stages, self.num_ctas = num_warps, num_stages, num_ctas
        self.maxnreg, self.pre_hook = maxnreg, pre_hook
        self.options = options  # triton-ascend's (multibuffer, ...): they change nothing here

    def all_kwargs(self) -> dict:
        launch = {k: v for k, v in (("num_warps", self.num_warps),
                                    ("num_stages", self.num_stages),
                                    ("num_ctas", self.num_ctas), ("maxnreg", self.maxnreg))
                  if v is not None}
        return {**self.kwargs, **launch, **self.options}

    def __str__(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in self.all_kwargs().items())

    __repr__ = __str__


#: What a configuration that cannot run raises at its launch: skipped, as Triton skips them.
UNRUNNABLE = (CompilationError, OutOfResources)


def _base(fn):
    """The ``@triton.jit`` function under any decorators."""
    while not isinstance(fn, JITFunction):
        fn = fn.fn
    return fn


class KernelInterface:
    """A launchable kernel wrapper: ``wrapper[grid](*args, **kwargs)``."""

    fn = None

    def __getitem__(self, grid):
        return functools.partial(self.run, grid=grid)

    @property
    def arg_names(self) -> list[str]:
        return _base(self.fn).arg_names

    def named(self, args, kwargs) -> dict:
        """The call's arguments by name (positional ones bound to the kernel's parameters)."""
        return {**dict(zip(self.arg_names, args)), **kwargs}


class Autotuner(KernelInterface):
    """``@triton.autotune(configs, key, ...)`` over a kernel."""

    def __init__(self, fn, configs, key, prune_configs_by=None, reset_to_zero=None,
                 restore_value=None, pre_hook=None, post_hook=None, warmup=None, rep=None,
                 use_cuda_graph=False, do_bench=None, cache_results=False):
        self.fn = fn
        self.configs = list(configs) or [Config({})]
        self.keys = list(key)
        self.prune_configs_by = prune_configs_by or {}
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        self.pre_hook, self.post_hook = pre_hook, post_hook
        self.cache: dict = {}
        self.configs_timings: dict | None = None
        self.best_config: Config | None = None
        functools.update_wrapper(self, _base(fn).fn)

    def _key(self, named: dict) -> tuple:
        out = []
        for name in self.keys:
            value = unwrap(named.get(name))
            out.append(str(value.dtype) if is_torch_tensor(value) else value)
        return tuple(out)

    def _pruned(self, named: dict) -> list[Config]:
        configs = self.configs
        early = self.prune_configs_by.get("early_config_prune")
        if early is not None:
            configs = list(early(configs, named))
        return configs

    def _prepare(self, named: dict, saved: dict) -> None:
        for name in self.reset_to_zero:
            named[name].zero_()
        for name, copy in saved.items():
            named[name].copy_(copy)

    def _launch(self, config: Config, args, kwargs, grid):
        full = {**kwargs, **config.all_kwargs()}
        if config.pre_hook is not None:
            config.pre_hook({**self.named(args, kwargs), **config.kwargs})
        return self.fn.run(*args, grid=grid, **full)

    def _tune(self, args, kwargs, grid, named: dict) -> tuple[Config, dict]:
        saved = {name: named[name].clone() for name in self.restore_value}
        timings: dict = {}
        first_error = None
        for config in self._pruned(named):
            self._prepare(named, saved)
            try:
                report = self._launch(config, args, kwargs, grid)
            except UNRUNNABLE as exc:
                first_error = first_error or exc
                timings[config] = float("inf")
                continue
            # (the kernel's own time: the first launch of a process pays more launch overhead)
            timings[config] = (0.0 if report is None else
                               report.device_time_us - report.launch_overhead_us)
        self._prepare(named, saved)
        runnable = {c: t for c, t in timings.items() if t != float("inf")}
        if not runnable:
            raise first_error
        return min(runnable, key=runnable.get), timings

    def run(self, *args, grid, warmup: bool = False, **kwargs):
        named = self.named(args, kwargs)
        key = self._key(named)
        if len(self.configs) > 1 and key not in self.cache:
            started = time.perf_counter()
            self.cache[key], self.configs_timings = self._tune(args, kwargs, grid, named)
            if os.environ.get(PRINT_AUTOTUNING) == "1":
                print(f"Triton autotuning for function {self.__name__} finished after "
                      f"{time.perf_counter() - started:.2f}s; best config selected: "
                      f"{self.cache[key]}; (simulated device time)")
        config = self.cache.get(key, self.configs[0])
        self.best_config = config
        if warmup:
            return None
        report = self._launch(config, args, kwargs, grid)
        if self.post_hook is not None:
            self.post_hook(named, exception=None)
        return report


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False,
             do_bench=None, cache_results=False, **ascend_options):
    """``@triton.autotune(configs=[triton.Config(...)], key=[...])``."""
    def decorator(fn):
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value,
                         pre_hook, post_hook, warmup, rep, use_cuda_graph, do_bench,
                         cache_results)
    return decorator


class Heuristics(KernelInterface):
    """``@triton.heuristics({name: fn(args)})``: meta-parameters computed from the call's
    arguments before each launch."""

    def __init__(self, fn, values: dict):
        self.fn = fn
        self.values = dict(values)
        functools.update_wrapper(self, _base(fn).fn)

    def run(self, *args, grid, **kwargs):
        named = self.named(args, kwargs)
        for name, rule in self.values.items():
            kwargs[name] = named[name] = rule(named)
        return self.fn.run(*args, grid=grid, **kwargs)


def heuristics(values: dict):
    """``@triton.heuristics(values={...})``."""
    if not isinstance(values, dict):
        raise TypeError(f"triton.heuristics takes a dict of name -> function, got {values!r}")
    return lambda fn: Heuristics(fn, values)


__all__ = ["Autotuner", "Config", "Heuristics", "autotune", "heuristics"]
