"""The runner: `import asc` aliasing, script arguments, and reports of failed launches."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from ascsim.runner import install_asc_alias, peek_script_args
from ascsim.session import SESSION

DEADLOCK_SCRIPT = textwrap.dedent('''
    import numpy as np
    import asc
    import asc.runtime.config as config

    @asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
    def stuck(x: asc.GlobalAddress):
        if asc.ascend_is_aiv():
            asc.cross_core_wait_flag(3, mode_id=2)  # nobody ever sets flag 3

    stuck[1](np.zeros(8, np.float32))
''')


def test_asc_resolves_to_ascsim():
    install_asc_alias()
    import asc
    import asc.lib.runtime as rt
    import asc.runtime.config as config

    import ascsim.asc

    assert asc is ascsim.asc
    assert rt.current_stream() is not None
    assert config.Backend("Model") is config.Backend.Model


@pytest.mark.parametrize("args,expected", [
    (["-r", "Model", "-v", "Ascend910B4"], ("Model", "Ascend910B4")),
    (["-vAscend950PR_9579"], (None, "Ascend950PR_9579")),
    (["--other", "1"], (None, None)),
])
def test_peek_script_args(args, expected):
    got = peek_script_args(args)
    assert (got.backend, got.platform) == expected


def test_a_failed_launch_still_reports_its_findings(tmp_path):
    script = tmp_path / "stuck.py"
    script.write_text(DEADLOCK_SCRIPT)
    out = tmp_path / "findings.json"
    proc = subprocess.run([sys.executable, "-m", "ascsim", "check", "--json", str(out),
                           str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "deadlock" in proc.stdout + proc.stderr
    reports = json.loads(out.read_text())["reports"]
    assert reports and reports[0]["failed"] is True
    categories = {f["category"] for f in reports[0]["findings"]}
    assert "deadlock" in categories
    assert any(loc["line"] == 9 for f in reports[0]["findings"] for loc in f["locations"])


def test_session_keeps_reports_of_in_process_launches():
    import numpy as np

    import ascsim.asc as asc

    @asc.jit
    def touch(x: asc.GlobalAddress):
        g = asc.GlobalTensor()
        g.set_global_buffer(x)
        g.set_value(0, 1.0)

    x = np.zeros(8, np.float32)
    with SESSION.collect() as run:
        report = touch[1](x)
    assert run.reports == [report] and SESSION.last_report is report and x[0] == 1.0
