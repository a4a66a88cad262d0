"""The ``unit_flag`` of the basic ``mmad`` and ``fixpipe``: 2 and 3 hand the L0C buffer between
the Cube and FixPipe without event flags (3 on the last Mmad of an accumulation and on the
FixPipe that drains it), 0 leaves them to flags, 1 is reserved."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.isa.errors import DeadlockError
from ascsim.session import SESSION
from ascsim.sim.errors import KernelError

M, N, K, STEPS = 32, 32, 64, 2


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def accumulate_then_store(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                          mid_flag: asc.ConstExpr[int], last_flag: asc.ConstExpr[int],
                          fix_flag: asc.ConstExpr[int]):
    """C = A · Bᵀ in two K steps; nothing but the unit flags orders FixPipe after the Cube."""
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    ks = K // STEPS
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, M * K)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 65536, N * K)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, M * ks)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, N * ks)
    c2 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, M * N)
    for s in range(STEPS):
        asc.data_copy(a1, a_gm[s * ks:], asc.Nd2NzParams(1, M, ks, 0, K, M, 1, 0))
        asc.data_copy(b1, b_gm[s * ks:], asc.Nd2NzParams(1, N, ks, 0, K, N, 1, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        for band in range(M // 16):
            asc.load_data(a2[band * (ks // 16) * 256:], a1[band * 256:],
                          asc.LoadData2DParams(0, ks // 16, M // 16, 0, 0, False, 0))
        asc.load_data(b2, b1, asc.LoadData2DParams(0, (ks // 16) * (N // 16), 1, 0, 0, False,
                                                    0))
        asc.set_flag(asc.HardEvent.MTE1_M, 0)
        asc.wait_flag(asc.HardEvent.MTE1_M, 0)
        flag = last_flag if s == STEPS - 1 else mid_flag
        asc.mmad(c2, a2, b2, asc.MmadParams(M, N, ks, flag, False, s == 0))
        if s < STEPS - 1:
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)  # the next loads overwrite L0A / L0B
    fix = asc.FixpipeParamsV220(N, M, M, N)
    fix = asc.FixpipeParamsV220(N, M, M, N, unit_flag=fix_flag) if fix_flag else fix
    asc.fixpipe(c_gm, c2, fix)


def _run(mid_flag: int, last_flag: int, fix_flag: int):
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (M, K)).astype(np.float16)
    b = rng.integers(-3, 4, (N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    with SESSION.using_soc("Ascend910B1"), SESSION.collect(launches=True) as run:
        report = accumulate_then_store[1](a, b, c, mid_flag, last_flag, fix_flag)
    return report, run.launches[0].cores[0], c, a.astype(np.float32) @ b.astype(np.float32).T


def test_unit_flags_hand_l0c_to_fixpipe_without_event_flags():
    report, core, c, expected = _run(2, 3, 3)
    assert not report.findings
    np.testing.assert_array_equal(c, expected)
    last_mmad = max(i.end for i in core.instrs if i.pipe == "M")
    store = next(i for i in core.instrs if i.pipe == "FIX")
    assert store.start >= last_mmad


def test_without_unit_flags_or_event_flags_the_store_races_the_cube():
    report, *_ = _run(0, 0, 0)
    assert "race" in {f.category for f in report.findings}


def test_a_store_waiting_for_a_final_mmad_that_never_comes_is_a_deadlock():
    # The last Mmad keeps the flag on (2): the store waits for a final one that never comes,
    # reported at the store's line.
    with pytest.raises(DeadlockError, match=r"test_cube_unit_flag.py:\d+: deadlock: the store "
                       "waits for the unit flag"):
        _run(2, 2, 3)


def test_the_reserved_value_is_refused():
    with pytest.raises(KernelError, match="unit_flag 1 is reserved"):
        _run(1, 3, 3)
