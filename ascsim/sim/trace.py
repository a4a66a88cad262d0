"""Chrome / Perfetto trace of simulated launches: one track per pipe per core.

Open the JSON in https://ui.perfetto.dev or chrome://tracing. Launches follow one another on
the time axis; each launch is a process, each (core, pipe) a thread; set_flag/wait_flag pairs
are drawn as flow arrows.
"""

from __future__ import annotations

import json

from ascsim.sim.core import PIPES
from ascsim.sim.report import PIPE_LABELS
from ascsim.sim.source import format_location


def _track(core, pipe: str) -> int:
    return core.core_id * len(PIPES) + PIPES.index(pipe)


def trace_events(launches, reports) -> list[dict]:
    events: list[dict] = []
    offset_us = 0.0
    flow_id = 0
    for pid, (launch, report) in enumerate(zip(launches, reports), start=1):
        soc = launch.soc
        us = soc.cycles_to_us
        base = offset_us + report.launch_overhead_us
        events.append({"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": f"{report.kernel} ({soc.name}, {report.block_num} blocks)"}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid,
                       "args": {"sort_index": pid}})
        for core in launch.cores:
            used = {i.pipe for i in core.instrs} | ({"S"} if core.busy["S"] else set())
            for pipe in PIPES:
                if pipe not in used:
                    continue
                tid = _track(core, pipe)
                label = f"{core.kind}{core.block_idx} {PIPE_LABELS[pipe]}"
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                               "args": {"name": label}})
                events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                               "args": {"sort_index": tid}})
            for ins in core.instrs:
                events.append({
                    "ph": "X", "pid": pid, "tid": _track(core, ins.pipe), "name": ins.op,
                    "ts": base + us(ins.start), "dur": max(us(ins.done - ins.start), 1e-4),
                    "args": {"line": format_location(ins.loc),
                             "busy_cycles": round(ins.end - ins.start, 1),
                             "latency_cycles": round(ins.done - ins.end, 1),
                             **({"info": str(ins.info)} if ins.info is not None else {})},
                })
            for src, t_set, dst, t_wait, loc in core.flag_edges:
                flow_id += 1
                common = {"name": f"{src}_{dst}", "cat": "flag", "id": flow_id, "pid": pid}
                events.append({**common, "ph": "s", "tid": _track(core, src if src in PIPES
                                                                  else "S"),
                               "ts": base + us(t_set)})
                events.append({**common, "ph": "f", "bp": "e",
                               "tid": _track(core, dst if dst in PIPES else "S"),
                               "ts": base + us(t_wait), "args": {"line": format_location(loc)}})
        offset_us += report.device_time_us
    return events


def write_trace(path: str, launches, reports) -> int:
    """Write the trace; returns the number of events."""
    events = trace_events(launches, reports)
    with open(path, "w") as fh:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns"}, fh)
    return len(events)
