"""Shortcuts taken on the per-call paths give what the general code gives: element views of
queue tensors (one slice of the slot's typed memory, or a byte slice retyped when the tensor
does not start on a whole element) and cached vector instruction pricing."""

from __future__ import annotations

import numpy as np

import ascsim.asc as asc
from ascsim.asc.basic._exec import vector_cycles
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
        assert vector_cycles("add", "float32", repeats) == expected
        assert vector_cycles("add", "float32", repeats) == expected  # (from the cache)
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
