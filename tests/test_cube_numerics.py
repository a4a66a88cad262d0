"""The Cube's fp32 accumulation model (one rounding per 16-deep K step, bias first)."""

from __future__ import annotations

import numpy as np

from ascsim.sim.numerics import cube_matmul


def test_integer_inputs_are_exact():
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 5, (33, 70)).astype(np.float16)
    b = rng.integers(-5, 5, (70, 17)).astype(np.float16)
    bias = rng.integers(-5, 5, 17).astype(np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64) + bias
    np.testing.assert_array_equal(cube_matmul(a, b, bias), expected.astype(np.float32))


def test_each_k_step_is_rounded_once_into_fp32():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (8, 48)).astype(np.float16)
    b = rng.uniform(-1, 1, (48, 8)).astype(np.float16)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((8, 8), np.float32)
    for k0 in (0, 16, 32):
        acc = acc + (a64[:, k0:k0 + 16] @ b64[k0:k0 + 16]).astype(np.float32)
    np.testing.assert_array_equal(cube_matmul(a, b), acc)


def test_closer_to_the_truth_than_elementwise_fp32():
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (64, 1024)).astype(np.float16)
    b = rng.uniform(-0.05, 0.05, (1024, 64)).astype(np.float16)
    truth = a.astype(np.float64) @ b.astype(np.float64)
    naive = np.zeros((64, 64), np.float32)
    for k in range(1024):  # one rounding per product: the worst fp32 order
        naive += np.outer(a[:, k], b[k]).astype(np.float32)
    assert np.abs(cube_matmul(a, b) - truth).mean() < np.abs(naive - truth).mean()
