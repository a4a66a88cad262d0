"""Bench task files: the shipped cases, their validation, inputs and goldens."""

import copy

import pytest
import torch
import torch.nn.functional as F
import yaml

from ascsim.bench.references import make_inputs, make_references
from ascsim.bench.tasks import TASK_DIR, available_tasks, load_task, task_from_doc


def _doc(name):
    with open(TASK_DIR / f"{name}.yaml") as fh:
        return yaml.safe_load(fh)


def test_shipped_tasks_load():
    assert available_tasks() == ["fused_conv_sigmoid", "fused_conv_tanh", "matmul_leaky_relu"]
    for name in ("fused_conv_tanh", "fused_conv_sigmoid"):
        t = load_task(name)
        assert [c.case_id for c in t.cases] == list(range(1, 25))
        counts = {d: sum(c.dtype == d for c in t.cases) for d in ("float16", "float32",
                                                                   "bfloat16")}
        assert counts == {"float16": 11, "float32": 7, "bfloat16": 6}
        assert t.baseline_source == "published" and t.baseline_hardware == "950pr"
        assert t.case(17).output_shape == (1, 64, 34, 34)
        assert t.case(10).output_shape == (1, 64, 112, 112)


def test_sigmoid_twin_differs_only_where_the_reference_says():
    tanh, sig = load_task("fused_conv_tanh"), load_task("fused_conv_sigmoid")
    assert tanh.case(5).baseline_us == 26.62 and sig.case(14).baseline_us == 54.38
    assert sig.case(1).baseline_us == 24.65 and sig.case(22).baseline_us == 40.42
    for a, b in zip(tanh.cases, sig.cases):
        assert (a.input_shapes, a.dtypes, a.attrs, a.output_shape) == \
            (b.input_shapes, b.dtypes, b.attrs, b.output_shape)
        assert (a.value_ranges != b.value_ranges) == (a.case_id in (3, 7, 13))
        assert (a.note != b.note) == (a.case_id == 7)
    assert tanh.case(3).value_ranges == ((-0.5, 0.5), (-0.01, 0.01), (-1, 1))
    assert sig.case(3).value_ranges == ((-0.1, 0.1), (-0.1, 0.1), (-0.01, 0.01))


def test_seed_times_are_a_reference_not_a_baseline():
    task = load_task("fused_conv_tanh")
    (seed,) = task.references
    assert seed.name == "seed" and seed.time_us(14) == 20.9 and seed.time_us(2) is None
    assert task.select([5, 2]).references[0].times == ((5, 3.4),)
    doc = _doc("fused_conv_tanh")
    doc["cases"] = [c for c in doc["cases"] if c["case_id"] in (1, 2)]
    assert task_from_doc(doc).references[0].times == ((1, 3.8),)


def test_conv_output_shapes_agree_with_torch():
    for name in ("fused_conv_tanh", "fused_conv_sigmoid"):
        for c in load_task(name).cases:
            x, w, _ = (torch.empty(s, device="meta") for s in c.input_shapes)
            a = c.kwargs()
            p = a["pads"]
            y = F.conv2d(F.pad(x, (p[2], p[3], p[0], p[1])), w, stride=a["strides"],
                         dilation=a["dilations"])
            assert tuple(y.shape) == c.output_shape, c.case_id


def test_matmul_task():
    t = load_task("matmul_leaky_relu")
    assert t.baseline_source == "variant" and t.baseline_variant == "unfused"
    assert 10 <= len(t.cases) <= 14
    big = [c for c in t.cases if c.input_shapes[0] == (1024, 640) and c.attr("alpha") == 0.001]
    assert {c.dtype for c in big} == {"float16", "bfloat16"}
    assert all(c.baseline_us is None and c.output_dtype == "float32" for c in t.cases)
    assert all(c.dtypes[2] == "float32" for c in t.cases)
    assert any(any(d % 16 for d in (c.input_shapes[0] + c.input_shapes[1])) for c in t.cases)
    assert any(c.input_shapes[0][0] >= 64 * c.input_shapes[1][1] for c in t.cases)  # tall-skinny
    assert {c.size_class for c in t.cases} == {"S", "M", "L"}


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.update(output_shape=[1, 32, 15, 16]), "contract formula"),
    (lambda c: c.update(value_range=[[1, -1], [0, 1], [0, 1]]), "lo < hi"),
    (lambda c: c.update(value_range=[[0, 1], [0], [0, 1]]), "two numbers"),
    (lambda c: c.update(dtype="float64"), "dtype"),
    (lambda c: c["attrs"].update(strides=[3, 3]), "stride=3"),
    (lambda c: c["attrs"].update(pads=[1, 1]), "pads"),
    (lambda c: c.update(input_shape=[[1, 32, 16, 16], [32, 16, 3, 3], [32]]), "channels"),
    (lambda c: c.pop("baseline_us"), "baseline_us"),
    (lambda c: c.update(note="X-float16"), "size class"),
])
def test_validation_rejects(edit, message):
    doc = _doc("fused_conv_tanh")
    case = copy.deepcopy(doc["cases"][0])
    edit(case)
    doc["cases"] = [case]
    with pytest.raises(ValueError, match=message):
        task_from_doc(doc)


def test_matmul_validation_and_duplicates():
    doc = _doc("matmul_leaky_relu")
    bad = copy.deepcopy(doc)
    bad["cases"][0]["attrs"]["alpha"] = 1.5
    with pytest.raises(ValueError, match="alpha"):
        task_from_doc(bad)
    bad = copy.deepcopy(doc)
    bad["cases"][0]["input_shape"][2] = [256]
    with pytest.raises(ValueError, match=r"bias \[1,N\]"):
        task_from_doc(bad)
    bad = copy.deepcopy(doc)
    bad["cases"].append(bad["cases"][0])
    with pytest.raises(ValueError, match="unique"):
        task_from_doc(bad)
    with pytest.raises(ValueError, match="no bench task"):
        load_task("conv_tahn")


def test_select_and_quick():
    t = load_task("fused_conv_tanh")
    assert [c.case_id for c in t.select([5, 2]).cases] == [5, 2]
    assert all(c.size_class == "S" for c in t.select(quick=True).cases)
    with pytest.raises(KeyError):
        t.select([99])


def test_inputs_seeded_in_range_and_typed():
    t = load_task("fused_conv_tanh")
    c = t.case(4)
    a, b = make_inputs(t, c), make_inputs(t, c)
    for x, y, (lo, hi) in zip(a, b, c.value_ranges):
        assert torch.equal(x, y) and x.dtype == torch.bfloat16
        # the cast after scaling may round onto the dtype's nearest value past a bound
        lo_r, hi_r = (torch.tensor(v, dtype=torch.float64).to(x.dtype).item() for v in (lo, hi))
        assert lo_r <= x.min().item() and x.max().item() <= hi_r
        assert x.float().std() > (hi - lo) / 4  # spread over the range, not constant
    other = make_inputs(t, t.case(24))  # same ranges and dtype, different seed
    assert not torch.equal(a[2][:64], other[2][:64])


def test_golden_asymmetric_pads_and_references():
    doc = _doc("fused_conv_tanh")
    case = copy.deepcopy(doc["cases"][0])
    case["attrs"]["pads"] = [1, 0, 2, 1]
    case["output_shape"] = [1, 32, 15, 17]
    doc["cases"] = [case]
    t = task_from_doc(doc)
    refs = make_references(t, t.cases[0])
    x, w, b = (v.double() for v in refs.inputs)
    want = torch.tanh(F.conv2d(F.pad(x, (2, 1, 1, 0)), w, b, padding=1 - 1))
    assert torch.allclose(refs.truth, want)
    assert refs.golden.dtype == torch.float16 and torch.equal(refs.golden, want.half())
    same = refs.same_precision()
    assert same.dtype == torch.float16 and (same.double() - want).abs().max() < 4e-3


def test_matmul_references():
    t = load_task("matmul_leaky_relu").select([4])
    refs = make_references(t, t.cases[0])
    a, b, bias = refs.inputs
    y = a.double() @ b.double() + bias.double()
    want = torch.where(y >= 0, y, 0.1 * y)
    assert torch.allclose(refs.truth, want) and refs.golden.dtype == torch.float32
    assert torch.allclose(refs.same_precision(), want.float(), rtol=1e-5, atol=1e-6)
