"""PyPTO Pro's SIMT mode (``pl.simt``): thread grids launched from a vector section.

``@pl.simt.function(max_threads=N)`` defines a launchable function (without ``max_threads``, a
callee); ``pl.simt.launch(fn, threads=..., args=(...))`` runs it on the calling AIV; inside,
``pl.simt.thread_idx()`` and the other context queries give each thread its place. The threads
of a launch run together (:mod:`ascsim.pto.simt.threads`).
"""

from __future__ import annotations

from types import SimpleNamespace

from ascsim.pto.simt import threads as _threads
from ascsim.pto.simt.function import SimtFunction, simt_function
from ascsim.pto.simt.launch import launch as _launch


def thread_idx() -> _threads.Dim3:
    """The calling threads' coordinates in the launch (``.x`` fastest)."""
    return _threads.run().thread


def block_dim() -> _threads.Dim3:
    """The launch's thread dimensions."""
    return _threads.run().block_dim


def block_idx() -> _threads.Dim3:
    """The launching AIV's coordinates in the kernel's grid (``.x`` = ``pl.get_block_idx()``)."""
    return _threads.run().block_idx


def grid_dim() -> _threads.Dim3:
    """The kernel's grid: ``.x`` = the number of AIVs it runs on."""
    return _threads.run().grid_dim


def linear_thread_idx():
    """``x + y * block_dim.x + z * block_dim.x * block_dim.y``."""
    return _threads.run().linear


def warp_size() -> int:
    """Threads per warp of the SoC's SIMT unit."""
    return _threads.run().warp_size


#: ``pl.simt``.
simt = SimpleNamespace(function=simt_function, launch=_launch, thread_idx=thread_idx,
                       block_dim=block_dim, block_idx=block_idx, grid_dim=grid_dim,
                       linear_thread_idx=linear_thread_idx, warp_size=warp_size)

__all__ = ["SimtFunction", "simt", "simt_function"]
