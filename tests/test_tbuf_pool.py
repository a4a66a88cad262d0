"""TBufPool: queues and TBufs carved from a pool of a TPipe's memory, nested and shared pools,
and reset handing the bytes back for the next phase."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.sim.errors import KernelError


@asc.jit
def _phases(x: asc.GlobalAddress, y: asc.GlobalAddress, addrs: asc.GlobalAddress):
    pipe = asc.TPipe()
    gx, gy, ga = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    ga.set_global_buffer(addrs)
    head = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=head, num=256)  # the pool starts after these 256 B
    pool = asc.TBufPool(asc.TPosition.VECCALC, 4)
    twin = asc.TBufPool(asc.TPosition.VECCALC, 4)
    inner = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pipe.init_buf_pool(pool, 1024)
    pipe.init_buf_pool(twin, 1024, share_buf=pool)
    pool.init_buf_pool(inner, 512)
    a, b = asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC)
    inner.init_buffer(buf=a, len=256)
    inner.init_buffer(buf=b, len=256)
    ta, tb = a.get(asc.float32), b.get(asc.float32)
    ga.set_value(0, ta.get_phy_addr())
    ga.set_value(1, tb.get_phy_addr())
    asc.data_copy(ta, gx, count=64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.muls(tb, ta, 3.0, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, tb, count=64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    inner.reset()  # the next phase carves the same bytes again
    c = asc.TBuf(asc.TPosition.VECCALC)
    inner.init_buffer(buf=c, len=256)
    ga.set_value(2, c.get(asc.float32).get_phy_addr())
    d = asc.TBuf(asc.TPosition.VECCALC)
    twin.init_buffer(buf=d, len=64)  # the twin pool starts where pool starts
    ga.set_value(3, d.get(asc.float32).get_phy_addr())


def test_pools_carve_nest_share_and_reset():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    addrs = np.zeros(4, np.int32)
    _phases[1](x, y, addrs)
    np.testing.assert_array_equal(y, 3 * x)
    assert addrs.tolist() == [256, 512, 256, 256]


@asc.jit
def _overfull(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    pool = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pipe.init_buf_pool(pool, 256)
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pool.init_buffer(buf=buf, len=512)


def test_a_pool_refuses_carves_past_its_end():
    with pytest.raises(KernelError, match="past the end of its TBufPool"):
        _overfull[1](np.zeros(8, np.float32))
