"""Run functions for the tuning tests (module level, so worker processes can import them)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

from ascsim.sim.findings import Finding
from ascsim.sim.report import KernelReport

#: The synthetic space: time is a bowl with its minimum at a=3, b=5 ("fast" mode halves it).
SPACE = {"a": [1, 2, 3, 4], "b": [2, 5, 7], "mode": ["slow", "fast"]}
OPTIMUM = {"a": 3, "b": 5, "mode": "fast"}


def bowl(a: int, b: int, mode: str) -> float:
    t = 10.0 + (a - 3) ** 2 + 0.5 * (b - 5) ** 2
    return t / 2 if mode == "fast" else t


def synthetic(a: int, b: int, mode: str):
    """An operator-like info object with the bowl's time."""
    return SimpleNamespace(device_time_us=bowl(a, b, mode), reports=())


def _report(time_us: float, findings=()) -> KernelReport:
    return KernelReport(kernel="synthetic_kernel", soc="Ascend910B1", kernel_type="AIV",
                        block_num=1, device_time_us=time_us, launch_overhead_us=1.0, cores=[],
                        findings=list(findings))


def with_infeasible(a: int, b: int, mode: str):
    """a=4 fails a tiling check; b=7 overflows a buffer (a finding); the optimum is feasible.
    (a=1, b=2, fast) would be the fastest of all if the overflow were ignored."""
    if a == 4:
        raise ValueError(f"no tiling fits a={a}")
    if b == 7:
        overflow = Finding("local-overflow", "UB buffer of 300000 bytes exceeds 196608",
                           (("kernel.py", 12),))
        return _report(1.0, [overflow])
    return _report(bowl(a, b, mode))


def dies_once_or_always(a: int, b: int, mode: str, marker_dir: str):
    """Kill this worker process in the middle of the trial: (1, 2, slow) always, (2, 2, slow)
    only the first time (a marker file remembers it); everything else measures normally."""
    marker = Path(marker_dir) / f"died-{a}-{b}-{mode}"
    if (a, b, mode) == (1, 2, "slow") or ((a, b, mode) == (2, 2, "slow")
                                         and not marker.exists()):
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return _report(bowl(a, b, mode))


def interrupts_at(a: int, b: int, mode: str):
    """Ctrl-C during the trial of (4, 7, fast) while it is armed (inline backend only)."""
    if (a, b, mode) == (4, 7, "fast") and ARMED[0]:
        raise KeyboardInterrupt
    return synthetic(a, b, mode)


ARMED = [True]


def torch_work(a: int, b: int, mode: str):
    """The bowl, after work big enough for PyTorch's parallel paths, so a forked worker whose
    parent already used PyTorch's thread pool would hang here if the pool forked unsafely."""
    import torch

    x = torch.ones(512, 512)
    assert float((x @ x).sum()) == 512.0 ** 3
    assert float(torch.tanh(torch.zeros(1 << 20)).sum()) == 0.0
    return synthetic(a, b, mode)


def hangs(a: int, b: int, mode: str, marker_dir: str):
    """Write this worker's pid to ``marker_dir`` and stay in the trial (a trial that takes
    minutes), for a test that kills the parent meanwhile."""
    (Path(marker_dir) / f"worker-{os.getpid()}").touch()
    time.sleep(600)
    return synthetic(a, b, mode)


def torch_threads(a: int, b: int, mode: str):
    """The number of PyTorch threads the trial's own code runs with, as its time."""
    import torch

    return SimpleNamespace(device_time_us=float(torch.get_num_threads()), reports=())
