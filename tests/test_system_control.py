"""System control calls: cache maintenance as timed no-ops, the HCCL context registers, SoC
state reset and accuracy check points."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.sim.errors import KernelError


@asc.jit
def _control(x: asc.GlobalAddress, out: asc.GlobalAddress, calls: asc.ConstExpr[int]):
    gx, go = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    go.set_global_buffer(out)
    for _ in range(calls):
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE,
                                         asc.DcciDst.CACHELINE_OUT, gx)
        asc.data_cache_clean_and_invalid(entire_type=asc.CacheLine.ENTIRE_DATA_CACHE, dst=gx)
        asc.data_cache_preload(gx, 1024)
        asc.icache_preload(2)
        asc.set_mm_layout_transform(True)
        asc.metrics_prof_start()
        asc.metrics_prof_stop()
    go.set_value(0, asc.get_icache_preload_status())
    asc.set_hccl_context(1, x)
    ctx = asc.get_hccl_context(1)
    go.set_value(1, 1 if ctx is x else 0)
    asc.set_atomic_add(asc.float32)
    asc.init_soc_state()  # resets the atomic store mode
    kind, op = asc.get_store_atomic_config()
    go.set_value(2, kind)


def test_cache_control_costs_only_its_issue_and_registers_hold_their_values():
    x = np.arange(16, dtype=np.float32)
    out = np.full(4, -1, np.int32)
    quiet = _control[1](x, out, 0).cores[0].pipe_busy_us["S"]
    busy = _control[1](x, out, 10).cores[0].pipe_busy_us["S"]
    assert busy > quiet  # each call is issued by the scalar unit
    assert out[:3].tolist() == [0, 1, int(asc.AtomicDtype.ATOMIC_NONE)]
    np.testing.assert_array_equal(x, np.arange(16, dtype=np.float32))  # nothing changed


@asc.jit
def _check_point(x: asc.GlobalAddress):
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    asc.dump_acc_chk_point(gx, 7, 2, 3)


def test_dump_acc_chk_point_prints_the_slice(capsys):
    _check_point[1](np.arange(8, dtype=np.float32))
    assert "check point 7 @2: [2. 3. 4.]" in capsys.readouterr().out


@asc.jit
def _bad_context(x: asc.GlobalAddress):
    asc.set_hccl_context(5, x)


def test_hccl_context_index_is_checked():
    with pytest.raises(KernelError, match=r"HCCL context index 5 is outside \[0, 2\)"):
        _bad_context[1](np.zeros(4, np.float32))
