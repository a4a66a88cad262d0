"""4:2 structured-sparse Mmad (load_data_with_sparse + mmad_with_sparse) against a dense
numpy product of the original sparse matrix."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.isa import KernelError
from ascsim.session import SESSION
from ascsim.sim import fractal


@pytest.fixture
def soc():
    previous = SESSION.soc
    yield lambda name: SESSION.set_soc(name)
    SESSION.set_soc(previous)


def sparse_case(rng, m, n, k):
    """A dense, B (k x n) with two non-zeros in every group of four along K; B densified to
    k/2 rows and its 2-bit indices (first non-zero's place among 0..2, the second's among
    1..3), as the Ascend C page describes."""
    a = rng.integers(-50, 50, (m, k)).astype(np.int8)
    b = np.zeros((k, n), np.int8)
    dense = np.zeros((k // 2, n), np.int8)
    idx = np.zeros((k // 2, n), np.int64)
    for g in range(k // 4):
        for c in range(n):
            p, q = sorted(rng.choice(4, 2, replace=False))
            v = rng.integers(1, 50, 2) * rng.choice([-1, 1], 2)
            b[4 * g + p, c], b[4 * g + q, c] = v
            dense[2 * g, c], dense[2 * g + 1, c] = v
            idx[2 * g, c], idx[2 * g + 1, c] = p, q - 1
    return a, b, dense, idx


def pack(idx_zn_flat):
    quads = idx_zn_flat.reshape(-1, 4)
    return (quads[:, 0] | quads[:, 1] << 2 | quads[:, 2] << 4 | quads[:, 3] << 6).astype(np.uint8)


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def _sparse_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, ix: asc.GlobalAddress,
                   c: asc.GlobalAddress, mnk: asc.ConstExpr[tuple]):
    m, n, k = mnk
    a_gm, b_gm, i_gm, c_gm = (asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(),
                              asc.GlobalTensor())
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    i_gm.set_global_buffer(ix)
    c_gm.set_global_buffer(c)
    frac_b = (k // 2 // 32) * (n // 16)
    a2 = asc.LocalTensor(asc.int8, asc.TPosition.A2, 0, m * k)
    b1 = asc.LocalTensor(asc.int8, asc.TPosition.B1, 0, frac_b * 512)
    i1 = asc.LocalTensor(asc.uint8, asc.TPosition.B1, 65536, frac_b * 128)
    b2 = asc.LocalTensor(asc.int8, asc.TPosition.B2, 0, frac_b * 512)
    c2 = asc.LocalTensor(asc.int32, asc.TPosition.CO1, 0, m * n)
    asc.data_copy(a2, a_gm, m * k)
    asc.data_copy(b1, b_gm, frac_b * 512)
    asc.data_copy(i1, i_gm, frac_b * 128)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.load_data_with_sparse(b2, b1, i1, asc.LoadData2DParams(0, frac_b, 0, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad_with_sparse(c2, a2, b2, asc.MmadParams(m, n, k, 0, False, True))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(c_gm, c2, asc.FixpipeParamsV220(n, m, m, n))


@pytest.mark.parametrize("mnk", [(16, 16, 128), (32, 48, 64)])
def test_sparse_mmad_equals_the_dense_product(soc, mnk):
    soc("Ascend910B1")
    m, n, k = mnk
    rng = np.random.default_rng(9)
    a, b, dense, idx = sparse_case(rng, m, n, k)
    a_l0a = fractal.nd_to_zz(a, 32).reshape(-1)
    b_zn = fractal.nd_to_zn(dense, 32).reshape(-1)
    i_zn = pack(fractal.nd_to_zn(idx, 32).reshape(-1))
    c = np.zeros((m, n), np.int32)
    _sparse_kernel[1](a_l0a, b_zn, i_zn, c, mnk)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


def test_sparse_mmad_is_not_on_the_950(soc):
    soc("Ascend950PR_9579")

    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern():
        a2 = asc.LocalTensor(asc.int8, asc.TPosition.A2, 0, 1024)
        b2 = asc.LocalTensor(asc.int8, asc.TPosition.B2, 0, 512)
        c2 = asc.LocalTensor(asc.int32, asc.TPosition.CO1, 0, 256)
        asc.mmad_with_sparse(c2, a2, b2, asc.MmadParams(16, 16, 64, 0, False, True))

    with pytest.raises(KernelError, match="no 4:2 sparse Cube path"):
        kern[1]()
