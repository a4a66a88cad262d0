"""The kernel checks of issue 4: each check caught on a small buggy kernel, silent on its fix.

Expected lines come from ``# mark: NAME`` comments in this file, never from hard-coded numbers.
"""

from __future__ import annotations

import glob
import json
import os

import numpy as np
import pytest
from source_marks import SourceMarks, checks_on_not_strict, f32  # noqa: F401 - a fixture

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.session import SESSION
from ascsim.sim.errors import CheckError, DeadlockError

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))
_MARKS = SourceMarks(HERE)
mark, lines_of = _MARKS.mark, _MARKS.lines_of


def only(report, category: str):
    """The report's one finding, which must be of ``category``."""
    assert [f.category for f in report.findings] == [category], \
        [f.format() for f in report.findings]
    return report.findings[0]


pytestmark = pytest.mark.usefixtures("checks_on_not_strict")


N = 64  # fp32 elements per tile: 256 B, eight 32-byte blocks


# ------------------------------------------------------------------------------------------
# 1. GM out of bounds
@asc.jit
def copy_in_out(x: asc.GlobalAddress, y: asc.GlobalAddress, count: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    t = buf.get(asc.float32)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    asc.data_copy(t, gx, count)  # mark: gm-oob
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(gy, t, count)  # mark: gm-oob-out


def test_gm_out_of_bounds_and_fix():
    x, y = f32(48), np.zeros(48, np.float32)
    report = copy_in_out[1](x, y, N)
    cats = sorted(f.category for f in report.findings)
    assert cats == ["gm-out-of-bounds", "gm-out-of-bounds"]
    assert sorted(lines_of(f)[0] for f in report.findings) == [mark("gm-oob"),
                                                                mark("gm-oob-out")]
    assert "[0, 256)" in report.findings[0].message
    fixed = copy_in_out[1](x, y, 48)
    assert fixed.findings == []
    np.testing.assert_array_equal(y, x)


# ------------------------------------------------------------------------------------------
# 2. Local-memory overflow
@asc.jit
def tbuf_get(x: asc.GlobalAddress, count: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    t = buf.get(asc.float32, count)  # mark: overflow
    asc.duplicate(t, 1.0, N)


def test_local_overflow_and_fix():
    finding = only(tbuf_get[1](f32(8), 2 * N), "local-overflow")
    assert lines_of(finding) == [mark("overflow")]
    assert tbuf_get[1](f32(8), N).findings == []


# ------------------------------------------------------------------------------------------
# 3. Alignment
@asc.jit
def copy_count(x: asc.GlobalAddress, y: asc.GlobalAddress, count: asc.ConstExpr[int],
               pad: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    t = buf.get(asc.float32)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    if pad:
        params = asc.DataCopyExtParams(1, count * 4, 0, 0, 0)
        asc.data_copy_pad(t, gx, params, asc.DataCopyPadExtParams(False, 0, 0, 0))
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy_pad(gy, t, params)
    else:
        asc.data_copy(t, gx, count)  # mark: copy-len
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gy, t, 8)


def test_copy_length_not_whole_blocks_and_fix():
    x, y = f32(12), np.zeros(12, np.float32)
    finding = only(copy_count[1](x, y, 12, False), "alignment")
    assert lines_of(finding) == [mark("copy-len")]
    assert "data_copy_pad" in finding.hint
    assert copy_count[1](x, y, 12, True).findings == []
    np.testing.assert_array_equal(y, x)


@asc.jit
def vector_at(x: asc.GlobalAddress, offset: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=8 * N)
    t = buf.get(asc.float32)
    asc.duplicate(t[offset:], 2.0, N)  # mark: vec-align


def test_vector_operand_alignment_and_fix():
    finding = only(vector_at[1](f32(8), 3), "alignment")
    assert lines_of(finding) == [mark("vec-align")]
    assert "32-byte" in finding.message
    assert vector_at[1](f32(8), 8).findings == []


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def fill_l0a(a: asc.GlobalAddress, offset: asc.ConstExpr[int]):
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, offset, 256)
    ga = asc.GlobalTensor()
    ga.set_global_buffer(a)
    asc.data_copy(a1, ga, 256)
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 1, 0, 0, False, 0))  # mark: l0a-align


def test_l0a_operand_alignment_and_fix():
    a = np.arange(256, dtype=np.float16)
    finding = only(fill_l0a[1](a, 256), "alignment")
    assert lines_of(finding) == [mark("l0a-align")]
    assert "L0A address 256 is not 512-byte aligned" in finding.message and finding.count == 1
    assert fill_l0a[1](a, 512).findings == []


@asc.jit
def strided_copy(x: asc.GlobalAddress, block_len: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    t = buf.get(asc.float32)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    params = asc.DataCopyParams(1, block_len, 0, 0)  # mark: param-range
    asc.data_copy(t, gx, repeat_params=params)


def test_copy_params_out_of_range_and_fix():
    finding = only(strided_copy[1](f32(N), 65536 + 8), "param-range")
    assert lines_of(finding) == [mark("param-range")]
    assert "block_len" in finding.message
    assert strided_copy[1](f32(N), 8).findings == []


def test_copy_params_out_of_range_outside_a_kernel_names_the_line():
    with pytest.raises(ValueError, match=r"test_checks.py:\d+: .*block_len"):
        asc.DataCopyParams(1, 70000, 0, 0)


# ------------------------------------------------------------------------------------------
# 4. Intra-core races
@asc.jit
def add_flags(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
              synced: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=3 * 4 * N)
    tx = buf.get(asc.float32)
    ty, tz = tx[N:], tx[2 * N:]
    gx, gy, gz = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    gz.set_global_buffer(z)
    asc.data_copy(tx, gx, N)  # mark: race-first
    asc.data_copy(ty, gy, N)  # mark: race-write
    if synced:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.add(tz, tx, ty, N)  # mark: race-read
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gz, tz, N)


def test_race_between_pipes_and_fix():
    x, y, z = f32(N), f32(N, 100), np.zeros(N, np.float32)
    report = add_flags[1](x, y, z, False)
    assert {f.category for f in report.findings} == {"race"}
    finding = next(f for f in report.findings if mark("race-write") in lines_of(f))
    assert lines_of(finding) == [mark("race-write"), mark("race-read")]
    assert "UB of core 0" in finding.message and "MTE2" in finding.message
    assert add_flags[1](x, y, z, True).findings == []
    np.testing.assert_array_equal(z, x + y)


@asc.jit
def gm_round_trip(x: asc.GlobalAddress, y: asc.GlobalAddress, synced: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2 * 4 * N)
    a = buf.get(asc.float32)
    b = a[N:]
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    asc.data_copy(a, gx, N)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(gy, a, N)  # mark: gm-write
    if synced:
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
    asc.data_copy(b, gy, N)  # mark: gm-read


def test_gm_race_within_a_core_and_fix():
    finding = only(gm_round_trip[1](f32(N), np.zeros(N, np.float32), False), "race")
    assert lines_of(finding) == [mark("gm-write"), mark("gm-read")]
    assert "GM 'y'" in finding.message
    assert gm_round_trip[1](f32(N), np.zeros(N, np.float32), True).findings == []


@asc.jit
def add_queues(x: asc.GlobalAddress, z: asc.GlobalAddress, tiles: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 2)
    qout = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=qin, num=2, len=4 * N)
    pipe.init_buffer(que=qout, num=2, len=4 * N)
    gx, gz = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gz.set_global_buffer(z)
    for i in range(tiles):
        t = qin.alloc_tensor(asc.float32)
        asc.data_copy(t, gx[i * N:], N)
        qin.enque(t)
        a = qin.deque(asc.float32)
        o = qout.alloc_tensor(asc.float32)
        asc.muls(o, a, 2.0, N)
        qout.enque(o)
        qin.free_tensor(a)
        b = qout.deque(asc.float32)
        asc.data_copy(gz[i * N:], b, N)
        qout.free_tensor(b)


def test_queue_synchronisation_orders_the_pipes():
    x, z = f32(4 * N), np.zeros(4 * N, np.float32)
    assert add_queues[1](x, z, 4).findings == []
    np.testing.assert_array_equal(z, 2 * x)


# ------------------------------------------------------------------------------------------
# 5. Cross-core races on GM
@asc.jit
def each_core_writes(x: asc.GlobalAddress, y: asc.GlobalAddress, shared: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    t = buf.get(asc.float32)
    block = 0 if shared else asc.get_block_idx()
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    asc.data_copy(t, gx, N)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(gy[block * N:], t, N)  # mark: xcore-write


def test_cores_writing_the_same_gm_and_fix():
    finding = only(each_core_writes[2](f32(N), np.zeros(2 * N, np.float32), True),
                   "cross-core-race")
    assert lines_of(finding) == [mark("xcore-write"), mark("xcore-write")]
    assert "atomic" in finding.message
    assert each_core_writes[2](f32(N), np.zeros(2 * N, np.float32), False).findings == []


@asc.jit
def hand_over(x: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress,
              synced: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    t = buf.get(asc.float32)
    gx, gw, gy = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gw.set_global_buffer(ws)
    gy.set_global_buffer(y)
    if asc.get_block_idx() == 0:
        asc.data_copy(t, gx, N)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gw, t, N)  # mark: producer
    if synced:
        asc.sync_all()
    if asc.get_block_idx() == 1:
        asc.data_copy(t, gw, N)  # mark: consumer
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gy, t, N)


def test_consumer_reads_workspace_without_sync_and_fix():
    x, ws, y = f32(N), np.zeros(N, np.float32), np.zeros(N, np.float32)
    finding = only(hand_over[2](x, ws, y, False), "cross-core-race")
    assert lines_of(finding) == [mark("producer"), mark("consumer")]
    assert "core 1" in finding.message and "core 0" in finding.message
    assert hand_over[2](x, ws, y, True).findings == []
    np.testing.assert_array_equal(y, x)


# ------------------------------------------------------------------------------------------
# 6. Uninitialised reads
@asc.jit
def read_before_write(x: asc.GlobalAddress, y: asc.GlobalAddress, filled: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2 * 4 * N)
    a = buf.get(asc.float32)
    b = a[N:]
    gy = asc.GlobalTensor()
    gy.set_global_buffer(y)
    if filled:
        asc.duplicate(a, 1.0, N)
    asc.muls(b, a, 2.0, N)  # mark: uninit
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gy, b, N)


def test_uninitialised_read_and_fix():
    y = np.zeros(N, np.float32)
    finding = only(read_before_write[1](f32(8), y, False), "uninitialized-read")
    assert lines_of(finding) == [mark("uninit")]
    assert "[0, 256)" in finding.message
    assert np.isnan(y).all()  # the fill shows in the result too
    assert read_before_write[1](f32(8), y, True).findings == []
    np.testing.assert_array_equal(y, np.full(N, 2.0, np.float32))


# ------------------------------------------------------------------------------------------
# 7. Queue and flag misuse
@asc.jit
def queue_ops(x: asc.GlobalAddress, bug: asc.ConstExpr[str]):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    other = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=4 * N)
    pipe.init_buffer(que=other, num=1, len=4 * N)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    t = q.alloc_tensor(asc.float32)  # mark: held
    asc.data_copy(t, gx, N)
    q.enque(t)
    if bug == "enque-twice":
        q.enque(t)  # mark: enque-twice
    u = q.deque(asc.float32)
    if bug == "deque-empty":
        q.deque(asc.float32)  # mark: deque-empty
    if bug == "free-other":
        other.free_tensor(u)  # mark: free-other
    if bug == "alloc-beyond":
        q.alloc_tensor(asc.float32)  # mark: alloc-beyond
    if bug != "held":
        q.free_tensor(u)


@pytest.mark.parametrize("bug", ["held", "enque-twice", "free-other"])
def test_queue_misuse_and_fix(bug):
    finding = only(queue_ops[1](f32(N), bug), "queue-misuse")
    assert lines_of(finding) == [mark(bug)]
    assert queue_ops[1](f32(N), "none").findings == []


@pytest.mark.parametrize("bug", ["deque-empty", "alloc-beyond"])
def test_queue_misuse_that_would_hang(bug):
    SESSION.strict = True  # the first finding raises, before the kernel error it leads to
    with pytest.raises(CheckError, match="queue-misuse") as err:
        queue_ops[1](f32(N), bug)
    assert err.value.where[1] == mark(bug)


@asc.jit
def flags(bug: asc.ConstExpr[str]):
    if bug != "wait-unset":
        asc.set_flag(asc.HardEvent.V_MTE3, 1)  # mark: set-first
    if bug == "set-twice":
        asc.set_flag(asc.HardEvent.V_MTE3, 1)  # mark: set-twice
        asc.wait_flag(asc.HardEvent.V_MTE3, 1)
    asc.wait_flag(asc.HardEvent.V_MTE3, 1)  # mark: wait-unset


def test_flag_misuse_and_fix():
    finding = only(flags[1]("set-twice"), "flag-misuse")
    assert lines_of(finding) == [mark("set-first"), mark("set-twice")]
    finding = only(flags[1]("wait-unset"), "flag-misuse")
    assert lines_of(finding) == [mark("wait-unset")]
    assert flags[1]("none").findings == []


# ------------------------------------------------------------------------------------------
# 8. Deadlock
@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def mix_wait(x: asc.GlobalAddress, aic_sets: asc.ConstExpr[bool]):
    if asc.ascend_is_aic():
        if aic_sets:
            asc.cross_core_set_flag(3, 2, asc.PipeID.PIPE_FIX)
    else:
        asc.cross_core_wait_flag(3, 2)  # mark: deadlock


def test_deadlock_names_every_waiting_core_and_fix():
    with pytest.raises(DeadlockError) as err:
        mix_wait[1](f32(8), False)
    text = str(err.value)
    waits = [line for line in text.splitlines() if line.startswith("  core ")]
    assert [w.split(" (")[0].strip() for w in waits] == ["core 1", "core 2"]  # both AIVs
    for w in waits:
        assert "cross-core flag 3" in w and w.endswith(f"test_checks.py:{mark('deadlock')}")
    assert mix_wait[1](f32(8), True).findings == []


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def aiv_pair(x: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress,
             synced: asc.ConstExpr[bool]):
    if asc.ascend_is_aiv():
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=4 * N)
        t = buf.get(asc.float32)
        gx, gw, gy = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        gx.set_global_buffer(x)
        gw.set_global_buffer(ws)
        gy.set_global_buffer(y)
        if asc.get_sub_block_idx() == 0:
            asc.data_copy(t, gx, N)
            asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.data_copy(gw, t, N)  # mark: pair-producer
        if synced:
            asc.cross_core_set_flag(5, 1, asc.PipeID.PIPE_MTE3)
            asc.cross_core_wait_flag(5, 1)
        if asc.get_sub_block_idx() == 1:
            asc.data_copy(t, gw, N)  # mark: pair-consumer
            asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.data_copy(gy, t, N)


def test_cross_core_flag_orders_a_workspace_hand_over():
    x, ws, y = f32(N), np.zeros(N, np.float32), np.zeros(N, np.float32)
    finding = only(aiv_pair[1](x, ws, y, False), "cross-core-race")
    assert lines_of(finding) == [mark("pair-producer"), mark("pair-consumer")]
    assert aiv_pair[1](x, ws, y, True).findings == []
    np.testing.assert_array_equal(y, x)


# ------------------------------------------------------------------------------------------
# Modes, examples, CLI
def test_strict_mode_raises_at_the_first_finding():
    SESSION.strict = True
    with pytest.raises(CheckError) as err:
        add_flags[1](f32(N), f32(N), np.zeros(N, np.float32), False)
    assert err.value.where[1] == mark("race-first")
    assert "race" in str(err.value) and "hint" in str(err.value)


def test_checks_off_reports_nothing_dynamic():
    SESSION.checks = False
    assert add_flags[1](f32(N), f32(N), np.zeros(N, np.float32), False).findings == []


# Every example script (example_cli.py is their shared command line, not an example).
EXAMPLES = sorted(p for p in glob.glob(os.path.join(ROOT, "examples", "*.py"))
                  if os.path.basename(p) != "example_cli.py")


@pytest.mark.parametrize("path", EXAMPLES, ids=[os.path.basename(p) for p in EXAMPLES])
def test_examples_have_no_findings(path):
    from ascsim.runner import run_script

    with SESSION.collect() as run:
        run_script(path, ["-r", "Model", "-v", "Ascend910B1"])
    assert run.reports, "the example launched no kernel"
    for report in run.reports:
        assert report.findings == [], [f.format() for f in report.findings]


TUTORIALS_DIR = "/work/pyasc_tutorials"
TUTORIALS = sorted(p for p in glob.glob(os.path.join(TUTORIALS_DIR, "0[1-8]_*", "*.py"))
                   if not os.path.basename(p).startswith("bench_"))


@pytest.mark.skipif(not TUTORIALS, reason="the saved pyasc tutorials are not on this machine")
@pytest.mark.parametrize("path", TUTORIALS, ids=[os.path.basename(p) for p in TUTORIALS])
def test_pyasc_tutorials_have_no_findings(path):
    from ascsim.runner import run_script

    with SESSION.collect() as run:
        run_script(path, ["-r", "Model", "-v", "Ascend910B1"])
    assert run.reports, "the tutorial launched no kernel"
    for report in run.reports:
        assert report.findings == [], [f.format() for f in report.findings]


def test_cli_check_writes_json(tmp_path):
    from ascsim.cli import main

    script = tmp_path / "racy.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})  # the tests package, however pytest was started\n"
        "import numpy as np\n"
        "import tests.test_checks as t\n"
        "t.add_flags[1](t.f32(t.N), t.f32(t.N), np.zeros(t.N, np.float32), False)\n")
    out = tmp_path / "out.json"
    saved = os.getcwd()
    os.chdir(ROOT)
    try:
        status = main(["check", "--quiet", "--json", str(out), str(script)])
    finally:
        os.chdir(saved)
    assert status == 1
    data = json.loads(out.read_text())
    findings = [f for r in data["reports"] for f in r["findings"]]
    assert findings and {f["category"] for f in findings} == {"race"}
    assert findings[0]["locations"][0]["line"] == mark("race-first")
