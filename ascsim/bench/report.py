"""Bench reports: a rich table for the terminal, JSON, Markdown and a self-contained HTML page.

Every report is rendered from a BenchResult alone. For each case the reports give the time of
every variant and why they differ, from what the operator reported: kernel count (each launch
pays its overhead), cross-core hand-offs, GM workspace bytes and per-pipe busy time.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from rich.table import Table

from ascsim.bench.plots import PIPE_LABELS, pipe_plot, speedup_plot, time_plot
from ascsim.bench.results import BenchResult, CaseRun
from ascsim.bench.runner import PACKAGE_VARIANT

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
    references = result.task.references
    for ref in references:
        table.add_column(f"{ref.name} µs", justify="right", no_wrap=True)
    for v in result.variants:
        table.add_column(f"{v} µs", justify="right", no_wrap=True)
        table.add_column("×", justify="right", no_wrap=True)
    for case in result.task.cases:
        row = [str(case.case_id), SHORT_DTYPE[case.dtype],
               _f(result.run(case.case_id, result.variants[0]).t_base_us)]
        row += [_f(ref.time_us(case.case_id)) for ref in references]
        for v in result.variants:
            r = result.run(case.case_id, v)
            time_cell = "[red]fail[/]" if r.timing is None else _f(r.timing.device_time_us)
            if is_tuned(r):
                time_cell += "†"
            if r.status == "precision_fail":
                time_cell += " [red]P✗[/]"
            row += [time_cell, _f(r.speedup) if r.status == "pass" else "—"]
        table.add_row(*row)
    table.add_section()
    row = ["score", "", "mean ×"] + [""] * len(references)
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


def _case_rows(result: BenchResult) -> tuple[list[str], list[list[str]]]:
    head = ["case", "note", "dtype", "base µs", "T_HW µs"]
    head += [f"{ref.name} µs" for ref in result.task.references]
    for v in result.variants:
        head += [f"{v} µs", f"{v} ×", f"{v} HAP", f"{v} MERE / MARE"]
    rows = []
    for case in result.task.cases:
        first = result.run(case.case_id, result.variants[0])
        row = [str(case.case_id), case.note, case.dtype, _f(first.t_base_us), _f(first.t_hw_us)]
        row += [_f(ref.time_us(case.case_id)) for ref in result.task.references]
        for v in result.variants:
            r = result.run(case.case_id, v)
            t = "fail" if r.timing is None else _f(r.timing.device_time_us)
            if is_tuned(r):
                t += "†"
            if r.status != "pass":
                t += f" ({STATUS_TEXT[r.status]})"
            prec = "—" if r.precision is None else \
                f"{r.precision.mere:.2e} / {r.precision.mare:.2e}"
            row += [t, _f(r.speedup), _f(r.hap, ".3f"), prec]
        rows.append(row)
    return head, rows


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


def _rules_html(result: BenchResult) -> str:
    rows = _rule_rows(result)
    if rows is None:
        return ""
    body = html_table(RULES_HEAD, rows, "rules") if rows else \
        '<p class="note">Every case kept the rules.</p>'
    return f"<h2>Submission rules</h2>\n{body}\n"


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
             f"T_HW = max(0.1·T_base, 1 µs). Run wall time {result.wall_s:.1f} s. "
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

CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px;
       color: #1b1f23; background: #ffffff; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
th, td { border: 1px solid #ccd; padding: 3px 7px; text-align: right; }
th { background: #eef1f6; } td.l { text-align: left; }
tr:nth-child(even) td { background: #f8f9fb; }
.fail { color: #b31d28; font-weight: bold; }
img.plot { display: block; max-width: 100%; margin: 10px 0; border: 1px solid #eee; }
ul.why { font-size: 12px; margin: 2px 0 12px 0; } .note { color: #555; font-size: 13px; }
"""


def html_table(head: list[str], rows: list[list[str]], table_id: str) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = []
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            cls = ' class="fail"' if "FAIL" in c else (' class="l"' if i <= 1 else "")
            cells.append(f"<td{cls}>{html.escape(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table id="{table_id}"><tr>{th}</tr>{"".join(body)}</table>'


def html_img(png: bytes, plot_id: str, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="plot" id="{plot_id}" alt="{html.escape(alt)}" ' \
           f'src="data:image/png;base64,{data}">'


def to_html(result: BenchResult, pipe_variant: str | None = None) -> str:
    """A self-contained page: inline CSS, plots as base64 PNG, no external resource."""
    pipe_variant = pipe_variant or result.best_variant()
    title = f"Bench: {result.task.name} on {result.soc}"
    why = []
    for case in result.task.cases:
        items = "".join(f"<li>{html.escape(x)}</li>" for x in explain_case(result, case.case_id))
        why.append(f"<h3>Case {case.case_id} — {html.escape(case.note)}</h3>"
                   f'<ul class="why">{items}</ul>')
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{CSS}</style></head><body>
<h1>{html.escape(title)}</h1>
<p class="note"><code>{html.escape(result.task.formula)}</code> — {len(result.task.cases)} cases,
variants {html.escape(", ".join(result.variants))}. {html.escape(result.baseline_note)}.
T_HW = max(0.1·T_base, 1 µs). Run wall time {result.wall_s:.1f} s.
{html.escape(tuned_note(result))} {html.escape(reference_note(result))}</p>
<h2>Score per variant</h2>
{html_table(SUMMARY_HEAD, _summary_rows(result), "summary")}
<h2>Plots</h2>
{html_img(speedup_plot(result), "plot-speedup", "speedup per case")}
{html_img(time_plot(result), "plot-time", "time per case per variant")}
{html_img(pipe_plot(result, pipe_variant), "plot-pipes", f"per-pipe busy time, {pipe_variant}")}
<h2>Cases</h2>
{html_table(*_case_rows(result), "cases")}
{_rules_html(result)}<h2>Why the variants differ</h2>
{"".join(why)}
</body></html>
"""


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
