"""benchmarks/pto_vs_pyasc.py: one algorithm written in pyasc and in PyPTO Pro gets the same
simulated time (both front-ends drive the same machine), and both results match torch."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ascsim.hw import DEFAULT_SOC
from ascsim.session import SESSION

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "pto_vs_pyasc.py"


def _load():
    spec = importlib.util.spec_from_file_location("ascsim_benchmarks_pto_vs_pyasc", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def bench():
    module = _load()
    with SESSION.using_soc(module.SOC):
        yield module
    SESSION.request_soc(DEFAULT_SOC)


def _ratio(pair) -> float:
    asc_report, pto_report = pair()
    return pto_report.device_time_us / asc_report.device_time_us


def test_vector_add_in_both_languages_is_timed_alike(bench):
    assert abs(_ratio(bench.vector_add_pair) - 1) <= bench.TOLERANCE


def test_linear_layer_in_both_languages_is_timed_alike(bench):
    assert abs(_ratio(bench.linear_pair) - 1) <= bench.TOLERANCE
