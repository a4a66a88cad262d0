"""The tuning report's figures: the objective against each knob, and best so far per trial
(matplotlib's object API, as PNG bytes like the bench report's)."""

from __future__ import annotations

from ascsim.bench.plots import figure, png_bytes
from ascsim.tune.results import TuneResult


def knob_plots(result: TuneResult) -> list[tuple[str, bytes]]:
    """(knob, PNG) per knob: every measured trial's value at its knob value (categorical x
    axis in the space's order, points spread a little so equal values stay visible)."""
    measured = [t for t in result.evaluated() if t.status == "ok"]
    best = result.best
    out = []
    for name, values in result.space.knobs:
        fig, ax = figure(6.5, 3.0)
        position = {repr(v): i for i, v in enumerate(values)}
        xs = [position[repr(t.config[name])] + ((t.number * 37) % 11 - 5) * 0.02
              for t in measured]
        ax.scatter(xs, [t.value for t in measured], s=14, alpha=0.7)
        if best is not None:
            ax.scatter([position[repr(best.config[name])]], [best.value], s=60, color="#d62728",
                       marker="*", label="best", zorder=3)
            ax.legend(fontsize=8)
        ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set_xlabel(name)
        ax.set_ylabel(result.objective)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"{result.objective} against {name}")
        out.append((name, png_bytes(fig)))
    return out


def best_so_far_plot(result: TuneResult) -> bytes:
    fig, ax = figure(6.5, 3.0)
    best, xs, ys = None, [], []
    for i, t in enumerate(result.evaluated(), 1):
        if t.status == "ok" and (best is None or t.value < best):
            best = t.value
        if best is not None:
            xs.append(i)
            ys.append(best)
    ax.step(xs, ys, where="post")
    ax.set_xlabel("configurations evaluated")
    ax.set_ylabel(f"best {result.objective}")
    ax.grid(alpha=0.3)
    ax.set_title("best so far")
    return png_bytes(fig)
