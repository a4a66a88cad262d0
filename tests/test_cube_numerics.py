"""The Cube's fp32 accumulation model: exact products summed in fp32, then the initial C added."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

from ascsim.sim.numerics import cube_matmul


def test_integer_inputs_are_exact():
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 5, (33, 70)).astype(np.float16)
    b = rng.integers(-5, 5, (70, 17)).astype(np.float16)
    bias = rng.integers(-5, 5, 17).astype(np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64) + bias
    np.testing.assert_array_equal(cube_matmul(a, b, bias), expected.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_fp32_product_then_initial(dtype):
    """The documented order: an fp32 matrix product (PyTorch's CPU order), then + initial."""
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (40, 300)).astype(dtype)
    b = rng.uniform(-1, 1, (300, 24)).astype(dtype)
    initial = rng.uniform(-1, 1, (40, 24)).astype(np.float32)
    product = torch.from_numpy(a.astype(np.float32)) @ torch.from_numpy(b.astype(np.float32))
    np.testing.assert_array_equal(cube_matmul(a, b, initial), product.numpy() + initial)


def test_accumulates_in_fp32_not_in_the_input_type():
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (64, 1024)).astype(np.float16)
    b = rng.uniform(-0.05, 0.05, (1024, 64)).astype(np.float16)
    truth = a.astype(np.float64) @ b.astype(np.float64)
    out = cube_matmul(a, b)
    assert out.dtype == np.float32
    # fp32 accumulation: errors at the fp32 level, far below one fp16 ulp of the result.
    bound = 1024 * np.finfo(np.float32).eps * (np.abs(a).astype(np.float64) @ np.abs(b))
    assert (np.abs(out - truth) <= bound).all()
    assert np.abs(out - truth).max() < 1e-5


def test_strided_views_are_accepted():
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (32, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (48, 64)).astype(np.float16)  # used transposed, as a view
    expected = cube_matmul(a, np.ascontiguousarray(b.T))
    np.testing.assert_array_equal(cube_matmul(a, b.T), expected)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_background_product_equals_cube_matmul_and_owns_its_operands(dtype):
    """start_cube_matmul gives cube_matmul's bits, and later writes to the operands (or the
    initial values) do not reach a product already started."""
    from ascsim.sim.numerics import start_cube_matmul

    rng = np.random.default_rng(3)
    a = rng.standard_normal((96, 200)).astype(dtype)
    b = rng.standard_normal((200, 72)).astype(dtype)
    initial = rng.standard_normal(72).astype(np.float32)
    want = cube_matmul(a, b, initial)
    pending = start_cube_matmul(a, b, initial)
    a[...] = 0
    b[...] = 0
    initial[...] = 0
    got = pending.result()
    assert got.dtype == np.float32
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_product_bits_do_not_depend_on_the_thread_count():
    """Products run on one PyTorch thread in the background and on the caller's threads in
    cube_matmul's wide mode; the bits must be the same either way."""
    rng = np.random.default_rng(4)
    a = torch.from_numpy(rng.standard_normal((512, 256)).astype(np.float16).astype(np.float32))
    b = torch.from_numpy(rng.standard_normal((256, 640)).astype(np.float16).astype(np.float32))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = torch.matmul(a, b)
        torch.set_num_threads(2)
        two = torch.matmul(a, b)
    finally:
        torch.set_num_threads(before)
    assert torch.equal(one, two)


def test_a_forked_child_gets_its_own_product_workers():
    """A child forked after a background product must not wait forever on its parent's pool."""
    import multiprocessing

    from ascsim.sim.numerics import start_cube_matmul

    a = np.ones((8, 16), np.float16)
    b = np.ones((16, 4), np.float16)
    assert start_cube_matmul(a, b).result()[0, 0] == 16  # the parent's pool now has threads
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        result = pool.apply_async(_child_product)
        assert result.get(timeout=60) == 16.0


def _child_product() -> float:
    from ascsim.sim.numerics import start_cube_matmul

    a = np.ones((8, 16), np.float16)
    b = np.ones((16, 4), np.float16)
    return float(start_cube_matmul(a, b).result(timeout=30)[0, 0])
