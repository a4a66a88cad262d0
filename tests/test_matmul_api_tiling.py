"""``asc.adv.get_matmul_api_tiling``: the compile-time tiling of a Matmul config, as the host
tiler derives it for the given L1 size (or only the fields the config fixes)."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.hw import get_soc
from ascsim.sim.errors import KernelError
from ascsim.tiling import MatmulTilingRequest, compute_matmul_tiling

SEEN = []


@asc.jit
def tiling_kernel(x: asc.GlobalAddress, cfg: asc.ConstExpr[object], l1: asc.ConstExpr[object],
                  order: asc.ConstExpr[str]):
    a = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)
    c = asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32)
    if order == "keywords":
        SEEN.append(asc.adv.get_matmul_api_tiling(mm_cfg=cfg, l1_size=l1, a_type=a, b_type=a,
                                                  c_type=c, bias_type=c))
    else:  # pyasc's overload order: (mm_cfg, l1_size, a_type, b_type, c_type)
        SEEN.append(asc.adv.get_matmul_api_tiling(cfg, l1, a, a, c))


def tiling_of(cfg, l1=None, order="keywords"):
    SEEN.clear()
    tiling_kernel[1](np.zeros(8, np.float16), cfg, l1, order)
    return SEEN[0]


def test_a_fixed_shape_gets_the_host_tilers_fields():
    cfg = asc.adv.MatmulConfig(single_core_m=128, single_core_n=256, single_core_k=512,
                               basic_m=128, basic_n=256, basic_k=64)
    tiling = tiling_of(cfg)
    host = compute_matmul_tiling(MatmulTilingRequest(
        m=128, n=256, k=512, single_core_m=128, single_core_n=256, single_core_k=512,
        base_m=128, base_n=256, base_k=64, dim=1, c_dtype="float32", has_bias=True,
        bias_dtype="float32"), get_soc("Ascend910B1"))
    assert (tiling.m, tiling.n, tiling.ka, tiling.kb) == (128, 256, 512, 512)
    assert (tiling.base_m, tiling.base_n, tiling.base_k) == (128, 256, 64)
    assert (tiling.depth_a1, tiling.depth_b1, tiling.step_ka, tiling.step_kb) == (
        host["depth_a1"], host["depth_b1"], host["step_k_a"], host["step_k_b"])
    assert tiling.cfg is cfg
    # Less L1: the K-steps held in L1 shrink so that A and B still fit.
    small = tiling_of(cfg, l1=64 * 1024, order="positional")
    held = (small.depth_a1 * 128 * 64 + small.depth_b1 * 256 * 64) * 2
    assert held <= 64 * 1024 < (tiling.depth_a1 * 128 * 64 + tiling.depth_b1 * 256 * 64) * 2


def test_an_open_shape_fixes_only_what_the_config_fixes():
    cfg = asc.adv.MatmulConfig(do_norm=False, basic_m=64, basic_n=128, basic_k=32)
    tiling = tiling_of(cfg)
    assert (tiling.base_m, tiling.base_n, tiling.base_k) == (64, 128, 32)
    assert tiling.single_core_m == tiling.depth_a1 == tiling.m == -1
    assert tiling.cfg is cfg


def test_bad_arguments_are_kernel_errors():
    with pytest.raises(KernelError, match="l1_size must be > 0"):
        tiling_of(asc.adv.MatmulConfig(), l1=0)
    with pytest.raises(KernelError, match="mm_cfg must be a MatmulConfig"):
        tiling_of("CFG_NORM")
