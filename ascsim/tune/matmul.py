"""``matmul_tiling``: the TCubeTiling of least simulated time for one Matmul problem.

The knobs are those of ``asc.lib.host.MultiCoreMatmulTiling``: the base block
(``set_fix_split``; -1 leaves a dimension to the tiler), the walk order (``set_traverse``) and
the cores the tiling may use (``set_dim``). Each trial asks the host tiler for a tiling with
the trial's knobs and times it on the operator library's Matmul kernel (``ascsim.ops``: C to
GM, or with ``epilogue="leaky_relu"`` each C block finished by LeakyReLU in UB), checking the
result against torch: a tiling the tiler refuses, that overflows a buffer or computes a wrong
C is infeasible. The host tiler's default (every knob left open) is timed too, for comparison.
"""

from __future__ import annotations

import contextlib
import functools
import io
from dataclasses import dataclass
from typing import Any

from ascsim.tune.results import TuneResult
from ascsim.tune.sweep import search

#: Epilogues the timing kernel can apply, and where the tiler is told C goes.
EPILOGUES = {"none": "GM", "leaky_relu": "VECCALC"}
#: Values of each knob in the default space (-1 / NOSET: the tiler chooses).
BASE_CHOICES = (-1, 64, 128, 256)
BASE_K_CHOICES = (-1, 32, 64, 128)
TRAVERSE_CHOICES = ("NOSET", "FIRSTM", "FIRSTN")


def _dtype_name(value: Any, what: str) -> str:
    from ascsim.asc.lib.host.enums import DTYPE_NAMES, DataType

    if isinstance(value, DataType):
        return DTYPE_NAMES[value]
    name = str(value).replace("torch.", "")
    if name not in {"float16", "bfloat16", "float32"}:
        raise ValueError(f"{what} {value!r} is not float16, bfloat16 or float32 (a dtype name "
                         "or an asc.lib.host.DataType)")
    return name


@dataclass(frozen=True)
class MatmulProblem:
    """C[m, n] = A[m, k] @ B[k, n] + bias[n] with these types, on ``soc``."""

    m: int
    n: int
    k: int
    a_type: str = "float16"
    b_type: str = "float16"
    c_type: str = "float32"
    bias_type: str = "float32"
    soc: str = "Ascend910B1"
    epilogue: str = "none"

    def __post_init__(self) -> None:
        if min(self.m, self.n, self.k) < 1:
            raise ValueError(f"matmul {self.m}x{self.n}x{self.k}: sizes must be >= 1")
        if self.epilogue not in EPILOGUES:
            raise ValueError(f"epilogue {self.epilogue!r} is not one of {sorted(EPILOGUES)}")
        if self.epilogue == "leaky_relu" and self.c_type != "float32":
            raise ValueError("the leaky_relu epilogue writes float32 C")

    def default_space(self) -> dict[str, list]:
        from ascsim.hw import get_soc

        aiv = get_soc(self.soc).aiv_count
        space = {"base_m": list(BASE_CHOICES), "base_n": list(BASE_CHOICES),
                 "base_k": list(BASE_K_CHOICES),
                 "cores": sorted({-1, max(2, aiv // 2), max(2, aiv // 4)})}
        if self.epilogue == "none":  # the fused kernel places blocks M first
            space["traverse"] = list(TRAVERSE_CHOICES)
        return space


def host_tiling(problem: MatmulProblem, base_m: int = -1, base_n: int = -1, base_k: int = -1,
                cores: int = -1, traverse: str = "NOSET"):
    """The host tiler's TCubeTiling for ``problem`` with these knobs (ValueError if none)."""
    from ascsim.session import SESSION

    with SESSION.using_soc(problem.soc) as soc:
        return _host_tiling(problem, soc, base_m, base_n, base_k, cores, traverse)


def _host_tiling(problem: MatmulProblem, soc, base_m: int, base_n: int, base_k: int,
                 cores: int, traverse: str):
    from ascsim.asc.adv.tiling_structs import TCubeTiling
    from ascsim.asc.lib import host
    from ascsim.asc.lib.host.enums import DTYPE_NAMES
    from ascsim.ops.matmul_leaky_relu import apply_tiling_knobs

    types = {name: dt for dt, name in DTYPE_NAMES.items()}
    tiler = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
    gm, nd = host.TPosition.GM, host.CubeFormat.ND
    tiler.set_a_type(gm, nd, types[problem.a_type], False)
    tiler.set_b_type(gm, nd, types[problem.b_type], False)
    tiler.set_c_type(getattr(host.TPosition, EPILOGUES[problem.epilogue]), nd,
                     types[problem.c_type])
    tiler.set_bias_type(gm, nd, types[problem.bias_type])
    apply_tiling_knobs(tiler, {"base_m": base_m, "base_n": base_n, "base_k": base_k,
                               "cores": cores}, soc.aiv_count)
    tiler.set_org_shape(problem.m, problem.n, problem.k)
    tiler.set_shape(problem.m, problem.n, problem.k)
    tiler.enable_bias(True)
    if traverse not in TRAVERSE_CHOICES:
        raise ValueError(f"traverse {traverse!r} is not one of {TRAVERSE_CHOICES}")
    tiler.set_traverse(getattr(host.MatrixTraverse,
                               "FIRSTM" if problem.epilogue != "none" else traverse))
    ub = soc.ub_bytes // 2 if problem.epilogue != "none" else -1  # C blocks double-buffered
    tiler.set_buffer_space(-1, -1, ub)
    tiling = TCubeTiling()
    why = io.StringIO()
    with contextlib.redirect_stderr(why):
        status = tiler.get_tiling(tiling)
    if status != 0:
        reason = why.getvalue().strip().split("failed: ", 1)[-1]
        raise ValueError(f"the host tiler has no tiling with these knobs: {reason}")
    return tiling


def time_tiling(problem: MatmulProblem, **knobs: Any):
    """Run the problem's Matmul kernel on the tiling of ``knobs``; return its report.
    Raises AssertionError if C is wrong (small-integer inputs: the result is exact)."""
    from ascsim.session import SESSION

    with SESSION.using_soc(problem.soc):
        return _time_tiling(problem, knobs)


def _time_tiling(problem: MatmulProblem, knobs: dict):
    import torch

    from ascsim.ops.kernels.matmul import matmul_bias_kernel, matmul_leaky_relu_kernel

    tiling = host_tiling(problem, **knobs)
    dtypes = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
    gen = torch.Generator().manual_seed(0)
    m, n, k = problem.m, problem.n, problem.k
    a = torch.randint(-3, 4, (m, k), generator=gen).to(dtypes[problem.a_type])
    b = torch.randint(-3, 4, (k, n), generator=gen).to(dtypes[problem.b_type])
    bias = torch.randint(-3, 4, (1, n), generator=gen).to(dtypes[problem.bias_type])
    c = torch.zeros((m, n), dtype=dtypes[problem.c_type])
    workspace = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)
    blocks = max(1, -(-int(tiling.used_core_num) // 2))  # MIX: one AIC + 2 AIV per block
    expected = a.float() @ b.float() + bias.float()
    if problem.epilogue == "leaky_relu":
        alpha = 0.125
        report = matmul_leaky_relu_kernel[blocks](a, b, bias, c, alpha, tiling, workspace)
        expected = torch.where(expected >= 0, expected, expected * alpha)
    else:
        report = matmul_bias_kernel[blocks](a, b, bias, c, tiling, workspace)
    if not torch.allclose(c.float(), expected.to(c.dtype).float(), rtol=1e-2, atol=1e-2):
        worst = (c.float() - expected.float()).abs().max().item()
        raise AssertionError(f"wrong C with this tiling (max abs error {worst:.3g})")
    return report


@dataclass(frozen=True)
class MatmulTuning:
    """The best tiling found, its knobs and time, and the host tiler's default time."""

    problem: MatmulProblem
    config: dict[str, Any]
    tiling: Any
    time_us: float
    default_time_us: float
    result: TuneResult

    @property
    def speedup(self) -> float:
        return self.default_time_us / self.time_us


def tune_matmul_tiling(m: int, n: int, k: int, a_type="float16", b_type="float16",
                       c_type="float32", bias_type="float32", soc: str = "Ascend910B1", *,
                       epilogue: str = "none", space=None, budget: int = 64,
                       workers: int | None = None, seed: int = 0, backend="pool",
                       ray_address: str = "auto", storage=None, on_trial=None) -> MatmulTuning:
    """Search the host tiler's knobs (``space``: default :meth:`MatmulProblem.default_space`)
    for the tiling of least simulated time; see the module docstring."""
    from ascsim.hw import get_soc

    problem = MatmulProblem(m, n, k, _dtype_name(a_type, "a_type"),
                            _dtype_name(b_type, "b_type"), _dtype_name(c_type, "c_type"),
                            _dtype_name(bias_type, "bias_type"), get_soc(soc).name, epilogue)
    result = search(functools.partial(time_tiling, problem), space or problem.default_space(),
                    budget=budget, workers=workers, seed=seed, backend=backend,
                    ray_address=ray_address, storage=storage,
                    study_name=f"matmul-{m}x{n}x{k}-{problem.a_type}-{problem.soc}-{epilogue}",
                    on_trial=on_trial)
    default = time_tiling(problem).device_time_us
    if result.config is None:
        reasons = "; ".join(sorted({t.reason for t in result.infeasible()})[:3])
        raise ValueError(f"no feasible tiling among {len(result.trials)} trials: {reasons}")
    best = result.best
    return MatmulTuning(problem, result.config, host_tiling(problem, **result.config),
                        best.value, default, result)


def matmul_tiling(m: int, n: int, k: int, a_type="float16", b_type="float16",
                  c_type="float32", bias_type="float32", soc: str = "Ascend910B1",
                  **options: Any):
    """The TCubeTiling of least simulated time (options as for :func:`tune_matmul_tiling`)."""
    return tune_matmul_tiling(m, n, k, a_type, b_type, c_type, bias_type, soc,
                              **options).tiling
