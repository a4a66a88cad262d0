"""The matmul_leaky_relu operator: numerics in every variant, validation, reporting."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ascsim.ops import matmul_leaky_relu
from ascsim.session import SESSION

SOCS = ("Ascend910B1", "Ascend950PR_9579")


def _reference(a, b, bias, alpha):
    pre = a.double() @ b.double() + bias.double()
    return torch.where(pre >= 0, pre, pre * alpha).float()


def _inputs(m, k, n, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = (torch.rand(m, k, generator=g) * 2 - 1).to(dtype)
    b = (torch.rand(k, n, generator=g) * 2 - 1).to(dtype)
    bias = torch.rand(1, n, generator=g) * 2 - 1
    return a, b, bias


@pytest.mark.parametrize("soc", SOCS)
@pytest.mark.parametrize("variant", ["unfused", "semi", "fused"])
@pytest.mark.parametrize("shape,dtype", [((128, 256, 192), torch.float16),
                                         ((100, 70, 90), torch.bfloat16),
                                         ((17, 33, 129), torch.float16)])
def test_matches_torch_in_every_variant(soc, variant, shape, dtype):
    m, k, n = shape
    a, b, bias = _inputs(m, k, n, dtype)
    c, info = matmul_leaky_relu(a, b, bias, 0.01, variant=variant, soc=soc, return_report=True)
    assert c.dtype == torch.float32 and c.shape == (m, n) and c.is_contiguous()
    torch.testing.assert_close(c, _reference(a, b, bias, 0.01), rtol=1e-4, atol=1e-4)
    assert info.soc == soc and info.device_time_us > 0
    assert all(not r.findings for r in info.reports), [f.format() for r in info.reports
                                                       for f in r.findings]
    assert len(info.reports) == (1 if variant == "fused" else 2)


def test_auto_picks_the_faster_variant_and_numpy_inputs_work():
    a, b, bias = _inputs(64, 64, 64, torch.float16, seed=1)
    c, info = matmul_leaky_relu(a.numpy(), b.numpy(), bias.numpy(), 0.2, variant="auto",
                                return_report=True)
    times = {v: matmul_leaky_relu(a, b, bias, 0.2, variant=v, return_report=True)[1]
             .device_time_us for v in ("unfused", "fused")}
    assert info.variant == min(times, key=times.get)
    torch.testing.assert_close(c, _reference(a, b, bias, 0.2), rtol=1e-4, atol=1e-4)


def test_the_soc_argument_does_not_leak():
    before = SESSION.soc.name
    a, b, bias = _inputs(16, 16, 16, torch.float16)
    matmul_leaky_relu(a, b, bias, soc="Ascend950PR_9579", variant="fused")
    assert SESSION.soc.name == before


@pytest.mark.parametrize("args,match", [
    (lambda a, b, bias: (a.float(), b.float(), bias), "float16 or bfloat16"),
    (lambda a, b, bias: (a, b.to(torch.bfloat16), bias), "share one dtype"),
    (lambda a, b, bias: (a, b[:-1], bias), "K dimensions differ"),
    (lambda a, b, bias: (a, b, bias[:, :-1]), "bias must be"),
    (lambda a, b, bias: (a, b, bias.half()), "float32"),
    (lambda a, b, bias: (a[0], b, bias), "2-D"),
])
def test_bad_input_says_what_is_wrong(args, match):
    a, b, bias = _inputs(8, 16, 32, torch.float16)
    with pytest.raises(ValueError, match=match):
        matmul_leaky_relu(*args(a, b, bias))


def test_unknown_variant_and_bad_alpha():
    a, b, bias = _inputs(8, 16, 32, torch.float16)
    with pytest.raises(ValueError, match="variant"):
        matmul_leaky_relu(a, b, bias, variant="magic")
    with pytest.raises(ValueError, match="alpha"):
        matmul_leaky_relu(a, b, bias, alpha=float("nan"))
    assert np.isfinite(matmul_leaky_relu(a, b, bias).numpy()).all()


def test_fused_tiling_leaves_room_for_two_c_blocks_in_ub():
    # The fused kernel double-buffers C blocks; on 950 the L0C alone would allow a block that
    # fills more than half of UB (bench case 11 failed with an init_buffer overflow).
    from ascsim.asc.lib import host
    from ascsim.ops.matmul_leaky_relu import _tiling

    previous = SESSION.soc
    try:
        soc = SESSION.set_soc("Ascend950PR_9579")
        tiling = _tiling(2048, 1024, 1024, host.DataType.DT_FLOAT16, host.TPosition.VECCALC,
                         ub_bytes=soc.ub_bytes // 2)
        assert 2 * tiling.base_m * tiling.base_n * 4 <= soc.ub_bytes
    finally:
        SESSION.set_soc(previous)
