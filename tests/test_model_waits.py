"""Waits of the timing model: a scalar read of UB waits for the instruction that writes the
value; on the 910B two vector sources that share UB bank groups are read in two cycles per
repeat, and UB transfers beside such an instruction wait for the ports it holds; the Matmul API
overwrites an L1 slab only once MTE1 has read it."""

from __future__ import annotations

import pytest
import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.calib import matmul, vector
from ascsim.session import SESSION
from ascsim.sim.cost import ub_port_stall

N = 4096  # fp32 elements


@asc.jit(kernel_type=KernelType.AIV_ONLY)
def max_then_scale(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """y = x / max(x): the scalar unit reads the max the vector unit computed."""
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    y_gm.set_global_buffer(y)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, len=(2 * N + 8) * 4)
    whole = buf.get(asc.float32)
    x_ub, work, red = whole[0:], whole[N:], whole[2 * N:]
    asc.data_copy(x_ub, x_gm, count=N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.reduce_max(red, x_ub, work, count=N)
    biggest = red.get_value(0)
    asc.muls(x_ub, x_ub, 1.0 / biggest, count=N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(y_gm, x_ub, count=N)


def test_a_scalar_read_waits_for_the_reduction_that_writes_it():
    x = torch.rand(N) + 0.1
    y = torch.empty(N)
    with SESSION.using_soc("Ascend910B1"), SESSION.collect(launches=True) as run:
        max_then_scale[1](x, y)
    torch.testing.assert_close(y, x / x.max())
    core = run.launches[0].cores[0]
    reduce = next(i for i in core.instrs if i.op == "reduce_max")
    read = next(i for i in core.instrs if i.pipe == "S")
    assert read.start >= reduce.done


@asc.jit(kernel_type=KernelType.AIV_ONLY)
def add_at(x: asc.GlobalAddress, z: asc.GlobalAddress, gap: asc.ConstExpr[int]):
    """z = x + x, the second source a copy of x placed ``gap`` bytes after the first."""
    x_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    z_gm.set_global_buffer(z)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, len=3 * N * 4 + 512)
    whole = buf.get(asc.float32)
    a, b, out = whole[0:], whole[N + gap // 4:], whole[2 * N + 128:]
    asc.data_copy(a, x_gm, count=N)
    asc.data_copy(b, x_gm, count=N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.add(out, a, b, count=N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(z_gm, out, count=N)


def _add_cycles(soc: str, gap: int) -> float:
    x = torch.rand(N)
    z = torch.empty(N)
    with SESSION.using_soc(soc), SESSION.collect(launches=True) as run:
        add_at[1](x, z, gap)
    torch.testing.assert_close(z, x + x)
    add = next(i for i in run.launches[0].cores[0].instrs if i.op == "add")
    return add.end - add.start


def test_sources_in_the_same_bank_groups_take_two_cycles_per_repeat_on_the_910b():
    repeats = N * 4 // 256
    # b starts 16 KiB after a (0 modulo 512 B): the same 8 of 16 groups, two reads each.
    assert _add_cycles("Ascend910B1", 0) == 2 * repeats
    # 256 B further: the other 8 groups, one cycle per repeat.
    assert _add_cycles("Ascend910B1", 256) == repeats
    # The 950's groups have two read ports: no conflict either way.
    assert _add_cycles("Ascend950PR_9589", 0) == _add_cycles("Ascend950PR_9589", 256) == repeats


def _load_after_moves(template: str) -> list[float]:
    """For each GM->L1 load of A after the first: its start minus the end of the latest L1->L0
    move before it (negative: the load overlapped the moves)."""
    with SESSION.using_soc("Ascend910B1"), SESSION.collect(launches=True) as run:
        matmul.run_matmul_api((128, 256, 512), (1, 1), (64, 64, 64), template=template)
    aic = next(c for c in run.launches[0].cores if c.kind == "AIC")
    gaps, last_move = [], None
    for instr in sorted(aic.instrs, key=lambda i: i.start):
        if instr.op in ("matmul_load_l0a", "matmul_load_l0b"):
            last_move = instr.end if last_move is None else max(last_move, instr.end)
        elif instr.op == "matmul_load_a" and last_move is not None:
            gaps.append(instr.start - last_move)
    return gaps


def test_norm_overwrites_an_l1_slab_only_after_mte1_has_read_it():
    # The loads are MTE2-bound here: without the hand-over each would start as soon as MTE2
    # is free; with it, each starts exactly when the previous K step's moves end.
    norm = _load_after_moves("norm")
    assert norm and all(gap == pytest.approx(0, abs=1e-6) for gap in norm)
    # MDL ping-pongs two slabs (depth 2, step 1): its loads do not wait for the moves.
    assert any(gap > 1 for gap in _load_after_moves("mdl"))


def _add_mte2_busy(ub_gap: int) -> float:
    """MTE2's busy cycles on the one core of a double-buffered fp16 add (8 KiB copies) whose
    UB buffers are ``ub_gap`` bytes apart beyond their own size."""
    with SESSION.using_soc("Ascend910B1"), SESSION.collect(launches=True) as run:
        vector.run_add((16 * 4096,), torch.float16, cores=1, copy_len=4096, buffers=2,
                       ub_gap=ub_gap)
    (core,) = run.launches[0].cores
    return core.busy["MTE2"]


def test_ub_loads_wait_for_the_ports_a_bank_conflicted_vector_instruction_holds():
    # Buffers 8 KiB apart: x and y 16 KiB apart (0 modulo 512 B), each add reads both in two
    # cycles per repeat, and the next tile's loads into the same banks wait for those cycles.
    # 8192 + 128 B: y 256 B off x modulo 512 B, no conflict, nothing to wait for.
    conflicted, clean = _add_mte2_busy(0), _add_mte2_busy(128)
    extra_per_tile = 4096 * 2 // 256  # the conflict adds a cycle to each of the add's repeats
    # Each of the 15 loads after the first overlaps (most of) the previous tile's add.
    assert clean + 8 * extra_per_tile <= conflicted <= clean + 16 * extra_per_tile


def test_a_ub_transfer_loses_the_conflict_cycles_it_overlaps_in_the_banks_it_shares():
    window = [(0.0, 100.0, 50.0, 0b01)]  # a vector instruction reading bank 0, 50 cycles lost
    assert ub_port_stall(window, 50.0, 100.0, 0b01) == 25.0  # half of it overlapped
    assert ub_port_stall(window, 50.0, 100.0, 0b10) == 0.0  # a write into another bank
    assert ub_port_stall(window, 50.0, 100.0, -1) == 25.0  # a read of UB: any bank
    assert ub_port_stall(window, 100.0, 10.0, -1) == 0.0  # after it
