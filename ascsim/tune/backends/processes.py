"""How the process pool starts a worker: a fork of this process, or a fresh interpreter.

A fork costs milliseconds and inherits everything this process has imported (PyTorch,
ml_dtypes, ascsim, the run function's script), where a fresh interpreter spends one to two
seconds of CPU importing them again; on a sweep of cheap trials that start-up is most of the
wall time. But a fork copies only the forking thread: locks held by other threads stay locked
in the child, and an OpenMP pool that PyTorch already used has no threads behind it (a child
that enters a parallel region then hangs). So the pool forks only when this process runs a
single thread and Ray is not running in it, and a forked worker sets PyTorch to one thread
before anything else (as the simulator does inside every launch anyway). Otherwise, or when
asked to, it starts a fresh interpreter.

Both kinds of worker run :func:`ascsim.tune.backends.pool.worker_main` on one end of a
socket pair, in a session of their own (Ctrl-C in the terminal reaches only the parent). On
Linux a worker also dies with the process that started it (:func:`die_with_parent`): a parent
killed mid-sweep would otherwise leave its workers finishing trials nobody waits for (they
notice the closed socket only at their next message, minutes later on a slow trial).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable

#: How a pool may start its workers: "auto" forks when it is safe (see the module docstring),
#: "fork" insists (an error where it is not safe), "spawn" always starts fresh interpreters.
START_METHODS = ("auto", "fork", "spawn")


def fork_unsafe_reason() -> str | None:
    """Why forking this process now could leave a worker hung or broken; None when it is safe.
    The simulator's idle product threads (left by earlier launches) are ended first."""
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return f"fork is not used on {sys.platform}"
    from ascsim.sim.numerics import release_threads

    release_threads()
    threads = threading.active_count()
    if threads > 1:
        names = ", ".join(sorted(t.name for t in threading.enumerate()
                                 if t is not threading.current_thread()))
        return f"this process runs {threads} threads ({names})"
    ray = sys.modules.get("ray")
    if ray is not None and getattr(ray, "is_initialized", lambda: False)():
        return "Ray is running in this process"
    return None


class ForkedProcess:
    """A forked worker, with the part of ``subprocess.Popen``'s interface the pool uses."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                self.returncode = -1
                return self.returncode
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            time.sleep(0.005)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.kill(self.pid, signal.SIGKILL)


#: ``prctl`` option: the signal the kernel sends this process when its parent ends (Linux).
PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel kill this worker when ``parent_pid``, the process that started it,
    ends (Linux; elsewhere the worker stops at its next message, finding the socket closed).
    The signal follows the thread that started the worker: pools start theirs from the thread
    that runs the search. A parent already gone by now is caught by the check after it."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)


#: Variables that start a fresh worker's thread pools (OpenMP, so PyTorch's; OpenBLAS, MKL)
#: with one thread.
ONE_THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def one_torch_thread() -> None:
    """PyTorch on one thread in a forked worker: the pool already runs one worker per core,
    and a worker's own thread pool (OpenMP threads spinning beside every other worker's) makes
    each trial's host-side torch calls slower, not faster. A launch sets one thread inside it
    anyway; this covers the run function's own torch work around the launch. (A fresh
    interpreter gets the same from :data:`ONE_THREAD_ENV`.)"""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _forked_child(fd: int, close_fds: Iterable[int], main: Callable[[int], None],
                  parent_pid: int) -> None:
    """The forked worker's whole life; it never returns into the parent's code."""
    code = 0
    try:
        os.setsid()
        die_with_parent(parent_pid)
        for other in close_fds:
            with contextlib.suppress(OSError):  # already closed
                os.close(other)
        one_torch_thread()
        main(fd)
    except BaseException:  # noqa: BLE001 - the parent sees the exit code and the text
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            # A closed or broken stream must not keep the child alive.
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def fork_worker(fd: int, close_fds: Iterable[int],
                main: Callable[[int], None]) -> ForkedProcess:
    """Fork a worker that runs ``main(fd)``; ``close_fds`` are this process's ends of other
    workers' sockets, which the child must not keep open (a worker notices its parent is gone
    only when every copy of the parent's end is closed)."""
    for stream in (sys.stdout, sys.stderr):  # or the child would write the parent's buffer too
        stream.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        _forked_child(fd, close_fds, main, parent)
    return ForkedProcess(pid)


def spawn_worker(fd: int, main_ref: str) -> subprocess.Popen:
    """Start a fresh interpreter that runs ``main_ref`` (``module:function``) on ``fd``."""
    module, function = main_ref.split(":")
    code = (f"from ascsim.tune.backends.processes import die_with_parent; "
            f"die_with_parent({os.getpid()}); from {module} import {function}; {function}({fd})")
    # PyTorch (and the BLAS libraries) on one thread from the start, as in a forked worker.
    env = {**os.environ, **{name: "1" for name in ONE_THREAD_ENV}}
    return subprocess.Popen([sys.executable, "-c", code], pass_fds=[fd],
                            start_new_session=True, env=env)
