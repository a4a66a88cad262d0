"""examples/cann_bench_pto: the conv + activation operators written in PyPTO Pro.

In-process calls of the package's operators in both designs (semi-fusion through a workspace,
and true fusion with the accumulator moved on chip into the vector cores; odd geometries:
stride, asymmetric padding, dilation, three input channels, a 7x7 filter, tails of every tile
dimension) against a float64 torch reference, the tiling plan's invariants, and the package
path of ``ascsim bench`` on one case of each class.
"""

import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from ascsim.bench.isolate import PackageRunner
from ascsim.bench.package import resolve_package
from ascsim.bench.runner import PACKAGE_VARIANT, run_bench
from ascsim.bench.tasks import load_task
from ascsim.pto import aliases
from ascsim.session import SESSION

EXAMPLE = Path(__file__).parent.parent / "examples" / "cann_bench_pto"
SOC = "Ascend950PR_9579"

#: (x shape, filter shape, strides, pads [t, b, l, r], dilations, dtype, atol).
GEOMETRIES = [
    # 3 input channels (a K step shorter than a fractal), asymmetric pads, dilation 2 in H,
    # stride 2 in H, 19 output columns (a column tail), 20 output channels (a channel tail).
    ((2, 3, 20, 18), (20, 3, 3, 3), [2, 1], [1, 2, 3, 0], [2, 1], torch.bfloat16, 8e-3),
    # 1x1 stride 2 without padding, 8 output columns: the whole-fractal loads need the copy's
    # slack; 72 input channels (a second, short K block).
    ((1, 72, 16, 16), (24, 72, 1, 1), [2, 2], [0, 0, 0, 0], [1, 1], torch.float32, 1e-5),
    # More output channels than one accumulator (130 = 128 + 2) and a 130-wide output row.
    ((1, 16, 6, 132), (130, 16, 3, 3), [1, 1], [1, 1, 0, 0], [1, 1], torch.float16, 2e-3),
    # fp32, three input channels, 7x7 stride 2 pad 3 (a small ResNet stem): four phase planes.
    ((1, 3, 24, 22), (16, 3, 7, 7), [2, 2], [3, 3, 3, 3], [1, 1], torch.float32, 1e-5),
    # fp32 with 1024 input channels: even 16 channels of the filter do not fit L1 next to the
    # B windows, so A is streamed per K step (the plan's non-resident path).
    ((1, 1024, 5, 6), (16, 1024, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], torch.float32, 2e-5),
]
GEOMETRY_IDS = ["bf16-dilated", "fp32-1x1-s2", "fp16-wide", "fp32-stem", "fp32-streamed-a"]


def bench(op: str, case_ids):
    task = load_task(op).select(case_ids)
    source = resolve_package(str(EXAMPLE), task.name)
    with PackageRunner(task, source, SOC, 300.0) as runner:
        return run_bench(task, None, (PACKAGE_VARIANT,), SOC, progress=False,
                         package_call=runner.call_case)


@pytest.fixture
def package(monkeypatch):
    """The example's ``cann_bench`` imported in this process with PyPTO Pro served."""
    aliases.install()
    monkeypatch.syspath_prepend(str(EXAMPLE))
    for name in [m for m in sys.modules if m == "cann_bench" or m.startswith("cann_bench.")]:
        monkeypatch.delitem(sys.modules, name)
    import cann_bench

    assert Path(cann_bench.__file__).parent.parent == EXAMPLE
    yield cann_bench
    for name in [m for m in sys.modules if m == "cann_bench" or m.startswith("cann_bench.")]:
        monkeypatch.delitem(sys.modules, name)


def _reference(x, w, b, strides, pads, dilations, act):
    xpad = F.pad(x.double(), (pads[2], pads[3], pads[0], pads[1]))
    z = F.conv2d(xpad, w.double(), b.double(), strides, 0, dilations)
    return torch.tanh(z) if act == "tanh" else torch.sigmoid(z)


@pytest.mark.parametrize("design", ["semi", "fused"])
@pytest.mark.parametrize("act", ["tanh", "sigmoid"])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=GEOMETRY_IDS)
def test_operator_matches_torch(package, monkeypatch, geometry, act, design):
    monkeypatch.setenv("CANN_BENCH_CONV_DESIGN", design)
    xs, ws, strides, pads, dilations, dtype, atol = geometry
    gen = torch.Generator().manual_seed(1)
    x = (torch.rand(xs, generator=gen) * 2 - 1).to(dtype)
    w = ((torch.rand(ws, generator=gen) * 2 - 1) * 0.2).to(dtype)
    b = ((torch.rand(ws[0], generator=gen) * 2 - 1) * 0.2).to(dtype)
    with SESSION.using_soc(SOC):
        y = getattr(package, f"fused_conv_{act}")(x, w, b, strides=strides, pads=pads,
                                                    dilations=dilations)
    ref = _reference(x, w, b, strides, pads, dilations, act)
    assert y.dtype == dtype and y.is_contiguous() and y.shape == ref.shape
    torch.testing.assert_close(y.double(), ref, rtol=0, atol=atol)


@pytest.mark.parametrize("design", ["semi", "fused"])
@pytest.mark.parametrize("cin, taps", [(8, (3, 3)), (3, (1, 2)), (8, (1, 1))])
def test_fp32_k_steps_of_eight_channels(package, monkeypatch, cin, taps, design):
    """An fp32 K step of 8 channels is one 32-byte fractal row: the plan takes it for small
    Cin (no zero channels), and the L1 tiles of 8 rows (16 rows of an NZ frame) must not
    overlap the row of ones after them."""
    from cann_bench.conv_plan import ConvGeometry, ConvPlan

    monkeypatch.setenv("CANN_BENCH_CONV_DESIGN", design)
    kh, kw = taps
    plan = ConvPlan(ConvGeometry("float32", 1, cin, 12, 16, 16, kh, kw, 1, 1, 1, 1, 1, 1, 1,
                                 1), fused=design == "fused", cores=28)
    assert plan.kb == 8
    gen = torch.Generator().manual_seed(2)
    x = torch.rand(1, cin, 12, 16, generator=gen) * 2 - 1
    w = (torch.rand(16, cin, kh, kw, generator=gen) * 2 - 1) * 0.2
    b = (torch.rand(16, generator=gen) * 2 - 1) * 0.2
    with SESSION.using_soc(SOC):
        y = package.fused_conv_tanh(x, w, b, strides=[1, 1], pads=[1, 1, 1, 1])
    ref = _reference(x, w, b, [1, 1], [1, 1, 1, 1], [1, 1], "tanh")
    torch.testing.assert_close(y.double(), ref, rtol=0, atol=1e-5)


def test_operator_refuses_bad_calls(package):
    x = torch.zeros(1, 4, 8, 8, dtype=torch.float16)
    w = torch.zeros(4, 4, 3, 3, dtype=torch.float16)
    b = torch.zeros(4, dtype=torch.float16)
    with pytest.raises(ValueError, match="no implementation"):
        package.fused_conv_tanh(x.float(), w, b, strides=[1, 1], pads=[0, 0, 0, 0])
    with pytest.raises(ValueError, match="pads"):
        package.fused_conv_tanh(x, w, b, strides=[1, 1], pads=[1, 1])
    with pytest.raises(ValueError, match="does not fit"):
        package.fused_conv_tanh(x[:, :, :2, :2].contiguous(), w, b, strides=[1, 1],
                                pads=[0, 0, 0, 0])
    with pytest.raises(ValueError, match="input channels"):
        package.fused_conv_tanh(x, w[:, :2].contiguous(), b, strides=[1, 1], pads=[0, 0, 0, 0])


def test_design_switch_refuses_an_unknown_design(package, monkeypatch):
    monkeypatch.setenv("CANN_BENCH_CONV_DESIGN", "tiled")
    x = torch.zeros(1, 4, 8, 8, dtype=torch.float16)
    w = torch.zeros(4, 4, 3, 3, dtype=torch.float16)
    b = torch.zeros(4, dtype=torch.float16)
    with pytest.raises(ValueError, match="CANN_BENCH_CONV_DESIGN='tiled'.*semi, fused"):
        package.fused_conv_tanh(x, w, b, strides=[1, 1], pads=[1, 1, 1, 1])


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("case_id", range(1, 25))
def test_plan_fits_the_cores_buffers_for_every_case(package, case_id, fused):
    """For each of the task's 24 geometries: L1, L0A/L0B, L0C and (fused) the UB hold the
    plan's tiles, and the windows of one tap group are whole fractals apart."""
    from cann_bench.conv_plan import (
        L0AB_BYTES,
        L0C_BYTES,
        L1_BYTES,
        UB_BYTES,
        ConvGeometry,
        ConvPlan,
    )

    case = load_task("fused_conv_tanh").case(case_id)
    (n, cin, h, w), (cout, _, kh, kw) = case.input_shapes[0], case.input_shapes[1]
    a = case.kwargs()
    g = ConvGeometry(case.dtypes[0], n, cin, h, w, cout, kh, kw, *a["strides"], *a["pads"],
                     *a["dilations"])
    plan = ConvPlan(g, fused=fused, cores=28)
    plan.check()
    assert plan.resident  # every case of the task keeps its filter block in L1
    size = g.size
    assert plan._l1_bytes(plan.tc, plan.resident) <= L1_BYTES
    assert 2 * plan.tc * plan.kb * size <= L0AB_BYTES
    assert 2 * plan.kb * plan.tp * size <= L0AB_BYTES
    assert 2 * plan.tc * plan.tp * 4 <= L0C_BYTES
    assert plan.kb % (32 // size) == 0 and plan.tp % 16 == 0
    assert plan.wv % (32 // size) == 0 and plan.wv >= -(-g.wp // g.stride_w)
    if fused:
        per_elem = 8 + 2 * size + plan.scratch_units
        assert plan.tch * plan.tp * per_elem <= UB_BYTES


@pytest.mark.parametrize("op", ["fused_conv_tanh", "fused_conv_sigmoid"])
def test_bench_package_path(op):
    """One case per class (1 fp16, 12 fp32, 13 bf16) through ``ascsim bench --package``:
    precision passes, no rule is broken, no kernel check finds anything, and the kernels are
    the package's PyPTO-Pro ones (semi design: the conv kernel and the activation kernel)."""
    result = bench(op, [1, 12, 13])
    for case_id in (1, 12, 13):
        run = result.run(case_id, PACKAGE_VARIANT)
        assert run.status == "pass" and not run.violations, run.error
        assert [k.name for k in run.timing.kernels] == ["conv_k1", "conv_act_k2"]
        assert not [n for n in run.timing.notes if "finding" in n]


@pytest.mark.slow
@pytest.mark.parametrize("op", ["fused_conv_tanh", "fused_conv_sigmoid"])
def test_bench_package_path_fused_design(op, monkeypatch):
    """The fused design selected by the environment (the bench's worker inherits it): one
    kernel per call, precision passes, no rule broken, no finding."""
    monkeypatch.setenv("CANN_BENCH_CONV_DESIGN", "fused")
    result = bench(op, [1, 12, 13])
    for case_id in (1, 12, 13):
        run = result.run(case_id, PACKAGE_VARIANT)
        assert run.status == "pass" and not run.violations, run.error
        assert [k.name for k in run.timing.kernels] == ["conv_k1"]
        assert not [n for n in run.timing.notes if "finding" in n]
