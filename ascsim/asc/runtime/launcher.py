"""``asc.runtime.launcher``: the step of a launch that hands the results to the host.

pyasc compiles a kernel and then calls ``Launcher(options).run(kernel, function_name, user_args)``
once per launch to execute it and copy the results back; pyasc's unit tests patch
``Launcher.run`` to count launches without a device. Here the kernel has already run on the
simulated chip (and been checked and timed) when ``run`` is called, and ``run`` delivers its
results: the device copies of the memory arguments go back into the caller's tensors. A patched
``run`` therefore leaves the caller's tensors untouched, as a patched pyasc launcher does.

``run`` is also where the launch reaches the host's clock: the simulated device clock of
``asc.lib.runtime`` advances by the launch's simulated device time, and :class:`MsprofLauncher`
reports the launch to the (simulated) profiler, as pyasc's launcher reports to msprof.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from unittest import mock

from ascsim.asc.jit_options import LaunchOptions
from ascsim.asc.lib.runtime.profiling import CLOCK, NPU_UTILS
from ascsim.asc.lib.runtime.support import CORE_TYPE_OF_KIND, TASK_TYPE_OF_CORE_TYPE
from ascsim.session import SESSION

__all__ = ["LaunchOptions", "LaunchResult", "Launcher", "MsprofLauncher", "compile_only",
           "deliver"]



class MsprofLauncher:
    """Reports launches to the profiler: the device clock before a launch (``start``) and,
    after it, the kernel's name, block count and task type and the launch's begin and end
    (``process``). On the simulator the clock is the simulated device clock and the reports
    go to ``asc.lib.runtime.npu_utils()``; both do nothing while profiling is off
    (``asc.lib.runtime.set_pro_switch``). ``is_model`` is accepted as pyasc takes it; the
    simulated launches are reported on either backend."""

    def __init__(self, is_model_: bool = True):
        self.is_model = is_model_
        self.utils = NPU_UTILS
        self.start_time = 0

    def start(self) -> None:
        self.start_time = self.utils.msprof_sys_cycle_time()

    def process(self, kernel_name: str, block_num: int, task_type: int) -> None:
        time_stamp = self.utils.msprof_sys_cycle_time()
        self.utils.msprof_report_compact_info(time_stamp, kernel_name, block_num, task_type)
        end_time = self.utils.msprof_sys_cycle_time()
        self.utils.msprof_report_api(self.start_time, end_time, kernel_name)


@dataclass(frozen=True)
class LaunchResult:
    """A simulated launch whose results wait to be copied back (pyasc's compiled kernel)."""

    kernel_name: str
    block_num: int
    #: The launch's memory arguments (ascsim.asc.launcher.HostArgument): device copy + host value.
    memory_args: Sequence
    #: Simulated device time of the launch, and the kind of kernel (AIV_ONLY, AIC_ONLY, MIX).
    device_time_us: float = 0.0
    kind: str = "AIV_ONLY"

    def copy_back(self) -> None:
        for argument in self.memory_args:
            argument.copy_back()


class Launcher:
    """pyasc's launcher: ``run`` is called once per launch."""

    def __init__(self, options: LaunchOptions):
        self.options = options
        self.msprof = MsprofLauncher(SESSION.backend == "Model")

    @staticmethod
    def get_core_num(device_id: int | None = None) -> int:
        """AI Cores of the simulated SoC (pyasc asks the runtime for the AICORE count)."""
        return SESSION.soc.aic_count

    def run(self, kernel: LaunchResult, function_name: str, user_args: tuple) -> None:
        """Deliver the launch's results to the host tensors in ``user_args`` (nothing under
        ``DRY_RUN``, where pyasc's launcher returns before running the kernel)."""
        if os.environ.get("DRY_RUN"):
            return
        if not isinstance(kernel, LaunchResult):
            raise TypeError(f"Launcher.run expects the LaunchResult of a simulated launch, got "
                            f"{type(kernel).__name__}")
        self.msprof.start()
        CLOCK.advance(kernel.device_time_us)
        kernel.copy_back()
        task_type = TASK_TYPE_OF_CORE_TYPE[CORE_TYPE_OF_KIND[kernel.kind]]
        self.msprof.process(function_name, kernel.block_num, int(task_type))


def compile_only() -> bool:
    """Whether pyasc would only compile the next launch and never run it: its ``Launcher.run``
    is a ``unittest.mock`` object (what pyasc's unit tests patch in, so that no device is
    needed) or ``DRY_RUN`` is set (pyasc's launcher then returns before running)."""
    return bool(os.environ.get("DRY_RUN")) or isinstance(Launcher.__dict__.get("run"),
                                                         mock.NonCallableMock)


def deliver(kernel_name: str, block_num: int, memory_args: Sequence, user_args: dict,
            device_time_us: float = 0.0, kind: str = "AIV_ONLY") -> None:
    """The end of every launch: one ``Launcher.run`` call, looked up on the class at call time
    so that a patched ``asc.runtime.launcher.Launcher.run`` sees it."""
    result = LaunchResult(kernel_name, block_num, tuple(memory_args), device_time_us, kind)
    Launcher(LaunchOptions(block_num)).run(result, kernel_name, tuple(user_args.values()))
