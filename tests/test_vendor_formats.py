"""The Ascend toolchain's formats (issue 35 part 7): msprof's CSVs, the op simulator's hotspot
tables and trace, msSanitizer's report shape. Every file is parsed back and checked against the
KernelReport (and the launch) it was written from."""

from __future__ import annotations

import csv
import json
import os
import textwrap

import pytest

from ascsim.cli import main
from ascsim.formats.cores import vendor_core
from ascsim.formats.msprof import NA, TASK_TYPE, write_msprof
from ascsim.formats.mssanitizer import format_report
from ascsim.hw import get_soc
from ascsim.runner import run_script
from ascsim.session import SESSION

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def _rows(path: str) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _close(text: str, value: float, tol: float = 1e-3) -> None:
    assert abs(float(text) - value) <= tol, (text, value)


@pytest.fixture(scope="module")
def matmul_run():
    """examples/matmul_leakyrelu.py (MIX, 1 block) with its launch kept."""
    with SESSION.collect(launches=True) as run:
        run_script(os.path.join(EXAMPLES, "matmul_leakyrelu.py"), ["-r", "Model", "-v",
                                                                   "Ascend910B1"])
    return run


def test_vendor_core_names():
    assert vendor_core("MIX", "AIC", 3).directory == "core3.cubecore0"
    assert vendor_core("MIX", "AIV", 7).directory == "core3.veccore1"
    assert vendor_core("MIX", "AIV", 6).sub_block_id == "vector0"
    assert vendor_core("AIV_ONLY", "AIV", 5).directory == "core5.veccore0"


def test_msprof_files_of_a_mix_launch(matmul_run, tmp_path):
    reports, launches = matmul_run.reports, matmul_run.launches
    written = write_msprof(str(tmp_path), launches, reports)
    report = reports[0]
    clock = get_soc(report.soc).clock_mhz

    (summary,) = _rows(str(tmp_path / "op_summary.csv"))
    assert summary["Op Name"] == report.kernel
    assert summary["Task Type"] == TASK_TYPE["MIX"] == "MIX_AIC"
    _close(summary["Task Duration(us)"], report.device_time_us)
    assert int(summary["Block Dim"]) == report.block_num
    assert int(summary["Mix Block Dim"]) == 2 * report.block_num
    aivs = [c for c in report.cores if c.kind == "AIV"]
    mean_vec = sum(c.pipe_busy_us.get("V", 0.0) for c in aivs) / len(aivs)
    _close(summary["aiv_vec_time(us)"], mean_vec)
    (aic,) = [c for c in report.cores if c.kind == "AIC"]
    _close(summary["aic_mac_time(us)"], aic.pipe_busy_us["M"])
    _close(summary["aic_mac_ratio"], aic.pipe_busy_us["M"] / aic.time_us)
    _close(summary["aicore_time(us)"], aic.time_us)
    assert int(summary["aic_total_cycles"]) == round(aic.time_us * clock)

    folder = tmp_path / f"OPPROF_00_{report.kernel}"
    pipe_rows = _rows(str(folder / "PipeUtilization.csv"))
    assert [(r["block_id"], r["sub_block_id"]) for r in pipe_rows] == [
        ("0", "cube0"), ("0", "vector0"), ("0", "vector1")]
    cube = pipe_rows[0]
    _close(cube["aic_cube_time(us)"], aic.pipe_busy_us["M"])
    _close(cube["aic_fixpipe_ratio"], aic.pipe_busy_us["FIX"] / aic.time_us)
    assert cube["aiv_vec_time(us)"] == NA
    for row, core in zip(pipe_rows[1:], aivs):
        assert row["aic_time(us)"] == NA
        _close(row["aiv_time(us)"], core.time_us)
        _close(row["aiv_mte2_time(us)"], core.pipe_busy_us["MTE2"])
        _close(row["aiv_vec_ratio"], core.pipe_busy_us["V"] / core.time_us)

    (basic,) = _rows(str(folder / "OpBasicInfo.csv"))
    _close(basic["Task Duration(us)"], report.device_time_us)
    assert float(basic["Current Freq"]) == round(clock)

    # Hotspots: per core, the lines' and the instructions' cycles both add up to the cycles
    # of the core's instructions (each from its start to its result).
    launch = launches[0]
    for core in launch.cores:
        name = vendor_core(launch.kind, core.kind, core.block_idx).directory
        code = _rows(str(folder / "simulator" / name / f"{name}_code_exe.csv"))
        instr = _rows(str(folder / "simulator" / name / f"{name}_instr_exe.csv"))
        busy = sum(i.done - i.start for i in core.instrs)
        assert sum(int(r["call_count"]) for r in code) == len(core.instrs)
        assert sum(int(r["call_count"]) for r in instr) == len(core.instrs)
        assert abs(sum(int(r["cycles"]) for r in code) - busy) <= len(code)
        assert abs(sum(int(r["cycles"]) for r in instr) - busy) <= len(instr)
        assert all(r["code"].startswith("examples/matmul_leakyrelu.py:")
                   or "matmul_leakyrelu.py:" in r["code"] for r in code)
        cycles = [int(r["cycles"]) for r in code]
        assert cycles == sorted(cycles, reverse=True)  # hottest line first
        for r in code:
            _close(r["running_time(us)"], int(r["cycles"]) / clock, 1e-3)
    # op_summary, OpBasicInfo, PipeUtilization, two tables per core, the trace
    assert len(written) == 1 + 2 + 2 * len(launch.cores) + 1


def test_insight_trace_lanes(matmul_run, tmp_path):
    write_msprof(str(tmp_path), matmul_run.launches, matmul_run.reports)
    report, launch = matmul_run.reports[0], matmul_run.launches[0]
    trace = json.loads((tmp_path / f"OPPROF_00_{report.kernel}" / "simulator"
                        / "trace.json").read_text())
    events = trace["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert sorted(processes.values()) == ["core0.cubecore0", "core0.veccore0",
                                          "core0.veccore1"]
    threads = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert {"CUBE", "MTE1", "MTE2", "FIXPIPE", "VECTOR", "MTE3"} <= threads
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == sum(len(c.instrs) for c in launch.cores)
    end = max(e["ts"] + e["dur"] for e in slices)
    assert end <= report.device_time_us + 1e-6


def test_cli_msprof_for_every_launch(tmp_path):
    """``ascsim run --msprof DIR``: one op_summary row per launch of the script (two here)."""
    script = tmp_path / "two.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {EXAMPLES!r})
        import torch
        from vector_add_queues import vector_add
        x, y = torch.rand(2048), torch.rand(2048)
        vector_add(x, y, cores=2, tile=256)
        vector_add(x, y, cores=4, tile=128)
    """))
    out, js = tmp_path / "prof", tmp_path / "r.json"
    assert main(["run", "--quiet", "--msprof", str(out), "--json", str(js), str(script)]) == 0
    reports = json.loads(js.read_text())["reports"]
    rows = _rows(str(out / "op_summary.csv"))
    assert [int(r["Block Dim"]) for r in rows] == [2, 4] == [r["block_num"] for r in reports]
    assert all(r["Task Type"] == "AI_VECTOR_CORE" and r["Mix Block Dim"] == NA for r in rows)
    assert "aicore_time(us)" not in rows[0]  # no AIC ran: no AIC columns at all
    _close(rows[1]["Task Start Time(us)"], reports[0]["device_time_us"])
    for row, rep in zip(rows, reports):
        _close(row["Task Duration(us)"], rep["device_time_us"])
    pipe = _rows(str(out / "OPPROF_01_add_with_queues" / "PipeUtilization.csv"))
    assert [r["sub_block_id"] for r in pipe] == ["vector0"] * 4
    for row, core in zip(pipe, reports[1]["cores"]):
        _close(row["aiv_mte2_time(us)"], core["pipe_busy_us"]["MTE2"])
    assert (out / "OPPROF_01_add_with_queues" / "simulator" / "core3.veccore0"
            / "core3.veccore0_code_exe.csv").is_file()


OOB_SCRIPT = textwrap.dedent('''
    import numpy as np
    import asc

    @asc.jit
    def copy_in_out(x: asc.GlobalAddress, y: asc.GlobalAddress):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=256)
        t = buf.get(asc.float32)
        gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
        gx.set_global_buffer(x)
        gy.set_global_buffer(y)
        asc.data_copy(t, gx, 64)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gy, t, 48)

    copy_in_out[1](np.ones(48, np.float32), np.zeros(48, np.float32))
''')


def test_report_format_mssanitizer(tmp_path, capsys):
    script = tmp_path / "oob.py"
    script.write_text(OOB_SCRIPT)
    status = main(["check", "--quiet", "--report-format", "mssanitizer", str(script)])
    assert status == 1
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("======")]
    assert lines[0] == "====== ERROR: illegal read or write of size 256"
    assert lines[1] == "======    at byte 0 of 'x' on GM"
    assert lines[2].startswith("======    code in ") and lines[2].endswith("oob.py:14")
    assert "in kernel copy_in_out on core 0 [memcheck: gm-out-of-bounds]" in lines[3]
    assert lines[-1] == "====== SUMMARY: 1 problem(s) found in 1 launch(es)"
    assert "gm-out-of-bounds [core 0]" not in out  # ascsim's own form is replaced


RACY_SCRIPT = textwrap.dedent('''
    import numpy as np
    import asc

    @asc.jit
    def racy_add(x: asc.GlobalAddress, z: asc.GlobalAddress):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=2 * 256)
        t = buf.get(asc.float32)
        u = buf.get_with_offset(64, 256, asc.float32)
        gx, gz = asc.GlobalTensor(), asc.GlobalTensor()
        gx.set_global_buffer(x)
        gz.set_global_buffer(z)
        asc.data_copy(t, gx, 64)
        asc.adds(u, t, 1.0, 64)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(gz, u, 64)

    racy_add[1](np.ones(64, np.float32), np.zeros(64, np.float32))
''')


def test_report_format_mssanitizer_race(tmp_path, capsys):
    """A race in racecheck's shape: the hazard, then each access's pipe, block and line."""
    script = tmp_path / "racy.py"
    script.write_text(RACY_SCRIPT)
    assert main(["check", "--quiet", "--report-format", "mssanitizer", str(script)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("======")]
    assert lines[0] == "====== ERROR: Potential RAW hazard detected at UB in racy_add:"
    assert lines[1].startswith("======    PIPE_MTE2 Write at byte 0 in block 0 (aiv) ")
    assert lines[1].endswith("racy.py:15")
    assert lines[2].startswith("======    PIPE_V Read at byte 0 in block 0 (aiv) ")
    assert lines[2].endswith("racy.py:16")
    assert "[racecheck: race]" in lines[3]


def test_mssanitizer_shape_of_other_categories():
    from ascsim.sim.findings import Finding
    from ascsim.sim.report import CoreReport, KernelReport

    findings = [
        Finding("cross-core-race", "core 1 reads what core 0 wrote", (("k.py", 3), ("k.py", 5)),
                "add a flag", 1, 2, {"buffer": "GM 'y'", "start": 0, "stop": 64,
                                     "other_core": 0, "hazard": "RAW",
                                     "pipes": ("MTE3", "MTE2")}),
        Finding("uninitialized-read", "reads bytes never written", (("k.py", 7),), "", 0, 1,
                {"buffer": "UB", "start": 32, "stop": 96}),
        Finding("queue-misuse", "deque of an empty queue", (("k.py", 9),)),
    ]
    cores = [CoreReport(i, "AIV", i, 0.0, 1.0, {}, 1) for i in (0, 1)]
    report = KernelReport("k", "Ascend910B1", "AIV_ONLY", 2, 2.0, 1.0, cores, findings)
    text = format_report([report])
    assert ("====== ERROR: Potential RAW hazard detected at GM in k:\n"
            "======    PIPE_MTE3 Write at byte 0 in block 0 (aiv) k.py:3\n"
            "======    PIPE_MTE2 Read at byte 0 in block 1 (aiv) k.py:5\n") in text
    assert "on core 1, 2 times [racecheck: cross-core-race]" in text
    assert "====== WARNING: uninitialized read of size 64\n======    at byte 32 on UB" in text
    assert "====== WARNING: queue misuse\n======    code in k.py:9" in text
    assert all(line.startswith("======") for line in text.splitlines())


def test_msprof_into_a_path_that_is_a_file(tmp_path, capsys):
    script, taken = tmp_path / "racy.py", tmp_path / "taken"
    script.write_text(RACY_SCRIPT)
    taken.write_text("")
    assert main(["run", "--quiet", "--msprof", str(taken), str(script)]) == 2
    assert f"--msprof: cannot write {taken}" in capsys.readouterr().out


def test_msprof_files_of_a_cube_only_launch(tmp_path):
    """examples/matmul_cube_only.py: AI_CORE, AIC columns only, one cubecore folder per block."""
    with SESSION.collect(launches=True) as run:
        run_script(os.path.join(EXAMPLES, "matmul_cube_only.py"), ["-r", "Model", "-v",
                                                                   "Ascend910B1"])
    write_msprof(str(tmp_path), run.launches, run.reports)
    report = run.reports[0]
    (summary,) = _rows(str(tmp_path / "op_summary.csv"))
    assert summary["Task Type"] == "AI_CORE" and summary["Mix Block Dim"] == NA
    assert not any(col.startswith("aiv_") for col in summary)
    cores = report.cores
    _close(summary["aicore_time(us)"], sum(c.time_us for c in cores) / len(cores))
    _close(summary["aic_mte2_time(us)"],
           sum(c.pipe_busy_us.get("MTE2", 0.0) for c in cores) / len(cores))
    folder = tmp_path / f"OPPROF_00_{report.kernel}"
    rows = _rows(str(folder / "PipeUtilization.csv"))
    assert [r["block_id"] for r in rows] == [str(c.block_idx) for c in cores]
    assert {r["sub_block_id"] for r in rows} == {"cube0"}
    for row, core in zip(rows, cores):
        _close(row["aic_cube_time(us)"], core.pipe_busy_us.get("M", 0.0))
    dirs = sorted(p.name for p in (folder / "simulator").iterdir() if p.is_dir())
    assert dirs == sorted(f"core{c.block_idx}.cubecore0" for c in cores)
