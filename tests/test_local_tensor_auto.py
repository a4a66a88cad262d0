"""asc.LocalTensorAuto: one UB buffer per declaration site, and every use ordered after the
previous one (the flags pyasc's compiler inserts), so a kernel without any sync is race-free."""

from __future__ import annotations

import numpy as np
import pytest
from source_marks import checks_on_not_strict  # noqa: F401 - a fixture

import ascsim.asc as asc
from ascsim.session import SESSION
from ascsim.sim.errors import KernelError

pytestmark = pytest.mark.usefixtures("checks_on_not_strict")

TILE = 256


@asc.jit
def _auto_vadd(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
               tiles: asc.ConstExpr[int], shape: asc.ConstExpr[tuple]):
    xg, yg, zg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg.set_global_buffer(y)
    zg.set_global_buffer(z)
    for i in range(tiles):
        xl = asc.LocalTensorAuto(x.dtype, shape)
        yl = asc.LocalTensorAuto(y.dtype, shape)
        zl = asc.LocalTensorAuto(z.dtype, TILE)
        asc.data_copy(xl, xg[i * TILE:], count=TILE)
        asc.data_copy(yl, yg[i * TILE:], count=TILE)
        asc.add(zl, xl, yl, TILE)
        asc.muls(zl, zl, 2.0, TILE)
        asc.data_copy(zg[i * TILE:], zl, count=TILE)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_auto_tensors_need_no_sync_and_compute_right(dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, 4 * TILE).astype(dtype)
    y = rng.uniform(-4, 4, 4 * TILE).astype(dtype)
    z = np.zeros_like(x)
    with SESSION.collect(launches=True) as run:
        report = _auto_vadd[1](x, y, z, 4, (16, TILE // 16))
    expected = ((x.astype(np.float32) + y).astype(dtype).astype(np.float32) * 2).astype(dtype)
    np.testing.assert_array_equal(z, expected)
    assert report.findings == [], [f.format() for f in report.findings]
    core = run.launches[-1].cores[0]
    # Every instruction touching a tile starts after the previous one on it has completed.
    copies_in = [i for i in core.instrs if i.pipe == "MTE2"]
    adds = [i for i in core.instrs if i.pipe == "V" and i.op == "add"]
    copies_out = [i for i in core.instrs if i.pipe == "MTE3"]
    assert len(adds) == len(copies_out) == 4
    for t in range(4):
        assert adds[t].start >= max(c.done for c in copies_in[2 * t:2 * t + 2])
        assert copies_out[t].start > adds[t].done
        if t:  # the next tile's load waits for the previous tile's reads of the buffer
            assert copies_in[2 * t].start >= adds[t - 1].done


@asc.jit
def _overfull(x: asc.GlobalAddress):
    asc.LocalTensorAuto(asc.float32, 1 << 20)


def test_a_tensor_larger_than_ub_is_refused():
    with pytest.raises(KernelError, match="LocalTensorAuto needs 4194304 B of UB"):
        _overfull[1](np.zeros(8, np.float32))


@asc.jit
def _allocator(x: asc.GlobalAddress, y: asc.GlobalAddress, addrs: asc.GlobalAddress):
    allocator = asc.LocalMemAllocator(asc.Hardware.UB)
    ga, gy, gaddr = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    ga.set_global_buffer(x)
    gy.set_global_buffer(y)
    gaddr.set_global_buffer(addrs)
    a = allocator.alloc(asc.TPosition.VECIN, asc.float32, 22)  # 88 B, rounded up to 96 B
    gaddr.set_value(0, allocator.get_cur_addr())
    b = allocator.alloc(asc.TPosition.VECOUT, asc.float32, 24)
    gaddr.set_value(1, allocator.get_cur_addr())
    gaddr.set_value(2, b.get_phy_addr())
    asc.data_copy(a, ga, count=16)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(b, a, 1.0, 16)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, b, count=16)


def test_local_mem_allocator_places_tensors_one_after_another():
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    addrs = np.zeros(3, np.int32)
    report = _allocator[1](x, y, addrs)
    assert addrs.tolist() == [96, 192, 96]
    np.testing.assert_array_equal(y, x + 1)
    assert report.findings == []


@asc.jit
def _allocator_overflow(x: asc.GlobalAddress):
    allocator = asc.LocalMemAllocator()
    allocator.alloc(asc.TPosition.VECCALC, asc.float32, 40000)
    allocator.alloc(asc.TPosition.VECCALC, asc.float32, 40000)


def test_local_mem_allocator_refuses_to_run_past_the_buffer():
    with pytest.raises(KernelError, match="run past UB's"):
        _allocator_overflow[1](np.zeros(8, np.float32))
