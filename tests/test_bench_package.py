"""``ascsim bench --package``: a user's operator package run under the simulator, the
submission rules checked per case, and one case's failure kept to that case.

The packages are a small pyasc one (tests/data/cann_bench_vec: fp32 1x1 conv + tanh, one vector
kernel) and variants of it written into tmp_path, each breaking one rule or failing one way;
the task is tests/data/tiny_conv_tanh.yaml (two tiny cases).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ascsim.bench.isolate import CaseError, PackageRunner
from ascsim.bench.package import resolve_package
from ascsim.bench.report import to_markdown
from ascsim.bench.rules import WrapperWatch
from ascsim.bench.runner import PACKAGE_VARIANT, run_bench
from ascsim.bench.tasks import load_task
from ascsim.cli import main

DATA = Path(__file__).parent / "data"
GOOD = DATA / "cann_bench_vec"
TASK_FILE = DATA / "tiny_conv_tanh.yaml"
EXAMPLE = Path(__file__).parent.parent / "examples" / "cann_bench_asc"
SOC = "Ascend950PR_9579"

HEAD = """\
import os
import time

import torch

from cann_bench.conv1x1 import check, launch


"""


def make_package(root: Path, wrapper: str) -> Path:
    """A package in ``root`` with the good kernel module and ``wrapper`` as its __init__."""
    pkg = root / "cann_bench"
    pkg.mkdir(parents=True)
    shutil.copy(GOOD / "cann_bench" / "conv1x1.py", pkg / "conv1x1.py")
    (pkg / "__init__.py").write_text(HEAD + wrapper)
    return root


def bench(source_dir, case_ids=None, timeout_s=120.0, task_file=TASK_FILE):
    task = load_task(task_file).select(case_ids)
    source = resolve_package(str(source_dir), task.name)
    with PackageRunner(task, source, SOC, timeout_s) as runner:
        return run_bench(task, None, (PACKAGE_VARIANT,), SOC, progress=False,
                         package_call=runner.call_case)


def test_good_package_end_to_end(tmp_path, capsys):
    """CLI run of the pyasc package: both cases pass the precision rule against the torch
    reference, are timed from the package's kernel and leave reports with no violation."""
    code = main(["bench", str(TASK_FILE), "--package", str(GOOD), "--report", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads((tmp_path / f"fused_conv_tanh_{SOC}.json").read_text())
    assert "candidate: the package cann_bench" in data["baseline_note"]
    assert data["variants"] == ["package"]
    for run in data["runs"]:
        assert run["status"] == "pass" and run["violations"] == []
        assert run["precision"]["passed"]
        kernels = run["timing"]["kernels"]
        assert [k["name"] for k in kernels] == ["conv1x1_tanh_kernel"]
        assert run["timing"]["device_time_us"] == pytest.approx(kernels[0]["device_time_us"])
        assert run["timing"]["workspace_bytes"] == 0  # only the result was allocated
    assert data["summaries"][0]["n_runtime_fail"] == 0
    page = (tmp_path / f"fused_conv_tanh_{SOC}.html").read_text()
    assert "Submission rules" in page and "Every case kept the rules." in page


GOOD_BODY = """\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    check(x, filter, strides, pads, dilations)
    n, _, h, w = x.shape
    y = torch.empty((n, filter.shape[0], h, w), dtype=x.dtype)
    launch(x, filter, bias, y)
    return y
"""

VIOLATING = {
    "add": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    x = x + 0.0
""" + GOOD_BODY.split(":\n", 1)[1], "wrapper_compute", "torch.Tensor.add computes outside kernels"),
    "numpy": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    scale = float(x.numpy().max())
""" + GOOD_BODY.split(":\n", 1)[1], "wrapper_compute", "torch.Tensor.numpy read the data"),
    "copying_reshape": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    check(x, filter, strides, pads, dilations)
    n, _, h, w = x.shape
    y = torch.empty((n, filter.shape[0], w, h), dtype=x.dtype)
    launch(x, filter, bias, y)
    return y.transpose(2, 3).reshape(n, filter.shape[0], h, w)
""", "wrapper_compute", "torch.Tensor.transpose computes outside kernels"),
    "non_contiguous": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    check(x, filter, strides, pads, dilations)
    n, _, h, w = x.shape
    co = filter.shape[0]
    y = torch.empty_strided((n, co, h, w), (co * h * w, 1, w * co, co), dtype=x.dtype)
    launch(x, filter, bias, y)
    return y
""", "bad_output", "not contiguous"),
    "wrong_shape": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    check(x, filter, strides, pads, dilations)
    n, _, h, w = x.shape
    y = torch.empty((n, filter.shape[0], h * w), dtype=x.dtype)
    launch(x, filter, bias, y)
    return y
""", "bad_output", "the case needs [1, 4, 8, 8]"),
    "no_kernel": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    n, _, h, w = x.shape
    return torch.zeros((n, filter.shape[0], h, w), dtype=x.dtype)
""", "no_kernel", "launched no simulated kernel"),
    "cached_buffer": ("""\
_CACHE = {}


def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    key = tuple(x.shape)
    if key not in _CACHE:
        n, _, h, w = x.shape
        _CACHE[key] = torch.empty((n, filter.shape[0], h, w), dtype=x.dtype)
        launch(x, filter, bias, _CACHE[key])
    else:
        launch(x, filter, bias, torch.empty_like(_CACHE[key]))  # a kernel runs, unused
    return _CACHE[key]
""", "cached_result", "returned the first call's buffer"),
    "cached_values": ("""\
_FIRST_INPUTS = {}


def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    x, filter, bias = _FIRST_INPUTS.setdefault(tuple(x.shape), (x, filter, bias))
""" + GOOD_BODY.split(":\n", 1)[1], "cached_result", "returned the same values as the first"),
    "stale_state": ("""\
_FIRST_BIAS = {}


def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    bias = _FIRST_BIAS.setdefault(tuple(x.shape), bias)
""" + GOOD_BODY.split(":\n", 1)[1], "cached_result", "fails precision for them"),
}


# One package per violation kind runs by default; the other flavours of a kind are slow.
ONE_PER_KIND = ("add", "non_contiguous", "no_kernel", "cached_buffer")


@pytest.mark.parametrize("name", [n if n in ONE_PER_KIND else
                                  pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(VIOLATING)])
def test_violation_is_caught_and_named(name, tmp_path):
    body, kind, text = VIOLATING[name]
    result = bench(make_package(tmp_path, body), case_ids=[1])
    run = result.run(1, PACKAGE_VARIANT)
    assert run.status == "runtime_fail" and "rule_violation" in run.error
    kinds = {v.kind for v in run.violations}
    assert kind in kinds, run.error
    assert any(text in v.detail for v in run.violations if v.kind == kind), run.error
    if kind == "wrapper_compute":  # the wrapper's own line is named
        assert "cann_bench/__init__.py:" in run.error
    assert result.summaries[0].summary.score == 0.0
    md = to_markdown(result)
    assert "## Submission rules" in md and f"| 1 | package | {kind} |" in md


@pytest.mark.slow
def test_wrong_result_is_a_precision_failure_not_a_cache(tmp_path):
    """A kernel that ignores the bias is wrong on both calls: precision fails, no rule."""
    body = GOOD_BODY.replace("launch(x, filter, bias, y)",
                             "launch(x, filter, torch.zeros_like(bias), y)")
    run = bench(make_package(tmp_path, body), case_ids=[1]).run(1, PACKAGE_VARIANT)
    assert run.status == "precision_fail" and run.violations == ()


def test_allowed_wrapper_calls_are_not_flagged(tmp_path):
    """Allocation, metadata, views that copy nothing and a no-op contiguous() pass the rules."""
    body = """\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    check(x, filter, strides, pads, dilations)
    n, c, h, w = x.shape
    assert x.dim() == 4 and x.numel() == n * c * h * w and x.is_contiguous()
    flat = torch.zeros(n * filter.shape[0] * h * w, dtype=x.dtype, device=x.device)
    y = flat.view(n, filter.shape[0], h, w)
    launch(x.contiguous(), filter.reshape(filter.shape[0], c), bias.to(x.dtype), y)
    return y.reshape(n, filter.shape[0], h, w)
"""
    result = bench(make_package(tmp_path, body), case_ids=[1])
    run = result.run(1, PACKAGE_VARIANT)
    assert run.status == "pass", run.error


def test_watch_judges_views_by_whether_they_copy():
    x = torch.arange(12.0).reshape(3, 4)
    with WrapperWatch() as watch:
        x.reshape(4, 3)          # a view
        x.contiguous()           # already contiguous: itself
    assert watch.violations == []
    xt = x.t().contiguous()  # outside the watch: xt.t() is then a non-contiguous view
    with WrapperWatch() as watch:
        xt.t().reshape(12)       # t() is a layout change; this reshape must copy
    details = [v.detail for v in watch.violations]
    assert any("torch.Tensor.t " in d for d in details)
    assert any("torch.Tensor.reshape copied the data" in d for d in details)


FAILING = {
    "exception": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    if x.shape[0] == 2:
        raise RuntimeError("batch 2 is not supported")
""" + GOOD_BODY.split(":\n", 1)[1], "exception", "RuntimeError: batch 2 is not supported"),
    "timeout": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    if x.shape[0] == 2:
        time.sleep(600)
""" + GOOD_BODY.split(":\n", 1)[1], "timeout", "took longer than"),
    "worker_died": ("""\
def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    if x.shape[0] == 2:
        os._exit(3)
""" + GOOD_BODY.split(":\n", 1)[1], "worker_died", "exit code 3"),
}


@pytest.mark.parametrize("name", ["exception", "timeout",
                                  pytest.param("worker_died", marks=pytest.mark.slow)])
def test_failing_case_fails_alone(name, tmp_path):
    """Case 2 fails (first, so the worker must recover); case 1 still runs and passes."""
    body, kind, text = FAILING[name]
    result = bench(make_package(tmp_path, body), case_ids=[2, 1], timeout_s=10.0)
    failed, passed = result.run(2, PACKAGE_VARIANT), result.run(1, PACKAGE_VARIANT)
    assert failed.status == "runtime_fail" and f"{kind}: " in failed.error
    assert text in failed.error
    assert passed.status == "pass", passed.error
    if kind == "exception":
        assert "cann_bench/__init__.py:" in failed.error  # where it was raised


def test_import_error_fails_every_case_without_stopping_the_run(tmp_path):
    pkg = make_package(tmp_path, "import not_a_module_anywhere  # noqa\n" + GOOD_BODY)
    result = bench(pkg)
    for case_id in (1, 2):
        run = result.run(case_id, PACKAGE_VARIANT)
        assert run.status == "runtime_fail" and "import_error: ModuleNotFoundError" in run.error
    assert result.summaries[0].summary.n_runtime_fail == 2


@pytest.mark.slow
def test_missing_operator_is_an_import_error(tmp_path):
    result = bench(make_package(tmp_path, "def other_op(x):\n    return x\n"), case_ids=[1])
    error = result.run(1, PACKAGE_VARIANT).error
    assert "import_error" in error and "no operator function 'fused_conv_tanh'" in error


def test_package_layouts(tmp_path):
    sub = tmp_path / "sub"
    (sub / "fused_conv_tanh").mkdir(parents=True)
    (sub / "fused_conv_tanh" / "__init__.py").write_text("")
    assert resolve_package(str(sub), "fused_conv_tanh").module == "fused_conv_tanh"
    own = tmp_path / "my_ops"
    own.mkdir()
    (own / "__init__.py").write_text("")
    src = resolve_package(str(own), "fused_conv_tanh")
    assert (src.module, src.path) == ("my_ops", str(tmp_path.resolve()))
    assert resolve_package(str(GOOD), "fused_conv_tanh").module == "cann_bench"
    with pytest.raises(ValueError, match="holds no cann_bench/ package"):
        resolve_package(str(tmp_path / "sub" / "fused_conv_tanh" / ".."), "other")
    with pytest.raises(ValueError, match="no installed module"):
        resolve_package("definitely_not_installed_pkg", "fused_conv_tanh")


def test_pip_installed_package(tmp_path, monkeypatch):
    """``pip install DIR`` works for a package with a pyproject, and the installed module is
    benched by name."""
    site, src = tmp_path / "site", tmp_path / "src"
    shutil.copytree(GOOD, src)  # the build writes beside the sources: not into the repo
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--no-index", "--target", str(site), str(src)],
                   check=True, capture_output=True, cwd=tmp_path)
    assert (site / "cann_bench" / "conv1x1.py").is_file()
    monkeypatch.syspath_prepend(str(site))
    result = bench("cann_bench", case_ids=[1])
    run = result.run(1, PACKAGE_VARIANT)
    assert run.status == "pass", run.error


@pytest.mark.parametrize("args, message", [
    (["--package", str(GOOD), "--variant", "semi"], "--variant cannot go with --package"),
    (["--package", str(GOOD), "--tune"], "--tune cannot go with --package"),
    (["--package", str(GOOD), "--timeout", "0"], "timeout must be > 0"),
    (["--package", "no/such/dir"], "no such directory"),
    (["--package", str(TASK_FILE)], "not a directory"),
])
def test_package_argument_errors(args, message, capsys):
    assert main(["bench", str(TASK_FILE), *args]) == 2
    assert message in capsys.readouterr().out


def test_timeout_needs_package(capsys):
    assert main(["bench", "fused_conv_tanh", "--cases", "1", "--timeout", "5"]) == 2
    assert "--timeout applies to --package runs only" in capsys.readouterr().out


def test_example_package_routes_every_dtype():
    """examples/cann_bench_asc: an fp16, an fp32 and a bf16 case (classes c1, c2, c3) pass
    (fused_conv_sigmoid shares the routing and the host code; its 24 cases were run by hand)."""
    result = bench(EXAMPLE, case_ids=[1, 12, 13], task_file="fused_conv_tanh")
    for case_id in (1, 12, 13):
        run = result.run(case_id, PACKAGE_VARIANT)
        assert run.status == "pass" and not run.violations, run.error
        assert len(run.timing.kernels) == 2  # K1 convolution, K2 activation


def _drop_cann_bench_modules():
    for name in [m for m in sys.modules if m == "cann_bench" or m.startswith("cann_bench.")]:
        del sys.modules[name]


def test_example_dispatcher_refuses_unsupported_inputs(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    _drop_cann_bench_modules()
    try:
        import cann_bench

        assert {"fused_conv_tanh", "fused_conv_sigmoid"} <= set(dir(cann_bench))
        x = torch.zeros(1, 3, 8, 8, dtype=torch.float64)
        for op in (cann_bench.fused_conv_tanh, cann_bench.fused_conv_sigmoid):
            with pytest.raises(ValueError,
                               match="no implementation for inputs .4-D torch.float64"):
                op(x, torch.zeros(4, 3, 1, 1, dtype=torch.float64),
                   torch.zeros(4, dtype=torch.float64), [1, 1], [0, 0, 0, 0])
        with pytest.raises(ValueError, match="no implementation"):  # mixed dtypes
            cann_bench.fused_conv_tanh(x.float(), torch.zeros(4, 3, 1, 1),
                                       torch.zeros(4, dtype=torch.float16), [1, 1],
                                       [0, 0, 0, 0])
    finally:
        _drop_cann_bench_modules()


def test_case_error_kinds_are_checked():
    with pytest.raises(ValueError, match="unknown case error kind"):
        CaseError("oops", "x")


def test_package_against_a_variant_baseline():
    """A task whose baseline is an ascsim.ops variant (matmul_leaky_relu: unfused) runs that
    variant through the operator and the package through its caller, and scores the package
    against it; without the operator it says why it cannot."""
    from test_bench_runner import torch_stand_in_matmul

    from ascsim.bench.opinfo import normalize_info

    task = load_task("matmul_leaky_relu").select([3])
    called = []

    def package_call(refs, variant, soc):
        called.append(variant)
        out, info = torch_stand_in_matmul(*refs.inputs, **refs.case.kwargs(), variant="fused",
                                          soc=soc)
        return out, normalize_info(info)

    result = run_bench(task, torch_stand_in_matmul, (PACKAGE_VARIANT,), SOC, progress=False,
                       package_call=package_call)
    assert result.variants == ("unfused", PACKAGE_VARIANT) and called == [PACKAGE_VARIANT]
    run, base = result.run(3, PACKAGE_VARIANT), result.run(3, "unfused")
    assert run.status == "pass" and run.t_base_us == base.timing.device_time_us
    with pytest.raises(ValueError, match="baseline is its 'unfused' variant"):
        run_bench(task, None, (PACKAGE_VARIANT,), SOC, progress=False,
                  package_call=package_call)


def test_kernel_findings_are_noted(tmp_path):
    """A package kernel that the dynamic checks flag (here a race: the UB input is read with no
    MTE2 -> V synchronisation) keeps its score, and its notes say what was found."""
    import importlib.util

    from ascsim.bench.package import watched_call
    from ascsim.runner import install_frontends

    install_frontends()
    source = (GOOD / "cann_bench" / "conv1x1.py").read_text()
    racy = source.replace("    x_in.enque(x_ub)\n    x_ub = x_in.deque(x.dtype)\n", "", 1)
    assert racy != source
    path = tmp_path / "racy_conv1x1.py"
    path.write_text(racy)
    spec = importlib.util.spec_from_file_location("racy_conv1x1", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, w, b = torch.rand(1, 3, 8, 8), torch.rand(4, 3, 1, 1) - 0.5, torch.rand(4) - 0.5
    record = watched_call(module.fused_conv_tanh, (x, w, b),
                          {"strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1]},
                          ((torch.float32, (1, 4, 8, 8)),))
    assert record.violations == []
    assert any("race finding of the dynamic checks" in n for n in record.timing.notes)
    expected = torch.tanh(torch.nn.functional.conv2d(x, w, b))
    assert torch.allclose(record.out, expected, atol=1e-5)  # the simulator still computes it
