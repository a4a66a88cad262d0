"""``matmul_leaky_relu``: C = LeakyReLU(A·B + bias, alpha) on the simulated chip.

A [M, K] and B [K, N] are float16 or bfloat16 (one dtype), bias [1, N] (or [N]) float32, C
float32. The Cube accumulates in fp32 and adds the bias; the activation runs on the vector
units. Variants:

- ``unfused``: a matmul kernel writes A·B + bias (fp32) to GM, a vector kernel applies
  LeakyReLU and writes C — two launches. C is already an fp32 workspace, so the semi-fused
  design (cube kernel → fp32 workspace → vector kernel) is this same pair: ``semi`` runs it.
- ``fused``: one MIX kernel; each C block goes from the Cube to the AIV's UB (through a GM
  workspace on 910B, FixPipe L0C→UB on 950), is activated there and written once.
- ``auto``: the faster of the two for the shape, chosen by simulating both once per
  (shape, dtype, SoC) and remembering the choice.

``tiling={"base_m": 128, ...}`` fixes tiling knobs (:data:`TILING_KNOBS`). Without it, a
problem tuned by ``ascsim bench matmul_leaky_relu --tune`` (``ascsim/tune/data``) runs on its
tuned knobs, and ``auto`` runs its tuned fastest variant; ``info.notes`` says so.
"""

from __future__ import annotations

import numpy as np
import torch

from ascsim.asc.adv.tiling_structs import TCubeTiling
from ascsim.asc.lib import host
from ascsim.ops.kernels.activation import TILE, activation_kernel, launch_plan
from ascsim.ops.kernels.matmul import matmul_bias_kernel, matmul_leaky_relu_kernel
from ascsim.ops.result import OpInfo
from ascsim.session import SESSION
from ascsim.sim.l2_carry import carried_l2

VARIANTS = ("unfused", "semi", "fused", "auto")
INPUT_DTYPES = {torch.float16: host.DataType.DT_FLOAT16, torch.bfloat16: host.DataType.DT_BF16}
WORKSPACE_BYTES = 16 * 1024 * 1024  # the Matmul API's GM workspace (C blocks on their way)
_AUTO_CHOICE: dict[tuple, str] = {}
#: Tiling knobs a caller (or the tuner) may fix: the base block (-1: the tiler chooses) and the
#: cores the tiling may use (-1: every AIV). The kernels walk blocks M first, so the walk
#: order is not a knob.
TILING_KNOBS = ("base_m", "base_n", "base_k", "cores")


def _as_tensor(value, name: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    raise ValueError(f"{name} must be a torch tensor or numpy array, got {type(value).__name__}")


def _validate(a, b, bias, alpha) -> tuple[int, int, int]:
    if a.dtype not in INPUT_DTYPES:
        raise ValueError(f"A is {a.dtype}; matmul_leaky_relu takes float16 or bfloat16 A and B")
    if b.dtype != a.dtype:
        raise ValueError(f"A is {a.dtype} but B is {b.dtype}: A and B must share one dtype")
    if bias.dtype != torch.float32:
        raise ValueError(f"bias is {bias.dtype}; it must be float32")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"A and B must be 2-D, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    m, k = a.shape
    kb, n = b.shape
    if k != kb:
        raise ValueError(f"A is [{m}, {k}] but B is [{kb}, {n}]: the K dimensions differ")
    if tuple(bias.shape) not in ((1, n), (n,)):
        raise ValueError(f"bias must be [1, {n}] (or [{n}]), got {tuple(bias.shape)}")
    if not isinstance(alpha, (int, float)) or not np.isfinite(alpha):
        raise ValueError(f"alpha must be a finite number, got {alpha!r}")
    if min(m, n, k) < 1:
        raise ValueError(f"empty matmul {m}x{k} @ {k}x{n}")
    return int(m), int(n), int(k)


def apply_tiling_knobs(tiler, knobs, cores: int) -> None:
    """Fix the knobs of ``knobs`` (see TILING_KNOBS) on a MultiCoreMatmulTiling; ``cores`` is
    the core count when the knobs leave it open."""
    unknown = sorted(set(knobs) - set(TILING_KNOBS))
    if unknown:
        raise ValueError(f"unknown tiling knobs {unknown}; the knobs are {TILING_KNOBS}")
    fixed = {name: int(knobs.get(name, -1)) for name in TILING_KNOBS}
    if tiler.set_dim(cores if fixed["cores"] == -1 else fixed["cores"]) != 0:
        raise ValueError(f"tiling knob cores={fixed['cores']} is not a core count")
    if tiler.set_fix_split(fixed["base_m"], fixed["base_n"], fixed["base_k"]) != 0:
        raise ValueError(f"tiling knobs base_m/base_n/base_k = {fixed['base_m']}, "
                         f"{fixed['base_n']}, {fixed['base_k']} are not a base block")


def _tiling(m: int, n: int, k: int, in_dtype, c_position, ub_bytes: int = -1,
            knobs=None) -> TCubeTiling:
    soc = SESSION.soc
    tiler = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    tiler.set_a_type(host.TPosition.GM, host.CubeFormat.ND, in_dtype, False)
    tiler.set_b_type(host.TPosition.GM, host.CubeFormat.ND, in_dtype, False)
    tiler.set_c_type(c_position, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    tiler.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    apply_tiling_knobs(tiler, knobs or {}, soc.aiv_count)
    tiler.set_org_shape(m, n, k)
    tiler.set_shape(m, n, k)
    tiler.enable_bias(True)
    tiler.set_traverse(host.MatrixTraverse.FIRSTM)
    tiler.set_buffer_space(-1, -1, ub_bytes)
    tiling = TCubeTiling()
    if tiler.get_tiling(tiling) != 0:
        raise ValueError(f"no Matmul tiling fits {m}x{k} @ {k}x{n} on {soc.name}"
                         + (f" with {dict(knobs)}" if knobs else ""))
    return tiling


def _blocks(tiling: TCubeTiling) -> int:
    # MIX launches count AIC+2 AIV groups; the tiling counts AIVs.
    return max(1, -(-int(tiling.used_core_num) // 2))


def _run_unfused(a, b, bias, alpha, m, n, k, knobs=None):
    tiling = _tiling(m, n, k, INPUT_DTYPES[a.dtype], host.TPosition.GM, knobs=knobs)
    workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8)
    pre = torch.empty((m, n), dtype=torch.float32)
    c = torch.empty((m, n), dtype=torch.float32)
    cores, chunk = launch_plan(m * n, SESSION.soc.aiv_count)
    with carried_l2():  # one operator call: the activation finds in L2 what the matmul left
        r1 = matmul_bias_kernel[_blocks(tiling)](a, b, bias, pre, tiling, workspace)
        r2 = activation_kernel[cores](pre, c, m * n, chunk, float(alpha), "leaky_relu", TILE)
    return c, (r1, r2), m * n * 4


def _run_fused(a, b, bias, alpha, m, n, k, knobs=None):
    # The fused kernel double-buffers C blocks in UB: each block may use half of it.
    tiling = _tiling(m, n, k, INPUT_DTYPES[a.dtype], host.TPosition.VECCALC,
                     ub_bytes=SESSION.soc.ub_bytes // 2, knobs=knobs)
    workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8)
    c = torch.empty((m, n), dtype=torch.float32)
    r = matmul_leaky_relu_kernel[_blocks(tiling)](a, b, bias, c, float(alpha), tiling, workspace)
    return c, (r,), 0


_RUNNERS = {"unfused": _run_unfused, "semi": _run_unfused, "fused": _run_fused}


def shape_key(m: int, n: int, k: int, dtype) -> str:
    """How tuned settings name a problem: ``MxNxK:dtype``."""
    return f"{m}x{n}x{k}:{str(dtype).replace('torch.', '')}"


def matmul_leaky_relu(a, b, bias, alpha: float = 0.001, *, variant: str = "auto", soc=None,
                      return_report: bool = False, tiling=None, timing_only: bool = False):
    """C = LeakyReLU(A·B + bias, alpha) computed by ascsim kernels (see the module doc).

    ``timing_only``: time the kernels without computing the output (it holds no result; the
    returned info says so), for shapes too large to compute quickly."""
    from ascsim.tune import tuned

    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    a, b, bias = (_as_tensor(t, name) for t, name in ((a, "A"), (b, "B"), (bias, "bias")))
    m, n, k = _validate(a, b, bias, alpha)
    with SESSION.using_soc(soc) as spec, SESSION.values(not timing_only):
        a, b = a.contiguous(), b.contiguous()
        bias = bias.reshape(1, n).contiguous()
        chosen = variant
        entry = None if tiling is not None else \
            tuned.lookup("matmul_leaky_relu", spec.name, shape_key(m, n, k, a.dtype))
        if entry is not None and variant == "auto":
            chosen = entry.best
        elif variant == "auto":
            key = (m, n, k, str(a.dtype), spec.name)
            chosen = _AUTO_CHOICE.get(key)
            if chosen is None:
                times = {v: sum(r.device_time_us for r in _RUNNERS[v](a, b, bias, alpha, m, n,
                                                                      k)[1])
                         for v in ("unfused", "fused")}
                chosen = min(times, key=times.get)
                _AUTO_CHOICE[key] = chosen
        # "semi" runs the unfused kernels: it shares their tuned knobs.
        ran = "unfused" if chosen == "semi" else chosen
        use = entry if entry is not None and ran in entry.variants else None
        knobs = tiling if use is None else use.variants[ran].knobs
        c, reports, workspace = _RUNNERS[chosen](a, b, bias, alpha, m, n, k, knobs)
    if not return_report:
        return c
    notes = () if use is None else (tuned.note(use, ran),)
    info = OpInfo(op="matmul_leaky_relu", variant=chosen, soc=spec.name, reports=tuple(reports),
                  workspace_bytes=workspace, notes=notes)
    return c, info


__all__ = ["TILING_KNOBS", "VARIANTS", "apply_tiling_knobs", "matmul_leaky_relu", "shape_key"]
