"""The PyPTO Pro cube examples under examples/pto/ run under the runner on the 950, pass their
own torch checks and leave no findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascsim.hw import DEFAULT_SOC
from ascsim.runner import run_script
from ascsim.session import SESSION

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "pto"
#: example -> (the line it prints when its check passed, the kernel kind it launches)
CUBE_EXAMPLES = {
    "matmul_ring": ("C = A @ B matches the torch reference", "AIC_ONLY"),
    "matmul_leakyrelu": ("Y = LeakyReLU(X @ W) matches the torch reference", "MIX"),
    "matmul_softmax": ("P = softmax(Q @ K^T) matches the torch reference", "MIX"),
}


@pytest.fixture()
def run():
    with SESSION.collect() as collection:
        yield collection
    SESSION.request_soc(DEFAULT_SOC)


@pytest.mark.parametrize("name", sorted(CUBE_EXAMPLES))
def test_cube_example_passes_its_check(name, capsys, run):
    run_script(str(EXAMPLES / f"{name}.py"), ["-v", "Ascend950PR_9579"])
    line, kind = CUBE_EXAMPLES[name]
    assert line in capsys.readouterr().out
    assert run.reports, "the example launched no kernel"
    assert all(r.soc == "Ascend950PR_9579" and r.device_time_us > 0 for r in run.reports)
    assert {r.kernel_type for r in run.reports} == {kind}
    assert not [f.format() for r in run.reports for f in r.findings]
