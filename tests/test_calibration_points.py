"""Calibration points: the schema and its errors, the kernels on small shapes, the evaluation.

The kernels check their own results against torch (they raise otherwise); these tests run them
on small shapes, check that the points file machinery reads, validates and reports, and that a
bad file is refused with the point and field named. No error threshold is asserted: the
numbers move whenever the cost model's constants do.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import yaml

from ascsim.calib.evaluate import StepCheck, summaries
from ascsim.calib.kernels import KERNELS
from ascsim.calib.measure import measure
from ascsim.calib.points import DEFAULT_POINTS, PointsError, load_points, parse_points
from ascsim.hw import DEFAULT_SOC
from ascsim.session import SESSION

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(autouse=True)
def restore_soc():
    yield
    SESSION.request_soc(DEFAULT_SOC)


def _calibration():
    spec = importlib.util.spec_from_file_location("ascsim_benchmarks_calibration_points",
                                                  BENCHMARKS / "calibration.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _point(**changes) -> dict:
    base = {"id": "p1", "kernel": "add", "soc": "Ascend910B1",
            "knobs": {"shape": [2048], "dtype": "float16", "cores": 2, "copy_len": 512},
            "published_us": 5.0, "source": "test", "holdout": False}
    base.update(changes)
    return base


SMALL = [
    _point(id="add-1", knobs={"shape": [4, 1024], "dtype": "float16", "cores": 2,
                              "copy_len": 1024}, quick=True),
    _point(id="add-2", knobs={"shape": [4, 1024], "dtype": "float16", "cores": 4,
                              "copy_len": 512, "buffers": 2, "l2_bypass": True},
           pipes_us={"vec": 0.1, "mte2": 1.0}, holdout=True, quick=True),
    _point(id="add-3", knobs={"shape": [4, 1024], "dtype": "float16", "cores": 4,
                              "copy_len": 512, "buffers": 2}, published_us=None),
    _point(id="gelu", kernel="activation", soc="Ascend950PR_9589",
           knobs={"shape": [8192], "act": "gelu", "cores": 2, "tile": 2048},
           pipes_us={"vec": 1.0, "aiv": 2.0}),
    _point(id="relu", kernel="activation", knobs={"shape": [64, 64], "act": "relu",
                                                  "cores": 4, "tile": 512}),
    _point(id="softmax", kernel="softmax", soc="Ascend950PR_9589",
           knobs={"shape": [16, 256], "cores": 4, "rows_per_copy": 2},
           pipes_us={"scalar": 1.0}),
    _point(id="ub-aligned", kernel="datacopy",
           knobs={"shape": [128, 512], "tile": [32, 128], "cores": 4, "path": "gm_to_ub"}),
    _point(id="ub-unaligned", kernel="datacopy",
           knobs={"shape": [128, 511], "tile": [32, 128], "cores": 4, "path": "gm_to_ub",
                  "buffers": 1}),
    _point(id="l1", kernel="datacopy",
           knobs={"shape": [128, 500], "tile": [32, 128], "cores": 2, "path": "gm_to_l1"}),
    _point(id="mm-norm", kernel="matmul_api",
           knobs={"mnk": [256, 512, 256], "split": [2, 3], "base": [128, 128, 64]},
           pipes_us={"mac": 1.0, "mte2": 2.0, "fixpipe": 0.5, "aicore": 3.0}),
    _point(id="mm-mdl", kernel="matmul_api",
           knobs={"mnk": [256, 512, 256], "split": [1, 3], "single": [128, 192],
                  "base": [128, 64, 64], "template": "mdl", "depth_a1": 4, "depth_b1": 4,
                  "step_ka": 2, "step_kb": 2, "rounds": 2, "const_tiling": True,
                  "unit_flag": True, "out_dtype": "float32", "cores": 2}),
    _point(id="mm-gelu-gm", kernel="matmul_act", soc="Ascend950PR_9589",
           knobs={"mnk": [256, 256, 128], "split": [2, 1], "base": [128, 128, 64],
                  "act": "gelu", "relay": "gm", "act_tile": 4096}),
    _point(id="mm-gelu-ub", kernel="matmul_act", soc="Ascend950PR_9589",
           knobs={"mnk": [256, 256, 128], "split": [2, 1], "base": [128, 128, 64],
                  "act": "gelu", "relay": "ub", "act_tile": 4096}),
    _point(id="mm-alone", kernel="matmul_api", soc="Ascend950PR_9589",
           knobs={"mnk": [256, 256, 128], "split": [1, 1], "base": [128, 128, 64],
                  "out_dtype": "float32"}),
]
SMALL_FILE = {
    "points": SMALL,
    "series": [{"id": "s", "title": "add steps", "steps": ["add-1", "add-3", "add-2"]}],
    "rankings": [{"id": "r", "title": "fusion", "variants": {
        "separate": ["mm-alone", "gelu"], "gm_relay": ["mm-gelu-gm"],
        "l0c_ub": ["mm-gelu-ub"]}}],
    "excluded": [{"id": "x", "source": "test", "reason": "too slow"}],
}


def test_shipped_points_file_is_valid():
    pointset = load_points(DEFAULT_POINTS)
    assert len(pointset.points) > 60
    ids = pointset.by_id()
    assert {p.kernel for p in pointset.points} == set(KERNELS)
    assert {"Ascend910B1", "Ascend950PR_9589", "Ascend910B4"} <= {p.soc for p in ids.values()}
    # The 22 points of the first calibration are there, with their hold-out rows.
    first = [p for p in pointset.points if p.soc == "Ascend910B4"]
    assert len(first) == 22 and sum(p.holdout for p in first) == 10
    assert all(p.source and (p.published_us or p.holdout) for p in pointset.points)
    assert pointset.series and pointset.rankings and pointset.excluded


def test_small_points_run_and_report(tmp_path, capsys):
    path = tmp_path / "points.yaml"
    path.write_text(yaml.safe_dump(SMALL_FILE))
    assert _calibration().main(["--points", str(path)]) == 0
    out = capsys.readouterr().out
    for p in SMALL:
        assert re.search(rf"^{re.escape(p['id'])}\s+\S+\s+\d+\s+[\d.]+\s", out, flags=re.M)
    assert re.search(r"^add-3 .*kept\s+trend", out, flags=re.M)
    assert re.search(r"pipes: .*vec [\d.]+/0.10 \([+-]\d+%\)", out)
    assert re.search(r"pipes: .*mac [\d.]+/1.00", out)
    assert re.search(r"total, fit\s+n=\d+\s+\|error\| median", out)
    assert re.search(r"total, hold-out\s+n=1 ", out)
    assert re.search(r"add-1 -> add-2: speed-up pub 1\.00x, sim [\d.]+x", out)
    assert re.search(r"model order: \w+ < \w+ < \w+; published order", out)
    assert "published points: |error| of the total median" in out


def test_quick_and_soc_selection(tmp_path, capsys):
    path = tmp_path / "points.yaml"
    path.write_text(yaml.safe_dump(SMALL_FILE))
    calibration = _calibration()
    assert calibration.main(["--points", str(path), "--quick"]) == 0
    out = capsys.readouterr().out
    assert "running 2 point(s)" in out
    assert calibration.main(["--points", str(path), "--soc", "Ascend950PR",
                             "--match", "mm-"]) == 0
    assert "running 3 point(s)" in capsys.readouterr().out
    assert calibration.main(["--points", str(path), "--match", "nothing"]) == 2


@pytest.mark.parametrize(("change", "message"), [
    ({"kernel": "nope"}, "point 'p1': field 'kernel': 'nope' is not one of"),
    ({"soc": "Ascend123"}, "point 'p1': field 'soc'"),
    ({"knobs": {"shape": [64], "dtype": "float16", "cores": 1, "copy_len": 64, "speed": 2}},
     "point 'p1': field 'knobs': unknown knob(s) ['speed']"),
    ({"knobs": {"shape": [64], "dtype": "float16"}},
     "point 'p1': field 'knobs': missing knob(s) ['copy_len', 'cores']"),
    ({"published_us": -3}, "point 'p1': field 'published_us' must be a positive number"),
    ({"published_us": "fast"}, "field 'published_us'"),
    ({"pipes_us": {"warp": 1.0}}, "point 'p1': field 'pipes_us.warp': unknown pipe"),
    ({"pipes_us": {"mte2": 0}}, "point 'p1': field 'pipes_us.mte2' must be a positive"),
    ({"holdout": "yes"}, "point 'p1': field 'holdout' must be true or false"),
    ({"reference": 1}, "point 'p1': field 'reference' must be true or false"),
    ({"colour": "red"}, "point 'p1': unknown field(s) ['colour']"),
    ({"source": ""}, "point 'p1': field 'source' must be a non-empty string"),
])
def test_bad_point_names_point_and_field(change, message):
    with pytest.raises(PointsError) as info:
        parse_points({"points": [_point(**change)]}, "f.yaml")
    assert message in str(info.value)
    assert str(info.value).startswith("f.yaml: ")


def test_bad_file_structure():
    missing = _point()
    del missing["holdout"]
    with pytest.raises(PointsError, match="point 'p1': field 'holdout' is missing"):
        parse_points({"points": [missing]})
    with pytest.raises(PointsError, match="point 'p1': field 'id' is used twice"):
        parse_points({"points": [_point(), _point()]})
    with pytest.raises(PointsError, match=r"series 's': field 'steps': 'p9' is not a point id"):
        parse_points({"points": [_point(), _point(id="p2")],
                      "series": [{"id": "s", "title": "t", "steps": ["p1", "p9"]}]})
    with pytest.raises(PointsError, match=r"ranking 'r': field 'variants.a': 'zz'"):
        parse_points({"points": [_point()], "rankings": [
            {"id": "r", "title": "t", "variants": {"a": ["zz"], "b": ["p1"]}}]})
    with pytest.raises(PointsError, match="unknown top-level key"):
        parse_points({"points": [_point()], "extra": 1})
    with pytest.raises(PointsError, match="point #1: expected a mapping"):
        parse_points({"points": ["add"]})


def test_unreadable_and_invalid_yaml(tmp_path):
    with pytest.raises(PointsError, match="cannot read"):
        load_points(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("points: [\n")
    with pytest.raises(PointsError, match="bad.yaml: not valid YAML"):
        load_points(bad)


def test_calibration_cli_reports_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"points": [_point(kernel="nope")]}))
    assert _calibration().main(["--points", str(bad)]) == 2
    assert "point 'p1': field 'kernel'" in capsys.readouterr().err


def test_knob_errors_from_the_kernels():
    SESSION.set_soc("Ascend910B1")
    with pytest.raises(ValueError, match="L0C -> UB.*does not exist on Ascend910B1"):
        KERNELS["matmul_act"].run(mnk=[256, 256, 128], split=[2, 1], base=[128, 128, 64],
                                  act="gelu", relay="ub")
    with pytest.raises(ValueError, match="regions of 128x100 split"):
        KERNELS["matmul_api"].run(mnk=[256, 256, 128], split=[2, 2], single=[128, 100],
                                  base=[128, 128, 64])
    with pytest.raises(ValueError, match="template 'fast'"):
        KERNELS["matmul_api"].run(mnk=[128, 128, 64], split=[1, 1], base=[128, 128, 64],
                                  template="fast")
    with pytest.raises(ValueError, match="softmax: 10 rows"):
        KERNELS["softmax"].run(shape=[10, 64], cores=4)


def test_measure_restores_the_soc_and_reads_pipes():
    SESSION.set_soc("Ascend910B4")
    point = parse_points({"points": [_point(soc="Ascend950PR_9589")]}).points[0]
    result = measure(point)
    assert SESSION.soc.name == "Ascend910B4"
    assert result.cores == 2 and result.total_us > 0
    assert result.pipes_us["vec"] > 0 and result.pipes_us["mte2"] > 0
    assert result.pipes_us["mac"] == 0.0
    assert summaries([result])[0].column == "total"


def test_step_check_verdicts():
    assert StepCheck("a", "b", 2.0, 2.3).ordered and StepCheck("a", "b", 2.0, 2.3).within
    assert not StepCheck("a", "b", 2.0, 3.0).within
    assert not StepCheck("a", "b", 2.0, 0.9).ordered
    assert StepCheck("a", "b", 1.001, 1.02).ordered


TIMING_ONLY_IDS = ("add-2", "relu", "softmax", "ub-unaligned", "l1", "mm-mdl", "mm-gelu-gm")


def test_timing_only_points_keep_their_times():
    points = {p.id: p for p in parse_points({"points": SMALL}).points}
    for pid in TIMING_ONLY_IDS:
        computed = measure(points[pid])
        with SESSION.values(False):
            skipped = measure(points[pid])
        assert skipped.total_us == computed.total_us, pid
        assert skipped.pipes_us == computed.pipes_us, pid


def test_timing_only_flag_of_the_calibration_script(tmp_path, capsys):
    path = tmp_path / "points.yaml"
    path.write_text(yaml.safe_dump(SMALL_FILE))
    calibration = _calibration()
    assert calibration.main(["--points", str(path), "--match", "mm-norm", "--timing-only"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TIMING ONLY") and "running 1 point(s)" in out
    assert not SESSION.timing_only
    with pytest.raises(SystemExit):
        calibration.main(["--timing-only"])


def test_report_from_saved_results(tmp_path, capsys):
    path = tmp_path / "points.yaml"
    path.write_text(yaml.safe_dump(SMALL_FILE))
    calibration = _calibration()
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert calibration.main(["--points", str(path), "--match", "add-", "--save",
                             str(first)]) == 0
    assert calibration.main(["--points", str(path), "--match", "relu", "--save",
                             str(second)]) == 0
    simulated = capsys.readouterr().out
    assert calibration.main(["--points", str(path), "--from-saved", str(first),
                             str(second)]) == 0
    out = capsys.readouterr().out
    for pid in ("add-1", "add-2", "add-3", "relu"):  # id, SoC, cores, simulated, published
        first_line = [re.search(rf"^{pid} .*$", text, flags=re.M).group(0).split()[:5]
                      for text in (simulated, out)]
        assert first_line[0] == first_line[1]
    assert "series s: add steps" in out and "mm-norm" not in out
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({"points": [_point(id="elsewhere")]}))
    assert calibration.main(["--points", str(other), "--from-saved", str(first)]) == 2
    assert "point 'add-1' is not in" in capsys.readouterr().err


def test_reference_points_are_summarised_apart_from_the_model_points():
    """A reference point (our kernels for a published design) stays out of fit / hold-out /
    all and gets a summary of its own."""
    from types import SimpleNamespace

    from ascsim.calib.points import Point

    def measured(pid, error, holdout=False, reference=False):
        point = Point(pid, "add", "Ascend910B1", {}, 10.0, "test", holdout,
                      reference=reference)
        return SimpleNamespace(point=point, error=error, pipe_error=lambda pipe: 0.0)

    results = [measured("fit", 0.1), measured("held", -0.2, holdout=True),
               measured("ref", 3.0, reference=True)]
    by_subset = {s.subset: s for s in summaries(results) if s.column == "total"}
    assert by_subset["fit"].errors == (0.1,)
    assert by_subset["hold-out"].errors == (-0.2,)
    assert by_subset["all"].errors == (0.1, -0.2)
    assert by_subset["reference"].errors == (3.0,)
    shipped = load_points(DEFAULT_POINTS)
    assert sorted(p.id for p in shipped.points if p.reference) == sorted(
        f"seed-convtanh-950-case{c}" for c in (1, 5, 7, 14, 18, 22))


def test_matmul_api_l1_fields_left_unset_are_the_samples():
    """A calibration Matmul leaves unset L1 fields as its sample does: NORM sets them to one
    block per load (asc-devkit ``SetL1``), MDL keeps the host tiling library's."""
    from ascsim.calib.matmul import NORM_L1, library_l1, plan_regions, resolve_l1
    from ascsim.session import SESSION

    mnk, base = (8192, 8192, 8192), (128, 256, 64)
    regions = plan_regions(mnk, (4, 6), (2048, 1536))
    unset = dict.fromkeys(NORM_L1)
    assert resolve_l1("norm", unset, mnk, regions, base, "float16") == NORM_L1
    with SESSION.using_soc("Ascend910B1"):
        library = library_l1(mnk, regions, base, "float16")
        assert library == {"depth_a1": 4, "depth_b1": 8, "step_ka": 2, "step_kb": 4}
        # The sample's case 5 sets A's and keeps the library's B side.
        given = dict(unset, depth_a1=16, step_ka=8)
        assert resolve_l1("mdl", given, mnk, regions, base, "float16") == {
            "depth_a1": 16, "depth_b1": 8, "step_ka": 8, "step_kb": 4}
