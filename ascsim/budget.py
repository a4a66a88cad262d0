"""A performance gate on simulated device times: budget files, checking a run against one.

Simulated times do not jitter: the same script on the same SoC gives the same device time to
the last bit, so a CI can hold every kernel to a budget (``ascsim run --budget FILE``, or the
pytest plugin :mod:`ascsim.pytest_plugin`). A budget file is YAML::

    tolerance: 0.02            # default relative tolerance of the entries (2 %)
    kernels:
    - kernel: add_with_queues  # the launch's kernel name,
      soc: Ascend910B1         # SoC,
      blocks: 8                # block count
      shapes: x=float32[16384] y=float32[16384] z=float32[16384]   # and memory arguments
      us: 5.3701               # its device time budget, µs
      tolerance: 0.05          # optional: this entry's own

A launch matches the entry with its kernel, SoC, blocks and shapes (KernelReport.shapes). It
is *slower* when its time exceeds ``us × (1 + tolerance)`` — the gate fails — and *faster* when
it is below ``us × (1 − tolerance)``: the gate passes and says so, so that the budget can be
tightened (``--budget-write`` the file again). A launch with no entry, an entry no launch
matched and a launch that stopped with an error (its time covers only what ran; the error
fails the run) are listed but do not fail the gate.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import yaml
from rich.markup import escape
from rich.table import Table

from ascsim.sim.report import KernelReport

#: The tolerance written for new entries when none is given (2 %): wide enough for a model
#: change that moves a time by a rounding step, narrow enough to catch a lost double buffer.
DEFAULT_TOLERANCE = 0.02

STATUSES = ("ok", "slower", "faster", "no budget", "not run", "failed")


class BudgetError(ValueError):
    """A budget file that cannot be read as one (names the file and the entry)."""


@dataclass(frozen=True)
class BudgetEntry:
    """One kernel launch's budget.

    Fields:
        kernel, soc, blocks, shapes: what identifies the launch (see the module docstring).
        us: the device time budget in µs (> 0).
        tolerance: relative tolerance (0 <= tolerance < 1).
    """

    kernel: str
    soc: str
    blocks: int
    shapes: str
    us: float
    tolerance: float

    @property
    def key(self) -> tuple:
        return (self.kernel, self.soc, self.blocks, self.shapes)

    def to_yaml(self, default_tolerance: float) -> dict:
        out = {"kernel": self.kernel, "soc": self.soc, "blocks": self.blocks,
               "shapes": self.shapes, "us": self.us}
        if self.tolerance != default_tolerance:
            out["tolerance"] = self.tolerance
        return out


@dataclass(frozen=True)
class Budget:
    """A budget file's contents: the default tolerance and the entries, by key."""

    tolerance: float
    entries: tuple[BudgetEntry, ...]

    def find(self, report: KernelReport) -> BudgetEntry | None:
        key = report_key(report)
        for entry in self.entries:
            if entry.key == key:
                return entry
        return None


def report_key(report: KernelReport) -> tuple:
    return (report.kernel, report.soc, report.block_num, report.shapes)


def _tolerance(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise BudgetError(f"{where}: tolerance must be a fraction in [0, 1), got {value!r}")
    return float(value)


def parse_budget(data, source: str = "<budget>") -> Budget:
    """A :class:`Budget` from the YAML document ``data`` (``source`` names it in errors)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BudgetError(f"{source}: expected a mapping with 'kernels', got "
                          f"{type(data).__name__}")
    unknown = set(data) - {"tolerance", "kernels"}
    if unknown:
        raise BudgetError(f"{source}: unknown keys {sorted(unknown)} (expected 'tolerance', "
                          "'kernels')")
    default = _tolerance(data.get("tolerance", DEFAULT_TOLERANCE), source)
    items = data.get("kernels") or []
    if not isinstance(items, list):
        raise BudgetError(f"{source}: 'kernels' must be a list of entries")
    entries = []
    seen = set()
    for i, item in enumerate(items):
        where = f"{source}: kernels[{i}]"
        if not isinstance(item, dict):
            raise BudgetError(f"{where}: expected a mapping, got {type(item).__name__}")
        missing = {"kernel", "soc", "blocks", "us"} - set(item)
        if missing:
            raise BudgetError(f"{where}: missing {sorted(missing)}")
        extra = set(item) - {"kernel", "soc", "blocks", "shapes", "us", "tolerance"}
        if extra:
            raise BudgetError(f"{where}: unknown keys {sorted(extra)}")
        us = item["us"]
        if isinstance(us, bool) or not isinstance(us, (int, float)) or us <= 0:
            raise BudgetError(f"{where}: 'us' must be a positive number of µs, got {us!r}")
        blocks = item["blocks"]
        if isinstance(blocks, bool) or not isinstance(blocks, int) or blocks <= 0:
            raise BudgetError(f"{where}: 'blocks' must be a positive integer, got {blocks!r}")
        entry = BudgetEntry(str(item["kernel"]), str(item["soc"]), blocks,
                            str(item.get("shapes") or ""), float(us),
                            _tolerance(item.get("tolerance", default), where))
        if entry.key in seen:
            raise BudgetError(f"{where}: a second entry for {entry.kernel} on {entry.soc} "
                              f"({entry.blocks} blocks, {entry.shapes or 'no arguments'})")
        seen.add(entry.key)
        entries.append(entry)
    return Budget(default, tuple(entries))


def load_budget(path: str) -> Budget:
    with open(path) as fh:
        try:
            data = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise BudgetError(f"{path}: not YAML: {exc}") from None
    return parse_budget(data, path)


def merged(book: Budget | None, reports: Iterable[KernelReport],
           tolerance: float | None = None) -> Budget:
    """``book`` with every launch of ``reports`` as its entry's new time (the slowest launch
    of a key, when several share it); new entries get ``tolerance`` (the book's default, or
    :data:`DEFAULT_TOLERANCE`). Entries no launch matched stay as they were."""
    default = book.tolerance if book is not None else DEFAULT_TOLERANCE
    if tolerance is not None:
        default = _tolerance(tolerance, "--tolerance")
    entries = {e.key: e for e in (book.entries if book is not None else ())}
    times: dict[tuple, float] = {}
    for r in reports:
        if r.failed:
            continue  # a launch that stopped with an error has no time to hold
        key = report_key(r)
        times[key] = max(times.get(key, 0.0), r.device_time_us)
    for key, t in times.items():
        old = entries.get(key)
        entries[key] = BudgetEntry(*key, round(t, 4), old.tolerance if old else default)
    return Budget(default, tuple(entries.values()))


HEADER = ("# Device-time budget of ascsim launches (ascsim run --budget FILE fails when one is\n"
          "# slower than us x (1 + tolerance)). Written by ascsim run --budget-write.\n")


def save_budget(path: str, book: Budget) -> None:
    data = {"tolerance": book.tolerance,
            "kernels": [e.to_yaml(book.tolerance) for e in book.entries]}
    with open(path, "w") as fh:
        fh.write(HEADER)
        yaml.safe_dump(data, fh, sort_keys=False, allow_unicode=True, width=120)


def write_budget(path: str, reports: Sequence[KernelReport],
                 tolerance: float | None = None) -> int:
    """Write (or update, if ``path`` exists) the budget file; returns its number of entries."""
    book = load_budget(path) if os.path.exists(path) else None
    book = merged(book, reports, tolerance)
    save_budget(path, book)
    return len(book.entries)


@dataclass(frozen=True)
class VerdictRow:
    """One line of the gate's table.

    Fields:
        kernel, soc, blocks, shapes: the launch (or the entry, for "not run").
        us: the launch's device time (None for "not run").
        budget_us, tolerance: the entry's (None for "no budget").
        status: one of :data:`STATUSES` ("failed": the launch stopped with an error and is
            not checked).
    """

    kernel: str
    soc: str
    blocks: int
    shapes: str
    us: float | None
    budget_us: float | None
    tolerance: float | None
    status: str

    @property
    def change(self) -> float | None:
        """(time − budget) / budget, or None without both."""
        if self.us is None or self.budget_us is None:
            return None
        return (self.us - self.budget_us) / self.budget_us


@dataclass(frozen=True)
class Verdict:
    rows: tuple[VerdictRow, ...]

    def count(self, status: str) -> int:
        return sum(1 for r in self.rows if r.status == status)

    @property
    def failed(self) -> bool:
        return self.count("slower") > 0

    def summary(self) -> str:
        parts = [f"{self.count('ok')} within budget"]
        if self.count("slower"):
            parts.append(f"{self.count('slower')} SLOWER than budget")
        if self.count("faster"):
            parts.append(f"{self.count('faster')} faster than budget by more than its "
                         "tolerance (tighten it: --budget-write)")
        if self.count("no budget"):
            parts.append(f"{self.count('no budget')} without a budget entry")
        if self.count("not run"):
            parts.append(f"{self.count('not run')} budget entries not run")
        if self.count("failed"):
            parts.append(f"{self.count('failed')} stopped with an error (not checked)")
        verdict = "FAILED" if self.failed else "passed"
        return f"budget {verdict}: " + ", ".join(parts)


def _status(t: float, entry: BudgetEntry) -> str:
    if t > entry.us * (1 + entry.tolerance):
        return "slower"
    if t < entry.us * (1 - entry.tolerance):
        return "faster"
    return "ok"


def check(book: Budget, reports: Sequence[KernelReport]) -> Verdict:
    """Every launch of ``reports`` against ``book``, then the entries no launch matched."""
    rows = []
    matched = set()
    for r in reports:
        entry = book.find(r)
        if r.failed:
            # Stopped with an error: its time covers what ran, nothing to hold to a budget
            # (the script's own error fails the run).
            if entry is not None:
                matched.add(entry.key)
            rows.append(VerdictRow(r.kernel, r.soc, r.block_num, r.shapes, r.device_time_us,
                                   entry.us if entry else None,
                                   entry.tolerance if entry else None, "failed"))
            continue
        if entry is None:
            rows.append(VerdictRow(r.kernel, r.soc, r.block_num, r.shapes, r.device_time_us,
                                   None, None, "no budget"))
            continue
        matched.add(entry.key)
        rows.append(VerdictRow(r.kernel, r.soc, r.block_num, r.shapes, r.device_time_us,
                               entry.us, entry.tolerance, _status(r.device_time_us, entry)))
    for entry in book.entries:
        if entry.key not in matched:
            rows.append(VerdictRow(entry.kernel, entry.soc, entry.blocks, entry.shapes, None,
                                   entry.us, entry.tolerance, "not run"))
    return Verdict(tuple(rows))


STATUS_STYLE = {"ok": "green", "slower": "bold red", "faster": "yellow", "no budget": "dim",
                "not run": "dim", "failed": "red"}


def verdict_table(verdict: Verdict) -> Table:
    """The gate's table: one row per launch (and per entry not run); the launch's memory
    arguments go under its kernel name, so the numbers keep their columns."""
    table = Table(title="device time against the budget", title_justify="left",
                  show_edge=False)
    table.add_column("kernel (memory arguments)", overflow="fold", ratio=1)
    for col in ("SoC", "blocks", "µs", "budget µs", "change", "tolerance", "status"):
        table.add_column(col, justify="left" if col in ("SoC", "status") else "right",
                         no_wrap=True)
    for r in verdict.rows:
        launch = r.kernel + (f"\n[dim]{escape(r.shapes)}[/]" if r.shapes else "")
        table.add_row(
            launch, r.soc, str(r.blocks),
            "-" if r.us is None else f"{r.us:.3f}",
            "-" if r.budget_us is None else f"{r.budget_us:.3f}",
            "-" if r.change is None else f"{r.change:+.1%}",
            "-" if r.tolerance is None else f"{r.tolerance:.0%}",
            f"[{STATUS_STYLE[r.status]}]{r.status}[/]")
    return table
