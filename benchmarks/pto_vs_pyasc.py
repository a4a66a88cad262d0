"""Do a PyPTO-Pro kernel and a pyasc kernel of the same algorithm get the same simulated time?

Both front-ends map their calls onto the same instruction records and run them on the same
machine model, so one algorithm written in the two languages should be timed alike. Two pairs,
each on the same SoC (Ascend950PR_9579, the part PyPTO Pro runs on) with the same tiles, buffers,
cores and hand-written pipe flags:

* vector add, z = x + y (fp32): pyasc's ``examples/vector_add_flags.py`` (ping-pong UB slots,
  MTE2->V, V->MTE3 and MTE3->MTE2 events) and :func:`add_pto` below;
* a linear layer, y = x . W^T (fp16 in, fp32 accumulation, fp16 out): pyasc's
  ``examples/linear_cube.py`` (K staged in L1 in 512-element segments, 128-element L0A/L0B
  steps, double buffers, one fixpipe write per block) and :func:`linear_pto` below.

Prints each pair's simulated device times, their ratio and whether it is within 10 %, and what
the PyPTO-Pro kernel issues differently (the scalar unit's per-call cost is the same; the
instruction counts show what each language emits)::

    .venv/bin/python benchmarks/pto_vs_pyasc.py
"""

from __future__ import annotations

import sys

import torch

import ascsim.pto.language as pl
from ascsim.demo import load_example
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
TOLERANCE = 0.10

# ---------------------------------------------------------------- vector add
ADD_LENGTH, ADD_CORES, ADD_TILE = 8 * 2048, 8, 256
ADD_STEPS = ADD_LENGTH // ADD_CORES // ADD_TILE
ROW = pl.TileType(shape=[1, ADD_TILE], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
ROW_BYTES = ADD_TILE * 4


@pl.jit(auto_mutex=False)
def add_pto(x: pl.Tensor[[ADD_LENGTH // ADD_TILE, ADD_TILE], pl.DT_FP32],
            y: pl.Tensor[[ADD_LENGTH // ADD_TILE, ADD_TILE], pl.DT_FP32],
            z: pl.Tensor[[ADD_LENGTH // ADD_TILE, ADD_TILE], pl.DT_FP32]):
    # UB as pyasc's kernel lays it out: [x ping | x pong][y ping | y pong][z ping | z pong].
    xs = pl.make_tile_group(type=ROW, addrs=[0, ROW_BYTES], depth=2)
    ys = pl.make_tile_group(type=ROW, addrs=[2 * ROW_BYTES, 3 * ROW_BYTES], depth=2)
    zs = pl.make_tile_group(type=ROW, addrs=[4 * ROW_BYTES, 5 * ROW_BYTES], depth=2)
    with pl.section_vector():
        first = pl.get_block_idx() * ADD_STEPS
        for slot in pl.range(2):
            pl.system.sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.MTE2,
                               event_id=slot)
        for step in pl.range(ADD_STEPS):
            slot = step % 2
            xt, yt, zt = xs[slot], ys[slot], zs[slot]
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.MTE2,
                               event_id=slot)
            pl.load(xt, x, [first + step, 0])
            pl.load(yt, y, [first + step, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=slot)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=slot)
            pl.add(zt, xt, yt)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=slot)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=slot)
            pl.store(z, zt, [first + step, 0])
            pl.system.sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.MTE2,
                               event_id=slot)
        for slot in pl.range(2):
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.MTE2,
                               event_id=slot)


@pl.jit(auto_mutex=True)
def add_pto_auto(x: pl.Tensor[[ADD_LENGTH // ADD_TILE, ADD_TILE], pl.DT_FP32],
                 y: pl.Tensor[[ADD_LENGTH // ADD_TILE, ADD_TILE], pl.DT_FP32],
                 z: pl.Tensor[[ADD_LENGTH // ADD_TILE, ADD_TILE], pl.DT_FP32]):
    # The same buffers as add_pto, ordered by buffer ids (auto_mutex) instead of event flags.
    xs = pl.make_tile_group(type=ROW, addrs=[0, ROW_BYTES], mutex_ids=[0, 1])
    ys = pl.make_tile_group(type=ROW, addrs=[2 * ROW_BYTES, 3 * ROW_BYTES], mutex_ids=[2, 3])
    zs = pl.make_tile_group(type=ROW, addrs=[4 * ROW_BYTES, 5 * ROW_BYTES], mutex_ids=[4, 5])
    with pl.section_vector():
        first = pl.get_block_idx() * ADD_STEPS
        for step in pl.range(ADD_STEPS):
            xt, yt, zt = xs.next(), ys.next(), zs.next()
            pl.load(xt, x, [first + step, 0])
            pl.load(yt, y, [first + step, 0])
            pl.add(zt, xt, yt)
            pl.store(z, zt, [first + step, 0])


def vector_add_auto_mutex_pair() -> tuple[object, object]:
    """pyasc with event flags against PyPTO Pro with auto_mutex: the sync style differs."""
    example = load_example("vector_add_flags")
    torch.manual_seed(0)
    x = torch.rand(ADD_LENGTH)
    y = torch.rand(ADD_LENGTH)
    _, asc_report = example.vector_add(x, y, ADD_CORES, ADD_TILE)
    z_pto = torch.zeros(ADD_LENGTH // ADD_TILE, ADD_TILE)
    pto_report = add_pto_auto[None, ADD_CORES](x.view(-1, ADD_TILE), y.view(-1, ADD_TILE),
                                               z_pto)
    torch.testing.assert_close(z_pto.view(-1), x + y)
    return asc_report, pto_report


def vector_add_pair() -> tuple[object, object]:
    example = load_example("vector_add_flags")
    torch.manual_seed(0)
    x = torch.rand(ADD_LENGTH)
    y = torch.rand(ADD_LENGTH)
    z_asc, asc_report = example.vector_add(x, y, ADD_CORES, ADD_TILE)
    z_pto = torch.zeros(ADD_LENGTH // ADD_TILE, ADD_TILE)
    pto_report = add_pto[None, ADD_CORES](x.view(-1, ADD_TILE), y.view(-1, ADD_TILE), z_pto)
    torch.testing.assert_close(z_asc, x + y)
    torch.testing.assert_close(z_pto.view(-1), x + y)
    return asc_report, pto_report


# ---------------------------------------------------------------- linear layer
LM, LN, LK = 512, 512, 1024
BM, BN, K_SEG, K_STEP = 128, 128, 512, 128
SEGMENTS, STEPS = LK // K_SEG, K_SEG // K_STEP
BLOCKS_N = LN // BN
BLOCKS = (LM // BM) * BLOCKS_N
A_SEG = pl.TileType(shape=[BM, K_SEG], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat)
B_SEG = pl.TileType(shape=[K_SEG, BN], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Mat,
                    layout=pl.ZN)
A_L0 = pl.TileType(shape=[BM, K_STEP], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Left)
B_L0 = pl.TileType(shape=[K_STEP, BN], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Right)
C_L0 = pl.TileType(shape=[BM, BN], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc)
A_BYTES, B_BYTES = BM * K_SEG * 2, K_SEG * BN * 2


@pl.jit(auto_mutex=False)
def linear_pto(x: pl.Tensor[[LM, LK], pl.DT_FP16], w: pl.Tensor[[LN, LK], pl.DT_FP16],
               y: pl.Tensor[[LM, LN], pl.DT_FP16]):
    with pl.section_cube():
        # L1 as pyasc's kernel lays it out: [A seg | B seg] per slot, two slots.
        a_l1 = pl.make_tile_group(type=A_SEG, addrs=[0, A_BYTES + B_BYTES], depth=2)
        b_l1 = pl.make_tile_group(type=B_SEG, addrs=[A_BYTES, 2 * A_BYTES + B_BYTES], depth=2)
        a_l0 = pl.make_tile_group(type=A_L0, addrs=[0, BM * K_STEP * 2], depth=2)
        b_l0 = pl.make_tile_group(type=B_L0, addrs=[0, BN * K_STEP * 2], depth=2)
        c_l0 = pl.make_tile_group(type=C_L0, addrs=[0, BM * BN * 4], depth=2)
        for slot in pl.range(2):
            pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.MTE2,
                               event_id=slot)
            pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.MTE1, event_id=slot)
            pl.system.sync_src(set_pipe=pl.PipeType.FIX, wait_pipe=pl.PipeType.M, event_id=slot)
        seg_count = 0
        step_count = 0
        block_count = 0
        for task in pl.range(pl.get_block_idx(), BLOCKS, pl.get_block_num()):
            m_base = (task // BLOCKS_N) * BM
            n_base = (task % BLOCKS_N) * BN
            c_slot = block_count % 2
            acc = c_l0[c_slot]
            pl.system.sync_dst(set_pipe=pl.PipeType.FIX, wait_pipe=pl.PipeType.M, event_id=c_slot)
            for seg in pl.range(SEGMENTS):
                s = seg_count % 2
                a_seg = a_l1[s]
                b_seg = b_l1[s]
                pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.MTE2,
                                   event_id=s)
                pl.load(a_seg, x, [m_base, seg * K_SEG])
                pl.load(b_seg, w, [n_base, seg * K_SEG], order=[1, 0])  # W^T into a ZN tile
                pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1,
                                   event_id=s)
                pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1,
                                   event_id=s)
                for step in pl.range(STEPS):
                    p = step_count % 2
                    left = a_l0[p]
                    right = b_l0[p]
                    pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.MTE1,
                                       event_id=p)
                    pl.move(left, a_seg, [0, step * K_STEP])
                    pl.move(right, b_seg, [step * K_STEP, 0])
                    pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M,
                                       event_id=p)
                    pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M,
                                       event_id=p)
                    if seg == 0 and step == 0:
                        pl.matmul(acc, left, right)
                    else:
                        pl.matmul_acc(acc, acc, left, right)
                    pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.MTE1,
                                       event_id=p)
                    step_count += 1
                pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.MTE2,
                                   event_id=s)
                seg_count += 1
            pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=c_slot)
            pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=c_slot)
            pl.store(y, acc, [m_base, n_base])
            pl.system.sync_src(set_pipe=pl.PipeType.FIX, wait_pipe=pl.PipeType.M, event_id=c_slot)
            block_count += 1
        for slot in pl.range(2):
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.MTE2,
                               event_id=slot)
            pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.MTE1, event_id=slot)
            pl.system.sync_dst(set_pipe=pl.PipeType.FIX, wait_pipe=pl.PipeType.M, event_id=slot)


def linear_pair() -> tuple[object, object]:
    example = load_example("linear_cube")
    torch.manual_seed(0)
    x = torch.randn(LM, LK, dtype=torch.float16)
    w = torch.randn(LN, LK, dtype=torch.float16)
    expected = (x.float() @ w.float().T).to(torch.float16)
    y_asc, asc_report = example.linear(x, w)
    cores = asc_report.block_num  # the same number of cube cores
    y_pto = torch.zeros(LM, LN, dtype=torch.float16)
    pto_report = linear_pto[None, cores](x, w, y_pto)
    torch.testing.assert_close(y_asc, expected, rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(y_pto, expected, rtol=1e-2, atol=1e-2)
    return asc_report, pto_report


def _instructions(report) -> int:
    return sum(core.instructions for core in report.cores)


def main() -> int:
    SESSION.request_soc(SOC)
    failed = False
    print(f"simulated device time on {SOC}, the same algorithm in pyasc and in PyPTO Pro")
    print(f"{'kernel':<16}{'pyasc us':>10}{'PyPTO us':>10}{'PyPTO/pyasc':>13}  within 10 %"
          f"{'pyasc instr':>13}{'PyPTO instr':>13}")
    with SESSION.using_soc(SOC):
        for name, pair in (("vector add", vector_add_pair), ("linear fp16", linear_pair)):
            asc_report, pto_report = pair()
            ok = abs(pto_report.device_time_us / asc_report.device_time_us - 1) <= TOLERANCE
            failed |= not ok
            _row(name, asc_report, pto_report, "yes" if ok else "NO")
        # Not the same algorithm (another sync style): shown for what auto_mutex costs.
        asc_report, pto_report = vector_add_auto_mutex_pair()
        _row("add, auto_mutex", asc_report, pto_report, "(other sync)")
    return 1 if failed else 0


def _row(name: str, asc_report, pto_report, verdict: str) -> None:
    ratio = pto_report.device_time_us / asc_report.device_time_us
    print(f"{name:<16}{asc_report.device_time_us:>10.2f}{pto_report.device_time_us:>10.2f}"
          f"{ratio:>13.3f}  {verdict:<11}{_instructions(asc_report):>13}"
          f"{_instructions(pto_report):>13}")


if __name__ == "__main__":
    sys.exit(main())
