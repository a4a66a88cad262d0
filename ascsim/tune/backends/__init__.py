"""Where trials run: a pool of local processes (default) or a Ray cluster.

A backend evaluates a batch of configurations in parallel and yields ``(index, Outcome)`` as
each finishes, in any order; the search puts them back in order. A worker that dies during a
trial costs that trial one retry; a second death records the trial as failed.
"""

from ascsim.tune.backends.base import Backend, BackendError
from ascsim.tune.backends.pool import ProcessPoolBackend

#: Backend names ``make_backend`` (and ``search(backend=...)``) know.
BACKENDS = ("pool", "ray", "inline")


def make_backend(kind: str = "pool", workers: int | None = None,
                 ray_address: str = "auto") -> Backend:
    """A backend by name: "pool" (local processes), "ray" (``ray_address``: "auto" = a local
    cluster, else the address of one to join) or "inline" (this process)."""
    if kind == "pool":
        return ProcessPoolBackend(workers)
    if kind == "ray":
        from ascsim.tune.backends.ray_backend import RayBackend

        return RayBackend(ray_address, workers)
    if kind == "inline":
        from ascsim.tune.backends.inline import InlineBackend

        return InlineBackend()
    raise BackendError(f"backend {kind!r} is not one of {BACKENDS}")


__all__ = ["BACKENDS", "Backend", "BackendError", "ProcessPoolBackend", "make_backend"]
