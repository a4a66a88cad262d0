"""Shortcuts taken on the per-call paths give what the general code gives: element views of
queue tensors (one slice of the slot's typed memory, or a byte slice retyped when the tensor
does not start on a whole element) and cached vector instruction pricing."""

from __future__ import annotations

import numpy as np

import ascsim.asc as asc
from ascsim.asc.context import current_core, user_location


@asc.jit
def _views_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, n: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    pipe.init_buffer(que=q, num=2, len=n * 4)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    t = q.alloc_tensor(asc.float32)
    asc.data_copy(t, gx, n)
    loc = user_location()
    data = t.mem.data
    aligned = t.elements(2, n - 2, loc)  # from the slot's typed view
    assert aligned.dtype == np.float32 and aligned.flags.writeable
    assert np.shares_memory(aligned, data)
    assert aligned.tobytes() == data[t.addr + 8:t.addr + 4 * n].tobytes()
    shifted = t.reinterpret_cast(asc.uint8)[2:].reinterpret_cast(asc.float32)
    odd = shifted.elements(0, 4, loc)  # starts mid-element: the byte slice path
    assert odd.tobytes() == data[t.addr + 2:t.addr + 18].tobytes()
    aligned[0] = 7.0  # writes land in the buffer
    assert data[t.addr + 8:t.addr + 12].view(np.float32)[0] == 7.0
    soc = current_core().soc
    for repeats in (0, 1, 5, 255):
        busy, latency = soc.vector_cost("add", "float32").cycles(max(1, repeats), 256)
        expected = (busy * soc.timing.vector_ub_bank_conflict_factor, latency)
        assert current_core().costs.vector("add", "float32", repeats) == expected
        assert current_core().costs.vector("add", "float32", repeats) == expected  # (cached)
    go = asc.GlobalTensor()
    go.set_global_buffer(out)
    q.enque(t)
    t = q.deque(asc.float32)
    asc.data_copy(go, t, n)
    q.free_tensor(t)


def test_element_views_and_pricing_match_the_general_code():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, dtype=np.float32)
    _views_kernel[1](x, out, 64)
    expected = x.copy()
    expected[2] = 7.0
    np.testing.assert_array_equal(out, expected)


def test_widen_to_fp32_equals_numpy_for_every_fp16_and_bf16_value():
    """PyTorch's conversion (taken for large arrays) gives numpy's bits for every fp16 and
    bf16 pattern, except that signalling fp16 NaNs come out quiet (still NaN)."""
    import ml_dtypes

    from ascsim.sim.numerics import TORCH_WIDEN_MIN_ELEMENTS, widen_to_fp32

    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    assert patterns.size >= TORCH_WIDEN_MIN_ELEMENTS
    for dtype in (np.float16, ml_dtypes.bfloat16):
        values = patterns.view(dtype)
        got, want = widen_to_fp32(values), values.astype(np.float32)
        assert got.dtype == np.float32
        differ = got.view(np.uint32) != want.view(np.uint32)
        assert np.isnan(want[differ]).all() and np.isnan(got[differ]).all()
        quiet_bit = np.uint32(1 << 22)
        assert (got.view(np.uint32)[differ] & quiet_bit).all()
        assert differ.sum() == (1022 if dtype is np.float16 else 0)


def test_widen_to_fp32_views_small_and_read_only_arrays():
    from ascsim.sim.numerics import widen_to_fp32

    x = np.random.default_rng(0).standard_normal((96, 128)).astype(np.float16)
    frozen = x.copy()
    frozen.flags.writeable = False
    cases = (x, x[:, ::3], x[::-1], x.T, x[:2, :3], frozen, np.zeros(0, np.float16))
    for view in cases:
        got = widen_to_fp32(view)
        assert got.shape == view.shape and got.dtype == np.float32
        assert np.array_equal(got, view.astype(np.float32))
    same = x.astype(np.float32)
    assert widen_to_fp32(same) is same


def test_leaky_relu_shortcut_gives_the_definitions_bits():
    """max(x, alpha*x) for 0 < alpha <= 1 equals where(x >= 0, x, alpha*x) bit for bit,
    including -0, infinities and NaN; other slopes take the definition itself."""
    from ascsim.sim.exec_vector import _leaky_relu

    x = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    x[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -1e-45]
    with np.errstate(all="ignore"):
        for alpha in (0.01, 0.2, 1.0, 0.0, -0.5, 3.0):
            a = np.float32(alpha)
            want = np.where(x >= 0, x, x * a)
            assert np.array_equal(_leaky_relu(x, a).view(np.uint32), want.view(np.uint32))
