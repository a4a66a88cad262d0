"""``ascsim run --critical-path``: what sets each launch's device time, how long each wait held
its pipe, and which waits are redundant.

The path and the waits come from the machine (:mod:`ascsim.sim.critical_path`); this module
prints them and proves redundancy. A wait is *redundant* when it never delayed its pipe in any
execution, and the script run again without it (and without the ``set_flag`` calls that met
it) -- a re-simulation in a fresh process (:mod:`ascsim.resim`) -- exits the same, leaves the
same GM bytes after every launch and has no finding the first run did not have (no race, no
flag misuse, no deadlock). Only waits a user writes are candidates: ``wait_flag``,
``pipe_barrier``, cross-core waits and core barriers; the hand-offs of a library call (the
Matmul API's) are not.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from ascsim.resim import Change, Outcome, run_with, same_results
from ascsim.sim.critical_path import CriticalPath, WaitSite, critical_path, wait_sites
from ascsim.sim.source import format_location

#: Wait kinds (:data:`ascsim.sim.causes.WAIT_KINDS`) a user writes, and so may delete.
CANDIDATE_KINDS = frozenset({"wait_flag", "pipe_barrier", "cross-core wait", "core barrier"})
#: Longest kernel line shown whole in the tables; a longer path keeps its last two parts.
WHERE_CHARS = 36


def where(loc) -> str:
    """A kernel line for the tables: ``file:line`` relative to the working directory, or
    ``.../folder/file:line`` when that is long (an installed package's kernels)."""
    text = format_location(loc)
    if len(text) <= WHERE_CHARS:
        return text
    parts = text.replace(os.sep, "/").split("/")
    return ".../" + "/".join(parts[-2:])


#: Rows of a path's table before the rest are summed up in one.
PATH_ROWS = 12


@dataclass(frozen=True)
class Verdict:
    """The re-simulation of one never-blocking wait: ``redundant`` when the run without it
    came out the same; ``why`` says what differed otherwise, or why it was not tried (a
    ``set_flag`` it shares with another wait); ``time_us``: the script's device time without
    it (None if it was not run)."""

    site: WaitSite
    change: Change
    redundant: bool
    why: str
    time_us: float | None


def path_table(path: CriticalPath) -> Table:
    span = path.us(path.span_cycles)
    table = Table(title=f"critical path of {path.kernel} on {path.soc}: {path.total_us:.2f} µs "
                  f"= {path.overhead_us:.2f} launch + {span:.2f} along {len(path.segments)} "
                  "steps", title_justify="left", show_edge=False)
    for col in ("step", "core", "pipe", "what", "line", "times", "µs", "share"):
        table.add_column(col, justify="right" if col in ("times", "µs", "share") else "left",
                         no_wrap=col != "what", overflow="fold",
                         min_width=12 if col == "what" else None)
    rows = [(k, c, p, w, where(line_loc) if line_loc else "", n, us)
            for k, c, p, w, line_loc, n, us in path.summary_by_loc()]
    total = path.total_us or 1.0
    table.add_row("launch", "", "", "launch overhead", "", "1", f"{path.overhead_us:.3f}",
                  f"{path.overhead_us / total:.0%}")
    for kind, core, pipe, what, line, n, us in rows[:PATH_ROWS]:
        table.add_row(kind, core, pipe, what, line, str(n), f"{us:.3f}", f"{us / total:.0%}")
    rest = rows[PATH_ROWS:]
    if rest:
        us = sum(r[6] for r in rest)
        table.add_row("...", "", "", f"{len(rest)} more", "",
                      str(sum(r[5] for r in rest)), f"{us:.3f}", f"{us / total:.0%}")
    table.add_row("total", "", "", "", "", str(len(path.segments) + 1), f"{path.total_us:.3f}",
                  "100%")
    return table


#: Stretches of a path's chain shown at its start and at its end (the middle is elided).
CHAIN_ENDS = 8


def chain_table(path: CriticalPath) -> Table:
    """The path in time order, one row per stretch on one core's pipe: where it hands over."""
    stretches = path.stretches()
    table = Table(title="the chain, in time order (a row per stretch on one pipe)",
                  title_justify="left", show_edge=False)
    for col in ("from µs", "µs", "core", "pipe", "steps", "longest step"):
        table.add_column(col, justify="right" if col in ("from µs", "µs", "steps") else "left",
                         no_wrap=col != "longest step", overflow="fold")
    shown = stretches
    if len(stretches) > 2 * CHAIN_ENDS + 1:
        shown = stretches[:CHAIN_ENDS] + [None] + stretches[-CHAIN_ENDS:]
    for row in shown:
        if row is None:
            hidden = stretches[CHAIN_ENDS:-CHAIN_ENDS]
            table.add_row("...", f"{sum(r[1] for r in hidden):.3f}", "", "",
                          str(sum(r[4] for r in hidden)), f"{len(hidden)} more stretches")
            continue
        start, us, core, pipe, n, longest = row
        what = f"{longest.kind}: {longest.what}" + (
            f" ({where(longest.loc)})" if longest.loc else "")
        table.add_row(f"{path.overhead_us + start:.3f}", f"{us:.3f}", core, pipe, str(n), what)
    return table


def waits_table(sites) -> Table:
    table = Table(title="waits: how long each held its pipe (slack 0 = never waited)",
                  title_justify="left", show_edge=False)
    for col in ("line", "wait", "runs", "blocked", "blocked µs", "longest µs", "met by"):
        table.add_column(col, justify="right" if col in ("runs", "blocked", "blocked µs",
                                                         "longest µs") else "left",
                         no_wrap=col in ("runs", "blocked", "blocked µs", "longest µs"),
                         overflow="fold")
    for s in sites:
        table.add_row(where(s.loc), s.kind, str(s.count), str(s.blocked),
                      f"{s.stall_us:.3f}", f"{s.max_stall_us:.3f}",
                      ", ".join(where(x) for x in s.set_lines))
    return table


def drop_change(site: WaitSite) -> Change:
    """The change that deletes ``site`` from the source: the wait and the sets that met it."""
    lines = [site.loc, *site.set_lines]
    return Change("drop", tuple(dict.fromkeys((os.path.realpath(p), int(n)) for p, n in lines)))


def prove_redundant(sites, script: str, args, baseline: Outcome, console: Console | None = None,
                    timing_only: bool = False) -> list[Verdict]:
    """Re-simulate without each never-blocking candidate wait of ``sites``; one verdict each."""
    verdicts = []
    met_by: dict[tuple, list] = {}  # set line -> the waits it meets
    for site in sites:
        for line in site.set_lines:
            met_by.setdefault(line, []).append(site)
    for site in sites:
        if not site.never_blocked or site.kind not in CANDIDATE_KINDS:
            continue
        change = drop_change(site)
        shared = [(line, other) for line in site.set_lines for other in met_by[line]
                  if other is not site]
        if shared:
            line, other = shared[0]
            verdicts.append(Verdict(site, change, False,
                                    f"its set_flag at {where(line)} also meets the wait at "
                                    f"{where(other.loc)}", None))
            continue
        if console is not None:
            console.print(f"re-simulating {change.describe()} ...", highlight=False)
        outcome = run_with(script, args, change, timing_only=timing_only)
        same, why = same_results(baseline, outcome)
        verdicts.append(Verdict(site, change, same, why,
                                outcome.device_time_us if outcome.reports else None))
    return verdicts


def verdict_table(verdicts, baseline_us: float) -> Table:
    table = Table(title="waits that never blocked, run again without them (and the set_flag "
                  "lines that met them)",
                  title_justify="left", show_edge=False)
    for col in ("line", "wait", "verdict", "device µs", "why"):
        table.add_column(col, justify="right" if col == "device µs" else "left",
                         overflow="fold", no_wrap=col in ("verdict", "device µs"))
    for v in verdicts:
        time = "-" if v.time_us is None else f"{v.time_us:.2f}"
        verdict = "[green]redundant[/]" if v.redundant else \
            "needed" if v.time_us is not None else "not tried"
        table.add_row(where(v.site.loc), v.site.kind, verdict, time, v.why)
    table.caption = f"(the script's launches take {baseline_us:.2f} µs with every wait)"
    return table


def report_critical_paths(launches, reports, console: Console, script: str | None, args,
                          baseline: Outcome | None, timing_only: bool = False) -> None:
    """Print each launch's critical path, the waits, and the redundant syncs (re-simulating
    ``script`` when it is given: a module run under ``-m`` cannot be run again this way)."""
    for launch, report in zip(launches, reports):
        if not launch.cores:
            continue
        path = critical_path(launch, report)
        launch.critical_path = path  # the trace draws it
        console.print(path_table(path))
        console.print(chain_table(path))
        if path.inexact:
            console.print(f"({path.inexact} step(s) of the path end at a time no recorded "
                          "event produced exactly: the instruction running then stands in)",
                          highlight=False)
    sites = wait_sites(launches)
    if not sites:
        console.print("no waits ran", highlight=False)
        return
    console.print(waits_table(sites))
    candidates = [s for s in sites if s.never_blocked and s.kind in CANDIDATE_KINDS]
    if not candidates:
        console.print("redundant syncs: none (every wait a kernel writes blocked at least once)",
                      highlight=False)
        return
    if script is None or baseline is None:
        console.print(f"{len(candidates)} wait(s) never blocked; a module run (-m) is not "
                      "re-simulated, so none is proven redundant", highlight=False)
        return
    verdicts = prove_redundant(candidates, script, args, baseline, console, timing_only)
    console.print(verdict_table(verdicts, baseline.device_time_us))
    redundant = [v for v in verdicts if v.redundant]
    if redundant:
        console.print("redundant syncs: " + "; ".join(
            f"{v.site.kind} at {where(v.site.loc)}" for v in redundant),
            highlight=False, soft_wrap=True)
    else:
        console.print("redundant syncs: none", highlight=False)
