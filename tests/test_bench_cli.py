"""``ascsim bench``: operator lookup, case selection, reports and exit codes."""

import sys
import types

import pytest
import torch
from test_bench_runner import torch_stand_in_conv

from ascsim.cli import main


def test_operator_module_missing(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ascsim.ops", None)  # as if ascsim.ops did not exist
    assert main(["bench", "fused_conv_tanh", "--cases", "1"]) == 2
    assert "operator fused_conv_tanh is not available" in capsys.readouterr().out


def test_operator_missing_from_module(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ascsim.ops", types.ModuleType("ascsim.ops"))
    assert main(["bench", "fused_conv_sigmoid", "--quick"]) == 2
    assert "operator fused_conv_sigmoid is not available" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["bench", "nope"], "no bench task"),
    (["bench", "fused_conv_tanh", "--soc", "Ascend123"], "unknown SoC"),
    (["bench", "fused_conv_tanh", "--cases", "77"], "no case 77"),
])
def test_bad_arguments(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--cases", "1,x"], "argument --cases: wants comma-separated integers, got '1,x'"),
    (["--tune", "--workers", "0"], "argument --workers: must be >= 1, got 0"),
])
def test_bad_option_values_exit_2_with_argparses_message(args, message, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["bench", "fused_conv_tanh", *args])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_bench_writes_reports(monkeypatch, tmp_path, capsys):
    ops = types.ModuleType("ascsim.ops")
    ops.fused_conv_tanh = torch_stand_in_conv(torch.tanh)
    monkeypatch.setitem(sys.modules, "ascsim.ops", ops)
    code = main(["bench", "fused_conv_tanh", "--soc", "Ascend910B1", "--variant", "semi",
                 "--cases", "1,5", "--report", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "fused_conv_tanh on Ascend910B1" in out and "score" in out
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"fused_conv_tanh_Ascend910B1.{e}" for e in ("html", "json", "md")]
