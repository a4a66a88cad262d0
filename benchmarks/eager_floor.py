"""The floor of an eager simulator: what any simulator that runs a kernel's Python and computes
its values must spend, measured on this host, so the speed ratios of ``sim_speed.py`` can be
read against it.

- SwiGLU (2, 1024, 1024), per instruction: the example kernel's own Python (its body, with every
  pyasc call a no-op) plus the numpy work its values need per 512-element tile (two loads, the
  SwiGLU maths, one store), over its four instructions per tile.
- matmul + LeakyReLU 1024x256x640, per launch: the two AIV regions' products exactly as the
  simulator computes them (``start_cube_matmul``, on its two workers) plus, per 256x128 C block,
  the numpy moves its values make (L0C + bias -> GM workspace, -> UB, LeakyReLU, -> C), against
  the torch reference timed in the same rounds.

What the simulator spends above these is its own bookkeeping: records, timing, the L2 model,
the checks and the front-end's parsing.

    .venv/bin/python benchmarks/eager_floor.py
"""

from __future__ import annotations

import statistics
import sys
import timeit
import types

import numpy as np
import torch

from ascsim.demo import load_example
from ascsim.hw import get_soc
from ascsim.sim.numerics import start_cube_matmul

SWIGLU_SHAPE = (2, 1024, 1024)  # fp32, as in sim_speed.py
SWIGLU_SOC = "Ascend910B1"
SWIGLU_INSTRS_PER_TILE = 4  # two loads, the SwiGLU, one store


class _NoOp:
    """Every pyasc object and call at once: calls, indexing and arithmetic give the object
    back, and so does every attribute the kernel names (set on the class by
    :func:`_noop_for`, so each is one dictionary hit), so the kernel's Python runs with no work
    behind its calls."""

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __add__(self, other):
        return self

    __radd__ = __mul__ = __rmul__ = __add__


def _noop_for(code: types.CodeType) -> _NoOp:
    """A no-op object answering every name ``code`` uses, and an ``asc`` whose loops and block
    index are real."""
    noop_type = type("NoOp", (_NoOp,), {})
    noop = noop_type()
    for name in code.co_names:
        setattr(noop_type, name, noop)
    noop.__dict__.update(range=range, get_block_idx=lambda: 0)
    return noop


def swiglu_plan():
    """The example's plan for SwiGLU :data:`SWIGLU_SHAPE` fp32 on :data:`SWIGLU_SOC`'s AIVs."""
    total = 1
    for size in SWIGLU_SHAPE:
        total *= size
    return load_example("swiglu").plan_swiglu(total, 4, get_soc(SWIGLU_SOC).aiv_count)


def swiglu_body_seconds(plan) -> float:
    """The SwiGLU example kernel's Python for every core of ``plan``, every pyasc call a no-op
    (best of 7)."""
    kernel = load_example("swiglu").swiglu_kernel.fn
    noop = _noop_for(kernel.__code__)
    body = types.FunctionType(kernel.__code__, dict(kernel.__globals__, asc=noop))

    def run():
        for _ in range(plan.cores):
            body(noop, noop, plan.per_core, plan.tile, 0)

    return min(timeit.repeat(run, number=1, repeat=7))


def swiglu_tile_numpy_seconds(tile: int) -> float:
    """The numpy work of one SwiGLU tile's values: two loads into UB, the maths, one store."""
    gm = np.random.default_rng(0).random(1 << 16, dtype=np.float32).view(np.uint8)
    ub = np.zeros(64 * 1024, np.uint8)
    nbytes = tile * 4
    x, up, y = (ub[i * nbytes:(i + 1) * nbytes].view(np.float32) for i in range(3))

    def one_tile():
        ub[:nbytes] = gm[:nbytes]
        ub[nbytes:2 * nbytes] = gm[nbytes:2 * nbytes]
        t = np.negative(x)
        np.exp(t, out=t)
        t += np.float32(1)
        np.divide(x, t, out=t)
        np.multiply(t, up, out=y)
        gm[2 * nbytes:3 * nbytes] = ub[2 * nbytes:3 * nbytes]

    return min(timeit.repeat(one_tile, number=2000, repeat=7)) / 2000


def swiglu_floor_per_instruction() -> float:
    """Seconds per instruction of the eager floor on SwiGLU :data:`SWIGLU_SHAPE`."""
    plan = swiglu_plan()
    body = swiglu_body_seconds(plan) / (plan.padded // plan.tile)
    return (body + swiglu_tile_numpy_seconds(plan.tile)) / SWIGLU_INSTRS_PER_TILE


def matmul_floor_case(m: int = 1024, k: int = 256, n: int = 640, base_m: int = 256,
                      base_n: int = 128, regions: int = 2, alpha: float = 0.001):
    """(floor(), reference()) for the fused matmul + LeakyReLU: the regions' products and the
    C blocks' moves, and the torch reference of ``sim_speed.py``."""
    a = torch.randint(-5, 5, (m, k)).to(torch.float16)
    b = torch.randint(-5, 5, (k, n)).to(torch.float16)
    bias = torch.randint(-5, 5, (1, n)).to(torch.float32)
    a_np, b_np, bias_np = a.numpy(), b.numpy(), bias.numpy()
    c = np.zeros((m, n), np.float32)
    block = np.zeros((base_m, base_n), np.float32)
    workspace, ub = np.zeros_like(block), np.zeros_like(block)
    rows = m // regions
    scale = np.float32(alpha)

    def floor():
        futures = [start_cube_matmul(a_np[r * rows:(r + 1) * rows], b_np)
                   for r in range(regions)]
        for r, future in enumerate(futures):
            product = future.result()
            for top in range(0, rows, base_m):
                for left in range(0, n, base_n):
                    np.add(product[top:top + base_m, left:left + base_n],
                           bias_np[:, left:left + base_n], out=workspace)
                    ub[...] = workspace
                    np.copyto(ub, ub * scale, where=ub < 0)
                    c[r * rows + top:r * rows + top + base_m, left:left + base_n] = ub

    def reference():
        return torch.nn.functional.leaky_relu(a.float() @ b.float() + bias, alpha)

    return floor, reference


def matmul_floor_ratio(rounds: int = 15) -> tuple[float, float]:
    """(median floor seconds, median reference seconds), timed in alternating rounds."""
    floor, reference = matmul_floor_case()
    floor()
    reference()
    floors, refs = [], []
    for _ in range(rounds):
        floors.append(min(timeit.repeat(floor, number=1, repeat=1)))
        refs.append(min(timeit.repeat(reference, number=1, repeat=3)))
    return statistics.median(floors), statistics.median(refs)


def bare_numpy_add_seconds(count: int = 512) -> float:
    """One ``np.add`` of two ``count``-element fp32 arrays into a third (best of 7 x 2000)."""
    a = np.random.default_rng(0).random(count, dtype=np.float32)
    b, out = a.copy(), np.empty_like(a)
    return min(timeit.repeat(lambda: np.add(a, b, out=out), number=2000, repeat=7)) / 2000


def main() -> int:
    bare = bare_numpy_add_seconds()
    per_instr = swiglu_floor_per_instruction()
    print(f"SwiGLU (2, 1024, 1024), eager floor per instruction: {per_instr * 1e6:.2f} us = "
          f"{per_instr / bare:.1f}x one bare np.add of 512 fp32 ({bare * 1e6:.2f} us)")
    floor, ref = matmul_floor_ratio()
    print(f"matmul + LeakyReLU 1024x256x640, eager floor: {floor * 1e3:.2f} ms = "
          f"{floor / ref:.2f}x torch ({ref * 1e3:.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
