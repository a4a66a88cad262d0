"""``Matmul.set_quant_scalar`` / ``set_quant_vector``: the FixPipe's quantisation of C (int8
inputs to an fp16 or int8 C, one scale or one per column), checked against numpy; other type
combinations convert without a scale."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.adv.tiling_structs import TCubeTiling


def _mtype(dtype):
    return asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, dtype)


@asc.jit(matmul_cube_only=True)
def quant_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                 scales: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress,
                 scalar: asc.ConstExpr[object], per_block: asc.ConstExpr[bool]):
    a_gm, b_gm, c_gm, s_gm = (asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(),
                              asc.GlobalTensor())
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    s_gm.set_global_buffer(scales)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype), _mtype(c.dtype))
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    if scalar is None:
        mm.set_quant_vector(s_gm)
    else:
        mm.set_quant_scalar(scalar)
    if per_block:
        with mm.iterate() as count:  # noqa: F841 - the block counter is not needed here
            mm.get_tensor_c(c_gm)
    else:
        mm.iterate_all(c_gm)
    mm.end()


def _tiling(m, n, k, base_m=32, base_n=48, base_k=32) -> TCubeTiling:
    return TCubeTiling(used_core_num=1, m=m, n=n, k_a=k, k_b=k, single_core_m=m,
                       single_core_n=n, single_core_k=k, base_m=base_m, base_n=base_n,
                       base_k=base_k, step_m=1, step_n=1, step_k_a=1, step_k_b=1,
                       depth_a1=1, depth_b1=1)


def _bits(scale: float) -> int:
    """A scale as set_quant_scalar takes it: the fp32 bits in a uint64."""
    return int(np.array([scale], np.float32).view(np.uint32)[0])


M, N, K = 40, 72, 64


def _operands(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 8, (M, K)).astype(np.int8)
    b = rng.integers(-8, 8, (K, N)).astype(np.int8)
    return a, b, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32)


@pytest.mark.parametrize("per_block", [False, True])
@pytest.mark.parametrize("c_type", [np.float16, np.int8])
def test_quant_scalar_scales_and_rounds_c(c_type, per_block):
    a, b, acc = _operands()
    c = np.zeros((M, N), c_type)
    quant_kernel[1](a, b, c, np.zeros(N, np.uint64), _tiling(M, N, K),
                    np.zeros(64, np.uint8), _bits(0.0625), per_block)
    scaled = acc * np.float32(0.0625)
    if c_type == np.int8:
        expected = np.clip(np.rint(scaled), -128, 127).astype(np.int8)
    else:
        expected = scaled.astype(np.float16)
    np.testing.assert_array_equal(c, expected)


def test_quant_vector_scales_each_column():
    a, b, acc = _operands(1)
    scales = (np.arange(N, dtype=np.float32) % 5 + 1) / 8
    words = scales.view(np.uint32).astype(np.uint64) | np.uint64(0xABCD << 32)  # high bits unused
    c = np.zeros((M, N), np.float16)
    quant_kernel[1](a, b, c, words, _tiling(M, N, K), np.zeros(64, np.uint8), None, True)
    np.testing.assert_array_equal(c, (acc * scales).astype(np.float16))


def test_other_type_combinations_convert_without_a_scale():
    rng = np.random.default_rng(2)
    a = rng.uniform(-2, 2, (M, K)).astype(np.float16)
    b = rng.uniform(-2, 2, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    quant_kernel[1](a, b, c, np.zeros(N, np.uint64), _tiling(M, N, K, base_k=32),
                    np.zeros(64, np.uint8), _bits(4.0), False)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-3)


def test_quant_vector_needs_uint64_words():
    a, b, _ = _operands()
    with pytest.raises(Exception, match="set_quant_vector: the scales are uint64 words"):
        quant_kernel[1](a, b, np.zeros((M, N), np.float16), np.zeros(N, np.float32),
                        _tiling(M, N, K), np.zeros(64, np.uint8), None, False)
