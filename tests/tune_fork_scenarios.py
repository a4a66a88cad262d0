"""Scenarios of forked pool workers, each run in a fresh single-threaded interpreter by
tests/test_tune_backends.py (the test process itself runs other threads: pytest-xdist's,
and whatever earlier tests left, and forking it is not safe, so the pool would not fork)."""

from __future__ import annotations

import functools
import sys

import tune_helpers as h

from ascsim.tune import search
from ascsim.tune.backends import ProcessPoolBackend

SEARCH = {"space": h.SPACE, "budget": 16, "seed": 11}


def _on(start: str, run, **kwargs):
    pool = ProcessPoolBackend(2, start=start)
    try:
        result = search(run, backend=pool, **kwargs)
        assert pool.forked == (2 if start == "fork" else 0), pool.name
        return result
    finally:
        pool.close()


def killed(marker_dir: str) -> None:
    """(1, 2, slow) kills its worker every time, (2, 2, slow) once (see tune_helpers)."""
    run = functools.partial(h.dies_once_or_always, marker_dir=marker_dir)
    result = _on("fork", run, space=h.SPACE, budget=64)
    by_config = {(t.config["a"], t.config["b"], t.config["mode"]): t for t in result.trials}
    always = by_config[(1, 2, "slow")]
    assert always.status == "failed", always
    assert "died during the trial twice (retried once)" in always.reason
    assert "killed by SIGKILL" in always.reason
    once = by_config[(2, 2, "slow")]
    assert once.status == "ok" and once.value == h.bowl(2, 2, "slow"), once
    assert len(result.evaluated()) == 24 and result.config == h.OPTIMUM


def same_search() -> None:
    forked, fresh = _on("fork", h.synthetic, **SEARCH), _on("spawn", h.synthetic, **SEARCH)
    assert [t.config for t in forked.trials] == [t.config for t in fresh.trials]
    assert forked.config == fresh.config == h.OPTIMUM


def torch_threads() -> None:
    """The parent runs PyTorch's thread pool first; forked workers then do parallel-sized
    PyTorch work. Without one PyTorch thread per forked worker this hangs."""
    import torch

    torch.set_num_threads(max(2, torch.get_num_threads()))
    x = torch.ones(1024, 1024)
    assert float((x @ x).sum()) == 1024.0 ** 3
    assert _on("fork", h.torch_work, space=h.SPACE, budget=24).config == h.OPTIMUM


def after_products() -> None:
    """A process whose launches left the simulator's product threads running may still fork:
    the pool ends the idle threads first."""
    import threading

    from ascsim.sim import numerics

    numerics._workers().submit(int).result()
    assert threading.active_count() > 1
    assert _on("fork", h.synthetic, **SEARCH).config == h.OPTIMUM


def hanging(start: str, marker_dir: str) -> None:
    """A search whose trials never end: the test kills this process while they run."""
    run = functools.partial(h.hangs, marker_dir=marker_dir)
    pool = ProcessPoolBackend(2, start=start)
    search(run, backend=pool, **SEARCH)


if __name__ == "__main__":
    globals()[sys.argv[1]](*sys.argv[2:])
    print("scenario passed")
