"""Profiling in ``asc.lib.runtime``: the device clock, the profiling switch and ``npu_utils``.

pyasc's launcher reports every launch to CANN's profiler (msprof): it reads the system cycle
counter before and after the launch, then reports the kernel's name, block count and task type
and the launch's begin and end. Here the counter is a simulated device clock that advances by
each delivered launch's simulated device time (in cycles of the simulated SoC's clock), and the
reports are kept as records a script can read back (:meth:`NpuUtils.records`). As with msprof,
nothing is reported until ``set_pro_switch(START)`` turns task-time profiling on (level 0 or
level 1, by the bits of ``conf``), and ``STOP`` turns it off again; while it is off the cycle
counter reads 0 and a report returns 1 (not recorded).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ascsim.asc.lib.runtime.support import (
    PROF_TASK_TIME_L0,
    PROF_TASK_TIME_L1,
    ProfilingCommandHandle,
)
from ascsim.session import SESSION

#: ACL return codes of acl_init/acl_finalize (CANN's acl_base.h).
ACL_SUCCESS = 0
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_REPEAT_FINALIZE = 100037
#: What a profiler report returns when profiling is off (msprof's "not recorded").
NOT_RECORDED = 1


class DeviceClock:
    """Simulated device cycles since the process started: each delivered launch adds its
    simulated device time."""

    def __init__(self) -> None:
        self._cycles = 0
        self._lock = threading.Lock()

    @property
    def cycles(self) -> int:
        return self._cycles

    def advance(self, device_time_us: float) -> None:
        with self._lock:
            self._cycles += int(round(SESSION.soc.us_to_cycles(device_time_us)))


@dataclass(frozen=True)
class ApiRecord:
    """A launch's begin and end on the device clock (``msprof_report_api``)."""

    name: str
    begin_cycle: int
    end_cycle: int

    @property
    def cycles(self) -> int:
        return self.end_cycle - self.begin_cycle


@dataclass(frozen=True)
class CompactRecord:
    """A launch's kernel, block count and task type (``msprof_report_compact_info``)."""

    name: str
    time_stamp: int
    block_num: int
    task_type: int


@dataclass(frozen=True)
class AdditionalRecord:
    """A kernel's tensor-info report (``msprof_report_additional_info``)."""

    name: str
    time_stamp: int


class NpuUtils:
    """The simulated ``npu_utils`` module: ACL start/stop, the cycle counter, the reports."""

    def __init__(self, clock: DeviceClock) -> None:
        self._clock = clock
        self._acl_initialized = False
        self.level0 = False
        self.level1 = False
        self._records: list = []

    # -- ACL ------------------------------------------------------------------------------
    def acl_init(self) -> int:
        if self._acl_initialized:
            return ACL_ERROR_REPEAT_INITIALIZE
        self._acl_initialized = True
        return ACL_SUCCESS

    def acl_finalize(self) -> int:
        if not self._acl_initialized:
            return ACL_ERROR_REPEAT_FINALIZE
        self._acl_initialized = False
        return ACL_SUCCESS

    # -- profiling switch -----------------------------------------------------------------
    def switch(self, command: ProfilingCommandHandle) -> None:
        """Apply a profiling command: START turns on the task-time levels whose bits are in
        ``profSwitch``; STOP turns both off; the other commands change nothing here."""
        kind = ProfilingCommandHandle.Type(command.type)
        if kind == ProfilingCommandHandle.Type.START:
            self.level0 = self.level0 or bool(command.profSwitch & PROF_TASK_TIME_L0)
            self.level1 = self.level1 or bool(command.profSwitch & PROF_TASK_TIME_L1)
        elif kind == ProfilingCommandHandle.Type.STOP:
            self.level0 = self.level1 = False

    @property
    def profiling(self) -> bool:
        return self.level0 or self.level1

    # -- msprof -----------------------------------------------------------------------------
    def msprof_sys_cycle_time(self) -> int:
        """The simulated device clock in cycles (0 while profiling is off, as msprof)."""
        return self._clock.cycles if self.profiling else 0

    def msprof_report_api(self, start: int, end: int, name: str) -> int:
        if not self.profiling:
            return NOT_RECORDED
        if end < start:
            raise ValueError(f"msprof_report_api({name!r}): end {end} is before start {start}")
        self._records.append(ApiRecord(str(name), int(start), int(end)))
        return ACL_SUCCESS

    def msprof_report_compact_info(self, time_stamp: int, name: str, block_num: int,
                                   task_type: int) -> int:
        if not self.level1:
            return NOT_RECORDED
        self._records.append(CompactRecord(str(name), int(time_stamp), int(block_num),
                                           int(task_type)))
        return ACL_SUCCESS

    def msprof_report_additional_info(self, time_stamp: int, name: str) -> int:
        if not self.level1:
            return NOT_RECORDED
        self._records.append(AdditionalRecord(str(name), int(time_stamp)))
        return ACL_SUCCESS

    def records(self) -> tuple:
        """Everything reported so far, in order."""
        return tuple(self._records)

    def clear_records(self) -> None:
        self._records.clear()


CLOCK = DeviceClock()
NPU_UTILS = NpuUtils(CLOCK)
