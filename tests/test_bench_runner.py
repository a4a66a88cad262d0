"""The bench runner, driven by a torch stand-in for the operators (test-only, not shipped)."""

import copy
import math

import pytest
import torch
import torch.nn.functional as F
import yaml
from rich.console import Console

from ascsim.bench.runner import run_bench
from ascsim.bench.score import hap
from ascsim.bench.tasks import TASK_DIR, load_task, task_from_doc
from ascsim.sim.report import CoreReport, KernelReport

SOC = "Ascend950PR_9579"


def _kernel(name, us, busy, moved=None):
    core = CoreReport(0, "AIC", 0, 0.0, us, busy, 10)
    return KernelReport(name, SOC, "MIX", 1, us, 1.0, [core], [], moved or {})


def _conv_math(x, w, b, strides, pads, dilations, act):
    x = F.pad(x.float(), (pads[2], pads[3], pads[0], pads[1]))
    return act(F.conv2d(x, w.float(), b.float(), stride=strides, dilation=dilations))


def torch_stand_in_conv(act):
    """A stand-in conv operator: torch math, fabricated per-variant timing and info."""
    def op(x, w, b, *, strides, pads, dilations, variant, soc, return_report=False):
        y = _conv_math(x, w, b, strides, pads, dilations, act).to(x.dtype)
        return y, _fake_info(y, variant)
    return op


def torch_stand_in_matmul(a, b, bias, *, alpha, variant, soc, return_report=False):
    y = a.float() @ b.float() + bias
    y = torch.where(y >= 0, y, alpha * y)
    return y, _fake_info(y, variant)


def _fake_info(y, variant):
    """Fabricated but shaped like the real thing: semi = 2 kernels + fp32 workspace, fused =
    1 kernel + cross-core hand-offs, unfused = 2 kernels + output-dtype workspace."""
    n = y.numel()
    cube = 2.0 + n / 4096
    vec = 1.5 + n / 16384
    chosen = "semi" if variant == "auto" else variant
    kernels = {
        "semi": [_kernel("k1_conv", cube, {"M": cube - 1, "MTE2": 0.5, "FIX": 0.3}),
                 _kernel("k2_act", vec, {"V": vec - 1, "MTE2": 0.2, "MTE3": 0.2})],
        "fused": [_kernel("fused", cube + vec * 0.8, {"M": cube - 1, "V": vec, "FIX": 0.6})],
        "unfused": [_kernel("conv", cube + 0.4, {"M": cube - 0.6, "MTE2": 0.5}),
                    _kernel("act", vec + 0.4, {"V": vec - 0.6, "MTE3": 0.3})],
    }[chosen]
    workspace = {"semi": n * 4, "fused": 0, "unfused": n * y.element_size()}[chosen]
    return {"device_time_us": sum(k.device_time_us for k in kernels), "kernels": kernels,
            "cross_core_handoffs": math.ceil(n / 4096) if chosen == "fused" else 0,
            "workspace_bytes": workspace, "variant": chosen}


def tiny_conv_task(act="tanh"):
    with open(TASK_DIR / f"fused_conv_{act}.yaml") as fh:
        doc = yaml.safe_load(fh)
    keep = {1, 5, 13, 23}  # fp16 3x3, 1x1 stride 2, bf16 batch 16, dilation 2 — all small
    doc["cases"] = [c for c in doc["cases"] if c["case_id"] in keep]
    fp32 = copy.deepcopy(doc["cases"][0])  # an fp32 case, small
    fp32.update(case_id=99, dtype="float32", note="S-float32-test")
    doc["cases"].append(fp32)
    return task_from_doc(doc)


def test_all_variants_pass_and_score():
    task = tiny_conv_task()
    res = run_bench(task, torch_stand_in_conv(torch.tanh), ["semi", "fused", "unfused", "auto"],
                    SOC, progress=False)
    assert res.variants == ("semi", "fused", "unfused", "auto")
    assert len(res.runs) == 5 * 4 and all(r.status == "pass" for r in res.runs)
    r = res.run(5, "semi")
    assert r.t_base_us == 26.62 and r.t_hw_us == pytest.approx(2.662)
    assert r.hap == pytest.approx(hap(26.62, r.timing.device_time_us))
    assert r.speedup == pytest.approx(26.62 / r.timing.device_time_us)
    assert r.timing.workspace_bytes == 128 * 28 * 28 * 4 and len(r.timing.kernels) == 2
    assert res.run(5, "fused").timing.cross_core_handoffs == 25
    assert res.run(5, "auto").timing.chosen_variant == "semi"
    s = res.summary("semi").summary
    assert s.score == pytest.approx(50 + 50 * s.mean_hap) and s.n == 5
    assert res.best_variant() == "fused"  # the stand-in makes fused cube + 0.8·vector


def test_progress_bar_and_table_are_printed():
    console = Console(record=True, width=140, force_terminal=False)
    task = tiny_conv_task("sigmoid").select([1, 5])
    run_bench(task, torch_stand_in_conv(torch.sigmoid), ["semi", "fused"], SOC, progress=True,
              console=console)
    text = console.export_text()
    assert "fused_conv_sigmoid" in text and "2/2" not in text or "4/4" in text
    assert "semi µs" in text and "score" in text


def _bad(kind):
    good = torch_stand_in_conv(torch.tanh)

    def op(*args, variant, **kw):
        y, info = good(*args, variant=variant, **kw)
        if variant != "fused":
            return y, info
        if kind == "raise":
            raise RuntimeError("kernel exploded")
        if kind == "noncontiguous":
            return y.transpose(2, 3).contiguous().transpose(2, 3), info
        if kind == "dtype":
            return y.float(), info
        if kind == "numpy":
            return y.numpy(), info
        if kind == "info":
            return y, {**info, "device_time_us": info["device_time_us"] + 5}
        if kind == "noinfo":
            return y
        if kind == "precision":
            return (y.float() * 1.05).to(y.dtype), info
        raise AssertionError(kind)
    return op


@pytest.mark.parametrize("kind, status, message", [
    ("raise", "runtime_fail", "RuntimeError: kernel exploded"),
    ("noncontiguous", "runtime_fail", "not contiguous"),
    ("dtype", "runtime_fail", "output dtype"),
    ("numpy", "runtime_fail", "not a torch.Tensor"),
    ("info", "runtime_fail", "not the sum over its kernels"),
    ("noinfo", "runtime_fail", "(output, info)"),
    ("precision", "precision_fail", None),
])
def test_failures_are_classified(kind, status, message):
    task = tiny_conv_task().select([1, 5])
    res = run_bench(task, _bad(kind), ["semi", "fused"], SOC, progress=False)
    assert all(r.status == "pass" for r in res.runs if r.variant == "semi")
    bad = [r for r in res.runs if r.variant == "fused"]
    assert all(r.status == status for r in bad)
    s = res.summary("fused").summary
    if status == "runtime_fail":
        assert all(message in r.error for r in bad) and s.score == 0.0
        assert s.n_runtime_fail == 2
    else:
        assert s.score == pytest.approx(20.0) and s.n_precision_fail == 2
        assert "fallback" in bad[0].precision.why


def test_variant_baseline_task():
    task = load_task("matmul_leaky_relu").select([3, 4, 10])
    res = run_bench(task, torch_stand_in_matmul, ["semi", "fused"], SOC, progress=False)
    assert res.variants == ("unfused", "semi", "fused")  # the baseline runs, and runs first
    for cid in (3, 4, 10):
        base = res.run(cid, "unfused")
        assert base.hap == pytest.approx(0.5) and base.speedup == 1.0
        semi = res.run(cid, "semi")
        assert semi.t_base_us == base.timing.device_time_us
        assert semi.t_hw_us == max(0.1 * semi.t_base_us, 1.0) and semi.speedup > 1
    assert res.summary("unfused").summary.score == pytest.approx(75.0)
    assert "unfused" in res.baseline_note


def test_unknown_variant():
    with pytest.raises(ValueError, match="unknown variants"):
        run_bench(tiny_conv_task(), torch_stand_in_conv(torch.tanh), ["best"], SOC,
                  progress=False)
