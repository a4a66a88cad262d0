"""The critical path (ascsim/sim/critical_path.py), the waits' blocked time, redundant syncs
proven by re-simulation (ascsim/critical.py, ascsim/resim.py) and ``--what-if``
(ascsim/what_if.py), end to end through ``ascsim run``."""

from __future__ import annotations

import json
import os

import pytest
import torch

from ascsim.cli import main
from ascsim.resim import Change, ChangeError, changes_undone
from ascsim.runner import run_script
from ascsim.session import SESSION
from ascsim.sim.critical_path import critical_path, wait_sites

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")

# One core, one UB slot per operand. The MTE3 -> MTE2 wait at the top of the loop waits for
# the previous copy-out, which itself waited for the add: it covers the V -> MTE2 wait below
# it, which therefore never blocks and is not needed (no race without it).
REDUNDANT = '''
import asc
import asc.runtime.config as config
import asc.lib.runtime as rt
import torch

TILE = 256
STEPS = 4


@asc.jit
def add_one_slot(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress):
    x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x, TILE * STEPS)
    y_gm.set_global_buffer(y, TILE * STEPS)
    z_gm.set_global_buffer(z, TILE * STEPS)
    x_ub = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, TILE)
    y_ub = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, 4 * TILE, TILE)
    z_ub = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 8 * TILE, TILE)
    for step in range(STEPS):
        at = step * TILE
        if step > 0:
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)  # NEEDED-TOP
            asc.wait_flag(asc.HardEvent.V_MTE2, 0)  # REDUNDANT
        asc.data_copy(x_ub, x_gm[at:], TILE)
        asc.data_copy(y_ub, y_gm[at:], TILE)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.add(z_ub, x_ub, y_ub, TILE)
        if step < STEPS - 1:
            asc.set_flag(asc.HardEvent.V_MTE2, 0)  # REDUNDANT-SET
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)  # NEEDED-OUT
        asc.data_copy(z_gm[at:], z_ub, TILE)
        if step < STEPS - 1:
            asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)


config.set_platform(config.Backend.Model, "Ascend910B1")
x = torch.rand(TILE * STEPS)
y = torch.rand(TILE * STEPS)
z = torch.zeros_like(x)
add_one_slot[1, rt.current_stream()](x, y, z)
assert torch.allclose(z, x + y)
print("add_one_slot correct")
'''


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(REDUNDANT.split("\n"), start=1)
                if text.rstrip().endswith("# " + marker))


@pytest.fixture
def redundant_script(tmp_path):
    path = tmp_path / "one_slot.py"
    path.write_text(REDUNDANT)
    return str(path)


def _recorded(fn):
    """Run ``fn()`` with the cores recording causes; its launches and reports."""
    with changes_undone(), SESSION.collect(launches=True) as run:
        SESSION.record_causes = True
        fn()
    return run.launches, run.reports


def _check_tiles(path) -> None:
    """The path's segments tile [0, span] and, with the launch overhead, make the device
    time; every step was matched to a recorded event."""
    assert path.segments[0].start == 0.0
    for a, b in zip(path.segments, path.segments[1:]):
        assert a.end == b.start and a.cycles > 0
    assert path.total_us == pytest.approx(path.device_time_us, rel=1e-12, abs=1e-9)
    assert path.inexact == 0


def test_matmul_leakyrelu_path_sums_to_the_device_time():
    script = os.path.join(EXAMPLES, "matmul_leakyrelu.py")
    launches, reports = _recorded(lambda: run_script(script, ["-r", "Model", "-v",
                                                              "Ascend910B1"]))
    path = critical_path(launches[0], reports[0])
    _check_tiles(path)
    assert round(path.device_time_us, 2) == 50.16  # recording changes no time
    kinds = {(s.kind, s.core, s.pipe) for s in path.segments}
    # The path crosses cores: the AIC's cube work and the AIVs' copies both set the time.
    assert ("instruction", "AIV0", "MTE2") in kinds and ("instruction", "AIC0", "M") in kinds
    assert any(s.kind == "wait" and s.what == "hand-off" for s in path.segments)
    top = path.summary()[0]
    assert top[:4] == ("instruction", "AIV0", "MTE2", "get_tensor_c")


def test_fused_conv_on_950_path_sums_to_the_device_time():
    from ascsim.ops import fused_conv_tanh

    torch.manual_seed(0)
    x = torch.randn(1, 16, 16, 16, dtype=torch.float16)
    w = torch.randn(32, 16, 3, 3, dtype=torch.float16) * 0.1
    b = torch.randn(32, dtype=torch.float16)
    out = {}

    def conv():
        out["y"] = fused_conv_tanh(x, w, b, [1, 1], [1, 1, 1, 1], variant="fused",
                                   soc="Ascend950PR_9579")

    launches, reports = _recorded(conv)
    want = torch.tanh(torch.nn.functional.conv2d(x.double(), w.double(), b.double(), padding=1))
    assert torch.allclose(out["y"].double(), want, rtol=2e-3, atol=2e-3)
    assert [r.soc for r in reports] == ["Ascend950PR_9579"]
    path = critical_path(launches[0], reports[0])
    _check_tiles(path)
    assert {s.core[:3] for s in path.segments if s.core} == {"AIC", "AIV"}
    assert any(s.kind == "wait" and s.what == "cross-core wait" for s in path.segments)


def test_each_wait_knows_how_long_it_blocked(redundant_script):
    launches, _ = _recorded(lambda: run_script(redundant_script, []))
    sites = {s.loc[1]: s for s in wait_sites(launches)}
    redundant = sites[_line("REDUNDANT")]
    assert redundant.count == 3 and redundant.blocked == 0 and redundant.stall_us == 0
    assert redundant.set_lines == ((redundant_script, _line("REDUNDANT-SET")),)
    for marker in ("NEEDED-TOP", "NEEDED-OUT"):
        site = sites[_line(marker)]
        assert site.blocked == site.count and site.max_stall_us > 0
        assert site.stall_us <= site.count * site.max_stall_us + 1e-12


def test_critical_path_lists_exactly_the_redundant_wait(redundant_script, tmp_path, capsys):
    trace, report = tmp_path / "t.json", tmp_path / "r.json"
    status = main(["run", "--quiet", "--critical-path", "--trace", str(trace), "--json",
                   str(report), redundant_script])
    out = capsys.readouterr().out
    assert status == 0
    assert "critical path of add_one_slot on Ascend910B1" in out
    redundant = f"one_slot.py:{_line('REDUNDANT')}"
    listed = out.split("redundant syncs: ", 1)[1].splitlines()[0]
    assert listed.endswith(redundant) and listed.count("wait_flag at") == 1
    events = json.loads(trace.read_text())["traceEvents"]
    arrows = [e for e in events if e.get("cat") == "critical-path"]
    assert arrows and {e["ph"] for e in arrows} == {"s", "f"}
    marked = [e for e in events if e.get("ph") == "X" and e["args"].get("critical_path")]
    assert marked and {e["name"] for e in marked} >= {"data_copy", "add"}
    data = json.loads(report.read_text())
    (path,) = data["critical_paths"]
    assert path["total_us"] == pytest.approx(data["reports"][0]["device_time_us"], abs=1e-9)
    assert sum(s["us"] for s in path["segments"]) + path["overhead_us"] == \
        pytest.approx(path["total_us"], abs=1e-9)


def test_what_if_dropping_a_needed_wait_shows_the_race(redundant_script, capsys):
    status = main(["run", "--quiet", "--what-if",
                   f"drop={redundant_script}:{_line('NEEDED-OUT')}", redundant_script])
    out = capsys.readouterr().out
    assert status == 0  # the what-if informs; the script's own run passed
    assert "only in the what-if: race" in " ".join(out.split())
    assert "outputs or findings differ" in out
    assert f"sync at {os.path.relpath(redundant_script)}:{_line('NEEDED-OUT')}" in out


@pytest.mark.parametrize("change,faster", [
    ("buffers=examples/vector_add_queues.py:68x2", True),
    pytest.param("cores=2", False, marks=pytest.mark.slow),  # a fresh process each: ~8 s
    pytest.param("soc=Ascend950PR_9579", True, marks=pytest.mark.slow),
])
def test_what_if_changes_end_to_end(change, faster, capsys, monkeypatch):
    monkeypatch.chdir(os.path.join(EXAMPLES, ".."))
    status = main(["run", "--quiet", "--what-if", change, "examples/vector_add_queues.py",
                   "-r", "Model", "-v", "Ascend910B1"])
    out = capsys.readouterr().out
    assert status == 0
    summary = next(line for line in out.splitlines() if line.startswith("what-if "))
    before, after = (float(x) for x in summary.split(": ", 1)[1].split(" µs")[0].split(" -> "))
    assert before == pytest.approx(4.28, abs=0.005)
    assert (after < before) == faster and after != before
    assert "same outputs and findings" in out
    row = next(line for line in out.splitlines() if "add_with_queues" in line)
    assert "same" in row.split("│")[4]


@pytest.mark.parametrize("text,message", [
    ("drop", "a change is KIND=VALUE"),
    ("speed=2", "unknown change 'speed'"),
    ("drop=nowhere.py:3", "no such file 'nowhere.py'"),
    ("drop=examples/gelu.py", "is not FILE:LINE"),
    ("buffers=examples/gelu.py:3x1", "at least 2"),
    ("soc=Ascend123", "unknown SoC"),
    ("cores=0", "not a positive whole number"),
])
def test_bad_changes_say_what_is_wrong(text, message, monkeypatch):
    monkeypatch.chdir(os.path.join(EXAMPLES, ".."))
    with pytest.raises(ChangeError, match=message):
        Change.parse(text)


def test_what_if_of_a_line_without_a_wait_is_refused(redundant_script, capsys):
    status = main(["run", "--quiet", "--what-if", f"drop={redundant_script}:2",
                   redundant_script])
    out = " ".join(capsys.readouterr().out.split())
    assert status == 0
    assert "--what-if: drop: no wait ran at" in out and "waits that ran:" in out


@pytest.mark.parametrize("script,args,soc", [
    ("matmul_mix.py", ["-r", "Model", "-v", "Ascend910B1"], None),  # ends in a PIPE_ALL barrier
    ("vector_add_flags.py", ["-r", "Model", "-v", "Ascend910B1"], None),
    ("pto/matmul_ring.py", [], "Ascend950PR_9579"),
    ("triton/fused_softmax.py", [], "Ascend910B1"),
])
def test_path_is_exact_in_every_front_end(script, args, soc):
    def run():
        with SESSION.using_soc(soc):
            run_script(os.path.join(EXAMPLES, script), args)

    launches, reports = _recorded(run)
    assert launches
    for launch, report in zip(launches, reports):
        _check_tiles(critical_path(launch, report))


def test_path_runs_through_earlier_waves():
    """96 blocks on the 48 AIVs of the 910B1: the second wave's cores start where the first
    wave's ended on the same core."""
    import sys

    sys.path.insert(0, EXAMPLES)
    try:
        import vector_add_queues as example
    finally:
        sys.path.remove(EXAMPLES)
    launches, reports = _recorded(
        lambda: example.run("Ascend910B1", length=96 * 2 * 128, cores=96, tile=128))
    path = critical_path(launches[0], reports[0])
    _check_tiles(path)
    starts = [s for s in path.segments if s.kind == "start-up"]
    assert len(starts) == 2 and starts[0].core == "AIV0" and starts[1].core == "AIV48"
