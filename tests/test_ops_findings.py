"""The operators' kernels are clean under the checks (no race, overflow, uninitialised read...)."""

from __future__ import annotations

import pytest

from ascsim.bench.references import make_inputs
from ascsim.bench.tasks import load_task
from ascsim.ops import fused_conv_sigmoid, fused_conv_tanh
from ascsim.session import SESSION

OPS = {"fused_conv_tanh": fused_conv_tanh, "fused_conv_sigmoid": fused_conv_sigmoid}


@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend950PR_9579"])
@pytest.mark.parametrize("op_name,case_id", [("fused_conv_tanh", 5), ("fused_conv_sigmoid", 13),
                                             ("fused_conv_tanh", 12)])
def test_conv_operators_report_no_findings(soc, op_name, case_id):
    assert SESSION.checks
    task = load_task(op_name).select([case_id])
    case = task.cases[0]
    inputs = make_inputs(task, case)
    for variant in ("semi", "fused", "unfused"):
        _, info = OPS[op_name](*inputs, **case.kwargs(), variant=variant, soc=soc,
                               return_report=True)
        findings = [f.format() for r in info.kernels for f in r.findings]
        assert findings == [], (variant, findings)
