"""Inter-block synchronisation through GM: ib_set / ib_wait and notify_next_block /
wait_pre_block order the blocks; a wait nobody satisfies is a deadlock, not a hang."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.isa import DeadlockError


@asc.jit
def _ordered(ws: asc.GlobalAddress, acc: asc.GlobalAddress, out: asc.GlobalAddress,
             rounds: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=64)
    ub = buf.get(asc.int32)
    g_ws, g_acc, g_out = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    g_ws.set_global_buffer(ws)
    g_acc.set_global_buffer(acc)
    g_out.set_global_buffer(out)
    b = asc.get_block_idx()
    n = asc.get_block_num()
    for r in range(rounds):
        asc.wait_pre_block(g_ws, ub)
        v = g_acc.get_value(0)
        g_acc.set_value(0, v + 1)
        g_out.set_value(r * n + b, v)
        asc.notify_next_block(g_ws, ub)


def test_wait_pre_block_runs_the_blocks_in_ascending_order_every_round():
    blocks, rounds = 4, 3
    ws = np.zeros(blocks * 8, np.int32)
    acc = np.zeros(8, np.int32)
    out = np.full(blocks * rounds, -1, np.int32)
    report = _ordered[blocks](ws, acc, out, rounds)
    np.testing.assert_array_equal(out, np.arange(blocks * rounds))
    assert acc[0] == blocks * rounds
    assert not [f for f in report.findings if f.category == "race"]


@asc.jit
def _ib_pair(ws: asc.GlobalAddress, data: asc.GlobalAddress, out: asc.GlobalAddress,
             set_it: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=64)
    ub = buf.get(asc.int32)
    g_ws, g_data, g_out = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    g_ws.set_global_buffer(ws)
    g_data.set_global_buffer(data)
    g_out.set_global_buffer(out)
    if asc.get_block_idx() == 1:
        g_data.set_value(0, 42)
        if set_it:
            asc.ib_set(g_ws, ub, 0, 1)
    else:
        asc.ib_wait(g_ws, ub, 0, 1)
        g_out.set_value(0, g_data.get_value(0))


def test_ib_wait_sees_the_data_written_before_ib_set():
    ws = np.zeros(2 * 2 * 8 + 8, np.int32)
    data = np.zeros(8, np.int32)
    out = np.zeros(8, np.int32)
    _ib_pair[2](ws, data, out, True)
    assert out[0] == 42
    assert ws[(1 * 2 + 0) * 8] == 1  # the flag word of (block 0, event 1)


def test_ib_wait_without_a_set_is_a_deadlock():
    ws = np.zeros(2 * 2 * 8 + 8, np.int32)
    with pytest.raises(DeadlockError, match="GM flag"):
        _ib_pair[2](ws, np.zeros(8, np.int32), np.zeros(8, np.int32), False)
