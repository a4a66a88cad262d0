"""examples/pto/vector_add.py runs under the runner, passes its torch check and is clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascsim.hw import DEFAULT_SOC
from ascsim.runner import run_script
from ascsim.session import SESSION

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "pto" / "vector_add.py"


@pytest.fixture
def run():
    with SESSION.collect() as collection:
        yield collection
    SESSION.request_soc(DEFAULT_SOC)


def test_pto_vector_add_example_passes_its_check_on_the_950(run, capsys):
    run_script(str(EXAMPLE), ["-v", "Ascend950PR_9579"])
    assert "z = x + y correct on 21 tiles" in capsys.readouterr().out
    (report,) = run.reports
    assert report.soc == "Ascend950PR_9579" and report.block_num == 8
    assert report.device_time_us > 0 and not report.findings
