"""The Triton examples (examples/triton/) run under the runner and match torch, race-free."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascsim.runner import run_script
from ascsim.session import SESSION

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "triton"
# The line each example prints when its torch check passed.
SUCCESS = {
    "vector_add.py": "vector add: z = x + y matches torch",
    "fused_softmax.py": "fused softmax: matches torch.softmax",
    "layer_norm.py": "layer norm: matches torch.nn.functional.layer_norm",
    "matmul.py": "matmul: leaky_relu(A @ B) matches torch",
    "conv_tanh.py": "conv tanh: tanh(conv2d(x, w) + b) matches torch",
}


@pytest.mark.parametrize("name", sorted(SUCCESS))
def test_example_matches_torch_without_findings(name, capsys):
    with SESSION.collect() as run:
        run_script(str(EXAMPLES / name), [])
    assert SUCCESS[name] in capsys.readouterr().out
    assert run.reports, "the example launched no kernel"
    for report in run.reports:
        assert report.findings == [], [f.format() for f in report.findings]
        assert report.device_time_us > 0
