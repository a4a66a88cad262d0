"""Vector functions (pyasc's ``vf_fusion`` compile option): a run of element-wise calls on the
950 is priced as one pass over UB, computes what the separate calls compute, and is refused on
a SoC without vector functions."""

from __future__ import annotations

import pytest
import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.calib import vector
from ascsim.hw import DEFAULT_SOC
from ascsim.session import SESSION

SOC = "Ascend950PR_9589"
N = 4096


@pytest.fixture(autouse=True)
def restore_soc():
    yield
    SESSION.request_soc(DEFAULT_SOC)


def _chain(x, c, y, n: int):
    """y = exp(x * x + c) / x: four fusible calls of one length."""
    x_gm, c_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    c_gm.set_global_buffer(c)
    y_gm.set_global_buffer(y)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, len=3 * n * 4)
    whole = buf.get(asc.float32)
    x_ub, c_ub, y_ub = whole[0:], whole[n:], whole[2 * n:]
    asc.data_copy(x_ub, x_gm, count=n)
    asc.data_copy(c_ub, c_gm, count=n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.mul(y_ub, x_ub, x_ub, count=n)
    asc.add(y_ub, y_ub, c_ub, count=n)
    asc.exp(y_ub, y_ub, count=n)
    asc.div(y_ub, y_ub, x_ub, count=n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(y_gm, y_ub, count=n)


@asc.jit(kernel_type=KernelType.AIV_ONLY)
def chain_kernel(x: asc.GlobalAddress, c: asc.GlobalAddress, y: asc.GlobalAddress,
                 n: asc.ConstExpr[int]):
    _chain(x, c, y, n)


@asc.jit(kernel_type=KernelType.AIV_ONLY, vf_fusion=True)
def chain_vf_kernel(x: asc.GlobalAddress, c: asc.GlobalAddress, y: asc.GlobalAddress,
                    n: asc.ConstExpr[int]):
    _chain(x, c, y, n)


def _run(kernel):
    x = torch.rand(N) + 0.5
    c = torch.rand(N) - 0.5
    y = torch.empty(N)
    report = kernel[1](x, c, y, N)
    torch.testing.assert_close(y, torch.exp(x * x + c) / x, rtol=1e-5, atol=1e-6)
    return report.cores[0].pipe_busy_us["V"]


def test_fused_chain_is_one_cheaper_pass_with_the_same_values():
    SESSION.request_soc(SOC)
    apart = _run(chain_kernel)
    fused = _run(chain_vf_kernel)
    # 64 registers per call. Apart: mul and add 64 cycles each, exp and div 128 each. Fused:
    # the first call as alone (64); add 64 + 64 loads of c, exp 128, div 128, each issued two
    # per cycle: 64 each. The flag waits on the V pipe are the same in both.
    spec = SESSION.soc
    assert spec.us_to_cycles(apart) - spec.us_to_cycles(fused) == pytest.approx(128, abs=0.5)


def test_vf_fusion_is_refused_where_there_are_no_vector_functions():
    SESSION.request_soc("Ascend910B1")
    with pytest.raises(ValueError, match="vf_fusion.*Ascend910B1"):
        _run(chain_vf_kernel)


def test_the_gelu_calibration_kernel_as_one_function_matches_torch_and_is_faster():
    SESSION.request_soc(SOC)
    basic = vector.run_activation((65536,), "gelu", 1, 8192)[0]
    fused = vector.run_activation((65536,), "gelu", 1, 8192, vf=True)[0]
    assert fused.cores[0].pipe_busy_us["V"] < 0.75 * basic.cores[0].pipe_busy_us["V"]
    with pytest.raises(ValueError, match="gelu only"):
        vector.run_activation((1024,), "relu", 1, 1024, vf=True)
