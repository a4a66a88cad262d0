"""Backends: a worker killed mid-trial, and the same best on every backend and worker count."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import tune_helpers as h

from ascsim.tune import search
from ascsim.tune.backends import BackendError, ProcessPoolBackend
from ascsim.tune.backends.processes import fork_unsafe_reason

# TPE on 16 of the 24 configurations: a real sampled search, not the exhaustive grid.
SEARCH = {"space": h.SPACE, "budget": 16, "seed": 11}


def _killed_checks(result) -> None:
    """(1, 2, slow) kills its worker every time: failed after one retry, with the reason;
    (2, 2, slow) kills it once: the retry measures it; the study goes on to the optimum."""
    by_config = {(t.config["a"], t.config["b"], t.config["mode"]): t for t in result.trials}
    always = by_config[(1, 2, "slow")]
    assert always.status == "failed"
    assert "died during the trial twice (retried once)" in always.reason
    once = by_config[(2, 2, "slow")]
    assert once.status == "ok" and once.value == pytest.approx(h.bowl(2, 2, "slow"))
    assert len(result.evaluated()) == 24
    assert result.config == h.OPTIMUM


def test_a_worker_killed_mid_trial_costs_only_that_trial(tmp_path):
    run = functools.partial(h.dies_once_or_always, marker_dir=str(tmp_path))
    pool = ProcessPoolBackend(2, start="spawn")
    try:
        result = search(run, h.SPACE, budget=64, backend=pool)
        assert pool.forked == 0
    finally:
        pool.close()
    _killed_checks(result)
    assert "killed by SIGKILL" in next(t for t in result.trials if t.status == "failed").reason


def test_fresh_interpreter_workers_run_pytorch_on_one_thread(monkeypatch):
    """A pool runs one worker per core: a worker's own PyTorch thread pool would only spin
    beside the other workers' (forked workers set one thread at the fork, fresh interpreters
    once they have loaded the run function)."""
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # what a fresh interpreter would start with
    pool = ProcessPoolBackend(2, start="spawn")
    try:
        result = search(h.torch_threads, {"a": [1, 2], "b": [2], "mode": ["slow"]}, budget=2,
                        backend=pool)
    finally:
        pool.close()
    assert [t.value for t in result.trials] == [1.0, 1.0]


def _scenario(name: str, *args: str) -> None:
    """Run a scenario of tests/tune_fork_scenarios.py in a fresh interpreter (one thread, so
    the pool forks its workers) and fail with its output if it fails."""
    here = Path(__file__).parent
    done = subprocess.run([sys.executable, str(here / "tune_fork_scenarios.py"), name, *args],
                          capture_output=True, text=True, timeout=600, cwd=here)
    assert done.returncode == 0 and "scenario passed" in done.stdout, \
        f"scenario {name} failed:\n{done.stdout}\n{done.stderr}"


def test_a_forked_worker_killed_mid_trial_costs_only_that_trial(tmp_path):
    _scenario("killed", str(tmp_path))


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_workers_die_with_a_killed_parent(start, tmp_path):
    """A parent killed mid-trial leaves no worker running its trial on."""
    here = Path(__file__).parent
    parent = subprocess.Popen([sys.executable, str(here / "tune_fork_scenarios.py"), "hanging",
                               start, str(tmp_path)], cwd=here, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        workers = _wait_for(lambda: [int(p.name.split("-")[1]) for p in
                                     tmp_path.glob("worker-*")], 2, 120)
    finally:
        parent.kill()
        parent.wait()
    assert _wait_for(lambda: [pid for pid in workers if _alive(pid)], 0, 20) == []


def _wait_for(probe, want: int, seconds: float) -> list:
    """``probe()`` once it returns ``want`` items (or its last value after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while True:
        found = probe()
        if len(found) == want or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_forked_and_fresh_workers_give_the_same_search():
    _scenario("same_search")


def test_forked_workers_survive_a_parent_that_used_torch_threads():
    _scenario("torch_threads")


def test_the_pool_forks_after_launches_left_product_threads():
    _scenario("after_products")


def test_one_and_two_pool_workers_give_the_same_search():
    one = search(h.synthetic, workers=1, **SEARCH)
    two = search(h.synthetic, workers=2, **SEARCH)
    assert one.sampler == "tpe"
    assert [t.config for t in one.trials] == [t.config for t in two.trials]
    assert one.config == two.config


def test_a_running_thread_makes_auto_start_fresh_interpreters():
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name="busy-helper")
    thread.start()
    try:
        assert "busy-helper" in fork_unsafe_reason()
        with pytest.raises(BackendError, match="cannot fork tuning workers: .*busy-helper"):
            ProcessPoolBackend(1, start="fork").prepare()
        pool = ProcessPoolBackend(1)
        try:
            result = search(h.synthetic, h.SPACE, budget=4, backend=pool)
            assert pool.forked == 0 and len(result.evaluated()) == 4
        finally:
            pool.close()
    finally:
        release.set()
        thread.join()


def test_an_unknown_start_method_is_refused():
    with pytest.raises(BackendError, match="start must be one of"):
        ProcessPoolBackend(1, start="forkserver")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray cluster for the module (the backend reuses a running one); its
    workers import from this process's sys.path, as the backend's own local cluster does."""
    pytest.importorskip("ray", reason="the Ray backend's tests need the ray extra "
                        "(pip install 'ascsim[ray]', or make test EXTRAS=dev,ray)")
    from ascsim.tune.backends.ray_backend import RayBackend

    backend = RayBackend("auto", workers=2)
    backend.start(h_spec())
    yield backend
    backend.close()


def h_spec():
    from ascsim.tune.trial import TrialSpec

    return TrialSpec(h.synthetic, "device_time_us", frozenset(), None)


def test_ray_gives_the_pools_best_and_survives_killed_workers(local_ray, tmp_path):
    pool = search(h.synthetic, workers=2, **SEARCH)
    on_ray = search(h.synthetic, backend="ray", **SEARCH)
    assert on_ray.backend == "ray" and on_ray.workers == 2
    assert [t.config for t in on_ray.trials] == [t.config for t in pool.trials]
    assert on_ray.config == pool.config
    run = functools.partial(h.dies_once_or_always, marker_dir=str(tmp_path))
    _killed_checks(search(run, h.SPACE, budget=64, backend="ray"))
