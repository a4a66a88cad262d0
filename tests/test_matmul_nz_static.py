"""Matmul with a transposed B stored in NZ fractals (the layout of a prepacked Linear weight),
split over cores along N, and Matmul with a compile-time tiling from get_mm_config."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.adv import TCubeTiling
from ascsim.asc.adv.matmul_config import MatmulFuncParams
from ascsim.session import SESSION
from ascsim.sim.errors import KernelError


def _types(static_cfg=None):
    nd, nz, gm = asc.CubeFormat.ND, asc.CubeFormat.NZ, asc.TPosition.GM
    return dict(a=asc.adv.MatmulType(gm, nd, asc.float16, False),
                b=asc.adv.MatmulType(gm, nz, asc.float16, True),
                c=asc.adv.MatmulType(gm, nd, asc.float32),
                bias=asc.adv.MatmulType(gm, nd, asc.float32), matmul_config=static_cfg)


@asc.jit(matmul_cube_only=True)
def _nz_linear(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
               tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress):
    n_index = asc.get_block_idx()
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    # NZ B^T: each 16-column block of K holds all N rows, so a core's N slice starts 16*row in.
    b_gm.set_global_buffer(b + n_index * tiling.single_core_n * 16)
    c_gm.set_global_buffer(c + n_index * tiling.single_core_n)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(**_types())
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    mm.set_org_shape(tiling.m, tiling.n, tiling.k_a, tiling.k_b)
    mm.set_tensor_a(a_gm, False)
    mm.set_tensor_b(b_gm, True)
    mm.iterate_all(c_gm)
    mm.end()


@asc.jit(matmul_cube_only=True)
def _static_linear(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                   ws: asc.GlobalAddress, m: asc.ConstExpr[int], n: asc.ConstExpr[int],
                   k: asc.ConstExpr[int], fixed: asc.ConstExpr[bool]):
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    pipe = asc.TPipe()
    shape = asc.adv.MatmulShapeParams(m, n, k, 32, 32, 32) if fixed \
        else asc.adv.MatmulShapeParams()
    cfg = asc.adv.get_mm_config(shape, asc.adv.MatmulFuncParams(enable_kdim_reorder_load=True),
                                asc.MatmulConfigMode.CONFIG_MDL)
    mm = asc.adv.Matmul(**_types(cfg))
    asc.adv.register_matmul(pipe, ws, mm)
    mm.set_org_shape(m, n, k, k)
    mm.set_tensor_a(a_gm, False)
    mm.set_tensor_b(b_gm, True)
    mm.set_tail(m, n)
    mm.iterate_all(c_gm)
    mm.end()


def _nz_weight(w: np.ndarray) -> np.ndarray:
    """[N, K] row-major -> NZ: element (row, col) at (col//16)*(N*16) + row*16 + col%16."""
    n, k = w.shape
    return np.ascontiguousarray(w.reshape(n, k // 16, 16).transpose(1, 0, 2)).reshape(-1)


def _operands(m, n, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (m, k)).astype(np.float16)
    w = rng.uniform(-2, 2, (n, k)).astype(np.float16)
    return x, w, x.astype(np.float32) @ w.astype(np.float32).T


@pytest.mark.parametrize("m,n,k,cores", [(40, 64, 48, 2), (16, 96, 80, 3)])
def test_transposed_nz_b_split_along_n(m, n, k, cores):
    x, w, ref = _operands(m, n, k, seed=m)
    scn = n // cores
    tiling = TCubeTiling(used_core_num=cores, m=m, n=n, k_a=k, k_b=k, single_core_m=m,
                         single_core_n=scn, single_core_k=k, base_m=32, base_n=16, base_k=32,
                         step_m=1, step_n=1, step_k_a=1, step_k_b=1, depth_a1=1, depth_b1=1)
    c = np.zeros((m, n), np.float32)
    report = _nz_linear[cores](x, _nz_weight(w), c, tiling, np.zeros(64, np.uint8))
    assert report.findings == [], [f.format() for f in report.findings]
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)


def test_static_config_tiles_without_a_runtime_tiling():
    m, n, k = 48, 64, 96
    x, w, ref = _operands(m, n, k, seed=3)
    c = np.zeros((m, n), np.float32)
    report = _static_linear[1](x, _nz_weight(w), c, np.zeros(64, np.uint8), m, n, k, True)
    assert report.findings == [], [f.format() for f in report.findings]
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)
    # The config's 32x32x32 block over 48x64x96: rows 32 and 16, two 32-column blocks each,
    # three K steps per block -- the Cube time of exactly those mmads.
    soc = SESSION.soc
    cycles = sum(soc.cube.mmad_cycles(rows, 32, 32, "float16") * 2 * 3 for rows in (32, 16))
    assert report.cores[0].pipe_busy_us["M"] == pytest.approx(soc.cycles_to_us(cycles))


def test_config_without_a_static_shape_needs_a_tiling():
    x, w, _ = _operands(16, 32, 32, seed=4)
    with pytest.raises(KernelError, match="before it has a tiling"):
        _static_linear[1](x, _nz_weight(w), np.zeros((16, 32), np.float32),
                          np.zeros(64, np.uint8), 16, 32, 32, False)


def test_func_params_use_pyasc_names_and_set_the_config_fields():
    cfg = asc.adv.get_mm_config(MatmulFuncParams(intrinsics_limit=True, en_vec_nd2_nz=True,
                                                 enable_l1_cache=True, do_mte2_pre_load=2,
                                                 is_a2_b2_shared=True),
                                asc.adv.MatmulBatchParams(is_b_batch=True),
                                asc.MatmulConfigMode.CONFIG_NORM)
    assert (cfg.intrinsics_check, cfg.en_vec_nd2nz, cfg.enable_l1_cache_ub,
            cfg.do_mte2_preload, cfg.is_a2b2_shared, cfg.is_n_batch) == \
        (True, True, True, 2, True, True)
