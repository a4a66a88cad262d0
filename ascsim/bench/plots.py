"""The report's figures, returned as PNG bytes.

Drawn through matplotlib's object API (a ``Figure`` of its own, saved to a buffer): no backend is
chosen and no pyplot state is touched, so importing or rendering a report leaves the plotting set-up
of the user's process (a notebook, a GUI session) as it was.
"""

from __future__ import annotations

import io

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from ascsim.bench.results import BenchResult

PIPES = ("M", "V", "MTE1", "MTE2", "MTE3", "FIX", "S")
PIPE_LABELS = {"S": "Scalar", "V": "Vector", "M": "Cube", "MTE1": "MTE1", "MTE2": "MTE2",
               "MTE3": "MTE3", "FIX": "FixPipe"}
PIPE_COLORS = {"M": "#d62728", "V": "#1f77b4", "MTE1": "#9467bd", "MTE2": "#2ca02c",
               "MTE3": "#ff7f0e", "FIX": "#8c564b", "S": "#7f7f7f"}


def figure(width: float, height: float) -> tuple[Figure, Axes]:
    """A free-standing figure (no pyplot, no backend) and its one axes."""
    fig = Figure(figsize=(width, height))
    return fig, fig.subplots()


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def _grouped(ax, result: BenchResult, value, ylabel: str) -> None:
    """Bars per case, one colour per variant (missing values leave a gap)."""
    ids = [c.case_id for c in result.task.cases]
    width = 0.8 / len(result.variants)
    for j, v in enumerate(result.variants):
        xs, ys = [], []
        for i, cid in enumerate(ids):
            y = value(result.run(cid, v))
            if y is not None:
                xs.append(i + (j - (len(result.variants) - 1) / 2) * width)
                ys.append(y)
        ax.bar(xs, ys, width=width, label=v)
    ax.set_xticks(range(len(ids)), [str(i) for i in ids])
    ax.set_xlabel("case")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def speedup_plot(result: BenchResult) -> bytes:
    fig, ax = figure(11, 3.6)
    _grouped(ax, result, lambda r: r.speedup if r.status == "pass" else None,
             "speedup  T_base / T_cand")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_title(f"{result.task.name} on {result.soc}: speedup per case (passing cases)")
    return png_bytes(fig)


def time_plot(result: BenchResult) -> bytes:
    fig, ax = figure(11, 3.6)
    _grouped(ax, result, lambda r: None if r.timing is None else r.timing.device_time_us,
             "device time (µs)")
    firsts = [result.run(c.case_id, result.variants[0]) for c in result.task.cases]
    # The two anchors of the score: the baseline, and T_HW (the hardware floor: no simulated
    # time should be under it).
    for attr, style, label in (("t_base_us", "k_", "baseline"), ("t_hw_us", "r_", "T_HW")):
        values = [getattr(r, attr) for r in firsts]
        if any(v is not None for v in values):
            ax.plot(range(len(values)), [float("nan") if v is None else v for v in values],
                    style, markersize=14, markeredgewidth=2, label=label)
    ax.legend(fontsize=8)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(ScalarFormatter())
    ax.set_title("simulated device time per case per variant, against the baseline and T_HW "
                 "(log scale)")
    return png_bytes(fig)


def pipe_plot(result: BenchResult, variant: str) -> bytes:
    """Stacked per-pipe busy time per case for one variant (summed over its kernels)."""
    fig, ax = figure(11, 3.6)
    ids = [c.case_id for c in result.task.cases]
    busy = []
    for cid in ids:
        run = result.run(cid, variant)
        busy.append({} if run.timing is None else run.timing.pipe_busy_us())
    bottom = [0.0] * len(ids)
    for pipe in PIPES:
        vals = [b.get(pipe, 0.0) for b in busy]
        if any(vals):
            ax.bar(range(len(ids)), vals, bottom=bottom, label=PIPE_LABELS[pipe],
                   color=PIPE_COLORS[pipe])
            bottom = [x + y for x, y in zip(bottom, vals)]
    ax.set_xticks(range(len(ids)), [str(i) for i in ids])
    ax.set_xlabel("case")
    ax.set_ylabel("busy time (µs)")
    ax.set_title(f"per-pipe busy time, variant '{variant}' (busiest core per pipe, summed "
                 "over kernels; pipes overlap in time)")
    ax.legend(fontsize=8, ncol=4)
    ax.grid(axis="y", alpha=0.3)
    return png_bytes(fig)
