"""benchmarks/bench_wall.py runs (quick mode: it works; the timing itself is not asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_wall.py"


def test_bench_wall_quick(capsys):
    spec = importlib.util.spec_from_file_location("bench_wall", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "fused_conv_tanh" in out and "of the 120 s target" in out
    assert "x semi with its golden in this run" in out  # the package path ran
