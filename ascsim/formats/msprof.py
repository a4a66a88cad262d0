"""msprof's CSV files, written from ascsim's launch reports (``ascsim run --msprof DIR``).

What is written, per script run into ``DIR`` (sources of every column name: docs/profile.md):

- ``op_summary.csv``: one row per launch, msprof's operator summary (``Op Name``, ``OP Type``,
  ``Task Type``, ``Task Duration(us)``, ``Block Dim``, ``Mix Block Dim`` and the AI Core /
  AI Vector Core pipe columns of the PipeUtilization metric set);
- per launch, a folder ``OPPROF_<nn>_<kernel>`` as ``msprof op`` writes one:
  ``OpBasicInfo.csv``, ``PipeUtilization.csv`` (one row per core), and under ``simulator/``
  the op simulator's per-core hotspot tables ``core*/core*_code_exe.csv`` (per source line)
  and ``core*/core*_instr_exe.csv`` (per instruction) and its ``trace.json`` timeline
  (:mod:`ascsim.formats.insight`).

Choices, the same in every file: a column whose value a simulator cannot know (hardware
counters ascsim does not model: icache miss rates, bank conflicts; PC addresses; the device's
process ids and timestamps) is left out rather than filled with a made-up number. ``N/A`` is
written only where the vendor writes it too: ``Mix Block Dim`` of a launch that is not MIX, and
the columns of the other core kind in a MIX launch's per-core rows. Times are µs, ratios are
fractions of the core's (or kind's) time, both rounded to 4 decimals; cycles are whole cycles of
the SoC's clock.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Sequence

from ascsim.formats.cores import vendor_core
from ascsim.formats.insight import write_insight_trace
from ascsim.hw import get_soc
from ascsim.sim.profile import instr_transfer
from ascsim.sim.report import KernelReport
from ascsim.sim.source import format_location

NA = "N/A"

#: msprof's Task Type for each launch kind (op_summary: AI_CORE, AI_VECTOR_CORE, MIX_AIC).
TASK_TYPE = {"AIV_ONLY": "AI_VECTOR_CORE", "AIC_ONLY": "AI_CORE", "MIX": "MIX_AIC"}

#: AIV blocks per block of a MIX launch (MIX_AIC_1_2: 1 AIC + 2 AIV): ``Mix Block Dim``.
MIX_AIV_PER_BLOCK = 2

#: The pipe columns of each core kind: (column stem, ascsim pipe). The stems are the
#: PipeUtilization metric names (op_summary calls the cube's ``mac``; PipeUtilization.csv
#: ``cube``); AIC rows also have MTE3 in PipeUtilization.csv.
OP_SUMMARY_PIPES = {
    "AIC": (("mac", "M"), ("scalar", "S"), ("mte1", "MTE1"), ("mte2", "MTE2"),
            ("fixpipe", "FIX")),
    "AIV": (("vec", "V"), ("scalar", "S"), ("mte2", "MTE2"), ("mte3", "MTE3")),
}
PIPE_UTILIZATION_PIPES = {
    "AIC": (("cube", "M"), ("scalar", "S"), ("mte1", "MTE1"), ("mte2", "MTE2"),
            ("mte3", "MTE3"), ("fixpipe", "FIX")),
    "AIV": (("vec", "V"), ("scalar", "S"), ("mte2", "MTE2"), ("mte3", "MTE3")),
}
KIND_PREFIX = {"AIC": "aic", "AIV": "aiv"}
#: op_summary names the AIC's own time ``aicore_time(us)`` (the AIV's is ``aiv_time(us)``);
#: PipeUtilization.csv names it ``aic_time(us)``.
OP_SUMMARY_TIME = {"AIC": "aicore_time(us)", "AIV": "aiv_time(us)"}

OP_SUMMARY_HEAD = ("Device_id", "Task ID", "Op Name", "OP Type", "Task Type",
                   "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)",
                   "Block Dim", "Mix Block Dim")
OP_BASIC_INFO = ("Op Name", "Op Type", "Task Duration(us)", "Block Dim", "Mix Block Dim",
                 "Device ID", "Current Freq", "Rated Freq")
CODE_EXE = ("code", "call_count", "cycles", "running_time(us)")
INSTR_EXE = ("instr", "pipe", "call_count", "cycles", "running_time(us)", "detail")

#: The op simulator's pipe names in instr_exe.csv's ``pipe`` column.
PIPE_NAMES = {"S": "SCALAR", "V": "VECTOR", "M": "CUBE", "MTE1": "MTE1", "MTE2": "MTE2",
              "MTE3": "MTE3", "FIX": "FIXPIPE"}


def _us(value: float) -> float:
    return round(float(value), 4)


def _kinds(report: KernelReport) -> tuple[str, ...]:
    """The core kinds a launch ran, AIC first (the vendor's column order)."""
    present = {c.kind for c in report.cores}
    return tuple(k for k in ("AIC", "AIV") if k in present)


def _pipe_columns(prefix: str, pipes, time_column: str | None = None) -> list[str]:
    cols = [time_column or f"{prefix}_time(us)", f"{prefix}_total_cycles"]
    for stem, _ in pipes:
        cols += [f"{prefix}_{stem}_time(us)", f"{prefix}_{stem}_ratio"]
    return cols


def _pipe_values(time_us: float, busy: dict, pipes, clock_mhz: float) -> list:
    values = [_us(time_us), round(time_us * clock_mhz)]
    for _, pipe in pipes:
        t = busy.get(pipe, 0.0)
        values += [_us(t), _us(t / time_us if time_us > 0 else 0.0)]
    return values


# ---------------------------------------------------------------------- op_summary.csv
def op_summary_columns(reports: Sequence[KernelReport]) -> list[str]:
    """The header: msprof's task columns, then the pipe columns of every kind that ran."""
    kinds = {k for r in reports for k in _kinds(r)}
    cols = list(OP_SUMMARY_HEAD)
    for kind in ("AIC", "AIV"):
        if kind in kinds:
            cols += _pipe_columns(KIND_PREFIX[kind], OP_SUMMARY_PIPES[kind],
                                  OP_SUMMARY_TIME[kind])
    return cols


def _kind_means(report: KernelReport, kind: str) -> tuple[float, dict]:
    """Mean core time and mean busy time per pipe over the cores of ``kind``."""
    cores = [c for c in report.cores if c.kind == kind]
    n = len(cores)
    busy: dict[str, float] = {}
    for c in cores:
        for pipe, t in c.pipe_busy_us.items():
            busy[pipe] = busy.get(pipe, 0.0) + t / n
    return sum(c.time_us for c in cores) / n, busy


def op_summary_rows(reports: Sequence[KernelReport]) -> list[dict]:
    """One row per launch. The pipe columns of a kind are means over that kind's cores; a
    launch without cores of a kind writes N/A there. Launches follow one another on the
    simulated stream, so a task starts where the one before it ended and waits 0 µs."""
    cols = op_summary_columns(reports)
    rows = []
    start = 0.0
    for task_id, report in enumerate(reports):
        clock = get_soc(report.soc).clock_mhz
        row = dict.fromkeys(cols, NA)
        mix = report.kernel_type == "MIX"
        row.update({
            "Device_id": 0, "Task ID": task_id, "Op Name": report.kernel,
            "OP Type": report.kernel, "Task Type": TASK_TYPE[report.kernel_type],
            "Task Start Time(us)": _us(start), "Task Duration(us)": _us(report.device_time_us),
            "Task Wait Time(us)": 0, "Block Dim": report.block_num,
            "Mix Block Dim": report.block_num * MIX_AIV_PER_BLOCK if mix else NA,
        })
        for kind in _kinds(report):
            pipes = OP_SUMMARY_PIPES[kind]
            time_us, busy = _kind_means(report, kind)
            names = _pipe_columns(KIND_PREFIX[kind], pipes, OP_SUMMARY_TIME[kind])
            row.update(zip(names, _pipe_values(time_us, busy, pipes, clock)))
        rows.append(row)
        start += report.device_time_us
    return rows


# ---------------------------------------------------------------------- per launch
def op_basic_info_row(report: KernelReport) -> dict:
    soc = get_soc(report.soc)
    mix = report.kernel_type == "MIX"
    return {"Op Name": report.kernel, "Op Type": TASK_TYPE[report.kernel_type],
            "Task Duration(us)": _us(report.device_time_us), "Block Dim": report.block_num,
            "Mix Block Dim": report.block_num * MIX_AIV_PER_BLOCK if mix else NA,
            "Device ID": 0, "Current Freq": round(soc.clock_mhz),
            "Rated Freq": round(soc.clock_mhz)}


def pipe_utilization_columns(report: KernelReport) -> list[str]:
    cols = ["block_id", "sub_block_id"]
    for kind in _kinds(report):
        cols += _pipe_columns(KIND_PREFIX[kind], PIPE_UTILIZATION_PIPES[kind])
    return cols


def pipe_utilization_rows(report: KernelReport) -> list[dict]:
    """One row per core, in block order (AIC before its AIVs): its time from its start to its
    end and each pipe's busy time and share of it; the other kind's columns are N/A."""
    cols = pipe_utilization_columns(report)
    clock = get_soc(report.soc).clock_mhz
    rows = []
    for core in report.cores:
        name = vendor_core(report.kernel_type, core.kind, core.block_idx)
        row = dict.fromkeys(cols, NA)
        row["block_id"], row["sub_block_id"] = name.block_id, name.sub_block_id
        pipes = PIPE_UTILIZATION_PIPES[core.kind]
        names = _pipe_columns(KIND_PREFIX[core.kind], pipes)
        row.update(zip(names, _pipe_values(core.time_us, core.pipe_busy_us, pipes, clock)))
        rows.append((name.block_id, name.kind != "AIC", name.sub, row))
    return [row for *_, row in sorted(rows, key=lambda r: r[:3])]


def _instruction_detail(ins) -> str:
    moved = instr_transfer(ins)
    where = format_location(ins.loc) if ins.loc else ""
    return where if moved is None else f"{where} {moved[0]} {moved[1]} B".strip()


def hotspot_rows(core, clock_mhz: float) -> tuple[list[dict], list[dict]]:
    """(code_exe rows, instr_exe rows) of one simulated core, hottest first.

    code_exe: per kernel source line, the instructions it issued (``call_count``), their
    cycles summed (``cycles``: each one from its start on its pipe until its result is ready,
    as its slice in the trace; instructions that overlap on a pipe each count in full, so a
    line's cycles can exceed its pipe's busy time) and that in µs.
    instr_exe: the same per instruction kind, pipe and line (the simulator has no PC address:
    ``detail`` names the line, and for a copy its path and bytes). Scalar issue work that is
    no instruction of its own (address arithmetic, loop control) is in neither table.
    """
    lines: dict[str, list] = {}
    instrs: dict[tuple, list] = {}
    for ins in core.instrs:
        cycles = ins.done - ins.start
        code = format_location(ins.loc) if ins.loc else "?"
        entry = lines.setdefault(code, [0, 0.0])
        entry[0] += 1
        entry[1] += cycles
        key = (ins.op, ins.pipe, _instruction_detail(ins))
        entry = instrs.setdefault(key, [0, 0.0])
        entry[0] += 1
        entry[1] += cycles

    def row(n: int, cycles: float) -> dict:
        return {"call_count": n, "cycles": round(cycles),
                "running_time(us)": _us(cycles / clock_mhz)}

    code_rows = [{"code": code, **row(*v)} for code, v in
                 sorted(lines.items(), key=lambda kv: -kv[1][1])]
    instr_rows = [{"instr": op, "pipe": PIPE_NAMES.get(pipe, pipe), **row(*v), "detail": detail}
                  for (op, pipe, detail), v in sorted(instrs.items(), key=lambda kv: -kv[1][1])]
    return code_rows, instr_rows


# ---------------------------------------------------------------------- writing
def _write_csv(path: str, columns: Sequence[str], rows: Sequence[dict]) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)


def launch_folder(index: int, report: KernelReport) -> str:
    """``OPPROF_<nn>_<kernel>``: the folder of one launch (the vendor names it by timestamp;
    a launch number keeps a run's folders in order and the same from run to run)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", report.kernel)
    return f"OPPROF_{index:02d}_{safe}"


def write_msprof(directory: str, launches: Sequence, reports: Sequence[KernelReport]) -> list[str]:
    """Write every file of the module docstring into ``directory`` (made if missing); returns
    the paths written. ``launches`` are the kept launches of ``reports`` (their instructions
    give the hotspot tables and the timeline); with none kept, only the CSVs of the reports
    are written."""
    os.makedirs(directory, exist_ok=True)
    written = []
    path = os.path.join(directory, "op_summary.csv")
    _write_csv(path, op_summary_columns(reports), op_summary_rows(reports))
    written.append(path)
    for index, report in enumerate(reports):
        folder = os.path.join(directory, launch_folder(index, report))
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "OpBasicInfo.csv")
        _write_csv(path, OP_BASIC_INFO, [op_basic_info_row(report)])
        written.append(path)
        path = os.path.join(folder, "PipeUtilization.csv")
        _write_csv(path, pipe_utilization_columns(report), pipe_utilization_rows(report))
        written.append(path)
        if index >= len(launches):
            continue
        launch = launches[index]
        simulator = os.path.join(folder, "simulator")
        clock = launch.soc.clock_mhz
        for core in launch.cores:
            name = vendor_core(launch.kind, core.kind, core.block_idx).directory
            core_dir = os.path.join(simulator, name)
            os.makedirs(core_dir, exist_ok=True)
            code_rows, instr_rows = hotspot_rows(core, clock)
            for suffix, columns, rows in (("code_exe", CODE_EXE, code_rows),
                                          ("instr_exe", INSTR_EXE, instr_rows)):
                path = os.path.join(core_dir, f"{name}_{suffix}.csv")
                _write_csv(path, columns, rows)
                written.append(path)
        path = os.path.join(simulator, "trace.json")
        write_insight_trace(path, launch, report)
        written.append(path)
    return written
