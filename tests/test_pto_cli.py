"""A PyPTO-Pro script under the command line: ``ascsim check`` reports its race at the script's
line and exits 1, ``ascsim run --trace`` writes the timeline of its kernel, and the NPU
stand-in answers PyPTO Pro's device checks (``torch_npu``, "Ascend950" device name)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import torch
    import torch_npu
    import pypto_pro.language as pl


    @pl.jit(auto_mutex=False)
    def double(x: pl.Tensor[[16, 64], pl.DT_FP32], y: pl.Tensor[[16, 64], pl.DT_FP32]):
        a = pl.make_tile(pl.TileType(shape=[16, 64], dtype=pl.DT_FP32,
                                     target_memory=pl.MemorySpace.Vec), addr=0)
        with pl.section_vector():
            pl.load(a, x, [0, 0])
            pl.add(a, a, a)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=0)
            pl.store(y, a, [0, 0])


    torch.npu.set_device("npu:0")
    assert "Ascend950" in torch.npu.get_device_name()
    stream = torch.npu.current_stream()
    x = torch.randn(16, 64, device="npu:0")
    y = torch.zeros(16, 64, device="npu:0")
    double[stream, 1](x, y)
    torch.npu.synchronize()
    assert torch.allclose(y.cpu(), x.cpu() * 2)
''')


def _cli(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascsim", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env={**os.environ, "COLUMNS": "160"})


def test_check_reports_the_race_at_the_pypto_line_and_trace_has_the_kernel(tmp_path):
    script = tmp_path / "double.py"
    script.write_text(SCRIPT)
    checked = _cli("check", str(script), cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    assert "race" in checked.stdout and "double.py:12, double.py:13" in checked.stdout
    trace = tmp_path / "t.json"
    ran = _cli("run", "--trace", str(trace), str(script), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "double on Ascend950PR_9579" in ran.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X"]
    assert {e["name"] for e in slices} >= {"load", "add", "store"}
    assert any(e["args"]["line"] == "double.py:13" for e in slices)
