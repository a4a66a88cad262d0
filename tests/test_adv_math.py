"""High-level element-wise APIs against numpy/torch: the inverse hyperbolics, erfc, digamma,
lgamma, power, xor, axpy, and per-tensor quantisation to int8."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

N = 200  # not a whole number of repeats
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def _torch_ref(name):
    return lambda x: getattr(torch.special, name)(torch.from_numpy(x)).numpy()


# name -> (fp64 reference, input range)
UNARY = {
    "acosh": (np.arccosh, (1.0, 30.0)),
    "asinh": (np.arcsinh, (-30.0, 30.0)),
    "atanh": (np.arctanh, (-0.95, 0.95)),
    "erfc": (_torch_ref("erfc"), (-3.0, 3.0)),
    "digamma": (_torch_ref("digamma"), (0.5, 20.0)),
    "lgamma": (_torch_ref("gammaln"), (0.5, 20.0)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
def test_unary_math_functions(name, dtype):
    ref, (lo, hi) = UNARY[name]
    x = np.random.default_rng(1).uniform(lo, hi, N).astype(dtype)
    op = getattr(asc.adv, name)
    got, _ = run_vector(lambda d, s: op(d, s, count=N), np.zeros(N, dtype), x)
    expected = ref(x.astype(np.float64)).astype(dtype)
    rtol = 2e-3 if dtype == F16 else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=rtol,
                               atol=rtol)


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
def test_power_of_floats(dtype):
    rng = np.random.default_rng(2)
    base = rng.uniform(0.1, 4.0, N).astype(dtype)
    exponent = rng.uniform(-2.0, 3.0, N).astype(dtype)
    got, _ = run_vector(lambda d, a, b: asc.adv.power(d, a, b, count=N), np.zeros(N, dtype),
                        base, exponent)
    expected = np.power(base.astype(np.float64), exponent.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                               rtol=2e-3 if dtype == F16 else 1e-5)


def test_power_of_integers_is_exact():
    rng = np.random.default_rng(3)
    base = rng.integers(-9, 10, N).astype(np.int32)
    exponent = rng.integers(0, 6, N).astype(np.int32)
    got, _ = run_vector(lambda d, a, b: asc.adv.power(d, a, b), np.zeros(N, np.int32), base,
                        exponent)
    np.testing.assert_array_equal(got, base.astype(np.int64) ** exponent)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int32])
def test_xor(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(4)
    a = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    got, _ = run_vector(lambda d, x, y: asc.adv.xor(d, x, y, count=N), np.zeros(N, dtype), a, b)
    np.testing.assert_array_equal(got, a ^ b)


def test_xor_refuses_floats():
    x = np.ones(16, np.float32)
    with pytest.raises(KernelError, match="xor: float32 tensors are not supported"):
        run_vector(lambda d, a, b: asc.adv.xor(d, a, b), np.zeros(16, np.float32), x, x)


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
def test_adv_axpy_accumulates_into_dst(dtype):
    rng = np.random.default_rng(5)
    acc = rng.uniform(-5, 5, N).astype(dtype)
    src = rng.uniform(-5, 5, N).astype(dtype)
    got, _ = run_vector(lambda d, s: asc.adv.axpy(d, s, 3.0, count=N), acc, src)
    product = (src.astype(np.float64) * 3.0).astype(dtype)  # muls rounds, then add rounds
    expected = (product.astype(np.float64) + acc).astype(dtype)
    np.testing.assert_array_equal(got, expected)


def _quant_reference(src: np.ndarray, scale: float, offset: float) -> np.ndarray:
    """AscendQuant: fp16 multiply, fp16 add, round half to even, saturate (torch fp16 ops)."""
    half = torch.from_numpy(src).to(torch.float16)
    value = half * torch.tensor(scale, dtype=torch.float16)
    value = value + torch.tensor(offset, dtype=torch.float16)
    return torch.clamp(torch.round(value.float()), -128, 127).to(torch.int8).numpy()


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@pytest.mark.parametrize("with_config", [False, True])
def test_quant_to_int8(dtype, with_config):
    rng = np.random.default_rng(6)
    src = rng.uniform(-80, 80, N).astype(dtype)  # scaled by 2: saturates at both ends
    src[:4] = [1, 2, -1, -2]  # exact ties after * 2 + 0.5: round half to even
    config = asc.adv.QuantConfig(N, 0, 0, 512) if with_config else None

    def body(d, s):
        if config is None:
            asc.adv.quant(d, s, 2.0, 0.5, N)
        else:
            asc.adv.quant(d, s, 2.0, 0.5, config=config)

    got, _ = run_vector(body, np.zeros(N, np.int8), src)
    expected = _quant_reference(src, 2.0, 0.5)
    np.testing.assert_array_equal(got, expected)
    assert got[:4].tolist() == [2, 4, -2, -4]
    assert got.max() == 127 and got.min() == -128


def test_quant_refuses_a_non_int8_destination():
    x = np.ones(16, np.float16)
    with pytest.raises(KernelError, match="quant: dst must be int8"):
        run_vector(lambda d, s: asc.adv.quant(d, s, 1.0, 0.0, 16), np.zeros(16, np.float16), x)
