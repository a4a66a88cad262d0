"""GM allocations and local buffers of a finished launch go back to a pool for later
launches: reused bytes must never leak into a new allocation, a view still held keeps its bytes
out of the pool, and a released buffer refuses further use."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ascsim.asc as asc
from ascsim.session import SESSION
from ascsim.sim.memory import FILL_BYTE, POOL, BytePool, DeviceMemory, GmBuffer, LocalMemory


def test_pool_hands_back_arrays_of_the_same_size_within_its_limit():
    pool = BytePool(limit=3000)
    a = np.zeros(1024, np.uint8)
    pool.give(a)
    pool.give(np.zeros(1024, np.uint8))
    pool.give(np.zeros(1024, np.uint8))  # over the limit: dropped
    assert pool.take(1024) is not None and pool.take(1024) is not None
    fresh = pool.take(1024)  # the pool is empty now: a new array
    assert fresh.size == 1024 and fresh is not a
    assert pool.take(512).size == 512


def test_reused_bytes_are_overwritten_by_the_copy_in_and_the_fill():
    memory = DeviceMemory()
    first = memory.from_array(np.arange(600, dtype=np.uint8), "x")
    scratch = memory.alloc(600, "ws")
    first.data[:] = 7
    scratch.data[:] = 9
    memory.release()
    again = DeviceMemory()
    host = np.arange(600, dtype=np.uint16).astype(np.uint8)
    second = again.from_array(host, "x")
    workspace = again.alloc(600, "ws")
    assert np.array_equal(second.data[:600], host)
    assert (second.data[600:] == FILL_BYTE).all()
    assert (workspace.data == FILL_BYTE).all()


def test_a_view_still_held_keeps_its_bytes_out_of_the_pool():
    memory = DeviceMemory()
    buf = memory.alloc(4096, "kept")
    view = buf.data[10:20]
    memory.release()
    other = DeviceMemory().alloc(4096, "new")
    other.data[:] = 1
    assert not np.shares_memory(view, other.data)


def test_a_released_buffer_refuses_use():
    buf = GmBuffer(0, "gone", 64, 0)
    buf.data[:] = 1
    buf.release()
    with pytest.raises(RuntimeError, match="released"):
        _ = buf.data


def test_a_local_buffer_from_the_pool_starts_filled():
    first = LocalMemory("UB", 8192, 0)
    first.data[:] = 3
    first.typed(np.dtype(np.float32))  # a typed view, dropped with the buffer's release
    array = first.data
    del array
    first.release()
    with pytest.raises(RuntimeError, match="released"):
        _ = first.data
    second = LocalMemory("UB", 8192, 1)
    assert (second.data == FILL_BYTE).all()
    # A view still held keeps its bytes out of the pool.
    kept = second.data[:16]
    second.release()
    third = LocalMemory("UB", 8192, 2)
    third.data[:] = 5
    assert not np.shares_memory(kept, third.data)


def test_a_launch_gives_its_local_buffers_to_the_pool():
    x, y = torch.rand(256), torch.zeros(256)
    _double[1](x, y, 256)
    ub_bytes = SESSION.soc.ub_bytes
    spare = len(POOL._free.get(ub_bytes, ()))
    assert spare >= 1  # the launch's UB, given back when it ended
    _double[1](x, y, 256)
    assert len(POOL._free.get(ub_bytes, ())) == spare  # taken, then given back again
    assert torch.equal(y, x * 2)


@asc.jit
def _double(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=n * 4)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    t = q.alloc_tensor(asc.float32)
    asc.data_copy(t, gx, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.muls(t, t, 2.0, count=n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, t, n)
    q.free_tensor(t)


def test_launches_in_a_row_get_their_own_data():
    """The second launch reuses the first one's arrays; its results are its own."""
    for seed in range(3):
        x = torch.rand(256, generator=torch.Generator().manual_seed(seed))
        y = torch.zeros(256)
        _double[1](x, y, 256)
        assert torch.equal(y, x * 2)
