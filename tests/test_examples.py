"""The bundled examples (and, where saved, the pyasc tutorials) run correctly under the runner."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from ascsim.demo import EXAMPLES_DIR, VECTOR_ITEMS, load_example, run_demo
from ascsim.hw import DEFAULT_SOC
from ascsim.runner import run_script
from ascsim.session import SESSION

REPO = Path(__file__).resolve().parent.parent
PLATFORMS = ("Ascend910B1", "Ascend950PR_9579")
EXAMPLES = [item.name for item in VECTOR_ITEMS]
# The line each example prints when its torch check passed.
SUCCESS = {
    "vector_add_flags": "z = x + y correct",
    "vector_add_queues": "z = x + y correct",
    "gelu": "matches the torch reference",
    "swiglu": "matches the torch reference",
    "rmsnorm": "matches the torch reference",
}
TUTORIALS_DIR = Path("/work/pyasc_tutorials")
TUTORIALS = ("01_add/add.py", "02_add_framework/add_framework.py", "06_gelu/gelu.py",
             "07_swiglu/swiglu.py", "08_rmsnorm/rmsnorm.py")


@pytest.fixture(autouse=True)
def run():
    """The launches of the test (collected); the default SoC is selected again after it."""
    with SESSION.collect() as collection:
        yield collection
    SESSION.request_soc(DEFAULT_SOC)


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascsim", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "120"})


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_script_passes_its_check(name, platform, capsys, run):
    run_script(str(EXAMPLES_DIR / f"{name}.py"), ["-r", "Model", "-v", platform])
    out = capsys.readouterr().out
    assert SUCCESS[name] in out and platform in out
    assert run.reports, "the example launched no kernel"
    assert all(r.soc == platform and r.device_time_us > 0 for r in run.reports)
    assert not [f for r in run.reports for f in r.findings]


def test_example_run_function_reports_the_launch():
    report = load_example("swiglu").run("Ascend910B4", shape=(2, 64, 256))
    # 32K fp32 elements in 512-element tiles need 64 cores: all 40 of the 910B4 are used.
    assert report.soc == "Ascend910B4" and report.block_num == 40


def test_example_check_rejects_a_wrong_result(monkeypatch):
    module = load_example("vector_add_queues")
    real = module.vector_add

    def off_by_one(x, y, *args):
        z, report = real(x, y, *args)
        return z + 1.0, report

    monkeypatch.setattr(module, "vector_add", off_by_one)
    with pytest.raises(AssertionError, match="wrong sum"):
        module.run("Ascend910B1")


@pytest.mark.parametrize(("argv", "complaint"), [
    (["-r", "Model", "-v", "Ascend000"], "Unsupported Platform"),
    (["-r", "GPU"], "Unsupported Backend"),
])
def test_example_command_line_is_validated(argv, complaint):
    with pytest.raises(ValueError, match=complaint):
        load_example("gelu").platform_from_cli("gelu", argv)


def test_cli_run_writes_a_trace_with_one_track_per_pipe_per_core(tmp_path):
    trace = tmp_path / "out.json"
    done = _cli("run", "--trace", str(trace), "examples/vector_add_queues.py",
                "-r", "Model", "-v", "Ascend910B1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "z = x + y correct" in done.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in events
              if e["ph"] == "M" and e["name"] == "thread_name"}
    # 8 AIV cores, each using the scalar unit, the vector unit, MTE2 and MTE3.
    expected = {f"AIV{b} {pipe}" for b in range(8) for pipe in ("Scalar", "Vector", "MTE2",
                                                                  "MTE3")}
    assert sorted(tracks.values()) == sorted(expected)
    spans = [e for e in events if e["ph"] == "X"]
    assert spans and {e["tid"] for e in spans} <= set(tracks)
    assert all(e["dur"] > 0 and e["ts"] >= 0 for e in spans)


def test_cli_refuses_npu_backend():
    done = _cli("run", "examples/gelu.py", "-r", "NPU")
    assert done.returncode != 0
    message = " ".join((done.stdout + done.stderr).split())
    assert "pyasc" in message and "CANN" in message


def test_demo_runs_every_example_and_writes_its_trace(tmp_path, monkeypatch, run):
    monkeypatch.chdir(tmp_path)
    console = Console(file=open(os.devnull, "w"), width=120)  # noqa: SIM115 - closed below
    try:
        assert run_demo(console) == 0
    finally:
        console.file.close()
    names = {r.kernel for r in run.reports}
    assert {"add_with_events", "add_with_queues", "gelu_kernel", "swiglu_kernel",
            "rmsnorm_kernel"} <= names
    events = json.loads((tmp_path / "out" / "demo_trace.json").read_text())["traceEvents"]
    assert {e["pid"] for e in events} == set(range(1, len(run.reports) + 1))


@pytest.mark.skipif(not TUTORIALS_DIR.is_dir(), reason="pyasc tutorials not saved here")
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("script", TUTORIALS)
def test_pyasc_tutorial_passes_its_own_check(script, platform, caplog, run):
    caplog.set_level(logging.INFO)
    run_script(str(TUTORIALS_DIR / script), ["-r", "Model", "-v", platform])
    assert "run success" in caplog.text
    assert run.reports and all(r.soc == platform for r in run.reports)
