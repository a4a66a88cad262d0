"""The pipes' issue queues hold ``pipe_queue_depth`` instructions: once a pipe has that many
issued and not yet started, the scalar unit waits, and so does everything it issues later."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.hw import get_soc
from ascsim.session import SESSION

N = 32768  # fp32 elements: one long exp (1024 cycles), then short adds behind it


@asc.jit(kernel_type=KernelType.AIV_ONLY)
def queue_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, adds: asc.ConstExpr[int]):
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    y_gm.set_global_buffer(y)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, len=(N + 128) * 4)
    whole = buf.get(asc.float32)
    big, small, other = whole[0:], whole[N:], whole[N + 64:]
    asc.duplicate(big, 1.0, count=N)
    asc.exp(big, big, count=N)  # keeps the V pipe busy for a while
    for _ in range(adds):
        asc.adds(small, small, 1.0, count=64)  # queued behind it on V
    asc.data_copy(other, x_gm, count=64)  # MTE2: issued once the scalar unit gets here
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(y_gm, other, count=64)


def _starts(depth: int, adds: int):
    """(start of the MTE2 copy-in, starts of the adds) with ``depth`` queue slots."""
    spec = get_soc("Ascend910B1")
    shallow = dataclasses.replace(spec, timing=dataclasses.replace(spec.timing,
                                                                   pipe_queue_depth=depth))
    with SESSION.using_soc(shallow), SESSION.collect(launches=True) as run:
        x = torch.rand(64)
        y = torch.empty(64)
        queue_kernel[1](x, y, adds)
    torch.testing.assert_close(y, x)
    core = run.launches[0].cores[0]
    copy_in = next(i for i in core.instrs if i.pipe == "MTE2")
    return copy_in.start, [i.start for i in core.instrs if i.op == "adds"]


def test_a_full_queue_holds_the_scalar_unit_back():
    # duplicate, exp and 40 adds on V: with 32 slots the scalar unit issues the last add only
    # once the V instruction 32 places before it (the 9th add) has left the queue, so the
    # copy issued after the adds starts no earlier than that add.
    free, add_starts = _starts(1000, 40)
    assert free < add_starts[0]  # unlimited: issued long before the adds could start
    held, add_starts = _starts(32, 40)
    assert held >= add_starts[8] > free
    # Fewer instructions than slots: nothing waits.
    assert _starts(32, 20)[0] == pytest.approx(_starts(1000, 20)[0])
