"""``torch_npu.profiler`` inside ``ascsim run``: the simulated launches as profiler output.

A script profiles NPU work with ``torch_npu.profiler.profile(...)`` (a context manager with an
optional step ``schedule`` and an ``on_trace_ready`` handler, usually
``tensorboard_trace_handler(dir)``). Here the kernels launched while the profiler records are
the simulator's: their reports (times per kernel and per core) and their instruction timelines.
The handler writes, under ``dir/<worker>_<time>_ascend_pt/ASCEND_PROFILER_OUTPUT/`` (the layout
CANN's profiler uses):

- ``kernel_details.csv``: one row per kernel launch (name, type, core kind, start and duration
  in µs, block count, the busiest core's pipe times);
- ``trace_view.json``: the launches' per-pipe timelines as a Chrome trace (the same events
  ``ascsim run --trace`` writes).

The options that select what a real profiler collects (activities, experimental config,
levels, metrics) are accepted and change nothing: the simulator records everything it has.
"""

from __future__ import annotations

import csv
import os
import socket
import time
import types
from enum import Enum

from ascsim.session import SESSION


class ProfilerActivity(Enum):
    CPU = "CPU"
    NPU = "NPU"


class ProfilerAction(Enum):
    """What a step of a schedule does."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class ExportType(Enum):
    Text = "text"
    Db = "db"


class ProfilerLevel(Enum):
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics(Enum):
    AiCoreNone = "AiCoreNone"
    PipeUtilization = "PipeUtilization"
    ArithmeticUtilization = "ArithmeticUtilization"
    Memory = "Memory"
    MemoryL0 = "MemoryL0"
    MemoryUB = "MemoryUB"
    ResourceConflictRatio = "ResourceConflictRatio"
    L2Cache = "L2Cache"


class _ExperimentalConfig:
    """``torch_npu.profiler._ExperimentalConfig(...)``: collection settings (kept, unused)."""

    def __init__(self, **settings):
        self.settings = settings


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0):
    """``torch_npu.profiler.schedule``: step number -> :class:`ProfilerAction`. After
    ``skip_first`` steps, cycles of ``wait`` idle, ``warmup`` and ``active`` recording steps
    (the last one saves), ``repeat`` times (0: for ever)."""
    for name, value in (("wait", wait), ("warmup", warmup), ("active", active),
                        ("repeat", repeat), ("skip_first", skip_first)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"profiler schedule: {name} must be an int >= 0, got {value!r}")
    if active < 1:
        raise ValueError("profiler schedule: active must be at least 1")
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if at == cycle - 1 else ProfilerAction.RECORD

    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class profile:  # noqa: N801 - torch_npu's name
    """``torch_npu.profiler.profile(...)``: records the simulated launches of the recording
    steps and hands them to ``on_trace_ready``."""

    def __init__(self, activities=None, *, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, **ignored):
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.reports: list = []
        self.launches: list = []
        self._collect = None
        self._collection = None
        self._running = False

    # -- recording
    def _recording(self) -> bool:
        return self.schedule(self.step_num) in (ProfilerAction.RECORD,
                                                 ProfilerAction.RECORD_AND_SAVE)

    def _open(self) -> None:
        if self._collect is None:
            self._collect = SESSION.collect(launches=True)
            self._collection = self._collect.__enter__()

    def _close(self) -> None:
        if self._collect is not None:
            self.reports.extend(self._collection.reports)
            self.launches.extend(self._collection.launches)
            self._collect.__exit__(None, None, None)
            self._collect = self._collection = None

    def _save(self) -> None:
        self._close()
        if self.on_trace_ready is not None and self.reports:
            self.on_trace_ready(self)
        self.reports, self.launches = [], []

    def start(self) -> None:
        self._running = True
        if self._recording():
            self._open()

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        if self._collect is not None:
            self._save()

    def step(self) -> None:
        """End the current step: save when it was the last recording step of a cycle."""
        action = self.schedule(self.step_num)
        if action == ProfilerAction.RECORD_AND_SAVE:
            self._save()
        elif action not in (ProfilerAction.RECORD,):
            self._close()
        self.step_num += 1
        if self._running and self._recording():
            self._open()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False

    # -- output
    def export_chrome_trace(self, path: str) -> None:
        from ascsim.sim.trace import write_trace

        write_trace(path, self.launches, self.reports)


CORE_TYPES = {"AIV_ONLY": "AI_VECTOR_CORE", "AIC_ONLY": "AI_CORE", "MIX": "MIX_AIC"}
DETAIL_COLUMNS = ("Step Id", "Device_id", "Name", "Type", "Accelerator Core", "Start Time(us)",
                  "Duration(us)", "Block Dim", "Scalar(us)", "Vector(us)", "Cube(us)",
                  "MTE1(us)", "MTE2(us)", "MTE3(us)", "FIX(us)")
PIPE_COLUMNS = {"S": "Scalar(us)", "V": "Vector(us)", "M": "Cube(us)", "MTE1": "MTE1(us)",
                "MTE2": "MTE2(us)", "MTE3": "MTE3(us)", "FIX": "FIX(us)"}


def _write_details(path: str, prof: profile) -> None:
    start = 0.0
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, DETAIL_COLUMNS)
        writer.writeheader()
        for report in prof.reports:
            row = {"Step Id": prof.step_num, "Device_id": 0, "Name": report.kernel,
                   "Type": report.kernel, "Accelerator Core": CORE_TYPES.get(
                       report.kernel_type, report.kernel_type),
                   "Start Time(us)": f"{start:.3f}",
                   "Duration(us)": f"{report.device_time_us:.3f}",
                   "Block Dim": report.block_num}
            for pipe, t in report.pipe_busy_us().items():
                if pipe in PIPE_COLUMNS:
                    row[PIPE_COLUMNS[pipe]] = f"{t:.3f}"
            writer.writerow(row)
            start += report.device_time_us


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              analyse_flag: bool = True, **ignored):
    """``torch_npu.profiler.tensorboard_trace_handler``: a handler writing the recorded
    launches under ``dir_name`` (see the module docstring)."""
    def handler(prof: profile) -> None:
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        stamp = time.strftime("%Y%m%d%H%M%S") + f"{int(time.time() * 1000) % 1000:03d}"
        out = os.path.join(dir_name, f"{worker}_{stamp}_ascend_pt", "ASCEND_PROFILER_OUTPUT")
        os.makedirs(out, exist_ok=True)
        _write_details(os.path.join(out, "kernel_details.csv"), prof)
        prof.export_chrome_trace(os.path.join(out, "trace_view.json"))

    return handler


def build_module() -> types.ModuleType:
    """The ``torch_npu.profiler`` module of the stand-in."""
    module = types.ModuleType("torch_npu.profiler", __doc__)
    for obj in (ProfilerActivity, ProfilerAction, ExportType, ProfilerLevel, AiCMetrics,
                _ExperimentalConfig, schedule, profile, tensorboard_trace_handler):
        setattr(module, obj.__name__, obj)
    module.supported_activities = lambda: [ProfilerActivity.CPU, ProfilerActivity.NPU]
    return module
