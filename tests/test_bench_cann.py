"""cann-bench task folders read by ``ascsim bench``: loading and validation, inputs and golden
as cann-bench makes them, scoring against the metadata (HAP, t_hw_us, the below-floor
finding), packages on the loaded task's cases, and the whole-suite modes.

The task folders are small ones written for these tests in cann-bench's layout
(tests/data/cann_tasks: exp, gelu, rms_norm, with a metadata/950pr.json); the packages are
tests/data/cann_bench_exp (pyasc) and examples/cann_bench_examples (the examples' kernels).
The real suite is used only by the tests at the end, when ASCSIM_UPSTREAM_CANN_BENCH names a
cann-bench checkout.
"""

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import torch

from ascsim.bench.cann_refs import GoldenError, case_seed, make_cann_references, make_inputs
from ascsim.bench.cann_task import TaskFolderError, find_task, load_cann_task, metadata_hardware
from ascsim.bench.isolate import PackageRunner
from ascsim.bench.package import resolve_package
from ascsim.bench.report import _case_rows, to_markdown, write_reports
from ascsim.bench.runner import PACKAGE_VARIANT, run_bench
from ascsim.bench.score import anchors, floor_finding
from ascsim.cli import main

DATA = Path(__file__).parent / "data"
ROOT = DATA / "cann_tasks"
TASKS = ROOT / "tasks"
EXP = TASKS / "level1" / "exp"
EXP_PACKAGE = DATA / "cann_bench_exp"
EXAMPLES_PACKAGE = Path(__file__).parent.parent / "examples" / "cann_bench_examples"
SOC = "Ascend950PR_9579"
UPSTREAM = os.environ.get("ASCSIM_UPSTREAM_CANN_BENCH")


def copy_task(tmp_path: Path, name: str = "exp") -> Path:
    """A copy of a test task (and the metadata) to break one file of."""
    level = {"exp": "level1", "gelu": "level1", "rms_norm": "level2"}[name]
    dst = tmp_path / "tasks"
    shutil.copytree(TASKS / "metadata", dst / "metadata")
    shutil.copytree(TASKS / level / name, dst / level / name)
    return dst / level / name


def bench_package(task, package: Path, timeout_s: float = 120.0):
    source = resolve_package(str(package), task.name)
    with PackageRunner(task, source, SOC, timeout_s) as runner:
        return run_bench(task, None, (PACKAGE_VARIANT,), SOC, progress=False,
                         package_call=runner.call_case)


# --- loading ---------------------------------------------------------------------------------

def test_task_folder_loads_with_the_socs_baselines():
    task = load_cann_task(EXP, SOC)
    assert (task.name, task.proto, task.level, task.category) == ("exp", "Exp", "L1",
                                                                  "Elementwise")
    assert task.rel_path == "level1/exp" and task.hardware == "950pr"
    assert [c.case_id for c in task.cases] == [1, 2, 3]
    assert [c.size_class for c in task.cases] == ["S", "S", "M"]
    assert [(c.baseline_us, c.t_hw_us) for c in task.cases] == [(10.0, 1.0), (10.0, 1.0),
                                                                (None, 1.0)]
    assert task.cases[1].dtype == "float16" and task.cases[1].kwargs()["scale"] == 0.5
    assert [c.case_id for c in task.select(quick=True).cases] == [1, 2]


@pytest.mark.parametrize("soc, hw", [("Ascend950PR_9589", "950pr"), ("Ascend910B2", "910b2"),
                                     ("Ascend910_9381", "910b2"), ("Ascend910B1", None),
                                     ("Ascend910_9362", None), ("Ascend950DT_9572", None)])
def test_metadata_file_per_soc(soc, hw):
    assert metadata_hardware(soc) == hw


def test_other_socs_get_no_baseline_and_say_why():
    task = load_cann_task(EXP, "Ascend910B1")
    assert task.hardware is None and all(c.baseline_us is None for c in task.cases)
    assert "no cann-bench baseline for Ascend910B1" in task.metadata_note
    kin = load_cann_task(EXP, "Ascend910B2")   # kin of the 910B2, but no 910b2.json here
    assert kin.hardware is None and "910b2.json does not exist" in kin.metadata_note


def test_find_task_by_folder_schema_or_proto_name():
    assert find_task(ROOT, "rms_norm") == TASKS / "level2" / "rms_norm"
    assert find_task(ROOT, "RmsNorm") == TASKS / "level2" / "rms_norm"
    with pytest.raises(ValueError, match="no cann-bench task 'nope'"):
        find_task(ROOT, "nope")
    with pytest.raises(ValueError, match="no tasks or bench_lab directory"):
        find_task(DATA, "exp")


# --- bad folders: one clear error each --------------------------------------------------------

@pytest.mark.parametrize("missing", ["proto.yaml", "cases.yaml", "golden.py"])
def test_missing_file_is_named(tmp_path, missing):
    folder = copy_task(tmp_path)
    (folder / missing).unlink()
    with pytest.raises(TaskFolderError, match=f"{missing} is missing"):
        load_cann_task(folder, SOC)


@pytest.mark.parametrize("file, old, new, where", [
    ("cases.yaml", "dtype: [float16]", "dtype: [float17]", r"case 2\.dtype\[0\]: unknown dtype"),
    ("cases.yaml", "case_id: 2", "case_id: two", r"cases\[1\]\.case_id: must be a int"),
    ("cases.yaml", "- [4, 1024]", "- [4, 1024]\n  - [3]", r"case 2\.input_shape: 2 shapes for "
     "the 1 inputs"),
    ("cases.yaml", "value_range: [-3, 3]", "value_range: {x: [-3, 3]}",
     r"case 2\.value_range: must be \[lo, hi\]"),
    ("cases.yaml", "operator: Exp\n  case_id: 3", "operator: Exq\n  case_id: 3",
     r"case 3\.operator: 'Exq' is not the proto's operator 'Exp'"),
    ("cases.yaml", "case_id: 3", "case_id: 2", r"case_id: repeated ids \[2\]"),
    ("proto.yaml", "schema: exp(", "schema: (", r"operator\.schema: does not start"),
    ("proto.yaml", "  inputs:\n  - name: x", "  inputs:\n  - nom: x",
     r"operator\.inputs\[0\]: the field 'name' is missing"),
    ("proto.yaml", "  category: Elementwise", "  category: Elementwise\n"
     "  precision_thresholds: {float32: fast}", r"operator\.precision_thresholds: must map"),
])
def test_wrong_field_is_named(tmp_path, file, old, new, where):
    folder = copy_task(tmp_path)
    path = folder / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(TaskFolderError, match=where) as info:
        load_cann_task(folder, SOC)
    assert str(path) in str(info.value)


def test_golden_that_raises_names_file_and_case(tmp_path):
    folder = copy_task(tmp_path)
    (folder / "golden.py").write_text(
        "import torch\n\n\ndef exp(x: torch.Tensor, base: float = -1.0, scale: float = 1.0,"
        " shift: float = 0.0) -> torch.Tensor:\n    raise RuntimeError('broken golden')\n")
    task = load_cann_task(folder, SOC)
    with pytest.raises(GoldenError, match=r"golden\.py on case 1: golden raised RuntimeError: "
                       "broken golden"):
        make_cann_references(task, task.cases[0])


def test_golden_without_the_function_or_not_importing(tmp_path):
    folder = copy_task(tmp_path)
    golden = folder / "golden.py"
    golden.write_text("def expo(x):\n    return x\n")
    task = load_cann_task(folder, SOC)
    with pytest.raises(TaskFolderError, match="no function 'exp'"):
        make_cann_references(task, task.cases[0])
    other = copy_task(tmp_path / "b")
    (other / "golden.py").write_text("import not_a_module_anywhere\n")
    task = load_cann_task(other, SOC)
    with pytest.raises(TaskFolderError, match="does not import: ModuleNotFoundError"):
        make_cann_references(task, task.cases[0])


def test_cli_bad_folder_one_error_line(tmp_path, capsys):
    folder = copy_task(tmp_path)
    (folder / "golden.py").write_text("import torch\n\n\ndef exp(x: torch.Tensor, **attrs):\n"
                                      "    raise ValueError('no')\n")
    assert main(["bench", str(folder), "--package", str(EXP_PACKAGE)]) == 2
    out = capsys.readouterr().out
    assert "golden raised ValueError: no" in out and "Traceback" not in out


# --- inputs and references -------------------------------------------------------------------

def test_seed_is_cann_benchs():
    digest = hashlib.sha256(b"level1/exp_2").digest()
    assert case_seed("level1/exp", 2) == int.from_bytes(digest[:8], "big") % 2**31
    assert case_seed("level1/exp", 2, draw=1) == case_seed("level1/exp", 2) + 1


def test_inputs_are_deterministic_and_in_range():
    task = load_cann_task(EXP, SOC)
    a, b = make_inputs(task, task.cases[1]), make_inputs(task, task.cases[1])
    assert torch.equal(a[0], b[0]) and a[0].dtype == torch.float16
    assert a[0].min() >= -3 and a[0].max() <= 3 and a[0].std() > 1
    assert not torch.equal(make_inputs(task, task.cases[1], draw=1)[0], a[0])
    fresh = make_cann_references(task, task.cases[1], draw=1).inputs[0]
    assert torch.equal(fresh, make_inputs(task, task.cases[1], draw=1)[0] + 0.01)
    gen = torch.Generator().manual_seed(case_seed("level1/exp", 2))
    u = torch.rand((4, 1024), dtype=torch.float64, generator=gen)
    assert torch.equal(a[0], (u * 6 - 3).to(torch.float16))   # cann-bench's float draw
    gen = torch.Generator().manual_seed(case_seed("level1/exp", 1))   # fp32 keeps more bits
    u = torch.rand((8, 256), dtype=torch.float64, generator=gen)
    fp32 = torch.finfo(torch.float32)
    assert torch.equal(make_inputs(task, task.cases[0])[0],
                       torch.clamp(u * 4 + -2, fp32.min, fp32.max).to(torch.float32))


def _task_with(tmp_path, inputs_yaml: str, case_yaml: str, golden: str) -> Path:
    folder = tmp_path / "tasks" / "level1" / "mix"
    folder.mkdir(parents=True)
    (folder / "proto.yaml").write_text(
        "operator:\n  name: Mix\n  category: Misc\n  difficulty: L1\n"
        f"  inputs:\n{inputs_yaml}  outputs:\n  - name: y\n    dtype: [float32]\n"
        "  schema: mix(Tensor a, Tensor b, Tensor c=None) -> Tensor y\n")
    (folder / "cases.yaml").write_text("cases:\n" + case_yaml)
    (folder / "golden.py").write_text(golden)
    return folder


def test_integer_bool_and_omitted_inputs(tmp_path):
    folder = _task_with(
        tmp_path,
        "  - name: a\n    dtype: [int32]\n  - name: b\n    dtype: [bool]\n"
        "  - name: c\n    dtype: [float32]\n    optional: true\n",
        "- case_id: 1\n  input_shape: [[64], [64], null]\n  dtype: [int32, bool, float32]\n"
        "  value_range: [[-5, 5], [0, 1], [0, 1]]\n  note: S-x\n"
        "- case_id: 2\n  input_shape: [[64], [64]]\n  dtype: [int32, bool]\n"
        "  value_range: [[3, 3], [1, 1]]\n  note: S-y\n",
        "import torch\n\n\ndef mix(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor = None)"
        " -> torch.Tensor:\n    assert c is None\n    return torch.where(b, a, -a).float()\n")
    task = load_cann_task(folder, SOC)
    a, b, c = make_inputs(task, task.cases[0])
    assert a.dtype == torch.int32 and a.min() >= -5 and a.max() <= 5 and len(a.unique()) > 5
    assert b.dtype == torch.bool and b.any() and not b.all() and c is None
    a2, b2 = make_inputs(task, task.cases[1])
    assert (a2 == 3).all() and b2.all()
    refs = make_cann_references(task, task.cases[0])
    assert refs.expected == ((torch.float32, (64,)),)
    assert refs.verdict(refs.reference[0]).passed
    assert not refs.verdict(refs.reference[0] + 1).passed


def test_truth_in_fp64_and_reference_in_the_case_dtype():
    task = load_cann_task(EXP, SOC)
    refs = make_cann_references(task, task.cases[1])
    assert refs.truth[0].dtype == torch.float64 and refs.reference[0].dtype == torch.float16
    x = refs.inputs[0].double()
    assert torch.allclose(refs.truth[0], torch.exp(x * 0.5 + 0.25))
    assert refs.verdict(refs.reference[0]).passed
    assert not refs.verdict(refs.reference[0] * 1.01).passed


def test_proto_threshold_replaces_the_dtypes_T(tmp_path):
    folder = copy_task(tmp_path)
    proto = folder / "proto.yaml"
    proto.write_text(proto.read_text().replace(
        "  category: Elementwise", "  category: Elementwise\n  precision_thresholds: "
        "{float32: 0.005}"))
    strict = make_cann_references(load_cann_task(EXP, SOC), load_cann_task(EXP, SOC).cases[0])
    loose_task = load_cann_task(folder, SOC)
    loose = make_cann_references(loose_task, loose_task.cases[0])
    off = strict.reference[0] * 1.002    # 0.2 %: over fp32's T, under the task's own T
    assert not strict.verdict(off).passed
    assert loose.verdict(off).passed


# --- scoring -----------------------------------------------------------------------------------

def test_anchors_use_the_published_floor_and_cann_benchs_fallback():
    assert anchors(25.0, 3.0) == (25.0, 3.0)
    assert anchors(None, 1.5) == (15.0, 1.5)       # max(10·T_HW, 10 µs)
    assert anchors(None, 0.5) == (10.0, 0.5)
    assert anchors(30.0, None) == (30.0, 3.0)      # no published floor: the estimate
    assert anchors(None, None) == (None, None)
    assert floor_finding(2.0, 1.0) is None and floor_finding(2.0, None) is None
    assert "below the case's hardware floor" in floor_finding(0.5, 1.0)


def test_below_floor_is_a_finding(tmp_path):
    folder = copy_task(tmp_path)
    meta = folder.parent.parent / "metadata" / "950pr.json"
    data = json.loads(meta.read_text())
    data["level1"]["exp"]["1"] = {"baseline_perf_us": 500.0, "t_hw_us": 50.0}
    meta.write_text(json.dumps(data))
    task = load_cann_task(folder, SOC).select([1])
    result = bench_package(task, EXP_PACKAGE)
    run = result.runs[0]
    assert run.status == "pass" and run.t_hw_us == 50.0
    assert run.timing.device_time_us < 50.0
    assert "below the case's hardware floor t_hw_us 50" in run.below_floor
    assert run.sim_over_t_hw == pytest.approx(run.timing.device_time_us / 50.0)
    md = to_markdown(result)
    assert "package finding: simulated" in md and "below floor" in md
    assert "T_HW = the case's t_hw_us from cann-bench's metadata" in md


def test_report_columns_and_plot(tmp_path):
    """The per-case table gives baseline, T_HW, simulated time, speed-up, sim/T_HW, the
    precision verdict and the bound pipe; the time plot draws the baseline and T_HW."""
    task = load_cann_task(EXP, SOC).select([1])
    result = bench_package(task, EXP_PACKAGE)
    head, rows = _case_rows(result)
    row = dict(zip(head, rows[0]))
    run = result.runs[0]
    assert row["base µs"] == "10.00" and row["T_HW µs"] == "1.00"
    assert row["package µs"] == f"{run.timing.device_time_us:.2f}"
    assert row["package ×"] == f"{run.speedup:.2f}"
    assert row["package sim / T_HW"] == f"{run.sim_over_t_hw:.2f}"
    assert row["package precision"] == "pass"
    assert row["package bound pipe"] in ("Vector", "MTE2", "MTE3", "Scalar")
    paths = write_reports(result, tmp_path)
    page = paths["html"].read_text()
    assert "sim / T_HW" in page and "bound pipe" in page and "data:image/png" in page


# --- packages ------------------------------------------------------------------------------------

def test_package_scores_every_case(tmp_path, capsys):
    code = main(["bench", str(EXP), "--package", str(EXP_PACKAGE), "--report", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads((tmp_path / f"exp_{SOC}.json").read_text())
    assert data["task"]["kind"] == "cann_bench" and data["task"]["rel_path"] == "level1/exp"
    assert "cann-bench metadata" in data["baseline_note"]
    for run in data["runs"]:
        assert run["status"] == "pass" and run["violations"] == []
        assert run["t_hw_us"] == 1.0 and run["below_floor"] is None
        assert run["t_base_us"] == 10.0   # case 3: the fallback max(10·T_HW, 10 µs)
        assert run["timing"]["kernels"][0]["name"] == "exp_kernel"
        assert run["sim_over_t_hw"] == pytest.approx(run["timing"]["device_time_us"])


BROKEN = {
    "import_error": ("import not_a_module_anywhere\n", "import_error: ModuleNotFoundError"),
    "wrong_dtype": ("import torch\nfrom cann_bench.impl import exp as _exp\n\n\n"
                    "def exp(x, base=-1.0, scale=1.0, shift=0.0):\n"
                    "    return _exp(x.view(torch.int32).view(x.dtype), base, scale, shift)"
                    ".view(torch.int32)\n", "bad_output"),
    "exception": ("def exp(x, **attrs):\n    raise RuntimeError('kernel not written yet')\n",
                  "exception: RuntimeError: kernel not written yet"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_broken_package_fails_per_case(tmp_path, kind):
    init, message = BROKEN[kind]
    pkg = tmp_path / "pkg" / "cann_bench"
    pkg.mkdir(parents=True)
    shutil.copy(EXP_PACKAGE / "cann_bench" / "__init__.py", pkg / "impl.py")
    (pkg / "__init__.py").write_text(init)
    task = load_cann_task(EXP, SOC).select([1, 2])
    result = bench_package(task, tmp_path / "pkg")
    assert [r.status for r in result.runs] == ["runtime_fail", "runtime_fail"]
    assert all(message in r.error for r in result.runs), [r.error for r in result.runs]


def test_input_independent_result_is_not_a_cache(tmp_path):
    """An operator whose right answer does not depend on the input values (here exp with
    scale 0: e^0.5 everywhere; cann-bench's exp cases 11, 17 and 20 have base 1, so 1
    everywhere) returns the same values on both calls, and that is correct, not a cache."""
    folder = copy_task(tmp_path)
    (folder / "cases.yaml").write_text(
        "cases:\n- operator: Exp\n  case_id: 1\n  input_shape: [[8, 256]]\n"
        "  dtype: [float32]\n  attrs: {base: -1.0, scale: 0.0, shift: 0.5}\n"
        "  value_range: [-2, 2]\n  note: S-constant\n")
    run = bench_package(load_cann_task(folder, SOC), EXP_PACKAGE).runs[0]
    assert run.status == "pass" and run.violations == (), run.error


def test_no_example_time_below_t_hw(tmp_path):
    """Our examples' kernels (examples/cann_bench_examples) and the test package on the test
    tasks: every simulated time is at or above the case's t_hw_us, and no finding says
    otherwise."""
    timed = 0
    for name, package in (("exp", EXP_PACKAGE), ("rms_norm", EXAMPLES_PACKAGE),
                          ("gelu", EXAMPLES_PACKAGE)):
        result = bench_package(load_cann_task(find_task(ROOT, name), SOC), package)
        for run in result.runs:
            if run.timing is None:
                assert name == "gelu" and "approximate='none'" in run.error
                continue
            timed += 1
            assert run.status == "pass", (name, run.case_id, run.precision.why)
            assert run.timing.device_time_us >= run.t_hw_us and run.below_floor is None
    assert timed == 7


def _builtin_floor_misses(name: str, case_ids=None) -> tuple[int, list]:
    """Every variant of ascsim.ops's operator on the built-in task's cases, timed without
    values: (runs, [(case, variant, simulated µs, T_HW)] of those below T_HW). T_HW is the
    case's published t_hw_us, else max(0.1·T_base, 1 µs); matmul_leaky_relu's T_base is its
    unfused variant's simulated time."""
    import ascsim.ops
    from ascsim.bench.references import make_inputs
    from ascsim.bench.tasks import load_task

    task = load_task(name).select(case_ids)
    op = getattr(ascsim.ops, name)
    runs, misses = 0, []
    for case in task.cases:
        inputs = make_inputs(task, case)
        times = {v: op(*inputs, **case.kwargs(), variant=v, soc=SOC, return_report=True,
                       timing_only=True)[1].device_time_us
                 for v in ("unfused", "semi", "fused")}
        base = case.baseline_us if task.baseline_variant is None else times[task.baseline_variant]
        _, thw = anchors(base, case.t_hw_us)
        runs += len(times)
        misses += [(case.case_id, v, t, thw) for v, t in times.items() if t < thw]
    return runs, misses


@pytest.mark.parametrize(("name", "cases"), [("fused_conv_tanh", [1]),
                                             ("matmul_leaky_relu", [3, 4, 9, 10])])
def test_no_builtin_operator_time_below_t_hw(name, cases):
    """ascsim.ops's operators on cann-bench's conv cases (and our matmul task): no variant's
    simulated time is below the case's hardware floor (small cases here; all under -m slow)."""
    runs, misses = _builtin_floor_misses(name, cases)
    assert runs == 3 * len(cases) and misses == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fused_conv_tanh", "fused_conv_sigmoid",
                                  "matmul_leaky_relu"])
def test_no_builtin_operator_time_below_t_hw_on_every_case(name):
    runs, misses = _builtin_floor_misses(name)
    assert runs > 0 and misses == []


# --- whole suite ---------------------------------------------------------------------------------

def test_list_shows_every_task_and_what_implements_it(capsys):
    code = main(["bench", "--cann-bench", str(ROOT), "--list", "--package",
                 str(EXAMPLES_PACKAGE)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "3 task folders, 3 loaded, 8 cases" in out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if "tasks/" in line}
    assert "package" in rows["tasks/level2/rms_norm"] and "package" in rows["tasks/level1/gelu"]
    assert "package" not in rows["tasks/level1/exp"]


def test_all_runs_every_task_the_package_implements(tmp_path, capsys):
    code = main(["bench", "--cann-bench", str(ROOT), "--all", "--package",
                 str(EXAMPLES_PACKAGE), "--report", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1, out    # gelu case 3 (exact GELU) is refused by the example
    summary = json.loads((tmp_path / f"cann_bench_suite_{SOC}.json").read_text())
    tasks = {r["task"]: r for r in summary["tasks"]}
    assert sorted(tasks) == ["gelu", "rms_norm"]
    assert tasks["rms_norm"]["n_runtime_fail"] == 0 and tasks["gelu"]["n_runtime_fail"] == 1
    assert (tmp_path / "rms_norm" / f"rms_norm_{SOC}.html").is_file()


def test_list_and_all_need_the_root(capsys):
    assert main(["bench", "--list"]) == 2
    assert "--list and --all need --cann-bench ROOT" in capsys.readouterr().out


# --- the real suite (skipped unless ASCSIM_UPSTREAM_CANN_BENCH names a checkout) -----------------

needs_upstream = pytest.mark.skipif(not UPSTREAM, reason="ASCSIM_UPSTREAM_CANN_BENCH not set")


@needs_upstream
def test_upstream_tasks_all_load_with_both_metadata_files():
    from ascsim.bench.cann_task import task_folders

    folders = [f for f in task_folders(UPSTREAM, ("tasks",)) if f.parent.name.startswith("level")]
    assert len(folders) == 53
    for soc in ("Ascend950PR_9579", "Ascend910B2"):
        for folder in folders:
            task = load_cann_task(folder, soc)
            assert len(task.cases) == 20
            assert all(c.baseline_us and c.t_hw_us for c in task.cases), (soc, task.rel_path)
            assert all(c.t_hw_us <= c.baseline_us for c in task.cases), (soc, task.rel_path)


@needs_upstream
@pytest.mark.slow
def test_upstream_rms_norm_case_not_below_t_hw():
    """examples/rmsnorm.py's kernel on the real rms_norm case 2 (fp32, 32x128x1024) with the
    real 950pr metadata: it passes precision and is not faster than t_hw_us."""
    task = load_cann_task(find_task(UPSTREAM, "rms_norm"), SOC).select([2])
    run = bench_package(task, EXAMPLES_PACKAGE, timeout_s=1200.0).runs[0]
    assert run.status == "pass", run.error or run.precision.why
    assert run.timing.device_time_us >= run.t_hw_us and run.below_floor is None


def test_builtin_task_case_takes_a_published_floor(tmp_path):
    """A built-in task file may carry cann-bench's t_hw_us per case; it then replaces the
    estimate max(0.1·T_base, 1 µs) in HAP and in the floor finding."""
    import yaml

    from ascsim.bench.tasks import load_task

    doc = yaml.safe_load((DATA / "tiny_conv_tanh.yaml").read_text())
    doc["cases"][0]["t_hw_us"] = 7.5
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(doc))
    task = load_task(path)
    assert task.cases[0].t_hw_us == 7.5 and task.cases[1].t_hw_us is None
    assert anchors(task.cases[0].baseline_us, task.cases[0].t_hw_us) == (
        task.cases[0].baseline_us, 7.5)
    doc["cases"][0]["t_hw_us"] = -1
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ValueError, match="t_hw_us must be > 0"):
        load_task(path)


def test_golden_table_script_rows_and_resume(tmp_path):
    """benchmarks/cann_bench_tasks.py on the test tasks: one row per task, every case's
    references made, rows kept in --out and not redone by a second run."""
    import subprocess
    import sys

    script = Path(__file__).parent.parent / "benchmarks" / "cann_bench_tasks.py"
    out = tmp_path / "rows.jsonl"
    cmd = [sys.executable, str(script), str(ROOT), "--out", str(out), "--tasks", "exp,gelu"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["task"], r["cases"], r["ok"]) for r in rows] == [("level1/exp", 3, 3),
                                                                 ("level1/gelu", 3, 3)]
    assert all(r["peak_rss_mb"] > 0 and len(r["case_seconds"]) == 3 for r in rows)
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and len(out.read_text().splitlines()) == 2
    assert "2 tasks (2 with every case's references), 6 cases" in again.stdout
