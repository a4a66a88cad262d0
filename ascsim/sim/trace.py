"""Chrome / Perfetto trace of simulated launches: one track per pipe per core.

Open the JSON in https://ui.perfetto.dev or chrome://tracing. Launches follow one another on
the time axis; each launch is a process, each (core, pipe) a thread; set_flag/wait_flag pairs
and cross-core hand-offs (``Launch.cross_edges``) are drawn as flow arrows, and counter tracks
show the GM bandwidth (GB/s) each core and the whole chip are using over time.
"""

from __future__ import annotations

import json

from ascsim.sim.core import PIPES
from ascsim.sim.profile import instr_transfer
from ascsim.sim.report import PIPE_LABELS
from ascsim.sim.source import format_location


def _record_args(ins) -> dict:
    """What the trace shows of an instruction's record: the path and bytes of a transfer."""
    moved = instr_transfer(ins)
    return {} if moved is None else {"path": moved[0], "bytes": moved[1]}


def track_of(core, pipe: str) -> int:
    """The trace thread of ``core``'s ``pipe``."""
    return core.core_id * len(PIPES) + PIPES.index(pipe if pipe in PIPES else "S")


_track = track_of


def _sweep(intervals) -> list[tuple[float, float]]:
    """(time, total rate) at every change of the sum of ``(start, end, rate)`` intervals."""
    changes: dict[float, float] = {}
    for start, end, rate in intervals:
        changes[start] = changes.get(start, 0.0) + rate
        changes[end] = changes.get(end, 0.0) - rate
    level, shown, out = 0.0, None, []
    for t in sorted(changes):
        level += changes[t]
        value = level if level > 1e-9 else 0.0  # float residue of +r then -r is not traffic
        if value != shown:
            out.append((t, value))
            shown = value
    return out


def gm_counter_events(launch, pid: int, base: float) -> list[dict]:
    """Counter tracks (ph "C") of the GM bandwidth in use: one per physical core, one chip-wide.

    A GM transfer counts at bytes / (its busy time) while its pipe moves it.
    """
    us = launch.soc.cycles_to_us
    per_core: dict[tuple[str, int], list] = {}
    for core in launch.cores:
        key = (core.kind, getattr(core, "physical", core.core_id))
        spans = per_core.setdefault(key, [])
        for ins in core.instrs:
            moved = instr_transfer(ins)
            if moved is None or "GM" not in moved[0].split("->") or ins.end <= ins.start:
                continue
            # bytes per µs / 1e3 = GB/s
            spans.append((ins.start, ins.end, moved[1] / us(ins.end - ins.start) / 1e3))
    events: list[dict] = []
    ordinal: dict[str, int] = {}
    for (kind, _), spans in per_core.items():
        n = ordinal[kind] = ordinal.get(kind, -1) + 1
        if spans:
            name = f"{kind}{n} GM GB/s"
            events.extend({"ph": "C", "name": name, "pid": pid, "tid": 0, "ts": base + us(t),
                           "args": {"GB/s": round(v, 3)}} for t, v in _sweep(spans))
    chip = [s for spans in per_core.values() for s in spans]
    events.extend({"ph": "C", "name": "chip GM GB/s", "pid": pid, "tid": 0, "ts": base + us(t),
                   "args": {"GB/s": round(v, 3)}} for t, v in _sweep(chip))
    return events


def trace_events(launches, reports) -> list[dict]:
    events: list[dict] = []
    offset_us = 0.0
    flow_id = 0
    for pid, (launch, report) in enumerate(zip(launches, reports), start=1):
        soc = launch.soc
        us = soc.cycles_to_us
        base = offset_us + report.launch_overhead_us
        title = f"{report.kernel} ({soc.name}, {report.block_num} blocks)"
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
                       "args": {"name": title}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "ts": 0,
                       "args": {"sort_index": pid}})
        cross = getattr(launch, "cross_edges", ())
        path = getattr(launch, "critical_path", None)  # set by ascsim run --critical-path
        if path is not None:
            from ascsim.sim.critical_path import on_path

            critical = on_path(path)
        for core in launch.cores:
            used = {i.pipe for i in core.instrs} | ({"S"} if core.busy["S"] else set())
            # Flow arrows end on these tracks too: name them even when they hold no slice.
            used |= {p for e in core.flag_edges for p in (e[0], e[2]) if p in PIPES}
            used |= {e[1] for e in cross if e[0] == core.core_id and e[1] in PIPES}
            used |= {e[4] for e in cross if e[3] == core.core_id and e[4] in PIPES}
            for pipe in PIPES:
                if pipe not in used:
                    continue
                tid = _track(core, pipe)
                label = f"{core.kind}{core.block_idx} {PIPE_LABELS[pipe]}"
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0,
                               "args": {"name": label}})
                events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                               "ts": 0, "args": {"sort_index": tid}})
            label = f"{core.kind}{core.block_idx}"
            for ins in core.instrs:
                events.append({
                    "ph": "X", "pid": pid, "tid": _track(core, ins.pipe), "name": ins.op,
                    "ts": base + us(ins.start), "dur": max(us(ins.done - ins.start), 1e-4),
                    "args": {"line": format_location(ins.loc),
                             "busy_cycles": round(ins.end - ins.start, 1),
                             "latency_cycles": round(ins.done - ins.end, 1),
                             **_record_args(ins)},
                })
                if path is not None and (label, ins.pipe, ins.start) in critical:
                    # On the critical path: an argument to search for, and chrome://tracing's
                    # reserved colour for it.
                    events[-1]["args"]["critical_path"] = True
                    events[-1]["cname"] = "terrible"
            for src, t_set, dst, t_wait, loc in core.flag_edges:
                flow_id += 1
                common = {"name": f"{src}_{dst}", "cat": "flag", "id": flow_id, "pid": pid}
                events.append({**common, "ph": "s", "tid": _track(core, src if src in PIPES
                                                                  else "S"),
                               "ts": base + us(t_set)})
                events.append({**common, "ph": "f", "bp": "e",
                               "tid": _track(core, dst if dst in PIPES else "S"),
                               "ts": base + us(t_wait), "args": {"line": format_location(loc)}})
        cores = launch.cores
        for src_id, src, t_set, dst_id, dst, t_wait, loc in cross:
            flow_id += 1
            common = {"name": f"cross-core {src}->{dst}", "cat": "cross-core", "id": flow_id,
                      "pid": pid}
            events.append({**common, "ph": "s", "ts": base + us(t_set),
                           "tid": _track(cores[src_id], src if src in PIPES else "S")})
            events.append({**common, "ph": "f", "bp": "e", "ts": base + us(t_wait),
                           "tid": _track(cores[dst_id], dst if dst in PIPES else "S"),
                           "args": {"line": format_location(loc) if loc else ""}})
        events.extend(gm_counter_events(launch, pid, base))
        if path is not None:
            from ascsim.sim.critical_path import trace_events as path_events

            arrows = path_events(path, launch, pid, base, flow_id)
            flow_id += len(arrows) // 2
            events.extend(arrows)
        offset_us += report.device_time_us
    return events


def write_trace(path: str, launches, reports) -> int:
    """Write the trace; returns the number of events."""
    events = trace_events(launches, reports)
    with open(path, "w") as fh:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns"}, fh)
    return len(events)
