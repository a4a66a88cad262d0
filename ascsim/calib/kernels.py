"""The calibration kernels by name: what a point's ``kernel`` field may say, and how it runs.

Every entry is a host function ``run(**knobs) -> list[KernelReport]`` that launches the kernel(s)
on the current SoC and checks the result against torch (in a timing-only session, where no
values are computed, the calibration kernels skip the check; the examples always compute). Its
keyword parameters are the knobs a point may set; :func:`check_knobs` refuses unknown or
missing ones. Three entries run the project's examples (the pyasc samples on the Ascend910B4
the model was first calibrated on); ``conv_act`` runs the project's PyPTO-Pro operator package
(``examples/cann_bench_pto``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ascsim.calib import (
    catlass_matmul,
    catlass_quant_matmul,
    conv,
    datacopy,
    flash_attn,
    matmul,
    matmul_basic,
    tbmm,
    vector,
)
from ascsim.session import SESSION

DTYPES = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}


def _dtype(name: str) -> torch.dtype:
    if name not in DTYPES:
        raise ValueError(f"dtype {name!r}: expected one of {sorted(DTYPES)}")
    return DTYPES[name]


def _pair(value):
    return None if value is None else tuple(value)


def _add(shape, dtype: str, cores: int, copy_len: int, buffers: int = 1,
         l2_bypass: bool = False, ub_gap: int = 0, out_buffers: int | None = None):
    return vector.run_add(tuple(shape), _dtype(dtype), cores, copy_len, buffers, l2_bypass,
                          ub_gap, out_buffers)


def _activation(shape, act: str, cores: int, tile: int, buffers: int = 2, vf: bool = False,
                warm_l2: bool = False):
    return vector.run_activation(tuple(shape), act, cores, tile, buffers, vf, warm_l2)


def _softmax(shape, cores: int, rows_per_copy: int = 1):
    return vector.run_softmax(tuple(shape), cores, rows_per_copy)


def _datacopy(shape, tile, cores: int, path: str, buffers: int = 2):
    return datacopy.run_datacopy(tuple(shape), tuple(tile), cores, path, buffers)


def _matmul_api(mnk, split, base, template: str = "norm", depth_a1: int | None = None,
                depth_b1: int | None = None, step_ka: int | None = None,
                step_kb: int | None = None, rounds: int = 1,
                const_tiling: bool = False, unit_flag: bool | None = None,
                dtype: str = "float16",
                out_dtype: str = "float16", single=None, cores: int | None = None):
    return matmul.run_matmul_api(tuple(mnk), tuple(split), tuple(base), template, depth_a1,
                                 depth_b1, step_ka, step_kb, rounds, const_tiling, unit_flag,
                                 dtype, out_dtype, _pair(single), cores)


def _matmul_basic(mnk, base, single, step_ka: int, step_kb: int, rounds: int = 1):
    return matmul_basic.run_matmul_basic(tuple(mnk), tuple(base), tuple(single), step_ka,
                                         step_kb, rounds)


def _catlass_matmul(mnk, l1_tile=(256, 256, 128), l0_k: int = 64, scheduler: str = "swizzle",
                    epilogue: str = "fixpipe"):
    return catlass_matmul.run_catlass_matmul(tuple(mnk), tuple(l1_tile), l0_k, scheduler,
                                             epilogue)


def _catlass_quant_matmul(mnk, variant: str, l1_tile=catlass_quant_matmul.L1_TILE,
                          l0_k: int = catlass_quant_matmul.L0_K,
                          epi_tile=catlass_quant_matmul.EPI_TILE):
    return catlass_quant_matmul.run_catlass_quant_matmul(tuple(mnk), str(variant),
                                                         tuple(l1_tile), l0_k, tuple(epi_tile))


def _flash_attn(version: str, seq: int, br: int = flash_attn.BR, bc: int = flash_attn.BC,
                d: int = flash_attn.HEAD_DIM, cores: int | None = None):
    return flash_attn.run_flash_attn(str(version), seq, br, bc, d, cores)


def _tbmm(bmnk, perm_x1: int, base=(128, 128, 64), k_l1: int = 256, dtype: str = "bfloat16"):
    return tbmm.run_tbmm(tuple(bmnk), perm_x1, tuple(base), k_l1, dtype)


def _matmul_act(mnk, split, base, act: str, relay: str, act_tile: int = 8192,
                template: str = "mdl", depth_a1: int = 8, depth_b1: int = 8, step_ka: int = 4,
                step_kb: int = 4, dtype: str = "float16", single=None, aivs: int | None = None):
    return matmul.run_matmul_act(tuple(mnk), tuple(split), tuple(base), act, relay, act_tile,
                                 template, depth_a1, depth_b1, step_ka, step_kb, dtype,
                                 _pair(single), aivs)


def _conv_act(x, filter, stride, pads, dilation, dtype: str, act: str = "tanh",
              design: str = "semi"):
    return conv.run_conv_act(tuple(x), tuple(filter), tuple(stride), tuple(pads),
                             tuple(dilation), dtype, act, design)


def _example(name: str):
    from ascsim.demo import load_example

    return load_example(name)


def _computed(run: Callable, *args, **kwargs):
    """Run an example with values computed even in a timing-only evaluation: the examples
    check their own result, and the calibration points they run are small."""
    with SESSION.values(True):
        return run(*args, **kwargs)


def _soc() -> str:
    """The examples select their platform themselves: hand them the current SoC."""
    return SESSION.soc.name


def _swiglu(shape):
    return [_computed(_example("swiglu").run, _soc(), shape=tuple(shape))]


def _rmsnorm(shape):
    return [_computed(_example("rmsnorm").run, _soc(), shape=tuple(shape))]


def _linear(mnk):
    m, n, k = mnk
    return [_computed(_example("linear_cube").run, _soc(), m, n, k)]


@dataclass(frozen=True)
class CalibrationKernel:
    """One kernel a point can name: its host runner and what it re-expresses."""

    name: str
    run: Callable
    follows: str


KERNELS = {k.name: k for k in (
    CalibrationKernel("add", _add, "asc-devkit add_high_performance (vector Add, 7 steps)"),
    CalibrationKernel("activation", _activation,
                      "GELU (tanh form via exp/div) or ReLU alone on the vector cores"),
    CalibrationKernel("softmax", _softmax, "cann-samples softmax_regbase_story"),
    CalibrationKernel("datacopy", _datacopy, "asc-devkit data_copy (GM->UB, GM->L1 ND2NZ)"),
    CalibrationKernel("matmul_api", _matmul_api,
                      "asc-devkit matmul_high_performance (Matmul API tiling steps)"),
    CalibrationKernel("matmul_basic", _matmul_basic,
                      "asc-devkit matmul_basic_api_high_performance (hand-written cube "
                      "pipeline: Load3D / LoadData2DV2, L1 and L0 ping-pong)"),
    CalibrationKernel("catlass_matmul", _catlass_matmul,
                      "CATLASS basic matmul on the 950 (L1 / L0 tiles, swizzle or ASWT block "
                      "scheduler, FixPipe L0C->GM or, epilogue ub_dual, matmul_fixpipe_opti's "
                      "L0C->UB dual destination and DataCopyPad)"),
    CalibrationKernel("catlass_quant_matmul", _catlass_quant_matmul,
                      "CATLASS 12_quant_matmul / 44_quant_matmul_full_loadA_tla on the 910B1 "
                      "(int8 cube, int32 blocks through a GM workspace to the AIVs' per-channel "
                      "x per-token dequant to bf16)"),
    CalibrationKernel("flash_attn", _flash_attn,
                      "cann-samples flash_attn_lite_story v0 (S and dO through GM) / v1 (L0C "
                      "-> UB) on the 950: serial C1 / V1 / C2 / V2 flash attention, bf16"),
    CalibrationKernel("tbmm", _tbmm,
                      "cann-samples transpose_batch_matmul (TBMM: A's batch/M transpose in "
                      "the GM->L1 stride)"),
    CalibrationKernel("matmul_act", _matmul_act,
                      "asc-devkit matmul_gelu / cann-samples cv_datapath (MIX fusion)"),
    CalibrationKernel("conv_act", _conv_act,
                      "the seed article's Fused ConvTanh: K1 implicit-GEMM conv on the AICs, "
                      "K2 activation on the AIVs (examples/cann_bench_pto, semi design)"),
    CalibrationKernel("swiglu", _swiglu, "pyasc 07_swiglu (examples/swiglu.py)"),
    CalibrationKernel("rmsnorm", _rmsnorm, "pyasc 08_rmsnorm (examples/rmsnorm.py)"),
    CalibrationKernel("linear", _linear, "pyasc 09_linear (examples/linear_cube.py)"),
)}


def knob_problem(kernel: str, knobs: dict) -> str | None:
    """Why ``knobs`` do not fit ``kernel``'s runner (None if they do)."""
    runner = KERNELS[kernel].run
    params = inspect.signature(runner).parameters
    unknown = sorted(set(knobs) - set(params))
    if unknown:
        return f"unknown knob(s) {unknown}; {kernel} takes {sorted(params)}"
    missing = sorted(n for n, p in params.items()
                     if p.default is inspect.Parameter.empty and n not in knobs)
    if missing:
        return f"missing knob(s) {missing} for {kernel}"
    return None
