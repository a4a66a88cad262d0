"""How many host threads the simulator's arithmetic may use.

A launch runs with one BLAS thread and one PyTorch thread (:func:`launch_threads`): most of its
arithmetic is small — one vector instruction, one Mmad of a K block — and a thread pool spends
more time waking and spinning than computing, while its spinning threads take the cores the
simulator's own thread needs. The exception is an ``mmad`` product big enough to keep several
threads busy (tens of millions of multiply-adds): :func:`wide` lends it the threads the process
had before the launch. (The Matmul API's region products run on worker threads instead, one
PyTorch thread each: see ``ascsim.sim.numerics.start_cube_matmul``.)
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

import torch
from threadpoolctl import ThreadpoolController

#: Multiply-adds from which a product is worth the process's full PyTorch thread pool.
WIDE_PRODUCT_MACS = 1 << 25

#: The PyTorch thread count outside the running launch (None: no launch is running). One
#: process-wide value, like the thread count itself: a launch's cores run in several threads.
_host_threads: int | None = None


@functools.cache
def _blas_libraries() -> tuple:
    """The process's BLAS libraries (threadpoolctl's controller of each), found once (the
    search costs about a millisecond)."""
    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


def _set_torch_threads(n: int) -> None:
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


@contextlib.contextmanager
def launch_threads() -> Iterator[None]:
    """One BLAS thread and one PyTorch thread for the block; the caller's counts afterwards."""
    global _host_threads
    before, outer = torch.get_num_threads(), _host_threads
    _host_threads = before if outer is None else outer
    # What threadpoolctl's limit(1) does, on the libraries found once: its own bookkeeping
    # costs ten times the library calls, and every launch pays it.
    libraries = _blas_libraries()
    blas_before = [library.get_num_threads() for library in libraries]
    try:
        for library in libraries:
            library.set_num_threads(1)
        _set_torch_threads(1)
        yield
    finally:
        for library, threads in zip(libraries, blas_before):
            library.set_num_threads(threads)
        _set_torch_threads(before)
        _host_threads = outer


@contextlib.contextmanager
def wide(macs: int) -> Iterator[None]:
    """The host's PyTorch threads for a product of ``macs`` multiply-adds, if it is big enough
    and a launch is running; otherwise nothing changes."""
    threads = _host_threads
    if threads is None or threads <= 1 or macs < WIDE_PRODUCT_MACS:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(1)
