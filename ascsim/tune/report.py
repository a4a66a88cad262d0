"""Reports of a search: a terminal table, JSON, and a self-contained HTML page (best
configuration, top-N table, infeasible trials with reasons, time against each knob).

The page is rendered from ``ascsim/templates/tune.html.j2``, on the same base template and style
sheet as the bench report's, so both reports look alike.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from ascsim.html_pages import HtmlPlot, HtmlTable, render_page
from ascsim.tune.plots import best_so_far_plot, knob_plots
from ascsim.tune.results import TrialRecord, TuneResult


def _value(result: TuneResult, t: TrialRecord) -> str:
    return "—" if t.value is None else f"{t.value:.3f}"


def _config_cells(result: TuneResult, t: TrialRecord) -> list[str]:
    return [str(t.config.get(name, "")) for name in result.space.names]


def summary_lines(result: TuneResult) -> list[str]:
    evaluated = result.evaluated()
    ok = sum(1 for t in evaluated if t.status == "ok")
    infeasible = sum(1 for t in evaluated if t.status == "infeasible")
    failed = sum(1 for t in evaluated if t.status == "failed")
    repeats = len(result.trials) - len(evaluated)
    lines = [f"{len(evaluated)} configurations evaluated of {result.space.grid_size} "
             f"({result.sampler} search, budget {result.budget}, seed {result.seed}) on "
             f"{result.backend} with {result.workers} worker(s) in {result.wall_s:.1f} s: "
             f"{ok} measured, {infeasible} infeasible, {failed} failed"
             + (f", {repeats} repeated proposals reused" if repeats else "")]
    best = result.best
    if best is None:
        lines.append("no feasible configuration")
    else:
        knobs = ", ".join(f"{k}={v}" for k, v in best.config.items())
        lines.append(f"best {result.objective} = {best.value:.3f} with {knobs} "
                     f"(trial {best.number})")
    if result.interrupted:
        lines.append("interrupted: run the same command again to resume the stored study")
    return lines


def top_table(result: TuneResult, n: int = 10) -> Table:
    table = Table(title=f"best {n} by {result.objective}", show_edge=False)
    table.add_column("#", justify="right")
    table.add_column("trial", justify="right")
    for name in result.space.names:
        table.add_column(name, justify="right")
    table.add_column(result.objective, justify="right")
    for rank, t in enumerate(result.top(n), 1):
        table.add_row(str(rank), str(t.number), *_config_cells(result, t), _value(result, t))
    return table


def _reason_counts(result: TuneResult) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for t in result.infeasible():
        counts[t.reason] = counts.get(t.reason, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def to_json(result: TuneResult) -> str:
    return json.dumps(result.to_json(), indent=1)


def to_html(result: TuneResult, title: str, top: int = 10) -> str:
    """The HTML page (``templates/tune.html.j2``: inline CSS, plots as base64 PNG)."""
    names = list(result.space.names)
    best = result.best
    best_rows = [[k, str(v)] for k, v in (best.config.items() if best else [])]
    if best is not None:
        best_rows.append([result.objective, f"{best.value:.4f}"])
    top_rows = [[str(i), str(t.number), *_config_cells(result, t), _value(result, t)]
                for i, t in enumerate(result.top(top), 1)]
    bad_rows = [[str(t.number), *_config_cells(result, t), t.status, t.reason]
                for t in result.infeasible()]
    plots = [HtmlPlot(f"plot-{name}", f"{result.objective} against {name}", png)
             for name, png in knob_plots(result)]
    plots.append(HtmlPlot("plot-progress", "best so far per trial", best_so_far_plot(result)))
    return render_page(
        "tune.html.j2", title=title, summary=summary_lines(result), objective=result.objective,
        best=HtmlTable.of("best", ["knob", "value"], best_rows), top_n=top,
        top=HtmlTable.of("top", ["#", "trial", *names, result.objective], top_rows),
        plots=plots, reasons=_reason_counts(result),
        infeasible=HtmlTable.of("infeasible", ["trial", *names, "status", "reason"], bad_rows))


def write_reports(result: TuneResult, directory: str | Path, title: str,
                  top: int = 10) -> dict[str, Path]:
    """Write ``tune.json`` and ``tune.html`` into ``directory``; return their paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = {"json": d / "tune.json", "html": d / "tune.html"}
    paths["json"].write_text(to_json(result))
    paths["html"].write_text(to_html(result, title, top))
    return paths
