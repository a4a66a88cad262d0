"""Where trials run: a pool of local processes (default) or a Ray cluster.

A backend evaluates a batch of configurations in parallel and yields ``(index, Outcome)`` as
each finishes, in any order; the search puts them back in order. A worker that dies during a
trial costs that trial one retry; a second death records the trial as failed.
"""

from ascsim.tune.backends.base import Backend, BackendError
from ascsim.tune.backends.pool import ProcessPoolBackend


def make_backend(workers: int | None = None, ray: str | None = None) -> Backend:
    """The process pool, or with ``ray`` ("auto" = a local cluster, else an address) Ray."""
    if ray is not None:
        from ascsim.tune.backends.ray_backend import RayBackend

        return RayBackend(ray, workers)
    return ProcessPoolBackend(workers)


__all__ = ["Backend", "BackendError", "ProcessPoolBackend", "make_backend"]
