"""Whole-suite mode of ``ascsim bench``: every task of a cann-bench checkout listed, or run.

``--cann-bench ROOT --list [--package PKG]``: one row per task folder under ROOT/tasks and
ROOT/bench_lab — its path, level, category, case count and what implements it here (the
package, when it exports the task's function; a built-in operator of ``ascsim.ops``). A
folder that does not read gets its error in the row instead.

``--cann-bench ROOT --all --package PKG``: every task the package implements, each run as
``ascsim bench TASK --package PKG`` would run it (its own worker process), then one summary:
per task, its score, its cases passed / failed, its mean speed-up and the cases whose
simulated time is below their published ``t_hw_us``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ascsim.bench.cann_task import CannTask, TaskFolderError, load_cann_task, task_folders
from ascsim.bench.package import SUBMISSION_PACKAGE, PackageSource, resolve_package


@dataclass(frozen=True)
class SuiteEntry:
    """One task folder of the suite: what it is and what implements it (or why it did not
    load)."""

    path: str                    # below ROOT, e.g. "tasks/level2/rms_norm"
    task: CannTask | None
    implemented_by: tuple[str, ...]
    error: str | None = None

    def to_json(self) -> dict:
        t = self.task
        return {"path": self.path, "name": None if t is None else t.name,
                "level": None if t is None else t.level,
                "category": None if t is None else t.category,
                "cases": None if t is None else len(t.cases),
                "implemented_by": list(self.implemented_by), "error": self.error}


def package_exports(source: PackageSource) -> set[str]:
    """The public callables the package exports (imported here, front-ends installed)."""
    from ascsim.runner import install_frontends

    install_frontends()
    if source.path is not None and source.path not in sys.path:
        sys.path.insert(0, source.path)
    try:
        module = importlib.import_module(source.module)
    except Exception as exc:  # noqa: BLE001 - the package's import failure, reported as such
        raise ValueError(f"--package: {source.label} does not import: "
                         f"{type(exc).__name__}: {exc}") from None
    return {n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))}


def builtin_operators() -> set[str]:
    try:
        ops = importlib.import_module("ascsim.ops")
    except ModuleNotFoundError:
        return set()
    return {n for n in dir(ops) if not n.startswith("_") and callable(getattr(ops, n))}


def suite_entries(root: str | Path, soc: str, exports: set[str] = frozenset()
                  ) -> list[SuiteEntry]:
    root = Path(root)
    builtin = builtin_operators()
    entries = []
    for folder in task_folders(root):
        path = folder.relative_to(root).as_posix()
        try:
            task = load_cann_task(folder, soc)
        except TaskFolderError as exc:
            entries.append(SuiteEntry(path, None, (), str(exc)))
            continue
        by = tuple(label for label, names in (("package", exports), ("built-in", builtin))
                   if task.name in names)
        entries.append(SuiteEntry(path, task, by))
    return entries


def list_table(entries: list[SuiteEntry], root: str) -> Table:
    table = Table(title=f"cann-bench tasks under {root}")
    table.add_column("task", overflow="fold")
    for head in ("level", "category", "cases", "implemented by"):
        table.add_column(head, justify="right" if head == "cases" else "left")
    for e in entries:
        if e.task is None:
            table.add_row(escape(e.path), "", "", "", f"[red]{escape(e.error or '')}[/]")
        else:
            table.add_row(escape(e.path), e.task.level, e.task.category, str(len(e.task.cases)),
                          ", ".join(e.implemented_by) or "-")
    return table


def _suite_source(ns: argparse.Namespace) -> PackageSource | None:
    return None if not ns.package else resolve_package(ns.package, SUBMISSION_PACKAGE)


def run_suite_cli(ns: argparse.Namespace, soc: str, console: Console) -> int:
    if not ns.cann_bench:
        raise ValueError("--list and --all need --cann-bench ROOT")
    if ns.op:
        raise ValueError("--list and --all take no task name")
    source = _suite_source(ns)
    exports = package_exports(source) if source is not None else set()
    entries = suite_entries(ns.cann_bench, soc, exports)
    if ns.list:
        console.print(list_table(entries, ns.cann_bench))
        loaded = [e for e in entries if e.task is not None]
        console.print(f"{len(entries)} task folders, {len(loaded)} loaded, "
                      f"{sum(len(e.task.cases) for e in loaded)} cases")
        return 0 if len(loaded) == len(entries) else 1
    if source is None:
        raise ValueError("--all needs --package PKG (the tasks it implements are run)")
    chosen = [e for e in entries if "package" in e.implemented_by]
    if not chosen:
        raise ValueError(f"--package {ns.package} implements none of the {len(entries)} "
                         f"tasks under {ns.cann_bench}")
    return _run_all(ns, chosen, soc, console)


def _run_all(ns: argparse.Namespace, chosen: list[SuiteEntry], soc: str,
             console: Console) -> int:
    from ascsim.bench.cann_refs import GoldenError
    from ascsim.bench.isolate import DEFAULT_TIMEOUT_S, PackageRunner
    from ascsim.bench.report import write_reports
    from ascsim.bench.runner import PACKAGE_VARIANT, run_bench

    timeout = DEFAULT_TIMEOUT_S if ns.timeout is None else ns.timeout
    rows = []
    failed = 0
    for entry in chosen:
        task = entry.task.select(None, quick=ns.quick)
        source = resolve_package(ns.package, task.name)
        try:
            with PackageRunner(task, source, soc, timeout) as runner:
                result = run_bench(task, None, (PACKAGE_VARIANT,), soc, progress=True,
                                   console=console, package_call=runner.call_case,
                                   baseline_note=f"candidate: the package {source.label}")
        except GoldenError as exc:
            console.print(f"[red]{escape(entry.path)}:[/] {escape(str(exc))}", highlight=False)
            rows.append({"path": entry.path, "error": str(exc)})
            failed += 1
            continue
        summary = result.summaries[0].summary
        failed += summary.n_runtime_fail + summary.n_precision_fail
        row = {"path": entry.path, "task": task.name, **summary.to_json(),
               "below_floor": [r.case_id for r in result.runs if r.below_floor]}
        if ns.report:
            row["reports"] = {k: str(v) for k, v in
                              write_reports(result, Path(ns.report) / task.name).items()}
        rows.append(row)
    console.print(_summary_table(rows, soc))
    if ns.report:
        out = Path(ns.report) / f"cann_bench_suite_{soc}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"soc": soc, "root": ns.cann_bench, "package": ns.package,
                                   "tasks": rows}, indent=2))
        console.print(f"suite summary: {out}")
    return 1 if failed else 0


def _f(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def _summary_table(rows: list[dict], soc: str) -> Table:
    table = Table(title=f"cann-bench suite on {soc}")
    for head in ("task", "cases", "runtime fail", "precision fail", "score", "mean speed-up",
                 "below t_hw_us"):
        table.add_column(head, justify="left" if head == "task" else "right")
    for r in rows:
        if "error" in r:
            table.add_row(escape(r["path"]), "", "", "", "", "", f"[red]{escape(r['error'])}[/]")
            continue
        table.add_row(escape(r["path"]), str(r["n"]), str(r["n_runtime_fail"]),
                      str(r["n_precision_fail"]), f"{r['score']:.1f}", _f(r["mean_speedup"]),
                      ",".join(map(str, r["below_floor"])) or "-")
    return table
