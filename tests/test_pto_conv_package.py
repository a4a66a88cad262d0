"""examples/cann_bench_pto: the conv + activation operators written in PyPTO Pro.

In-process calls of the package's operators (odd geometries: stride, asymmetric padding,
dilation, three input channels, tails of every tile dimension) against a float64 torch
reference, and the package path of ``ascsim bench`` on one case of each class.
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
]


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


@pytest.mark.parametrize("act", ["tanh", "sigmoid"])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=["bf16-dilated", "fp32-1x1-s2", "fp16-wide"])
def test_operator_matches_torch(package, geometry, act):
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


@pytest.mark.parametrize("op", ["fused_conv_tanh", "fused_conv_sigmoid"])
def test_bench_package_path(op):
    """One case per class (1 fp16, 12 fp32, 13 bf16) through ``ascsim bench --package``:
    precision passes, no rule is broken, and the kernels are the package's PyPTO-Pro ones."""
    result = bench(op, [1, 12, 13])
    for case_id, kernels in ((1, ["conv_pad", "conv_k1", "conv_act_k2"]),
                             (12, ["conv_k1", "conv_act_k2"]),
                             (13, ["conv_pad", "conv_k1", "conv_act_k2"])):
        run = result.run(case_id, PACKAGE_VARIANT)
        assert run.status == "pass" and not run.violations, run.error
        assert [k.name for k in run.timing.kernels] == kernels
