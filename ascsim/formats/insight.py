"""The op simulator's ``trace.json`` of one launch, for MindStudio Insight's timeline.

The op simulator writes its instruction pipeline chart as a Chrome trace-event JSON file
(``simulator/trace.json``), which MindStudio Insight opens; this writes one of the same
shape from a simulated launch. Its lanes follow the op simulator's naming: one process per core,
named like the core's directory (``core0.cubecore0``, ``core0.veccore1``), and in it one thread
per pipe, named by the pipe (``SCALAR``, ``VECTOR``, ``CUBE``, ``MTE1``, ``MTE2``, ``MTE3``,
``FIXPIPE``). Each instruction is a complete event (``ph: "X"``) with its kernel line, busy and
latency cycles in ``args``; times are µs from the launch's start (the launch overhead first,
as in ascsim's own trace). The vendor publishes the file's role but not its lane list: the pipe
thread names are ascsim's choice (see docs/profile.md).
"""

from __future__ import annotations

import json

from ascsim.formats.cores import vendor_core
from ascsim.sim.core import PIPES
from ascsim.sim.source import format_location

#: Thread name of each pipe (the op simulator's instr_exe ``pipe`` names too).
PIPE_LANES = {"S": "SCALAR", "V": "VECTOR", "M": "CUBE", "MTE1": "MTE1", "MTE2": "MTE2",
              "MTE3": "MTE3", "FIX": "FIXPIPE"}


def insight_events(launch, report) -> list[dict]:
    """The trace events of one launch: process and thread names, then the instructions."""
    us = launch.soc.cycles_to_us
    base = report.launch_overhead_us
    events: list[dict] = []
    for pid, core in enumerate(launch.cores, start=1):
        name = vendor_core(launch.kind, core.kind, core.block_idx).directory
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": name}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                       "args": {"sort_index": pid}})
        used = {ins.pipe for ins in core.instrs}
        for tid, pipe in enumerate(PIPES):
            if pipe not in used:
                continue
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": PIPE_LANES[pipe]}})
        for ins in core.instrs:
            events.append({
                "ph": "X", "name": ins.op, "pid": pid, "tid": PIPES.index(ins.pipe),
                "ts": base + us(ins.start), "dur": max(us(ins.done - ins.start), 1e-4),
                "args": {"code": format_location(ins.loc) if ins.loc else "",
                         "busy_cycles": round(ins.end - ins.start, 1),
                         "latency_cycles": round(ins.done - ins.end, 1)},
            })
    return events


def write_insight_trace(path: str, launch, report) -> int:
    """Write the launch's trace to ``path``; returns the number of events."""
    events = insight_events(launch, report)
    with open(path, "w") as fh:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns"}, fh)
    return len(events)
