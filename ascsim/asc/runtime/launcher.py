"""``asc.runtime.launcher``: the step of a launch that hands the results to the host.

pyasc compiles a kernel and then calls ``Launcher(options).run(kernel, function_name, user_args)``
once per launch to execute it and copy the results back; pyasc's unit tests patch
``Launcher.run`` to count launches without a device. Here the kernel has already run on the
simulated chip (and been checked and timed) when ``run`` is called, and ``run`` delivers its
results: the device copies of the memory arguments go back into the caller's tensors. A patched
``run`` therefore leaves the caller's tensors untouched, as a patched pyasc launcher does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ascsim.asc.jit_options import LaunchOptions
from ascsim.session import SESSION

__all__ = ["LaunchOptions", "LaunchResult", "Launcher", "deliver"]


@dataclass(frozen=True)
class LaunchResult:
    """A simulated launch whose results wait to be copied back (pyasc's compiled kernel)."""

    kernel_name: str
    block_num: int
    #: The launch's memory arguments (ascsim.asc.launcher.HostArgument): device copy + host value.
    memory_args: Sequence

    def copy_back(self) -> None:
        for argument in self.memory_args:
            argument.copy_back()


class Launcher:
    """pyasc's launcher: ``run`` is called once per launch."""

    def __init__(self, options: LaunchOptions):
        self.options = options

    @staticmethod
    def get_core_num(device_id: int | None = None) -> int:
        """AI Cores of the simulated SoC (pyasc asks the runtime for the AICORE count)."""
        return SESSION.soc.aic_count

    def run(self, kernel: LaunchResult, function_name: str, user_args: tuple) -> None:
        """Deliver the launch's results to the host tensors in ``user_args``."""
        if not isinstance(kernel, LaunchResult):
            raise TypeError(f"Launcher.run expects the LaunchResult of a simulated launch, got "
                            f"{type(kernel).__name__}")
        kernel.copy_back()


def deliver(kernel_name: str, block_num: int, memory_args: Sequence, user_args: dict) -> None:
    """The end of every launch: one ``Launcher.run`` call, looked up on the class at call time
    so that a patched ``asc.runtime.launcher.Launcher.run`` sees it."""
    result = LaunchResult(kernel_name, block_num, tuple(memory_args))
    Launcher(LaunchOptions(block_num)).run(result, kernel_name, tuple(user_args.values()))
