"""``ascsim run --what-if CHANGE``: the script run again with one change, and what it buys.

The script runs as usual (the baseline), then once more with the change in a fresh process
(:func:`ascsim.resim.run_with`); per launch, paired by kernel name and occurrence, the table
shows the two device times and their difference, whether the launch left the same GM bytes
behind, and the findings present on one side only. The changes are those of
:mod:`ascsim.resim`: ``drop=FILE:LINE`` (a wait; a ``wait_flag`` goes with the ``set_flag``
calls that met it), ``buffers=FILE:LINE[xN]`` (a queue's buffer count), ``soc=NAME``,
``cores=N``.
"""

from __future__ import annotations

import os

from rich.console import Console
from rich.table import Table

from ascsim.diff import diff_findings, drop_platform, pair_launches
from ascsim.resim import Change, ChangeError, Outcome, run_with
from ascsim.sim.source import format_location


def resolve(change: Change, sites) -> Change:
    """``change`` completed from the baseline's waits (:func:`~ascsim.sim.critical_path.
    wait_sites`): a dropped ``wait_flag`` takes the lines of the sets that met it along.
    Raises :class:`ChangeError` when a dropped line ran no wait."""
    if change.kind != "drop":
        return change
    by_line = {(os.path.realpath(s.loc[0]), int(s.loc[1])): s for s in sites}
    lines = []
    for site in change.sites:
        found = by_line.get(site)
        if found is None:
            ran = ", ".join(format_location(s.loc) for s in sites) or "none"
            raise ChangeError(f"drop: no wait ran at {os.path.relpath(site[0])}:{site[1]} "
                              f"(waits that ran: {ran})")
        lines.append(site)
        lines.extend((os.path.realpath(p), int(n)) for p, n in found.set_lines)
    return Change("drop", tuple(dict.fromkeys(lines)))


def _time(r: dict | None) -> str:
    if r is None:
        return "not launched"
    return f"{r['device_time_us']:.2f}" + (" (stopped with an error)" if r.get("failed") else "")


def _outputs(a: Outcome, b: Outcome, i: int | None, j: int | None) -> str:
    if i is None or j is None or i >= len(a.outputs) or j >= len(b.outputs):
        return "-"
    return "same" if a.outputs[i] == b.outputs[j] else "[red]differ[/]"


def _index(reports, report) -> int | None:
    for i, r in enumerate(reports):
        if r is report:
            return i
    return None


def comparison_table(base: Outcome, other: Outcome, change: Change) -> tuple[Table, bool]:
    """The side-by-side table, and whether outputs or findings differ anywhere."""
    table = Table(title=f"what if: {change.describe()}", title_justify="left", show_edge=False)
    for col in ("kernel", "baseline µs", "what-if µs", "change", "outputs", "findings"):
        table.add_column(col, justify="right" if "µs" in col or col == "change" else "left",
                         overflow="fold")
    differ = False
    for pair in pair_launches(base.reports, other.reports):
        a, b = pair.a, pair.b
        ta, tb = _time(a), _time(b)
        change_text = "-"
        if a and b and not a.get("failed") and not b.get("failed"):
            d = b["device_time_us"] - a["device_time_us"]
            pct = d / a["device_time_us"] if a["device_time_us"] else 0.0
            change_text = f"{d:+.2f} ({pct:+.1%})"
        outputs = _outputs(base, other, _index(base.reports, a), _index(other.reports, b))
        found = diff_findings(a, b)
        words = []
        if found.only_a:
            words.append("only in the baseline: " + ", ".join(
                f"{f['category']} {_lines(f)}" for f in found.only_a))
        if found.only_b:
            words.append("only in the what-if: " + ", ".join(
                f"{f['category']} {_lines(f)}" for f in found.only_b))
        if not words:
            words.append(f"same ({found.both})" if found.both else "none")
        differ = differ or outputs != "same" or bool(found.only_a or found.only_b) or \
            a is None or b is None
        name = pair.kernel + (f" #{pair.occurrence}" if pair.occurrence > 1 else "")
        table.add_row(name, ta, tb, change_text, outputs, "; ".join(words))
    return table, differ


def _lines(f: dict) -> str:
    return ",".join(f"{os.path.basename(loc['file'])}:{loc['line']}" for loc in f["locations"])


def what_if(change: Change, script: str, args, baseline: Outcome, console: Console,
            timing_only: bool = False) -> Outcome:
    """Run ``script`` again with ``change`` and print the comparison with ``baseline`` (this
    run's outcome); returns the what-if's outcome."""
    if change.kind == "soc":
        args, _ = drop_platform(args)  # the change chooses the SoC
    console.print(f"what-if: running the script {change.describe()} ...", highlight=False)
    other = run_with(script, args, change, timing_only=timing_only)
    table, differ = comparison_table(baseline, other, change)
    console.print(table)
    if other.status != baseline.status:
        console.print(f"[yellow]the what-if run exits {other.status}, the baseline "
                      f"{baseline.status}[/]" + (f": {other.error}" if other.error else ""),
                      highlight=False)
    a, b = baseline.device_time_us, other.device_time_us
    failed = any(r.get("failed") for r in (*baseline.reports, *other.reports))
    if failed or not other.reports:
        console.print(f"what-if {change.describe()}: no time to compare, a run stopped with an "
                      "error (see above)", highlight=False, soft_wrap=True)
    else:
        pct = (b - a) / a if a else 0.0
        console.print(f"what-if {change.describe()}: {a:.2f} -> {b:.2f} µs ({b - a:+.2f} µs, "
                      f"{pct:+.1%}) over {len(other.reports)} launch(es); "
                      + ("outputs or findings differ" if differ else
                         "same outputs and findings"), highlight=False, soft_wrap=True)
    return other
