"""``Matmul.set_hf32`` (fp32 A and B rounded to HF32 before the product) and
``Matmul.set_sparse_index`` (4:2 structured-sparse B with its NZ index matrix), checked against
numpy products written from the rules in ascsim.sim.numerics.to_hf32 / ascsim.sim.exec_sparse."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.adv.tiling_structs import TCubeTiling
from ascsim.isa import KernelError
from ascsim.session import SESSION


def _mtype(dtype):
    return asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, dtype)


def _tiling(m, n, k, base_m=32, base_n=32, base_k=32) -> TCubeTiling:
    return TCubeTiling(used_core_num=1, m=m, n=n, k_a=k, k_b=k, single_core_m=m,
                       single_core_n=n, single_core_k=k, base_m=base_m, base_n=base_n,
                       base_k=base_k, step_m=1, step_n=1, step_k_a=1, step_k_b=1,
                       depth_a1=1, depth_b1=1)


@asc.jit(matmul_cube_only=True)
def hf32_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress,
                enable: asc.ConstExpr[bool], trans_mode: asc.ConstExpr[int]):
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype), _mtype(c.dtype))
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    mm.set_hf32(enable, trans_mode)
    mm.iterate_all(c_gm)
    mm.set_hf32(False)
    mm.end()


def _hf32(x: np.ndarray, away: bool) -> np.ndarray:
    """Round fp32 to 10 mantissa bits, a loop over the values (the reference's own code)."""
    out = np.empty_like(x)
    for i, v in np.ndenumerate(x):
        bits = int(np.float32(v).view(np.uint32))
        low = bits & 0x1FFF
        kept = bits >> 13
        if low > 0x1000 or (low == 0x1000 and (away or kept & 1)):
            kept += 1
        out[i] = np.uint32((kept << 13) & 0xFFFFFFFF).view(np.float32)
    return out


M, N, K = 40, 48, 64


@pytest.mark.parametrize("trans_mode", [0, 1])
def test_set_hf32_rounds_fp32_inputs(trans_mode):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    # Ties: values whose dropped 13 bits are exactly half, so the two modes differ.
    a[0, :8] = (np.arange(8, dtype=np.uint32) * 0x4000 + 0x3F801000).view(np.float32)
    c = np.zeros((M, N), np.float32)
    hf32_kernel[1](a, b, c, _tiling(M, N, K), np.zeros(64, np.uint8), True, trans_mode)
    away = trans_mode == 1
    expected = _hf32(a, away).astype(np.float64) @ _hf32(b, away).astype(np.float64)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-4)
    # and it is not the plain fp32 product
    plain = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - plain).max() > 1e-3


def test_set_hf32_off_is_fp32():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    hf32_kernel[1](a, b, c, _tiling(M, N, K), np.zeros(64, np.uint8), False, 0)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5,
                               atol=1e-5)


def test_set_hf32_rejects_an_unknown_trans_mode():
    a = np.zeros((M, K), np.float32)
    b = np.zeros((K, N), np.float32)
    with pytest.raises(KernelError, match="trans_mode 2"):
        hf32_kernel[1](a, b, np.zeros((M, N), np.float32), _tiling(M, N, K),
                       np.zeros(64, np.uint8), True, 2)


@asc.jit(matmul_cube_only=True)
def sparse_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, idx: asc.GlobalAddress,
                  c: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress,
                  trans_b: asc.ConstExpr[bool] = False):
    a_gm, b_gm, i_gm, c_gm = (asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(),
                              asc.GlobalTensor())
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    i_gm.set_global_buffer(idx)
    c_gm.set_global_buffer(c)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype), _mtype(c.dtype))
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm, trans_b)
    mm.set_sparse_index(i_gm)
    mm.iterate_all(c_gm)
    mm.end()


def _sparse_operands(m, n, k, seed):
    """A, the dense B (two kept of every four K rows), the packed NZ indices, and the
    reference: A times the K x N matrix with the kept values at their original rows."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 8, (m, k)).astype(np.int8)
    full = np.zeros((k, n), np.int64)
    dense = np.zeros((k // 2, n), np.int8)
    idx = np.zeros((k // 2, n), np.uint8)
    for g in range(k // 4):
        for col in range(n):
            first, second = sorted(rng.choice(4, 2, replace=False))
            v0, v1 = rng.integers(1, 8, 2) * rng.choice([-1, 1], 2)
            dense[2 * g, col], dense[2 * g + 1, col] = v0, v1
            full[4 * g + first, col], full[4 * g + second, col] = v0, v1
            # i0: the first kept position; i1: the second's place among positions 1..3
            idx[2 * g, col], idx[2 * g + 1, col] = first, second - 1
    # NZ order of the K/2 x N index matrix (int8: 32-column strips, rows padded to 16),
    # four indices to a byte, least significant bits first.
    rows = -(-(k // 2) // 16) * 16
    strips = -(-n // 32)
    padded = np.zeros((rows, strips * 32), np.uint8)
    padded[:k // 2, :n] = idx
    order = padded.reshape(rows, strips, 32).transpose(1, 0, 2).reshape(-1)
    packed = np.zeros(-(-order.size // 4), np.uint8)
    for i, v in enumerate(order):
        packed[i // 4] |= np.uint8(v << (2 * (i % 4)))
    return a, dense, packed, a.astype(np.int64) @ full


@pytest.fixture
def soc():
    before = SESSION.soc.name
    yield SESSION.set_soc
    SESSION.set_soc(before)


@pytest.mark.parametrize("trans_b", [False, True])
def test_sparse_matmul_selects_a_by_the_indices(soc, trans_b):
    soc("Ascend910B1")
    m, n, k = 48, 40, 128
    a, dense, packed, expected = _sparse_operands(m, n, k, 3)
    c = np.zeros((m, n), np.int32)
    b = np.ascontiguousarray(dense.T) if trans_b else dense
    sparse_kernel[1](a, b, packed, c, _tiling(m, n, k, base_k=64), np.zeros(64, np.uint8),
                     trans_b)
    np.testing.assert_array_equal(c, expected.astype(np.int32))


def test_sparse_matmul_needs_int8():
    a = np.zeros((32, 64), np.float16)
    with pytest.raises(KernelError, match="takes int8 A and B"):
        sparse_kernel[1](a, np.zeros((32, 32), np.float16), np.zeros(256, np.uint8),
                         np.zeros((32, 32), np.float16), _tiling(32, 32, 64),
                         np.zeros(64, np.uint8))


def test_sparse_matmul_is_not_on_the_950(soc):
    soc("Ascend950PR_9579")
    a, dense, packed, _ = _sparse_operands(32, 32, 64, 4)
    with pytest.raises(KernelError, match="no 4:2 sparse Cube path"):
        sparse_kernel[1](a, dense, packed, np.zeros((32, 32), np.int32), _tiling(32, 32, 64),
                         np.zeros(64, np.uint8))


def test_hf32_and_sparse_timing_only_match_the_full_run(soc):
    soc("Ascend910B1")
    a, dense, packed, _ = _sparse_operands(32, 32, 64, 7)
    f32 = np.ones((32, 64), np.float32), np.ones((64, 32), np.float32)

    def run():
        sparse = sparse_kernel[1](a, dense, packed, np.zeros((32, 32), np.int32),
                                  _tiling(32, 32, 64), np.zeros(64, np.uint8))
        hf32 = hf32_kernel[1](*f32, np.zeros((32, 32), np.float32), _tiling(32, 32, 64),
                              np.zeros(64, np.uint8), True, 0)
        return sparse, hf32

    full = run()
    with SESSION.values(False):
        timing = run()
    for t, f in zip(timing, full):
        assert t.device_time_us == pytest.approx(f.device_time_us)


def test_hf32_and_sparse_are_priced_below_the_plain_product(soc):
    soc("Ascend910B1")
    f32 = np.ones((64, 256), np.float32), np.ones((256, 64), np.float32)
    # The Cube's own time: the kernel as a whole is bound by its 128-byte-row slab loads.
    times = [hf32_kernel[1](*f32, np.zeros((64, 64), np.float32), _tiling(64, 64, 256),
                            np.zeros(64, np.uint8), on, 0).pipe_busy_us()["M"]
             for on in (False, True)]
    assert times[1] < times[0]
