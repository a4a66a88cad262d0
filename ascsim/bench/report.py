"""Bench reports: a rich table for the terminal, JSON, Markdown and a self-contained HTML page
(rendered from ``ascsim/templates/bench.html.j2``).

Every report is rendered from a BenchResult alone. For each case the reports give the time of
every variant and why they differ, from what the operator reported: kernel count (each launch
pays its overhead), cross-core hand-offs, GM workspace bytes and per-pipe busy time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from ascsim.bench.plots import PIPE_LABELS, pipe_plot, speedup_plot, time_plot
from ascsim.bench.results import BenchResult, CaseRun
from ascsim.bench.runner import PACKAGE_VARIANT
from ascsim.bench.tasks import Case, ReferenceTimes
from ascsim.html_pages import HtmlPlot, HtmlTable, render_page

SHORT_DTYPE = {"float16": "fp16", "float32": "fp32", "bfloat16": "bf16"}
STATUS_TEXT = {"pass": "pass", "precision_fail": "PRECISION FAIL", "runtime_fail": "RUNTIME FAIL"}


def _f(x: float | None, fmt: str = ".2f") -> str:
    return "—" if x is None else format(x, fmt)


def _bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def is_tuned(run: CaseRun) -> bool:
    """The call ran on tuned settings (``ascsim bench --tune``; the operator's notes say)."""
    return run.timing is not None and any(n.startswith("tuned") for n in run.timing.notes)


def tuned_note(result: BenchResult) -> str:
    """Which cases ran on tuned settings, per variant ("" when none did)."""
    parts = []
    for v in result.variants:
        ids = [str(r.case_id) for r in result.runs if r.variant == v and is_tuned(r)]
        if ids:
            parts.append(f"{v}: cases {', '.join(ids)}")
    return ("Ran on tuned settings (marked †) — " + "; ".join(parts) + ".") if parts else ""


def _drivers(run: CaseRun) -> str:
    """What one variant's time is made of."""
    if run.timing is None:
        return f"{run.variant}: failed ({run.error})"
    t = run.timing
    busy = sorted(t.pipe_busy_us().items(), key=lambda kv: -kv[1])[:3]
    pipes = ", ".join(f"{PIPE_LABELS.get(p, p)} {us:.2f}" for p, us in busy)
    chosen = f" (ran {t.chosen_variant})" if t.chosen_variant and t.chosen_variant != run.variant \
        else ""
    notes = "".join(f"; {n}" for n in t.notes)
    return (f"{run.variant}{chosen}: {t.device_time_us:.2f} µs in {len(t.kernels)} kernel(s) "
            f"(launch {t.launch_overhead_us:.2f} µs), {t.cross_core_handoffs} cross-core "
            f"hand-offs, workspace {_bytes(t.workspace_bytes)}; busiest pipes µs: {pipes}"
            f"{notes}")


def _delta(run: CaseRun, best: CaseRun) -> str:
    """Why ``run`` is slower than ``best``: the differences in the drivers, largest first."""
    a, b = run.timing, best.timing
    parts = []
    if len(a.kernels) != len(b.kernels):
        parts.append(f"{len(a.kernels) - len(b.kernels):+d} kernel launch(es) "
                     f"({a.launch_overhead_us - b.launch_overhead_us:+.2f} µs overhead)")
    if a.cross_core_handoffs != b.cross_core_handoffs:
        parts.append(f"{a.cross_core_handoffs - b.cross_core_handoffs:+d} cross-core hand-offs")
    if a.workspace_bytes != b.workspace_bytes:
        sign = "+" if a.workspace_bytes > b.workspace_bytes else "−"
        parts.append(f"workspace {sign}{_bytes(abs(a.workspace_bytes - b.workspace_bytes))}")
    pa, pb = a.pipe_busy_us(), b.pipe_busy_us()
    diffs = sorted(((p, pa.get(p, 0.0) - pb.get(p, 0.0)) for p in set(pa) | set(pb)),
                   key=lambda kv: -abs(kv[1]))
    parts += [f"{PIPE_LABELS.get(p, p)} {d:+.2f} µs" for p, d in diffs[:2] if abs(d) >= 0.005]
    gap = a.device_time_us - b.device_time_us
    return (f"{run.variant} is {gap:+.2f} µs vs {best.variant}: "
            + (", ".join(parts) if parts else "same kernels, hand-offs, workspace and pipe time"))


def explain_case(result: BenchResult, case_id: int) -> list[str]:
    """Sentences stating each variant's time and why the variants differ."""
    runs = [result.run(case_id, v) for v in result.variants]
    lines = [_drivers(r) for r in runs]
    timed = [r for r in runs if r.timing is not None]
    if len(timed) > 1:
        best = min(timed, key=lambda r: r.timing.device_time_us)
        lines.append(f"fastest: {best.variant}")
        lines += [_delta(r, best) for r in timed if r is not best]
    for r in runs:
        if r.status == "precision_fail":
            lines.append(f"{r.variant} precision: {r.precision.why}")
            if r.precision.provenance:
                lines.append(r.precision.provenance)
        if r.below_floor:
            lines.append(f"{r.variant} finding: {r.below_floor}")
    return lines


# --- terminal --------------------------------------------------------------------------------

def results_table(result: BenchResult) -> Table:
    caption = " ".join(x for x in (result.baseline_note, tuned_note(result),
                                   reference_note(result)) if x)
    table = Table(title=f"{result.task.name} on {result.soc}", caption=caption,
                  show_edge=False)
    table.add_column("case", justify="right", no_wrap=True)
    table.add_column("dtype", no_wrap=True)
    table.add_column("base µs", justify="right", no_wrap=True)
    table.add_column("T_HW µs", justify="right", no_wrap=True)
    references = result.task.references
    for ref in references:
        table.add_column(f"{ref.name} µs", justify="right", no_wrap=True)
    for v in result.variants:
        table.add_column(f"{v} µs", justify="right", no_wrap=True)
        table.add_column("×", justify="right", no_wrap=True)
    for case in result.task.cases:
        first = result.run(case.case_id, result.variants[0])
        row = [str(case.case_id), SHORT_DTYPE.get(case.dtype, case.dtype),
               _f(first.t_base_us), _f(first.t_hw_us)]
        row += [_f(ref.time_us(case.case_id)) for ref in references]
        for v in result.variants:
            r = result.run(case.case_id, v)
            time_cell = "[red]fail[/]" if r.timing is None else _f(r.timing.device_time_us)
            if is_tuned(r):
                time_cell += "†"
            if r.status == "precision_fail":
                time_cell += " [red]P✗[/]"
            if r.below_floor:
                time_cell += " [yellow]<T_HW[/]"
            row += [time_cell, _f(r.speedup) if r.status == "pass" else "—"]
        table.add_row(*row)
    table.add_section()
    row = ["score", "", "mean ×", ""] + [""] * len(references)
    for v in result.variants:
        s = result.summary(v).summary
        row += [f"[bold]{s.score:.2f}[/]", _f(s.mean_speedup)]
    table.add_row(*row)
    return table


# --- JSON / Markdown -------------------------------------------------------------------------

def to_json(result: BenchResult) -> str:
    return json.dumps(result.to_json(), indent=1)


def _summary_rows(result: BenchResult) -> list[list[str]]:
    rows = []
    for vs in result.summaries:
        s = vs.summary
        rows.append([vs.variant, f"{s.score:.2f}", f"{s.n - s.n_runtime_fail - s.n_precision_fail}"
                     f"/{s.n}", str(s.n_runtime_fail), str(s.n_precision_fail),
                     _f(s.mean_hap, ".3f"), _f(s.mean_speedup), _f(s.geomean_speedup),
                     f"{vs.total_device_us:.1f}", f"{vs.wall_s:.1f}"])
    return rows


SUMMARY_HEAD = ["variant", "score", "pass", "runtime fail", "precision fail", "mean HAP",
                "mean speedup", "geomean speedup", "Σ device µs", "wall s"]


@dataclass(frozen=True)
class CaseColumn:
    """One column of the per-case table: its heading and its cell for one case."""

    head: str
    cell: Callable[[BenchResult, Case], str]


@dataclass(frozen=True)
class VariantColumn:
    """A column repeated for every variant: its heading (``{v}`` is the variant's name) and its
    cell for that variant's run of a case."""

    head: str
    cell: Callable[[CaseRun], str]


def _first(result: BenchResult, case: Case) -> CaseRun:
    """The case's first run (the baseline figures are the same for every variant)."""
    return result.run(case.case_id, result.variants[0])


def _time_cell(run: CaseRun) -> str:
    text = "fail" if run.timing is None else _f(run.timing.device_time_us)
    if is_tuned(run):
        text += "†"
    if run.status != "pass":
        text += f" ({STATUS_TEXT[run.status]})"
    return text


def _verdict_cell(run: CaseRun) -> str:
    """The precision verdict: pass / fail, or — when the case did not run."""
    return "—" if run.precision is None else ("pass" if run.precision.passed else "fail")


def bound_pipe(run: CaseRun) -> str | None:
    """The pipe with the most busy time over the call's kernels (what bounds it), or None."""
    if run.timing is None:
        return None
    busy = run.timing.pipe_busy_us()
    if not busy:
        return None
    pipe = max(busy, key=busy.get)
    return PIPE_LABELS.get(pipe, pipe)


def _floor_cell(run: CaseRun) -> str:
    text = _f(run.sim_over_t_hw)
    return text + " below floor" if run.below_floor else text


def t_hw_note(result: BenchResult) -> str:
    """How T_HW was set for the run's cases."""
    if getattr(result.task, "kind", "") == "cann_bench":
        return ("T_HW = the case's t_hw_us from cann-bench's metadata; a case with no baseline "
                "is scored against max(10·T_HW, 10 µs).")
    return "T_HW = max(0.1·T_base, 1 µs)."


def _precision_cell(run: CaseRun) -> str:
    p = run.precision
    return "—" if p is None else f"{p.mere:.2e} / {p.mare:.2e}"


# The per-case table, in order: the case columns, one column per published reference, then the
# variant columns for each variant. Markdown and HTML are both drawn from these.
CASE_COLUMNS = (
    CaseColumn("case", lambda result, case: str(case.case_id)),
    CaseColumn("note", lambda result, case: case.note),
    CaseColumn("dtype", lambda result, case: case.dtype),
    CaseColumn("base µs", lambda result, case: _f(_first(result, case).t_base_us)),
    CaseColumn("T_HW µs", lambda result, case: _f(_first(result, case).t_hw_us)),
)
VARIANT_COLUMNS = (
    VariantColumn("{v} µs", _time_cell),
    VariantColumn("{v} ×", lambda run: _f(run.speedup)),
    VariantColumn("{v} HAP", lambda run: _f(run.hap, ".3f")),
    VariantColumn("{v} sim / T_HW", _floor_cell),
    VariantColumn("{v} precision", _verdict_cell),
    VariantColumn("{v} MERE / MARE", _precision_cell),
    VariantColumn("{v} bound pipe", lambda run: bound_pipe(run) or "—"),
)


def _reference_column(ref: ReferenceTimes) -> CaseColumn:
    return CaseColumn(f"{ref.name} µs", lambda result, case: _f(ref.time_us(case.case_id)))


def _variant_column(column: VariantColumn, variant: str) -> CaseColumn:
    return CaseColumn(column.head.format(v=variant),
                      lambda result, case: column.cell(result.run(case.case_id, variant)))


def case_columns(result: BenchResult) -> list[CaseColumn]:
    """Every column of ``result``'s per-case table, in order."""
    return [*CASE_COLUMNS, *(_reference_column(r) for r in result.task.references),
            *(_variant_column(c, v) for v in result.variants for c in VARIANT_COLUMNS)]


def _case_rows(result: BenchResult) -> tuple[list[str], list[list[str]]]:
    columns = case_columns(result)
    return ([c.head for c in columns],
            [[c.cell(result, case) for c in columns] for case in result.task.cases])


RULES_HEAD = ["case", "variant", "rule broken", "what happened"]


def _rule_rows(result: BenchResult) -> list[list[str]] | None:
    """One row per broken submission rule; None when the run checked no rules (ascsim.ops)."""
    if PACKAGE_VARIANT not in result.variants and not any(r.violations for r in result.runs):
        return None
    return [[str(r.case_id), r.variant, v.kind, v.detail] for r in result.runs
            for v in r.violations]


def _rules_md(result: BenchResult) -> list[str]:
    rows = _rule_rows(result)
    if rows is None:
        return []
    body = _md_table(RULES_HEAD, rows) if rows else "Every case kept the rules."
    return ["## Submission rules", "", body, ""]


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(out)


def reference_note(result: BenchResult) -> str:
    """Where the published reference columns come from (they are shown, not scored)."""
    return " ".join(f"'{r.name} µs': {r.source}, {r.hardware} (shown for comparison, not "
                    "scored)." for r in result.task.references)


def to_markdown(result: BenchResult) -> str:
    parts = [f"# Bench: {result.task.name} ({result.task.proto}) on {result.soc}", "",
             f"`{result.task.formula}` — {len(result.task.cases)} cases, variants "
             f"{', '.join(result.variants)}. {result.baseline_note}. "
             f"{t_hw_note(result)} Run wall time {result.wall_s:.1f} s. "
             f"{tuned_note(result)} {reference_note(result)}", "",
             "## Score per variant", "", _md_table(SUMMARY_HEAD, _summary_rows(result)), "",
             "## Cases", "", _md_table(*_case_rows(result)), "",
             *_rules_md(result),
             "## Why the variants differ, per case", ""]
    for case in result.task.cases:
        parts.append(f"### Case {case.case_id} — {case.note}")
        parts += [f"- {line}" for line in explain_case(result, case.case_id)]
        parts.append("")
    return "\n".join(parts)


# --- HTML ------------------------------------------------------------------------------------

def to_html(result: BenchResult, pipe_variant: str | None = None) -> str:
    """A self-contained page (``templates/bench.html.j2``): inline CSS, plots as base64 PNG."""
    pipe_variant = pipe_variant or result.best_variant()
    rules = _rule_rows(result)
    plots = [HtmlPlot("plot-speedup", "speedup per case", speedup_plot(result)),
             HtmlPlot("plot-time", "time per case per variant", time_plot(result)),
             HtmlPlot("plot-pipes", f"per-pipe busy time, {pipe_variant}",
                      pipe_plot(result, pipe_variant))]
    return render_page(
        "bench.html.j2", title=f"Bench: {result.task.name} on {result.soc}", result=result,
        tuned_note=tuned_note(result), reference_note=reference_note(result),
        t_hw_note=t_hw_note(result),
        summary=HtmlTable.of("summary", SUMMARY_HEAD, _summary_rows(result)),
        plots=plots, cases=HtmlTable.of("cases", *_case_rows(result)),
        rules=None if rules is None else HtmlTable.of("rules", RULES_HEAD, rules),
        why=[(case, explain_case(result, case.case_id)) for case in result.task.cases])


def write_reports(result: BenchResult, directory: str | Path,
                  pipe_variant: str | None = None) -> dict[str, Path]:
    """Write ``<op>_<soc>.json/.md/.html`` into ``directory``; return the paths by format."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    stem = f"{result.task.name}_{result.soc}"
    paths = {"json": d / f"{stem}.json", "md": d / f"{stem}.md", "html": d / f"{stem}.html"}
    paths["json"].write_text(to_json(result))
    paths["md"].write_text(to_markdown(result))
    paths["html"].write_text(to_html(result, pipe_variant))
    return paths
