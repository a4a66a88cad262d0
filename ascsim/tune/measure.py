"""One trial, run where it is evaluated (a pool process or a Ray worker): call the run
function with a configuration and turn what it returns into a small :class:`Outcome`.

What the run function may return, and what the objective reads from it:

- a :class:`~ascsim.sim.report.KernelReport` (a launch's report);
- an operator's info (:class:`~ascsim.ops.result.OpInfo` or anything with ``device_time_us``
  and ``reports``/``kernels``), or the ``(output, info)`` pair an operator returns with
  ``return_report=True``;
- a list or tuple of kernel reports (launches that run one after the other: numbers add up);
- ``None``: the reports of the launches made during the call (collected with
  ``ascsim.session.SESSION.collect()``).

The objective is a field name: ``device_time_us`` (default) or any other number of the report
or info, as an attribute or a key of its ``to_json()``; a dotted name reaches inside a mapping
(``pipe_busy_us.MTE2``). Smaller is better.

A trial is *infeasible* when the run function raises (a tiling check, a shape the kernel
cannot take...), when a launch stopped with an error, or when a launch reports a finding of
one of the ``infeasible_findings`` categories (buffer capacity, alignment, out-of-bounds,
parameter range): a configuration that only runs by overflowing a buffer is no answer.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Finding categories that make a trial infeasible (capacity, alignment, bounds, ranges).
INFEASIBLE_FINDINGS: frozenset[str] = frozenset(
    {"local-overflow", "alignment", "gm-out-of-bounds", "param-range"})

#: Trial statuses: measured, infeasible (the configuration does not work), failed (the
#: evaluation itself broke: the worker died twice).
STATUSES = ("ok", "infeasible", "failed")


@dataclass(frozen=True)
class Outcome:
    """What one trial produced: a value, or the reason there is none."""

    status: str
    value: float | None = None
    reason: str = ""
    device_time_us: float | None = None
    wall_s: float = 0.0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {STATUSES}")
        if (self.status == "ok") != (self.value is not None):
            raise ValueError("a value goes with status 'ok' and only with it")


class ObjectiveError(ValueError):
    """The run function's result has no such objective field, or it is not a number."""


def _reports_of(result: Any, launched: list) -> tuple[list, Any]:
    """(kernel reports, the object whose fields the objective reads); ``launched``: the
    reports of the launches made during the call."""
    from ascsim.sim.report import KernelReport

    if result is None:
        if not launched:
            raise ObjectiveError("the run function returned None and launched no kernel")
        return list(launched), list(launched)
    if isinstance(result, KernelReport):
        return [result], result
    if isinstance(result, tuple) and len(result) == 2 and hasattr(result[1], "device_time_us"):
        result = result[1]  # (output, info) of an operator called with return_report=True
    if hasattr(result, "device_time_us"):
        reports = getattr(result, "reports", None) or getattr(result, "kernels", None) or ()
        return list(reports), result
    if isinstance(result, (list, tuple)) and result and all(
            isinstance(r, KernelReport) for r in result):
        return list(result), list(result)
    raise ObjectiveError(f"the run function returned a {type(result).__name__}; expected a "
                         "KernelReport, an operator's info, a list of reports or None")


def _field(obj: Any, objective: str) -> float:
    head, *rest = objective.split(".")
    value = getattr(obj, head, None)
    if value is None and hasattr(obj, "to_json"):
        value = obj.to_json().get(head)
    if callable(value):
        value = value()
    for key in rest:
        if not isinstance(value, Mapping) or key not in value:
            raise ObjectiveError(f"objective {objective!r}: no {key!r} in {value!r}")
        value = value[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise ObjectiveError(f"objective {objective!r} is {value!r}, not a finite number "
                             f"(on a {type(obj).__name__})")
    return float(value)


def objective_value(target: Any, objective: str) -> float:
    """The objective of one report or info; of a list of reports, their sum."""
    if isinstance(target, list):
        return sum(_field(r, objective) for r in target)
    return _field(target, objective)


def _blocking_findings(reports: list, categories: Collection[str]) -> str:
    for report in reports:
        if getattr(report, "failed", False):
            return f"the launch of {report.kernel} stopped with an error"
        for finding in getattr(report, "findings", ()):
            if finding.category in categories:
                return f"{report.kernel}: {finding.format()}"
    return ""


def _error_text(exc: BaseException) -> str:
    """``Type: message (file:line)`` with the innermost frame of the user's code."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    for frame in reversed(frames):
        if "/ascsim/tune/" not in frame.filename.replace("\\", "/"):
            where = f" ({Path(frame.filename).name}:{frame.lineno})"
            break
    return f"{type(exc).__name__}: {exc}{where}"


def _with_stderr(reason: str, stderr: str) -> str:
    """The reason, plus the last line the trial wrote to stderr (the host tiling API says
    there why it refused, then the script raises a generic error)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f"{reason} [stderr: {lines[-1]}]" if lines else reason


def evaluate(run_fn: Callable[..., Any], config: Mapping[str, Any], objective: str,
             infeasible_findings: Collection[str] = INFEASIBLE_FINDINGS) -> Outcome:
    """Run one configuration and measure it; never raises for the run function's errors."""
    import contextlib
    import io
    import time

    from ascsim.session import SESSION

    stderr = io.StringIO()
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stderr(stderr), SESSION.collect() as launches:
            result = run_fn(**config)
        reports, target = _reports_of(result, launches.reports)
        blocked = _blocking_findings(reports, infeasible_findings)
        if blocked:
            return Outcome("infeasible", reason=blocked, wall_s=time.perf_counter() - t0)
        value = objective_value(target, objective)
        device = objective_value(target, "device_time_us") if objective != "device_time_us" \
            else value
    except ObjectiveError as exc:
        return Outcome("infeasible", reason=str(exc), wall_s=time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001 - any error of the trial is its result
        return Outcome("infeasible", reason=_with_stderr(_error_text(exc), stderr.getvalue()),
                       wall_s=time.perf_counter() - t0)
    return Outcome("ok", value, device_time_us=device, wall_s=time.perf_counter() - t0)
