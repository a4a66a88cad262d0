"""Trials on a pool of local worker processes.

Each worker is a fresh interpreter (``python -c`` from this one), so none inherits the
parent's threads (the simulator's cube-product threads, PyTorch's pools) or locks held by
them, which ``fork`` would copy in whatever state they were; and unlike multiprocessing's
``spawn``, it does not import the caller's main script again (a script calling ``search``
needs no ``if __name__ == "__main__"`` guard). A worker gets the parent's ``sys.path`` and the
trial spec once, then one configuration at a time through its own socket, so the parent always
knows which trial a worker was running when it died: that trial is retried once on a new
worker, then recorded as failed. Workers run in their own session, so Ctrl-C in the terminal
reaches only the parent, which stops them; a worker whose parent is gone sees its socket close
and exits.
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from ascsim.tune.backends.base import BackendError
from ascsim.tune.measure import Outcome
from ascsim.tune.trial import TrialSpec, death_reason

#: Seconds a new worker may take to import ascsim and load the run function.
START_TIMEOUT_S = 300.0


def _load_spec(conn: Connection, payload: bytes) -> TrialSpec | None:
    """Unpickle a spec (and load a script target now, so its errors show at start); tell the
    parent whether it worked."""
    try:
        spec: TrialSpec = pickle.loads(payload)
        resolve = getattr(spec.run_fn, "resolve", None)
        if resolve is not None:
            resolve()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which stops
        conn.send(("broken", f"{type(exc).__name__}: {exc}"))
        return None
    conn.send(("ready", os.getpid()))
    return spec


def worker_main(fd: int) -> None:
    """A worker's life: take the parent's sys.path and a spec, then run configurations
    (or take a new spec) until told to stop, or until the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(fd)
    try:
        path, payload = conn.recv()
    except EOFError:
        return
    sys.path[:] = path
    spec = _load_spec(conn, payload)
    while spec is not None:
        try:
            message = conn.recv()
        except EOFError:
            return  # the parent is gone
        if message is None:
            return
        kind, body = message
        if kind == "spec":
            spec = _load_spec(conn, body)
        else:
            index, config = body
            conn.send(("done", (index, spec.run(config))))


def _exit_text(code: int | None) -> str:
    if code is None:
        return "the worker process is gone"
    if code < 0:
        try:
            return f"the worker process was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"the worker process was killed by signal {-code}"
    return f"the worker process exited with code {code}"


class _Worker:
    def __init__(self, payload: bytes):
        mine, theirs = socket.socketpair()
        code = f"from ascsim.tune.backends.pool import worker_main; worker_main({theirs.fileno()})"
        self.process = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()],
                                        start_new_session=True)
        theirs.close()
        self.conn = Connection(mine.detach())
        self.conn.send((list(sys.path), payload))
        self.job: tuple[int, dict, int] | None = None  # (index, config, attempt)

    @property
    def exitcode(self) -> int | None:
        try:
            return self.process.wait(5)
        except subprocess.TimeoutExpired:
            return None

    def wait_ready(self) -> None:
        if not self.conn.poll(START_TIMEOUT_S):
            raise BackendError(f"a tuning worker did not start within {START_TIMEOUT_S:.0f} s")
        try:
            kind, detail = self.conn.recv()
        except EOFError:
            raise BackendError(f"a tuning worker died while starting: "
                               f"{_exit_text(self.exitcode)}") from None
        if kind == "broken":
            raise BackendError(f"a tuning worker cannot load the run function: {detail}")

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.conn.send(None)
                self.process.wait(2)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.conn.close()


class ProcessPoolBackend:
    """``workers`` local processes (default: one per CPU core)."""

    name = "process pool"

    def __init__(self, workers: int | None = None):
        if workers is not None and workers < 1:
            raise BackendError(f"workers must be >= 1, got {workers}")
        self.workers = workers or os.cpu_count() or 1
        self._payload = b""
        self._pool: list[_Worker] = []

    def start(self, spec: TrialSpec) -> None:
        """Start the workers, or hand running ones a new spec (a backend reused by several
        searches keeps its processes)."""
        try:
            self._payload = pickle.dumps(spec)
        except Exception as exc:  # noqa: BLE001 - any pickling error means the same thing
            raise BackendError(
                f"the run function cannot be sent to worker processes ({exc}); define it at "
                "module level in an importable module, or use backend='inline'") from None
        if self._pool:
            for worker in self._pool:
                worker.conn.send(("spec", self._payload))
        else:
            self._pool = [_Worker(self._payload) for _ in range(self.workers)]
        for worker in self._pool:
            worker.wait_ready()

    def _replace(self, dead: _Worker) -> _Worker:
        dead.stop()
        fresh = _Worker(self._payload)
        fresh.wait_ready()
        self._pool[self._pool.index(dead)] = fresh
        return fresh

    def run(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, Outcome]]:
        queue = deque((i, dict(c), 0) for i, c in enumerate(configs))
        busy: dict[Connection, _Worker] = {}
        while queue or busy:
            for worker in self._pool:
                if worker.job is None and queue:
                    worker.job = queue.popleft()
                    busy[worker.conn] = worker
                    try:
                        worker.conn.send(("job", worker.job[:2]))
                    except (BrokenPipeError, OSError):
                        pass  # the worker is gone: its closed socket reports it below
            for ready in wait(list(busy)):
                worker = busy[ready]
                index, config, attempt = worker.job
                try:
                    kind, (done_index, outcome) = worker.conn.recv()
                    worker.job = None
                    del busy[worker.conn]
                    yield done_index, outcome
                    continue
                except (EOFError, OSError):
                    pass
                # The worker died during the trial: its socket closed.
                why = _exit_text(worker.exitcode)
                del busy[worker.conn]
                worker.job = None
                self._replace(worker)
                if attempt == 0:
                    queue.appendleft((index, config, 1))
                else:
                    yield index, Outcome("failed", reason=death_reason("the worker", why))

    def close(self) -> None:
        for worker in self._pool:
            worker.stop()
        self._pool = []
