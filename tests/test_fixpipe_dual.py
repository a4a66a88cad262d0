"""FixPipe's dual destination (``FixpipeParamsV220(dual_dst_ctl=...)``, the 3510's L0C -> UB
split over a group's two AIVs): each AIV's UB holds its half of the block, checked against
numpy, and the forms the split does not take are refused with a clear error."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.session import SESSION
from ascsim.sim.errors import KernelError

M, N = 32, 64  # the L0C block: two 16-row fractal rows, four 16-column strips


@pytest.fixture(autouse=True)
def on_the_950():
    with SESSION.using_soc("Ascend950PR_9589"):
        yield


def _nz(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` (rows x cols) in L0C's NZ order: 16-column strips, each strip's rows."""
    rows, cols = matrix.shape
    return matrix.reshape(rows, cols // 16, 16).transpose(1, 0, 2).reshape(-1)


def _run(params: asc.FixpipeParamsV220, layout: asc.CO2Layout, dst: str = "ub"):
    """The AIC writes ``C`` (M x N, its values its own indices) from L0C with ``params``; each
    AIV returns what its UB holds after."""
    c = np.arange(M * N, dtype=np.float32).reshape(M, N)
    seen = {}

    @asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
    def kern(out: asc.GlobalAddress, params: asc.ConstExpr, layout: asc.ConstExpr,
             dst: asc.ConstExpr[str]):
        if asc.ascend_is_aic():
            l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, M * N)
            l0c.elements(0, M * N, None)[:] = _nz(c)
            if dst == "ub":
                target = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, M * N)
            else:
                target = asc.GlobalTensor()
                target.set_global_buffer(out)
            asc.fixpipe(target, l0c, params, asc.FixpipeConfig(layout))
            asc.cross_core_set_flag(0, 2, asc.PipeID.PIPE_FIX)
        else:
            asc.cross_core_wait_flag(0, 2, asc.PipeID.PIPE_V)
            ub = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, M * N)
            seen[asc.get_sub_block_idx()] = ub.elements(0, M * N // 2, None).copy()

    report = kern[1](np.zeros(M * N, np.float32), params, layout, dst)
    return c, seen, report


def test_split_m_gives_each_aiv_half_of_the_rows():
    params = asc.FixpipeParamsV220(n_size=N, m_size=M, src_stride=M, dst_stride=N,
                                   dual_dst_ctl=1)
    c, seen, report = _run(params, asc.CO2Layout.ROW_MAJOR)
    assert np.array_equal(seen[0], c[:M // 2].reshape(-1))
    assert np.array_equal(seen[1], c[M // 2:].reshape(-1))
    assert report.bytes_moved["L0C->UB"] == M * N * 4


def test_split_n_gives_each_aiv_half_of_the_columns():
    params = asc.FixpipeParamsV220(n_size=N, m_size=M, src_stride=M, dst_stride=N // 2,
                                   dual_dst_ctl=2)
    c, seen, report = _run(params, asc.CO2Layout.ROW_MAJOR)
    assert np.array_equal(seen[0], c[:, :N // 2].reshape(-1))
    assert np.array_equal(seen[1], c[:, N // 2:].reshape(-1))
    assert report.bytes_moved["L0C->UB"] == M * N * 4


def test_split_m_into_nz_strips():
    # NZ destination: strips of 16 columns, dst_stride rows apart (here the half's 16 rows).
    params = asc.FixpipeParamsV220(n_size=N, m_size=M, src_stride=M, dst_stride=M // 2,
                                   dual_dst_ctl=1)
    c, seen, _ = _run(params, asc.CO2Layout.NZ)
    assert np.array_equal(seen[0], _nz(c[:M // 2]))
    assert np.array_equal(seen[1], _nz(c[M // 2:]))


@pytest.mark.parametrize("fields, dst, message", [
    ({"m_size": M - 1, "dual_dst_ctl": 1}, "ub", "split M\\) needs an even m_size"),
    ({"n_size": N - 16, "dual_dst_ctl": 2}, "ub", "split N\\) needs n_size a multiple of 32"),
    ({"dual_dst_ctl": 1}, "gm", "the destination is in GM"),
    ({"dual_dst_ctl": 1, "unit_flag": 3}, "ub", "or a unit_flag is not modelled"),
])
def test_forms_the_split_does_not_take_are_refused(fields, dst, message):
    params = asc.FixpipeParamsV220(**{"n_size": N, "m_size": M, "src_stride": M,
                                      "dst_stride": N, **fields})
    with pytest.raises(KernelError, match=message):
        _run(params, asc.CO2Layout.ROW_MAJOR, dst)


def test_bad_dual_dst_values_are_refused():
    with pytest.raises(ValueError, match="dual_dst_ctl is 0 \\(one destination\\), 1"):
        asc.FixpipeParamsV220(N, M, M, N, dual_dst_ctl=3)
    with pytest.raises(ValueError, match="set one of the two"):
        asc.FixpipeParamsV220(N, M, M, N, dual_dst_ctl=1, sub_block_id=1)
