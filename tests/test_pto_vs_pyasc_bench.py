"""benchmarks/pto_vs_pyasc_matmul.py runs both kernels, checks them against torch and prints
their simulated times (this checks the script works, not the timing)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from ascsim.hw import DEFAULT_SOC
from ascsim.session import SESSION

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "pto_vs_pyasc_matmul.py"


@pytest.fixture()
def bench():
    spec = importlib.util.spec_from_file_location("ascsim_benchmarks_pto_vs_pyasc", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    SESSION.request_soc(DEFAULT_SOC)


def test_one_small_shape(bench, capsys):
    assert bench.main(["--shapes", "256x128x512"]) == 0
    rows = re.findall(r"^\s*256 x 128 x 512\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$",
                      capsys.readouterr().out, flags=re.M)
    assert len(rows) == 1
    asc_us, pto_us, ratio = (float(v) for v in rows[0])
    assert asc_us > 0 and pto_us > 0
    assert ratio == pytest.approx(pto_us / asc_us, abs=2e-3)


def test_shapes_off_the_tiling_are_refused(bench):
    with pytest.raises(SystemExit):
        bench.main(["--shapes", "100x128x512"])
