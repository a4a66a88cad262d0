"""Tuning kernels and operators: the example's tune_entry, matmul_tiling, tuned operator data."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import torch

from ascsim.tune import tuned
from ascsim.tune.matmul import MatmulProblem, host_tiling, time_tiling, tune_matmul_tiling
from ascsim.tune.target import parse_target

EXAMPLE = Path(__file__).parent.parent / "examples" / "matmul_leakyrelu.py"


def test_example_tune_entry_runs_checked_configurations():
    from ascsim.session import SESSION

    entry = parse_target(f"{EXAMPLE}:tune_entry")  # loaded as `ascsim tune` loads it
    with SESSION.using_soc("Ascend910B1"):
        default = entry()
        faster = entry(base_m=128, base_n=64, cores=16)
        # Both results are checked against torch inside run(); more cores, smaller blocks:
        # faster.
        assert faster.device_time_us < default.device_time_us
        assert faster.soc == "Ascend910B1"
        with pytest.raises(ValueError, match="partial blocks"):
            entry(base_m=512, base_n=64, cores=16)


def test_matmul_tiling_beats_or_matches_the_host_default():
    space = {"base_m": [-1, 64, 128], "base_n": [-1, 64], "cores": [-1, 8]}
    found = tune_matmul_tiling(256, 128, 256, soc="Ascend910B1", epilogue="leaky_relu",
                               space=space, budget=12, backend="inline")
    assert found.result.sampler == "grid"
    assert found.time_us <= found.default_time_us
    assert found.tiling.base_m == (found.config["base_m"] if found.config["base_m"] > 0
                                   else found.tiling.base_m)
    assert time_tiling(found.problem, **found.config).device_time_us == \
        pytest.approx(found.time_us)


def test_matmul_tiling_rejects_what_the_tiler_refuses():
    problem = MatmulProblem(256, 256, 256, soc="Ascend910B1", epilogue="leaky_relu")
    with pytest.raises(ValueError, match="does not fit"):
        host_tiling(problem, base_m=256, base_n=256)
    with pytest.raises(ValueError, match="epilogue"):
        MatmulProblem(16, 16, 16, epilogue="gelu")


def _mm_inputs():
    gen = torch.Generator().manual_seed(1)
    a = torch.randint(-3, 4, (128, 64), generator=gen).to(torch.float16)
    b = torch.randint(-3, 4, (64, 96), generator=gen).to(torch.float16)
    bias = torch.randint(-3, 4, (1, 96), generator=gen).to(torch.float32)
    pre = a.float() @ b.float() + bias
    return a, b, bias, torch.where(pre >= 0, pre, pre * 0.25)


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tuned, "DATA_DIR", tmp_path)
    tuned._CACHE.clear()
    yield tmp_path
    tuned._CACHE.clear()


def test_operators_run_on_stored_tuned_settings(data_dir):
    from ascsim.ops import matmul_leaky_relu
    from ascsim.ops.matmul_leaky_relu import shape_key

    a, b, bias, expected = _mm_inputs()
    key = shape_key(128, 96, 64, a.dtype)
    entry = tuned.TunedEntry("Ascend910B1", key, {
        "fused": tuned.TunedVariant({"base_m": 64, "base_n": 32, "cores": 4}, 5.0, 6.0),
        "unfused": tuned.TunedVariant({"base_m": 128}, 4.0, 7.0)})
    path = tuned.store("matmul_leaky_relu", [entry])
    assert path.parent == data_dir and "variant=\"auto\" runs" in path.read_text()
    c, info = matmul_leaky_relu(a, b, bias, 0.25, soc="Ascend910B1", return_report=True)
    assert info.variant == "unfused"  # the tuned fastest, without timing both
    assert info.notes == ("tuned: unfused (base_m=128)",)
    torch.testing.assert_close(c, expected)
    c, info = matmul_leaky_relu(a, b, bias, 0.25, variant="fused", soc="Ascend910B1",
                                return_report=True)
    assert info.notes == ("tuned: fused (base_m=64, base_n=32, cores=4)",)
    torch.testing.assert_close(c, expected)
    with tuned.ignored():
        _, plain = matmul_leaky_relu(a, b, bias, 0.25, variant="fused", soc="Ascend910B1",
                                     return_report=True)
    assert plain.notes == ()
    _, other = matmul_leaky_relu(a, b, bias, 0.25, variant="fused", soc="Ascend910B4",
                                 return_report=True)
    assert other.notes == ()  # tuned for another SoC only


def test_ignored_nests_and_belongs_to_the_thread_that_entered_it(data_dir):
    entry = tuned.TunedEntry("Ascend910B1", "k", {"fused": tuned.TunedVariant({"a": 1}, 1.0)})
    tuned.store("some_op", [entry])
    inside, seen = threading.Event(), []

    def other_thread():  # started before the block: its own context, not ignoring
        inside.wait(timeout=60)
        seen.append(tuned.lookup("some_op", "Ascend910B1", "k"))

    worker = threading.Thread(target=other_thread)
    worker.start()
    with tuned.ignored():
        with tuned.ignored():
            assert tuned.lookup("some_op", "Ascend910B1", "k") is None
        assert tuned.lookup("some_op", "Ascend910B1", "k") is None  # the outer block holds
        inside.set()
        worker.join(timeout=60)
    assert seen == [entry]
    assert tuned.lookup("some_op", "Ascend910B1", "k") == entry


def test_conv_tiling_knobs_keep_the_result():
    from ascsim.ops import fused_conv_tanh

    gen = torch.Generator().manual_seed(2)
    x = (torch.rand(1, 16, 12, 12, generator=gen) - 0.5).to(torch.float16)
    w = ((torch.rand(48, 16, 3, 3, generator=gen) - 0.5) * 0.2).to(torch.float16)
    bias = ((torch.rand(48, generator=gen) - 0.5) * 0.2).to(torch.float16)
    ref = torch.tanh(torch.nn.functional.conv2d(x.float(), w.float(), bias.float(), padding=1))
    for knobs in ({}, {"nt": 16, "pixels": 64}, {"nt": 48}):
        y, info = fused_conv_tanh(x, w, bias, [1, 1], [1, 1, 1, 1], variant="fused",
                                  soc="Ascend950PR_9579", return_report=True, tiling=knobs)
        torch.testing.assert_close(y.float(), ref, atol=2e-3, rtol=2e-3)
    with pytest.raises(ValueError, match="unknown tiling knobs"):
        fused_conv_tanh(x, w, bias, [1, 1], [1, 1, 1, 1], tiling={"rows": 2})
    with pytest.raises(ValueError, match="multiple of 16"):
        fused_conv_tanh(x, w, bias, [1, 1], [1, 1, 1, 1], tiling={"nt": 40})


def test_bench_report_says_which_cases_ran_tuned(data_dir):
    from ascsim.bench.report import is_tuned, to_markdown, tuned_note
    from ascsim.bench.runner import run_bench
    from ascsim.bench.tasks import load_task
    from ascsim.ops import matmul_leaky_relu
    from ascsim.ops.matmul_leaky_relu import shape_key

    task = load_task("matmul_leaky_relu").select([3, 4])  # 64x64x64 fp16, 77x129x33 bf16
    tuned.store("matmul_leaky_relu", [tuned.TunedEntry("Ascend910B1", shape_key(
        64, 64, 64, "float16"), {"fused": tuned.TunedVariant({"base_m": 32}, 3.0, 3.5)})])
    result = run_bench(task, matmul_leaky_relu, ("fused",), "Ascend910B1", progress=False)
    assert [is_tuned(r) for r in result.runs if r.variant == "fused"] == [True, False]
    assert all(r.status == "pass" for r in result.runs)  # tuned or not, precision holds
    assert tuned_note(result) == "Ran on tuned settings (marked †) — fused: cases 3."
    assert "tuned: fused (base_m=32)" in to_markdown(result)


@pytest.mark.parametrize("op,case_id,soc", [("matmul_leaky_relu", 3, "Ascend910B1"),
                                            ("fused_conv_tanh", 1, "Ascend950PR_9579")])
def test_tune_task_tunes_every_variant_from_the_defaults(op, case_id, soc):
    from ascsim.bench.tasks import load_task
    from ascsim.tune.operators import OP_TUNING, tune_task

    task = load_task(op).select([case_id])
    (result,) = tune_task(task, soc, budget=3, workers=1, backend="inline", store=False)
    assert result.case_id == case_id and result.entry.soc == soc
    assert set(result.entry.variants) == set(OP_TUNING[op].variants)
    for t in result.entry.variants.values():  # the defaults ran first: tuned <= default
        assert t.default_us is not None and t.time_us <= t.default_us
