"""Trials on a pool of local worker processes.

A worker is a fork of this process when that is safe (it then starts in milliseconds, with
everything already imported), else a fresh interpreter (``python -c`` from this one), which
imports ascsim and the run function's script again: see :mod:`ascsim.tune.backends.processes`
for when each is used. Unlike multiprocessing's ``spawn``, neither imports the caller's main
script again (a script calling ``search`` needs no ``if __name__ == "__main__"`` guard). A
worker gets the parent's ``sys.path`` and the trial spec once, then one configuration at a
time through its own socket, so the parent always knows which trial a worker was running when
it died: that trial is retried once on a new worker, then recorded as failed. Workers run in
their own session, so Ctrl-C in the terminal reaches only the parent, which stops them; a
worker whose parent is gone sees its socket close and exits.
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
from ascsim.tune.backends.processes import (
    START_METHODS,
    fork_unsafe_reason,
    fork_worker,
    spawn_worker,
)
from ascsim.tune.measure import Outcome
from ascsim.tune.trial import TrialSpec, death_reason

#: Seconds a new worker may take to import ascsim and load the run function.
START_TIMEOUT_S = 300.0

#: Trials sent to a worker ahead of its answers: the one it runs and the next.
JOBS_PER_WORKER = 2


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
    """One worker process and the parent's end of its socket. ``fork`` says how to start it;
    the trial spec is sent by :meth:`send_spec`, possibly later (a prepared pool)."""

    def __init__(self, fork: bool, others: list[int]):
        mine, theirs = socket.socketpair()
        if fork:
            self.process = fork_worker(theirs.fileno(), [mine.fileno(), *others], worker_main)
        else:
            self.process = spawn_worker(theirs.fileno(),
                                        "ascsim.tune.backends.pool:worker_main")
        self.forked = fork
        theirs.close()
        self.conn = Connection(mine.detach())
        self.has_spec = False
        # Sent and not yet answered, oldest first: (index, config, attempt). The worker runs
        # them in order, so the first is the one it is running.
        self.jobs: deque[tuple[int, dict, int]] = deque()

    def send_spec(self, payload: bytes) -> None:
        if self.has_spec:
            self.conn.send(("spec", payload))
        else:
            self.conn.send((list(sys.path), payload))
            self.has_spec = True

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
    """``workers`` local processes (default: one per CPU core), started as ``start`` says:
    "auto" (fork when safe, else fresh interpreters), "fork" or "spawn"."""

    def __init__(self, workers: int | None = None, start: str = "auto"):
        if workers is not None and workers < 1:
            raise BackendError(f"workers must be >= 1, got {workers}")
        if start not in START_METHODS:
            raise BackendError(f"start must be one of {START_METHODS}, got {start!r}")
        self.workers = workers or os.cpu_count() or 1
        self.start_method = start
        self._payload = b""
        self._pool: list[_Worker] = []

    @property
    def name(self) -> str:
        """"process pool", and how its running workers started."""
        if not self._pool:
            return "process pool"
        forked = self.forked
        how = "forked" if forked == len(self._pool) else "fresh interpreters" if not forked \
            else f"{forked} forked, {len(self._pool) - forked} fresh"
        return f"process pool ({how})"

    @property
    def forked(self) -> int:
        """How many of the running workers are forks of this process."""
        return sum(w.forked for w in self._pool)

    def _new_worker(self) -> _Worker:
        why_not = None if self.start_method == "spawn" else fork_unsafe_reason()
        if self.start_method == "fork" and why_not is not None:
            raise BackendError(f"cannot fork tuning workers: {why_not}")
        return _Worker(self.start_method != "spawn" and why_not is None,
                       [w.conn.fileno() for w in self._pool])

    def prepare(self) -> None:
        """Start the worker processes now, before the spec is known: call it while this
        process still runs a single thread (before a progress display starts its own), so
        "auto" can fork them."""
        while len(self._pool) < self.workers:
            self._pool.append(self._new_worker())

    def start(self, spec: TrialSpec) -> None:
        """Start the workers (or use the prepared ones), or hand running ones a new spec (a
        backend reused by several searches keeps its processes)."""
        try:
            self._payload = pickle.dumps(spec)
        except Exception as exc:  # noqa: BLE001 - any pickling error means the same thing
            raise BackendError(
                f"the run function cannot be sent to worker processes ({exc}); define it at "
                "module level in an importable module, or use backend='inline'") from None
        self.prepare()
        for worker in self._pool:
            worker.send_spec(self._payload)
        for worker in self._pool:
            worker.wait_ready()

    def _replace(self, dead: _Worker) -> _Worker:
        dead.stop()
        index = self._pool.index(dead)
        del self._pool[index]
        fresh = self._new_worker()
        self._pool.insert(index, fresh)
        fresh.send_spec(self._payload)
        fresh.wait_ready()
        return fresh

    def run(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, Outcome]]:
        queue = deque((i, dict(c), 0) for i, c in enumerate(configs))
        busy: dict[Connection, _Worker] = {}
        while queue or busy:
            for worker in self._pool:
                # Each worker holds up to JOBS_PER_WORKER trials, so it starts the next one
                # without waiting for this process to be scheduled and answer.
                # Near the end of the batch one job each, so no worker idles while another
                # holds two.
                depth = JOBS_PER_WORKER if len(queue) > len(self._pool) else 1
                while len(worker.jobs) < depth and queue:
                    job = queue.popleft()
                    worker.jobs.append(job)
                    busy[worker.conn] = worker
                    try:
                        worker.conn.send(("job", job[:2]))
                    except (BrokenPipeError, OSError):
                        break  # the worker is gone: its closed socket reports it below
            for ready in wait(list(busy)):
                worker = busy[ready]
                try:
                    kind, (done_index, outcome) = worker.conn.recv()
                except (EOFError, OSError):
                    yield from self._lost(worker, busy, queue)
                    continue
                worker.jobs.popleft()
                if not worker.jobs:
                    del busy[worker.conn]
                yield done_index, outcome

    def _lost(self, worker: _Worker, busy: dict, queue: deque) -> Iterator[tuple[int, Outcome]]:
        """The worker died (its socket closed) while running its first job: that trial is
        retried once, then failed; the jobs queued behind it never started and go back."""
        why = _exit_text(worker.exitcode)
        del busy[worker.conn]
        (index, config, attempt), *waiting = worker.jobs
        worker.jobs.clear()
        self._replace(worker)
        queue.extendleft(reversed(waiting))
        if attempt == 0:
            queue.appendleft((index, config, 1))
        else:
            yield index, Outcome("failed", reason=death_reason("the worker", why))

    def close(self) -> None:
        for worker in self._pool:
            worker.stop()
        self._pool = []
