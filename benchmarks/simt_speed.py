"""What a SIMT launch costs to simulate: the threads run together, or one by one.

A launch of 1024 threads adds ``delta`` to a UB tile, written three ways on one AIV of the
Ascend950PR_9579, timed on the host in the same run:

* ``tile``: the tile operation ``pl.adds`` (one vector instruction) -- the reference;
* ``simt``: a SIMT function ``data[0, tid] = data[0, tid] + delta``, all threads together (one
  numpy gather, add and scatter per statement);
* ``simt, divergent``: the same with a branch on the thread id (both sides masked);
* ``simt, per thread``: the same body after an early ``return`` in a branch, which ascsim runs
  thread by thread (the fall-back for control flow that masking does not express).

Prints each launch's wall time per kernel call and its ratio to the tile form, and the
per-thread fall-back's ratio to the vectorised launch::

    .venv/bin/python benchmarks/simt_speed.py
"""

from __future__ import annotations

import time

import torch

import ascsim.pto.language as pl
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
N = 1024
ROW = pl.TileType(shape=[1, N], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
REPEATS = 5


@pl.simt.function(max_threads=N)
def add_all(data: pl.Tile[[1, N], pl.DT_FP32], delta: pl.DT_FP32):
    tid = pl.simt.linear_thread_idx()
    data[0, tid] = data[0, tid] + delta


@pl.simt.function(max_threads=N)
def add_divergent(data: pl.Tile[[1, N], pl.DT_FP32], delta: pl.DT_FP32):
    tid = pl.simt.linear_thread_idx()
    if tid % 2 == 0:
        data[0, tid] = data[0, tid] + delta
    else:
        data[0, tid] = data[0, tid] - delta


@pl.simt.function(max_threads=N)
def add_per_thread(data: pl.Tile[[1, N], pl.DT_FP32], delta: pl.DT_FP32):
    tid = pl.simt.linear_thread_idx()
    if tid >= N:
        return
    data[0, tid] = data[0, tid] + delta


def _kernel(body):
    @pl.jit(auto_mutex=False)
    def kernel(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32],
               delta: pl.DT_FP32):
        data = pl.make_tile(ROW, addr=0)
        with pl.section_vector():
            pl.load(data, x, [0, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            body(data, delta)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(y, data, [0, 0])
    return kernel


def _tile_body(data, delta):
    pl.adds(data, data, delta)


def _launcher(fn):
    def body(data, delta):
        pl.simt.launch(fn, threads=N, args=(data, delta))
    return body


FORMS = {"tile (pl.adds)": _kernel(_tile_body), "simt": _kernel(_launcher(add_all)),
         "simt, divergent": _kernel(_launcher(add_divergent)),
         "simt, per thread": _kernel(_launcher(add_per_thread))}


def _seconds(kernel) -> float:
    x = torch.randn(1, N)
    y = torch.empty_like(x)
    kernel(x, y, 1.5)  # compile
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        kernel(x, y, 1.5)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    with SESSION.using_soc(SOC):
        times = {name: _seconds(kernel) for name, kernel in FORMS.items()}
    tile = times["tile (pl.adds)"]
    print(f"{'form':<20} {'ms per call':>12} {'x tile':>8}")
    for name, seconds in times.items():
        print(f"{name:<20} {seconds * 1e3:>12.2f} {seconds / tile:>8.2f}")
    print(f"per-thread fall-back / vectorised launch: "
          f"{times['simt, per thread'] / times['simt']:.1f}x ({N} threads)")


if __name__ == "__main__":
    main()
