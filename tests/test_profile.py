"""Tests of the kernel profile (ascsim.sim.profile), ``ascsim run --profile`` and the trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.values import RuntimeInt
from ascsim.hw import get_soc
from ascsim.isa import Bursts, Copy, FixPipe, Mmad
from ascsim.session import SESSION
from ascsim.sim.core import PIPES, Instr
from ascsim.sim.profile import (
    PipeStat,
    build_profile,
    classify_bound,
    cube_peak_flops_per_s,
    vector_peak_bytes_per_s,
)
from ascsim.sim.trace import _track, trace_events
from ascsim.sim.work import CoreWork, instr_flops, instr_vector_bytes

SOC = "Ascend910B1"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _soc():
    before = SESSION.soc
    SESSION.set_soc(SOC)
    yield
    SESSION.set_soc(before)


@asc.jit
def exp_tiles(x: asc.GlobalAddress, y: asc.GlobalAddress, per_core: asc.ConstExpr[int],
              tile: asc.ConstExpr[int], reps: asc.ConstExpr[int]):
    """y = exp^reps(x): copy a tile in, apply exp ``reps`` times in place, copy it out."""
    first = asc.get_block_idx() * per_core
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + first, per_core)
    y_gm.set_global_buffer(y + first, per_core)
    ub = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, tile)
    steps = per_core // tile
    for step in range(steps):
        if step > 0:
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.data_copy(ub, x_gm[step * tile:], tile)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        for _ in range(reps):
            asc.exp(ub, ub, tile)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(y_gm[step * tile:], ub, tile)
        if step + 1 < steps:
            asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)


def run_exp(blocks: int, per_core: int, tile: int, reps: int):
    x = np.linspace(-1, 0, blocks * per_core, dtype=np.float32)
    y = np.zeros_like(x)
    report = exp_tiles[blocks](x, y, per_core, tile, reps)
    return report, x, y


def check_consistent(report):
    prof = report.profile
    assert prof is not None
    assert prof.total_us == pytest.approx(report.device_time_us)
    assert prof.launch_overhead_us == pytest.approx(report.launch_overhead_us)
    assert [p.pipe for p in prof.pipes] == list(PIPES)
    for p in prof.pipes:
        assert 0.0 <= p.mean_share <= p.max_share <= 1.0 + 1e-9
        assert p.max_us <= prof.span_us + 1e-9
    assert 0.0 <= prof.gm_util <= 1.0
    assert 0.0 <= prof.vector_util <= 1.0
    assert 0.0 <= prof.cube_util <= 1.0
    assert dict(prof.bytes_by_path) == report.bytes_moved
    assert 0 <= prof.hbm_bytes <= prof.gm_bytes
    json.dumps(report.to_json())  # serialisable, profile included
    assert report.to_json()["profile"]["bound"] == prof.bound
    return prof


def test_vector_bound_kernel():
    report, x, y = run_exp(blocks=1, per_core=2048, tile=2048, reps=160)
    prof = check_consistent(report)
    assert prof.bound == "vector"
    vector = prof.pipe("V")
    assert vector.max_share == max(p.max_share for p in prof.pipes)
    assert vector.max_share > 0.5
    # Every exp rewrote the whole 8 KiB tile.
    assert prof.vector_bytes == 160 * 2048 * 4
    assert prof.roofline is not None and prof.roofline.unit == "B"
    assert prof.roofline.intensity == pytest.approx(160 * 2048 * 4 / (2 * 2048 * 4))


def test_memory_bound_kernel_moves_what_it_copies():
    n = 65536
    report, x, y = run_exp(blocks=1, per_core=n, tile=8192, reps=1)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-5)
    prof = check_consistent(report)
    assert prof.bound == "memory"
    assert dict(prof.bytes_by_path) == {"GM->UB": n * 4, "UB->GM": n * 4}
    assert prof.gm_bytes == 2 * n * 4
    assert prof.gm_bandwidth_bytes_per_s == pytest.approx(prof.gm_bytes / (prof.span_us * 1e-6))
    assert prof.gm_peak_bytes_per_s == get_soc(SOC).gm_bandwidth_bytes_per_s
    assert prof.pipe("MTE2").max_share > prof.pipe("V").max_share
    assert prof.roofline.regime == "memory"
    assert prof.aiv_used == 1 and prof.aic_used == 0
    assert prof.pipe("M").cores == 0 and prof.pipe("V").cores == 1


def test_tiny_kernel_is_launch_bound_and_waves_add_up():
    soc = get_soc(SOC)
    blocks = soc.aiv_count + 2  # two blocks run in a second wave on cores 0 and 1
    report, _, _ = run_exp(blocks=blocks, per_core=8, tile=8, reps=1)
    prof = check_consistent(report)
    assert prof.bound == "launch"
    # Fixed costs (launch + every core's start-up scalar work) outweigh the work on every pipe.
    own = [p.max_us - (prof.startup_us if p.pipe == "S" else 0.0) for p in prof.pipes]
    assert prof.launch_overhead_us + prof.startup_us > max(own)
    assert prof.aiv_used == soc.aiv_count
    # Blocks b and b + aiv_count ran on the same physical core: their busy times add up.
    per_core = Counter()
    for c in report.cores:
        per_core[c.block_idx % soc.aiv_count] += c.pipe_busy_us["MTE2"]
    mte2 = prof.pipe("MTE2")
    assert mte2.max_us == pytest.approx(max(per_core.values()))
    assert mte2.max_us > 1.5 * min(per_core.values())
    assert mte2.mean_us == pytest.approx(sum(per_core.values()) / soc.aiv_count)


def _stats(**busy_us) -> tuple[PipeStat, ...]:
    span = 10.0
    return tuple(PipeStat(pipe=p, max_us=busy_us.get(p, 0.0), mean_us=busy_us.get(p, 0.0),
                          max_share=busy_us.get(p, 0.0) / span,
                          mean_share=busy_us.get(p, 0.0) / span, cores=1) for p in PIPES)


@pytest.mark.parametrize(("busy", "overhead", "bound"), [
    ({"S": 2.0, "V": 9.0, "MTE2": 3.0}, 1.0, "vector"),
    ({"S": 2.0, "V": 1.0, "MTE2": 6.0, "MTE3": 7.0}, 1.0, "memory"),
    ({"S": 2.0, "M": 8.0, "MTE1": 7.5, "FIX": 1.0}, 1.0, "cube"),
    ({"S": 5.0, "V": 1.0, "MTE2": 2.0}, 1.0, "scalar"),
    ({"S": 5.0, "MTE2": 5.0}, 1.0, "memory"),  # a tie goes to the data path
    ({"S": 0.5, "V": 0.9, "MTE2": 0.7}, 1.0, "launch"),
])
def test_bound_rule(busy, overhead, bound):
    assert classify_bound(_stats(**busy), overhead) == bound


def test_bound_counts_the_chip_hbm_time_as_memory():
    pipes = _stats(S=3.0, V=4.0, MTE2=2.0)  # no single core's MTE pipe is full...
    assert classify_bound(pipes, 1.0, hbm_us=3.0, span_us=10.0) == "vector"
    assert classify_bound(pipes, 1.0, hbm_us=9.0, span_us=10.0) == "memory"  # ...HBM is
    assert classify_bound(_stats(V=0.5), 1.0, hbm_us=2.0, span_us=3.0) == "memory"


class _FakeCore:
    def __init__(self, core_id, kind, busy, instrs, moved, end):
        self.core_id = core_id
        self.physical = core_id
        self.kind = kind
        self.busy = {p: busy.get(p, 0.0) for p in PIPES}
        self.instrs = instrs
        self.work = CoreWork()  # as a Core counts its instructions' work when it places them
        for instr in instrs:
            self.work.add(instr)
        self.bytes_moved = moved
        self._end = end

    def end_time(self):
        return self._end


M_, N_, K_ = 256, 256, 1024


def test_cube_flops_and_roofline_from_the_mmad_record():
    soc = get_soc(SOC)
    m, n, k = M_, N_, K_
    cycles = soc.cube.mmad_cycles(m, n, k, "float16")
    record = Mmad(m, n, k, "float16", ("k.py", 1))  # the cost-only form, as the Matmul API's
    mmad = Instr(0, "M", "mmad", 100.0, 100.0 + cycles, 100.0 + cycles, ("k.py", 1), (), (),
                 record)
    # Kernel-side byte counts can be RuntimeInts, whose "/" truncates like C: must not leak.
    moved = {"GM->L1": RuntimeInt((m * k + k * n) * 2), "L1->L0A": m * k * 2,
             "L1->L0B": k * n * 2, "L0C->GM": RuntimeInt(m * n * 4)}
    span = 200.0 + cycles
    core = _FakeCore(0, "AIC", {"M": cycles, "MTE2": 90.0, "S": 40.0}, [mmad], moved, span)
    launch = SimpleNamespace(soc=soc, cores=[core], overhead_us=lambda: 0.86)
    prof = build_profile(launch)
    assert prof.bound == "cube"
    assert prof.cube_flops == 2 * m * n * k
    assert prof.cube_dtype == "float16"
    assert list(prof.bytes_by_path) == ["GM->L1", "L1->L0A", "L1->L0B", "L0C->GM"]
    assert prof.gm_bytes == moved["GM->L1"] + moved["L0C->GM"]
    assert all(type(v) is int for v in (*prof.bytes_by_path.values(), prof.gm_bytes))
    # One AIC of the chip ran at the cube rate for (cycles - startup) of the span.
    busy_part = (cycles - soc.cube.startup_cycles) / span
    assert prof.cube_util == pytest.approx(busy_part / soc.aic_count)
    assert prof.cube_util_used == pytest.approx(busy_part)
    roof = prof.roofline
    assert roof.unit == "FLOP" and roof.intensity == pytest.approx(2 * m * n * k / prof.gm_bytes)
    assert roof.ridge == pytest.approx(prof.cube_peak_flops_per_s / soc.gm_bandwidth_bytes_per_s)
    assert roof.attainable_per_s <= roof.peak_per_s


def test_peaks_match_the_reference_table():
    soc = get_soc(SOC)  # ascend-hw.md §1.2: 910B1 fp16 363.7 TFLOPS, fp32 a quarter
    assert cube_peak_flops_per_s(soc, "float16") == pytest.approx(363.7e12, rel=2e-3)
    assert cube_peak_flops_per_s(soc, "float32") == pytest.approx(
        cube_peak_flops_per_s(soc, "float16") / 4)
    assert vector_peak_bytes_per_s(soc) == pytest.approx(soc.aiv_count * 256 * soc.clock_mhz * 1e6)


def test_trace_is_valid_with_flag_and_cross_core_flows():
    with SESSION.collect(launches=True) as run:
        report, _, _ = run_exp(blocks=2, per_core=1024, tile=256, reps=2)
    launch = run.launches[-1]
    src, dst = launch.cores
    t_set = src.instrs[-1].done
    t_wait = max(t_set, dst.instrs[0].start) + 150
    launch.record_cross_edge(src, "MTE3", t_set, dst.core_id, "MTE2", t_wait, ("kernel.py", 7))
    events = json.loads(json.dumps({"traceEvents": trace_events([launch], [report])}))
    events = events["traceEvents"]
    for e in events:
        assert {"ph", "pid", "tid", "ts"} <= set(e), e
    flows: dict[int, dict[str, dict]] = {}
    for e in (e for e in events if e["ph"] in "sf"):
        assert e["ph"] not in flows.setdefault(e["id"], {}), "duplicate flow end"
        flows[e["id"]][e["ph"]] = e
    assert flows and all(set(pair) == {"s", "f"} for pair in flows.values())
    for pair in flows.values():
        assert pair["s"]["name"] == pair["f"]["name"] and pair["s"]["ts"] <= pair["f"]["ts"]
    # flag edges of both cores, plus the one cross-core hand-off between their tracks
    assert sum(1 for p in flows.values() if p["s"]["cat"] == "flag") == sum(
        len(c.flag_edges) for c in launch.cores)
    cross = [p for p in flows.values() if p["s"]["cat"] == "cross-core"]
    assert len(cross) == 1
    assert cross[0]["s"]["tid"] == _track(src, "MTE3")
    assert cross[0]["f"]["tid"] == _track(dst, "MTE2")
    named = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {_track(src, "MTE3"), _track(dst, "MTE2")} <= named
    counters = [e for e in events if e["ph"] == "C"]
    names = Counter(e["name"] for e in counters)
    assert {"AIV0 GM GB/s", "AIV1 GM GB/s", "chip GM GB/s"} <= set(names)
    assert all(e["args"]["GB/s"] >= 0 for e in counters)
    chip = [e["args"]["GB/s"] for e in counters if e["name"] == "chip GM GB/s"]
    assert max(chip) > 0 and chip[-1] == 0


SCRIPT = textwrap.dedent('''
    import numpy as np
    import asc

    @asc.jit
    def copy_exp(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int]):
        x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
        x_gm.set_global_buffer(x, n)
        y_gm.set_global_buffer(y, n)
        ub = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
        asc.data_copy(ub, x_gm, n)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.exp(ub, ub, n)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(y_gm, ub, n)

    x = np.ones(1024, dtype=np.float32)
    y = np.zeros_like(x)
    copy_exp[1](x, y, 1024)
''')


def test_cli_profile_prints_the_table(tmp_path):
    example = os.path.join(REPO, "examples", "vector_add_queues.py")
    if os.path.isfile(example):
        script, args = example, ["-r", "Model", "-v", SOC]
    else:
        script, args = str(tmp_path / "copy_exp.py"), []
        (tmp_path / "copy_exp.py").write_text(SCRIPT)
    out_json = tmp_path / "out.json"
    run = subprocess.run(
        [sys.executable, "-m", "ascsim", "run", "--profile", "--no-cores", "--json",
         str(out_json), script, *args],
        capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr
    text = run.stdout
    for needle in ("profile of", "bound:", "pipe utilisation", "Scalar", "Vector", "Cube", "MTE1",
                   "MTE2", "MTE3", "FixPipe", "bytes moved per path", "GM->UB", "UB->GM",
                   "GM bandwidth", "% of peak", "roofline point", "intensity"):
        assert needle in text, f"{needle!r} missing from:\n{text}"
    reports = json.loads(out_json.read_text())["reports"]
    assert reports and all(r["profile"]["bound"] in text for r in reports)
    assert all(r["profile"]["bytes_by_path"] == r["bytes_moved"] for r in reports)


def test_work_is_read_from_typed_records():
    from ascsim.sim.profile import instr_flops, instr_transfer

    def instr(record):
        return SimpleNamespace(record=record, writes=())

    assert instr_flops(instr(Mmad(16, 32, 64, "bfloat16", ("k.py", 1)))) == (
        2.0 * 16 * 32 * 64, "bfloat16")
    assert instr_flops(instr(None)) == (0.0, "float16")
    copy = Copy(None, None, Bursts(0, 0, 64, 96, 64, 3), ("k.py", 2), path="GM->L1")
    assert instr_transfer(instr(copy)) == ("GM->L1", 192)
    fix = FixPipe(None, 16, 32, ("k.py", 3), path="L0C->GM", dtype=np.float16)
    assert instr_transfer(instr(fix)) == ("L0C->GM", 16 * 32 * 2)
    assert instr_transfer(instr(Mmad(1, 1, 1, "float16", ("k.py", 4)))) is None


@asc.jit
def _scalar_reads_and_writes(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=256)
    t = buf.get(asc.uint64)
    for i in range(16):
        t.set_value(i, i)
    for i in range(16):
        t.get_value(i)


def test_scalar_loads_and_stores_keep_the_scalar_unit_busy_until_they_finish():
    report = _scalar_reads_and_writes[1](np.zeros(8, np.float32))
    core = report.cores[0]
    # The scalar unit does its own UB loads and stores: its busy time is the span, not more.
    assert core.pipe_busy_us["S"] == pytest.approx(core.end_us - core.start_us)
    timing = get_soc(report.soc).timing
    per_access = timing.scalar_cycles_per_call + timing.scalar_ld_st_cycles
    assert core.pipe_busy_us["S"] >= get_soc(report.soc).cycles_to_us(32 * per_access)


def test_running_work_totals_equal_a_walk_of_the_instructions():
    """A core counts its FLOPs and vector bytes as it places instructions; the profile reads
    those totals, which must be what walking the launch's records gives."""
    from ascsim.demo import load_example

    example = load_example("matmul_leakyrelu")
    with SESSION.using_soc(SOC), SESSION.collect(launches=True) as run:
        example.run(m=512, n=256)
    launch, report = run.launches[-1], run.reports[-1]
    flops: dict[str, float] = {}
    vector_bytes = 0
    for core in launch.cores:
        core_flops: dict[str, float] = {}
        core_bytes = 0
        for ins in core.instrs:
            if ins.pipe == "M":
                f, dtype = instr_flops(ins)
                core_flops[dtype] = core_flops.get(dtype, 0.0) + f
            elif ins.pipe == "V":
                core_bytes += instr_vector_bytes(ins)
        assert core.work.flops_by_dtype == core_flops
        assert core.work.vector_bytes == core_bytes
        for dtype, f in core_flops.items():
            flops[dtype] = flops.get(dtype, 0.0) + f
        vector_bytes += core_bytes
    assert sum(flops.values()) > 0 and vector_bytes > 0
    assert report.profile.cube_flops == sum(flops.values())
    assert report.profile.vector_bytes == vector_bytes
