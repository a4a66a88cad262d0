"""Timing-only runs: no values computed, the same simulated times, findings and bytes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from test_sim_timings import CASES, _key

from ascsim.ops import fused_conv_tanh, matmul_leaky_relu
from ascsim.session import SESSION

ROOT = Path(__file__).resolve().parent.parent


def _reports(runner, platform: str, values: bool) -> list:
    torch.manual_seed(0)
    np.random.seed(0)
    with SESSION.values(values), SESSION.collect() as run:
        try:
            runner(platform)
        except (AssertionError, RuntimeError):
            # The example's own result check: nothing was computed in a timing-only run.
            assert not values
    return run.reports


def _summary(report) -> tuple:
    cores = [(c.kind, c.start_us, c.end_us, c.instructions, sorted(c.pipe_busy_us.items()))
             for c in report.cores]
    findings = sorted((f.category, f.locations) for f in report.findings)
    return report.device_time_us, cores, report.bytes_moved, findings


@pytest.mark.parametrize(("name", "platform", "runner"), CASES,
                         ids=[_key(n, p) for n, p, _ in CASES])
def test_every_example_is_timed_the_same_without_values(name, platform, runner):
    full = _reports(runner, platform, values=True)
    timed = _reports(runner, platform, values=False)
    assert [_summary(r) for r in timed] == [_summary(r) for r in full]
    assert all(r.values_computed for r in full)
    assert not any(r.values_computed for r in timed)


def test_outputs_are_left_as_they_were_and_the_info_says_so():
    a = torch.randint(-3, 3, (128, 64)).half()
    b = torch.randint(-3, 3, (64, 128)).half()
    bias = torch.zeros(128)
    c, info = matmul_leaky_relu(a, b, bias, 0.1, variant="fused", soc="Ascend910B1",
                                return_report=True, timing_only=True)
    assert not info.values_computed
    c_full, full = matmul_leaky_relu(a, b, bias, 0.1, variant="fused", soc="Ascend910B1",
                                     return_report=True)
    assert full.values_computed and info.device_time_us == full.device_time_us
    expected = torch.nn.functional.leaky_relu(a.float() @ b.float() + bias, 0.1)
    torch.testing.assert_close(c_full, expected)
    assert SESSION.timing_only is False  # the keyword applies to that call only


def test_a_conv_operator_times_the_same_without_values():
    x = torch.randn(1, 16, 12, 12).half()
    w = torch.randn(32, 16, 3, 3).half()
    b = torch.randn(32).half()
    args = (x, w, b, [1, 1], [1, 1, 1, 1], [1, 1])
    _, timed = fused_conv_tanh(*args, variant="semi", soc="Ascend950PR_9579",
                               return_report=True, timing_only=True)
    _, full = fused_conv_tanh(*args, variant="semi", soc="Ascend950PR_9579",
                              return_report=True)
    assert timed.device_time_us == full.device_time_us
    assert not timed.values_computed and full.values_computed


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_command_line_says_loudly_that_nothing_was_computed(tmp_path, how):
    script = ROOT / "examples" / "vector_add_flags.py"
    cmd = [sys.executable, "-m", "ascsim", "run", str(script), "-v", "Ascend910B1"]
    env = dict(os.environ)
    if how == "flag":
        cmd.append("--timing-only")
    else:
        env["ASCSIM_TIMING_ONLY"] = "1"
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    text = proc.stdout + proc.stderr
    assert "timing-only run" in text and "TIMING ONLY" in text
