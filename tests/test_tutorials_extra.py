"""The saved pyasc examples 09 (Linear, four kernels chosen by shape) and 10 (fused infer
attention, MIX AIC:AIV 1:2 with cross-core flags and online softmax) run unchanged, pass their
own torch checks and report no findings. Skipped where the saved scripts are absent."""

from __future__ import annotations

import os

import pytest

from ascsim.runner import run_script
from ascsim.session import SESSION

TUTORIALS = "/work/pyasc_tutorials"
LINEAR = os.path.join(TUTORIALS, "09_linear", "linear.py")
ATTENTION = os.path.join(TUTORIALS, "10_fused_infer_attention", "fused_infer_attention.py")
SOCS = ("Ascend910B1", "Ascend950PR_9579")

pytestmark = pytest.mark.skipif(not (os.path.isfile(LINEAR) and os.path.isfile(ATTENTION)),
                                reason="the saved pyasc examples 09/10 are not on this machine")

# Calls the example's own launch function at shapes that reach its other kernels; the example
# module is imported from its directory, with ``asc`` served by ascsim.
DRIVER = """
import sys, torch
sys.path.insert(0, {dir!r})
import asc.runtime.config as config
import {module} as ex
config.set_platform(config.Backend.Model, None)
for shape in {shapes!r}:
    torch.manual_seed(0)
    {body}
"""
LINEAR_BODY = """m, n, k = shape
    x = torch.randn(m, k, dtype=torch.float16); w = torch.randn(n, k, dtype=torch.float16)
    out = ex.linear_launch(x, w)
    ref = (x.float() @ w.float().T).to(torch.float16)
    assert torch.allclose(out, ref, rtol=1e-2, atol=1e-2), shape"""
ATTENTION_BODY = """b, h, s, d = shape
    q = torch.randn(b, h, s, d, dtype=torch.float16); k = torch.randn_like(q)
    v = torch.randn_like(q)
    mask = torch.triu(torch.ones(1, 1, s, s, dtype=torch.bool), diagonal=1)
    out = ex.fused_infer_attention_launch(q, k, v, mask, d ** -0.5)
    ref = ex._attention_reference(q, k, v, mask, d ** -0.5)
    assert torch.allclose(out.float(), ref, rtol=1e-2, atol=1e-2), shape"""


@pytest.fixture(autouse=True)
def run():
    """The launches of the test (collected), with the session's settings restored after it."""
    saved = (SESSION.soc.name, SESSION.requested_soc, SESSION.strict,
             SESSION.checks)
    SESSION.strict, SESSION.checks = False, True
    with SESSION.collect() as collection:
        yield collection
    SESSION.request_soc(saved[1])
    SESSION.set_soc(saved[0])
    SESSION.strict, SESSION.checks = saved[2:]


def _no_findings(run, kernels):
    assert [r.kernel for r in run.reports] == kernels
    for report in run.reports:
        assert report.findings == [], [f.format() for f in report.findings]
        assert report.device_time_us > report.launch_overhead_us


@pytest.mark.parametrize("soc", SOCS)
def test_linear_example(soc, run):
    run_script(LINEAR, ["-r", "Model", "-v", soc])
    _no_findings(run, ["linear_kernel"])


@pytest.mark.parametrize("soc", SOCS)
def test_fused_infer_attention_example(soc, run):
    run_script(ATTENTION, ["-r", "Model", "-v", soc])
    _no_findings(run, ["fused_infer_attention_kernel"])


def _drive(tmp_path, path, module, body, shapes, soc):
    script = tmp_path / f"drive_{module}.py"
    script.write_text(DRIVER.format(dir=os.path.dirname(path), module=module, shapes=shapes,
                                    body=body))
    run_script(str(script), ["-r", "Model", "-v", soc])


def test_linear_direct_and_static_kernels(tmp_path, run):
    # k=512 with few tiles: direct low-level Cube; k=1024: static NORM; m=3072, n=512: MDL.
    _drive(tmp_path, LINEAR, "linear", LINEAR_BODY,
           [(128, 256, 512), (128, 256, 1024), (3072, 512, 512)], "Ascend910B1")
    _no_findings(run, ["linear_kernel_direct", "linear_kernel_static_projection_norm",
                  "linear_kernel_static_projection"])


def test_attention_long_sequences_use_the_update_softmax(tmp_path, run):
    # S > 512: the KV loop with SoftmaxFlashV2's update form, a 64-column KV tail, D=128.
    _drive(tmp_path, ATTENTION, "fused_infer_attention", ATTENTION_BODY, [(1, 2, 576, 128)],
           "Ascend950PR_9579")
    _no_findings(run, ["fused_infer_attention_kernel"])
