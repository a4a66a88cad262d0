"""``ascsim tune path/to/script.py:entry --space space.yaml [--budget N] [--workers N]
[--ray [auto|ADDRESS]] [--seed N] [--soc SOC] [--report DIR]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from ascsim.argtypes import positive_int

STUDY_FILE = "study.db"


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("tune", help="search a kernel's knobs for the least simulated time")
    p.add_argument("target", help="path/to/script.py:function; the function runs one "
                   "configuration (knobs as keyword arguments) and returns its report")
    p.add_argument("--space", required=True, metavar="YAML", help="knob -> list of values")
    p.add_argument("--budget", type=int, default=64, help="configurations to evaluate")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="parallel trials (default: one per core)")
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="run trials on Ray: 'auto' (default) starts a local cluster, an "
                   "address joins an existing one")
    p.add_argument("--seed", type=int, default=0, help="sampler seed (reproducible search)")
    p.add_argument("--soc", default=None, help="SoC every trial simulates")
    p.add_argument("--objective", default="device_time_us",
                   help="report field to minimise (default device_time_us)")
    p.add_argument("--report", metavar="DIR",
                   help=f"write tune.html and tune.json here (and keep the study in "
                   f"DIR/{STUDY_FILE})")
    p.add_argument("--study", metavar="FILE",
                   help="SQLite file of the study (resumed when it exists); default "
                   f"DIR/{STUDY_FILE} with --report, else none")
    p.add_argument("--top", type=positive_int, default=10, help="rows of the best-N table")
    return p


class _Live:
    """The progress bar: trials done of the budget, and the best so far."""

    def __init__(self, console: Console, budget: int):
        self.progress = Progress(SpinnerColumn(), TextColumn("tune"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[best]}"), console=console)
        self.job = self.progress.add_task("tune", total=budget, best="")

    def __call__(self, record, result) -> None:
        best = result.best
        text = "no feasible configuration yet" if best is None else \
            f"best {best.value:.3f} ({', '.join(f'{k}={v}' for k, v in best.config.items())})"
        self.progress.update(self.job, completed=len(result.evaluated()), best=text)


def run(ns: argparse.Namespace, console: Console) -> int:
    from ascsim.tune.backends import BackendError, make_backend
    from ascsim.tune.report import summary_lines, top_table, write_reports
    from ascsim.tune.space import SpaceError, load_space
    from ascsim.tune.study import StudyError
    from ascsim.tune.sweep import SearchError, search
    from ascsim.tune.target import TargetError, parse_target

    try:
        space = load_space(ns.space)
        target = parse_target(ns.target)
    except (SpaceError, TargetError) as exc:
        console.print(f"[red]ascsim tune:[/] {exc}")
        return 2
    except Exception as exc:  # noqa: BLE001 - the script itself failed to load
        console.print(f"[red]ascsim tune:[/] cannot load {ns.target}: "
                      f"{type(exc).__name__}: {exc}")
        return 2
    storage = ns.study or (str(Path(ns.report) / STUDY_FILE) if ns.report else None)
    if storage:
        Path(storage).parent.mkdir(parents=True, exist_ok=True)
    budget = min(ns.budget, space.grid_size) if ns.budget > 0 else ns.budget
    live = _Live(console, max(budget, 1))
    backend = "ray" if ns.ray else "pool"
    try:
        if backend == "pool":
            # Started before the progress display runs its refresh thread, so that the
            # workers can be forks of this process (milliseconds instead of seconds each).
            backend = make_backend("pool", ns.workers)
            backend.prepare()
        with live.progress:
            result = search(target, space, budget=ns.budget, workers=ns.workers, seed=ns.seed,
                            objective=ns.objective, storage=storage,
                            study_name=f"{Path(target.path).stem}:{target.entry}",
                            backend=backend, ray_address=ns.ray or "auto",
                            soc=ns.soc, on_trial=live)
    except (SearchError, StudyError, BackendError, ValueError) as exc:
        console.print(f"[red]ascsim tune:[/] {exc}")
        return 2
    finally:
        if not isinstance(backend, str):
            backend.close()
    console.print(top_table(result, ns.top))
    for line in summary_lines(result):
        console.print(line)
    if ns.report:
        title = f"Tuning {target} on {ns.soc or 'the default SoC'}"
        paths = write_reports(result, ns.report, title, ns.top)
        console.print("reports: " + ", ".join(str(p) for p in paths.values())
                      + (f"; study: {storage}" if storage else ""))
    if result.interrupted:
        return 130
    return 0 if result.best is not None else 1
