"""init_const_value (Fill) on L1 / L0A / L0B against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.isa import KernelError
from ascsim.session import SESSION


@pytest.fixture
def soc():
    previous = SESSION.soc
    yield lambda name: SESSION.set_soc(name)
    SESSION.set_soc(previous)


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def _fill_kernel(pos: asc.ConstExpr[object], dtype: asc.ConstExpr[object],
                 params: asc.ConstExpr[object], n: asc.ConstExpr[int],
                 out: asc.ConstExpr[dict]):
    t = asc.LocalTensor(dtype, pos, 0, n)
    t.elements(0, n, None)[:] = 3
    asc.init_const_value(t, params)
    out["values"] = t.elements(0, n, None).copy()


@pytest.mark.parametrize("pos,block", [(asc.TPosition.A1, 32), (asc.TPosition.A2, 512),
                                       (asc.TPosition.B2, 512)])
@pytest.mark.parametrize("dtype", [asc.float16, asc.float32, asc.int8])
def test_fill_rows_of_blocks_with_gaps(soc, pos, block, dtype):
    soc("Ascend910B1")
    params = asc.InitConstValueParams(5, 3, 2, -1.5 if dtype != asc.int8 else -7)
    size = dtype.sizeof()
    n = 5 * 5 * block // size
    out = {}
    _fill_kernel[1](pos, dtype, params, n, out)
    expected = np.full(n, 3, dtype.np_dtype)
    per = block // size
    for r in range(5):
        first = r * 5 * per
        expected[first:first + 3 * per] = params.init_value
    np.testing.assert_array_equal(out["values"], expected)


def test_zero_repeats_is_a_no_op(soc):
    soc("Ascend910B1")
    out = {}
    _fill_kernel[1](asc.TPosition.A1, asc.float16, asc.InitConstValueParams(0, 3, 0, 1.0), 64,
                    out)
    assert (out["values"] == 3).all()


def test_the_950_fills_l1_only(soc):
    soc("Ascend950PR_9579")
    with pytest.raises(KernelError, match="fills L1 only"):
        _fill_kernel[1](asc.TPosition.A2, asc.float16, asc.InitConstValueParams(1, 1, 0, 0.0),
                        256, {})
