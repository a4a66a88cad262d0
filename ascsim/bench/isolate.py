"""A package's cases run in a worker process, so that one case's failure is that case's alone.

The evaluator runs a package's cases in isolated child processes; here one worker process
(spawned, so nothing of the parent's state leaks in) imports the package once and runs the
cases one after the other. A case fails on its own, with one of :data:`ERROR_KINDS`, when:

- the package does not import (every case then fails the same way: the evaluator would see
  that on every case too);
- the operator raises (a kernel fault is reported with the kernel's file:line);
- the case takes longer than the timeout: the worker is killed and the next case gets a new one;
- the worker dies (a crash, ``os._exit``): the next case gets a new one;
- the call breaks a submission rule (:mod:`ascsim.bench.rules`).

Each case is called twice, on its inputs and on fresh inputs of the same shape (the
``cached_result`` rule); the first call is the one scored and timed.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from dataclasses import dataclass

import torch

from ascsim.bench.package import PackageSource, import_operator, watched_call
from ascsim.bench.references import References
from ascsim.bench.rules import SAME_VALUES, STALE_RESULT, Violation, reuse_violations
from ascsim.bench.tasks import Task

ERROR_KINDS = {
    "import_error": "the package does not import, or has no such operator",
    "exception": "the operator raised",
    "timeout": "the case ran longer than the timeout",
    "worker_died": "the process running the case died",
    "rule_violation": "the call broke a submission rule",
}
DEFAULT_TIMEOUT_S = 300.0
START_TIMEOUT_S = 180.0   # spawning the worker: Python, torch and the simulator import
FRESH_INPUTS_DRAW = 1     # the second call's inputs: the case's generator, draw 1


class CaseError(RuntimeError):
    """A case that could not be scored: ``kind`` (a key of :data:`ERROR_KINDS`), the message
    and, for ``rule_violation``, the violations."""

    def __init__(self, kind: str, message: str, violations: tuple[Violation, ...] = ()):
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown case error kind {kind!r}")
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.violations = tuple(violations)


@dataclass(frozen=True)
class CaseRequest:
    """What the worker needs for one case (tensors travel pickled through the pipe): the
    call's arguments, those of the second call on fresh inputs, and the (dtype, shape) of
    every output the case needs."""

    case_id: int
    args: tuple
    kwargs: dict
    fresh_args: tuple
    fresh_kwargs: dict
    expected: tuple[tuple[torch.dtype, tuple[int, ...]], ...]


def _describe(exc: BaseException) -> str:
    """``Type: message (at file:line)``, the line being the innermost frame outside ascsim's
    bench (the package's, or the kernel's)."""
    where = ""
    bench_dir = os.path.dirname(__file__) + os.sep
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not frame.filename.startswith(bench_dir):
            where = f" (at {frame.filename}:{frame.lineno})"
            break
    return f"{type(exc).__name__}: {exc}{where}"


def _sendable(value):
    """A result as it goes back through the pipe: a tensor, a tuple of tensors, or None."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, torch.Tensor) for v in value):
        return tuple(value)
    return None


def _run_request(fn, req: CaseRequest) -> dict:
    first = watched_call(fn, req.args, req.kwargs, req.expected)
    second = watched_call(fn, req.fresh_args, req.fresh_kwargs, req.expected)
    violations = list(first.violations)
    violations += [v for v in second.violations if v not in violations]
    violations += reuse_violations(first.out, second.out)
    return {"out": _sendable(first.out), "fresh_out": _sendable(second.out),
            "timing": first.timing, "violations": violations}


def worker_main(conn, source: PackageSource, op: str, soc: str) -> None:
    """The worker: install the front-ends, select the SoC, then answer case requests until
    told to stop (None) or the pipe closes."""
    from ascsim.runner import install_frontends
    from ascsim.session import SESSION

    install_frontends()
    SESSION.request_soc(soc)
    conn.send("ready")
    fn, import_error = None, None
    while True:
        try:
            req = conn.recv()
        except EOFError:
            return
        if req is None:
            return
        if fn is None and import_error is None:
            try:
                fn = import_operator(source, op)
            except Exception as exc:  # noqa: BLE001 - any import failure is the package's
                import_error = _describe(exc)
        if import_error is not None:
            conn.send({"error": ("import_error", import_error)})
            continue
        try:
            reply = _run_request(fn, req)
        except Exception as exc:  # noqa: BLE001 - the operator's failure is the case's result
            reply = {"error": ("exception", _describe(exc))}
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 - e.g. a result that does not pickle
            conn.send({"error": ("exception", f"the result could not be sent back from the "
                                 f"worker: {_describe(exc)}")})
        # Drop this case's inputs and results before waiting: otherwise they live on until
        # the next request has been received, next to its own.
        req = reply = None


class PackageRunner:
    """Runs a package's operator on a task's cases in a worker process (see the module
    docstring). Use as a context manager; :meth:`call_case` is the bench's case caller."""

    def __init__(self, task: Task, source: PackageSource, soc: str,
                 timeout_s: float = DEFAULT_TIMEOUT_S):
        if not timeout_s > 0:
            raise ValueError(f"the case timeout must be > 0 s, got {timeout_s}")
        self.task, self.source, self.soc, self.timeout_s = task, source, soc, timeout_s
        self._ctx = multiprocessing.get_context("spawn")
        self._proc = None
        self._conn = None

    # ------------------------------------------------------------------ the worker
    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=worker_main, args=(child, self.source, self.task.name,
                                                           self.soc), daemon=True)
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        if not parent.poll(START_TIMEOUT_S):
            self._stop(kill=True)
            raise CaseError("worker_died", f"the worker did not start within "
                            f"{START_TIMEOUT_S:.0f} s")
        try:
            parent.recv()
        except EOFError:
            code = proc.exitcode
            self._stop(kill=True)
            raise CaseError("worker_died", f"the worker exited while starting (exit code "
                            f"{code})") from None

    def _stop(self, kill: bool) -> None:
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if proc is None:
            return
        if not kill:
            try:
                conn.send(None)
            except OSError:
                kill = True
            proc.join(10)
        if proc.is_alive():
            proc.kill()  # the worker this runner started, by its handle
            proc.join(10)
        conn.close()

    def close(self) -> None:
        self._stop(kill=False)

    def __enter__(self) -> PackageRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ one case
    def _ask(self, req: CaseRequest) -> dict:
        if self._proc is None:
            self._start()
        try:
            self._conn.send(req)
        except OSError:  # the worker went away between cases (a late crash): a new one
            self._stop(kill=True)
            self._start()
            self._conn.send(req)
        if not self._conn.poll(self.timeout_s):
            self._stop(kill=True)
            raise CaseError("timeout", f"case {req.case_id} took longer than "
                            f"{self.timeout_s:g} s; its worker was stopped")
        try:
            return self._conn.recv()
        except EOFError:
            self._proc.join(10)
            code = self._proc.exitcode
            self._stop(kill=True)
            raise CaseError("worker_died", f"the worker died during case {req.case_id} "
                            f"(exit code {code})") from None

    def call_case(self, refs: References, variant: str, soc: str):
        """``(output, OpTiming)`` of the case's first call, or a :class:`CaseError`."""
        case = refs.case
        fresh = refs.fresh(FRESH_INPUTS_DRAW)
        args, kwargs = refs.package_args()
        fresh_args, fresh_kwargs = fresh.package_args()
        req = CaseRequest(case.case_id, args, kwargs, fresh_args, fresh_kwargs, refs.expected)
        reply = self._ask(req)
        if "error" in reply:
            kind, message = reply["error"]
            raise CaseError(kind, message)
        violations = list(reply["violations"])
        out, fresh_out = reply["out"], reply["fresh_out"]
        if fresh_out is not None and not any(v.kind in ("bad_output", "cached_result")
                                             for v in violations):
            violations += self._cache_check(refs, out, fresh, fresh_out)
        if violations:
            raise CaseError("rule_violation", "; ".join(str(v) for v in violations),
                            tuple(violations))
        return out, reply["timing"]

    @staticmethod
    def _cache_check(refs: References, out, fresh: References, fresh_out) -> list[Violation]:
        """Judged only when the first result is right (a wrong operator is a precision
        failure, not a cache): the second must differ from it and be right for its inputs."""
        if not refs.verdict(out).passed:
            return []
        # Equal values are a cache only when the right answers differ: an operator whose
        # result does not depend on the input values (exp with base 1 is 1 everywhere) gives
        # the same, correct, values on both calls. cann-bench's second verification judges
        # only the precision of the second result.
        if _same_values(out, fresh_out) and not _same_values(
                _rounded_like(refs.golden, out), _rounded_like(fresh.golden, fresh_out)):
            return [SAME_VALUES]
        return [] if fresh.verdict(fresh_out).passed else [STALE_RESULT]


def _outputs(value) -> tuple:
    return (value,) if isinstance(value, torch.Tensor) else tuple(value)


def _rounded_like(golden, out) -> tuple:
    """The golden of every output rounded to the candidate output's dtype (what a correct
    candidate returns, up to rounding)."""
    return tuple(g.to(o.dtype) if isinstance(g, torch.Tensor) and isinstance(o, torch.Tensor)
                 else g for g, o in zip(_outputs(golden), _outputs(out)))


def _same_values(a, b) -> bool:
    a, b = _outputs(a), _outputs(b)
    return len(a) == len(b) and all(
        isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and torch.equal(x, y)
        for x, y in zip(a, b))
