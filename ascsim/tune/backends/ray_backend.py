"""Trials on a Ray cluster: ``"auto"`` starts a local one, any other value is the address of
an existing cluster to join (``ray start --head`` prints it; ``ray://host:10001`` for Ray
Client).

Each trial is one Ray task of one CPU. Ray itself retries a task once when its worker process
or node dies (``max_retries=1``); a task that dies again comes back as an error, recorded as
the trial's failure. Exceptions of the run function never reach Ray: the trial catches them
and reports the configuration infeasible. The workers of a joined cluster must be able to
import ascsim (and, for a script target, read the script at the same path).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ascsim.tune.backends.base import BackendError
from ascsim.tune.measure import Outcome
from ascsim.tune.trial import TrialSpec, death_reason

LOCAL = "auto"


def _import_ray():
    try:
        import ray
    except ImportError:
        raise BackendError("the Ray backend needs the ray package: pip install 'ascsim[ray]'") \
            from None
    return ray


def _run_trial(spec: TrialSpec, config: dict) -> Outcome:
    return spec.run(config)


def _probe(spec: TrialSpec) -> bool:
    """Load the spec on a worker (and a script target's script), so start() fails early."""
    resolve = getattr(spec.run_fn, "resolve", None)
    if resolve is not None:
        resolve()
    return True


def _last_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else ""


class RayBackend:
    """Trials as Ray tasks; ``workers`` caps the CPUs of a local cluster."""

    name = "ray"

    def __init__(self, address: str = LOCAL, workers: int | None = None):
        if workers is not None and workers < 1:
            raise BackendError(f"workers must be >= 1, got {workers}")
        self.address = address
        self._requested = workers
        self.workers = workers or 1
        self._ray = _import_ray()
        self._started = False
        self._spec_ref = None
        self._task = None
        errors = self._ray.exceptions
        # What a lost worker or node looks like once Ray's own retry is spent.
        self._deaths = tuple(getattr(errors, name) for name in (
            "WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OutOfMemoryError",
            "LocalRayletDiedError") if hasattr(errors, name))

    def start(self, spec: TrialSpec) -> None:
        ray = self._ray
        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                       "configure_logging": False}
            try:
                if self.address == LOCAL:
                    # The local workers import what this process can: its sys.path.
                    env = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
                    ray.init(num_cpus=self._requested, runtime_env={"env_vars": env}, **options)
                else:
                    ray.init(address=self.address, **options)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                what = "start a local Ray cluster" if self.address == LOCAL else \
                    f"join the Ray cluster at {self.address!r}"
                raise BackendError(f"cannot {what}: {exc}") from None
            self._started = True
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        try:
            self._spec_ref = ray.put(spec)
        except Exception as exc:  # noqa: BLE001 - any serialisation error means the same
            raise BackendError(f"the run function cannot be sent to Ray workers: {exc}") \
                from None
        self._task = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=False)(_run_trial)
        try:
            ray.get(ray.remote(num_cpus=1)(_probe).remote(self._spec_ref))
        except ray.exceptions.RayError as exc:
            raise BackendError(f"a Ray worker cannot load the run function: "
                               f"{type(exc).__name__}: {_last_line(exc)}") from None

    def run(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, Outcome]]:
        ray = self._ray
        pending = {self._task.remote(self._spec_ref, dict(c)): i for i, c in enumerate(configs)}
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    index = pending.pop(ref)
                    try:
                        outcome = ray.get(ref)
                    except self._deaths as exc:
                        outcome = Outcome("failed", reason=death_reason(
                            "the Ray worker", f"{type(exc).__name__}: {_last_line(exc)}"))
                    except ray.exceptions.RayError as exc:
                        outcome = Outcome("failed", reason=f"Ray could not run the trial: "
                                          f"{type(exc).__name__}: {_last_line(exc)}")
                    yield index, outcome
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False
