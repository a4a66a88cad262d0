"""The fused conv + activation calibration kernel: the two-kernel design of the published
Fused ConvTanh (an implicit-GEMM convolution on the cube cores writing an fp32 workspace,
then the activation chain on the vector cores writing NCHW), as built by the project's
PyPTO-Pro operator package ``examples/cann_bench_pto`` (its ``semi`` design; ``fused`` is the
one-kernel design with the accumulator moved on chip).

The package is imported from the source tree, exactly as ``ascsim bench --package`` imports
it, and called the way cann-bench calls an operator. The result is checked against torch
(float64 reference) before the reports are handed back.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

import torch

from ascsim.session import SESSION
from ascsim.sim.l2_carry import carried_l2

#: The operator package the kernel runs (shipped with the source tree, not installed).
PACKAGE_DIR = Path(__file__).resolve().parents[2] / "examples" / "cann_bench_pto"
#: The package's design switch (see examples/cann_bench_pto/cann_bench/conv_common.py).
DESIGN_VAR = "CANN_BENCH_CONV_DESIGN"
ACTS = {"tanh": torch.tanh, "sigmoid": torch.sigmoid}
DTYPES = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}
#: Largest |error| accepted against the float64 reference, per dtype (activations lie in
#: [-1, 1]; one rounding of the output dominates for fp16/bf16, the cube's fp32 chain for fp32).
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-4}
DESIGNS = ("semi", "fused")


@contextmanager
def _design(name: str):
    old = os.environ.get(DESIGN_VAR)
    os.environ[DESIGN_VAR] = name
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(DESIGN_VAR, None)
        else:
            os.environ[DESIGN_VAR] = old


def _operator(act: str):
    if not PACKAGE_DIR.is_dir():
        raise FileNotFoundError(f"no operator package at {PACKAGE_DIR} (it ships with the "
                                "source tree)")
    from ascsim.runner import install_frontends

    install_frontends()
    if str(PACKAGE_DIR) not in sys.path:
        sys.path.insert(0, str(PACKAGE_DIR))
    import cann_bench

    return getattr(cann_bench, f"fused_conv_{act}")


def run_conv_act(x_shape: tuple, filter_shape: tuple, stride: tuple, pads: tuple,
                 dilation: tuple, dtype: str, act: str, design: str = "semi"):
    """act(conv2d(x, filter) + bias) through the package on the current SoC; returns the
    reports of its launches. Inputs are uniform in [-1, 1] (x) and [-0.1, 0.1] (filter, bias)."""
    if act not in ACTS:
        raise ValueError(f"act {act!r}: expected one of {sorted(ACTS)}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {sorted(DTYPES)}")
    if design not in DESIGNS:
        raise ValueError(f"design {design!r}: expected one of {DESIGNS}")
    op = _operator(act)
    gen = torch.Generator().manual_seed(0)
    torch_dtype = DTYPES[dtype]

    def uniform(shape, scale):
        return ((torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 - 1) * scale
                ).to(torch_dtype)

    x = uniform(x_shape, 1.0)
    w = uniform(filter_shape, 0.1)
    b = uniform((filter_shape[0],), 0.1)
    with _design(design), SESSION.values(True), SESSION.collect() as run, carried_l2():
        y = op(x, w, b, strides=list(stride), pads=list(pads), dilations=list(dilation))
    top, bottom, left, right = pads
    padded = torch.nn.functional.pad(x.double(), (left, right, top, bottom))
    ref = ACTS[act](torch.nn.functional.conv2d(padded, w.double(), b.double(),
                                               stride=tuple(stride), dilation=tuple(dilation)))
    err = (y.double() - ref).abs().max().item()
    if not err <= TOLERANCE[dtype]:
        raise AssertionError(f"fused conv {act} {dtype} x{list(x_shape)} "
                             f"filter{list(filter_shape)}: max |error| {err:.3g} > "
                             f"{TOLERANCE[dtype]:g}")
    return list(run.reports)
