"""Cube unit: fractal layouts, load_data / mmad / fixpipe semantics, the linear-layer example."""

from __future__ import annotations

import importlib.util
import pathlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ascsim.asc as asc
from ascsim.asc.context import current_core
from ascsim.asc.dtypes import from_name
from ascsim.asc.runtime import config
from ascsim.asc.tensor import LocalTensor
from ascsim.session import SESSION
from ascsim.sim import fractal
from ascsim.sim.errors import KernelError

ROOT = pathlib.Path(__file__).resolve().parents[1]
BF16 = ml_dtypes.bfloat16


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def soc():
    """Select a SoC for one test and restore the previous one afterwards."""
    before = SESSION.soc.name
    yield SESSION.set_soc
    SESSION.set_soc(before)


# ------------------------------------------------------------------------------ fractal layouts
@settings(max_examples=25)
@given(h=st.integers(1, 40), w=st.integers(1, 70),
       dtype=st.sampled_from([np.float16, np.float32, np.int8]))
def test_fractal_round_trips(h, w, dtype):
    mat = (np.arange(h * w) % 97).astype(dtype).reshape(h, w)
    c0 = fractal.c0_of(dtype)
    assert np.array_equal(fractal.nz_to_nd(fractal.nd_to_nz(mat).ravel(), h, w, c0), mat)
    assert np.array_equal(fractal.zz_to_nd(fractal.nd_to_zz(mat).ravel(), h, w, c0), mat)
    assert np.array_equal(fractal.zn_to_nd(fractal.nd_to_zn(mat).ravel(), h, w, c0), mat)


def test_fractal_layout_positions():
    mat = np.arange(32 * 48, dtype=np.float16).reshape(32, 48)
    nz = fractal.nd_to_nz(mat).ravel()
    # NZ: strip of columns 16..31 comes after the whole first strip (32 rows x 16).
    assert nz[32 * 16] == mat[0, 16] and nz[16] == mat[1, 0]
    zz = fractal.nd_to_zz(mat).ravel()
    assert zz[256] == mat[0, 16] and zz[3 * 256] == mat[16, 0]
    zn = fractal.nd_to_zn(mat).ravel()
    assert zn[1] == mat[1, 0] and zn[16] == mat[0, 1]  # fractals stored column-major
    assert fractal.c0_of(np.float32) == 8 and fractal.c0_of(np.int8) == 32


# ------------------------------------------------------------------------------ mmad numerics
def _mmad_kernel():
    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
             m: asc.ConstExpr[int], n: asc.ConstExpr[int], k: asc.ConstExpr[int],
             steps: asc.ConstExpr[int], name: asc.ConstExpr[str]):
        dt = from_name(name)
        acc = asc.int32 if name == "int8" else asc.float32
        a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        a_gm.set_global_buffer(a)
        b_gm.set_global_buffer(b)
        c_gm.set_global_buffer(c)
        c0 = 32 // dt.sizeof()
        mp, np_ = (m + 15) // 16 * 16, (n + 15) // 16 * 16
        ks = k // steps
        k1 = (ks + c0 - 1) // c0
        a1 = asc.LocalTensor(dt, asc.TPosition.A1, 0, 8192)
        b1 = asc.LocalTensor(dt, asc.TPosition.B1, 65536, 8192)
        a2 = asc.LocalTensor(dt, asc.TPosition.A2, 0, 8192)
        b2 = asc.LocalTensor(dt, asc.TPosition.B2, 0, 8192)
        c2 = asc.LocalTensor(acc, asc.TPosition.CO1, 0, 4096)
        for s in range(steps):
            # B given as [N][K] rows: NZ strips of K in L1 are ZN fractals for B = W^T.
            asc.data_copy(a1, a_gm[s * ks:], asc.Nd2NzParams(1, m, ks, 0, k, mp, 1, 0))
            # pyasc's keyword for the cube-side parameter objects
            asc.data_copy(b1, b_gm[s * ks:],
                          intri_params=asc.Nd2NzParams(1, n, ks, 0, k, np_, 1, 0))
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            for band in range(mp // 16):
                asc.load_data(a2[band * k1 * 16 * c0:], a1[band * 16 * c0:],
                              asc.LoadData2DParams(0, k1, mp // 16, 0, 0, False, 0))
            asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * (np_ // 16), 1, 0, 0, False, 0))
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.mmad(c2, a2, b2, asc.MmadParams(m, n, ks, 0, False, s == 0))
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.fixpipe(c_gm, c2, asc.FixpipeParamsV220(n, m, mp, n))
    return kern


MMAD_KERNEL = _mmad_kernel()


@pytest.mark.parametrize("name, tol", [("float16", 1e-4), ("bfloat16", 1e-4),
                                       ("float32", 1e-4), ("int8", 0)])
def test_mmad_matches_numpy_with_k_accumulation(name, tol):
    rng = np.random.default_rng(1)
    m, n, k, steps = 24, 40, 128, 2
    np_type = BF16 if name == "bfloat16" else np.dtype(name)
    if name == "int8":
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        w = rng.integers(-128, 128, (n, k)).astype(np.int8)
        c = np.zeros((m, n), np.int32)
        ref = a.astype(np.int64) @ w.astype(np.int64).T
    else:
        a = rng.standard_normal((m, k)).astype(np_type)
        w = rng.standard_normal((n, k)).astype(np_type)
        c = np.zeros((m, n), np.float32)
        ref = a.astype(np.float64) @ w.astype(np.float64).T
    report = MMAD_KERNEL[1](a, w, c, m, n, k, steps, name)
    # Padding rows of the 24-row tile are never written in L1; only they may be flagged.
    assert {f.category for f in report.findings} <= {"uninitialized-read"}
    if tol:
        np.testing.assert_allclose(c, ref, rtol=tol, atol=tol)
    else:
        assert np.array_equal(c, ref)


def test_mmad_initialises_or_accumulates_and_adds_bias():
    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(c: asc.GlobalAddress, bias: asc.GlobalAddress):
        c_gm, bias_gm = asc.GlobalTensor(), asc.GlobalTensor()
        c_gm.set_global_buffer(c)
        bias_gm.set_global_buffer(bias)
        a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
        b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
        c2 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        l1 = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, 16)
        bt = asc.LocalTensor(asc.float32, asc.TPosition.C2, 0, 16)
        ones = a2.elements(0, 256, None)
        ones[:] = 1.0
        b2.elements(0, 256, None)[:] = 2.0
        asc.data_copy(l1, bias_gm, 16)
        asc.data_copy(bt, l1, 16)
        asc.mmad(c2, a2, b2, asc.MmadParams(16, 16, 16, 0, False, True))  # C = 32
        asc.mmad(c2, a2, b2, asc.MmadParams(16, 16, 16, 0, False, False))  # C += 32
        asc.mmad(c2, a2, b2, asc.MmadParams(16, 16, 16, True, 0, False, False, False))  # old
        asc.fixpipe(c_gm, c2, asc.FixpipeParamsV220(16, 16, 16, 16))
        asc.mmad(c2, a2, b2, bt, asc.MmadParams(16, 16, 16, 0, True, False))  # C = bias + 32
        asc.fixpipe(c_gm[256:], c2, asc.FixpipeParamsV220(16, 16, 16, 16))

    c = np.zeros((2, 16, 16), np.float32)
    bias = np.arange(16, dtype=np.float32)
    kern[1](c, bias)
    assert np.all(c[0] == 96.0)
    assert np.array_equal(c[1], np.broadcast_to(32.0 + bias, (16, 16)))


# ------------------------------------------------------------------------------ load_data
def test_load_data_transposes_fractals():
    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress):
        x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        x_gm.set_global_buffer(x)
        y_gm.set_global_buffer(y)
        z_gm.set_global_buffer(z)
        l1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 0, 512)
        l0b = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 1024)
        asc.data_copy(l1, x_gm, 512)
        asc.load_data(l0b, l1, asc.LoadData2DParams(0, 2, 1, 0, 1, True, 0))  # gap of 1
        asc.load_data_with_transpose(l0b[3 * 256:], l1,
                                     asc.LoadData2dTransposeParams(1, 1, 0, 0, 0, 0))
        y_gm.elements(0, 1024, None)[:] = l0b.elements(0, 1024, None)
        l1i8 = asc.LocalTensor(asc.int8, asc.TPosition.B1, 4096, 1024)
        l0b8 = asc.LocalTensor(asc.int8, asc.TPosition.B2, 4096, 2048)
        asc.data_copy(l1i8, z_gm, 1024)
        asc.load_data_with_transpose(l0b8, l1i8, asc.LoadData2dTransposeParams(0, 1, 0, 0, 1, 0))
        z_gm.elements(0, 1024, None)[:] = l0b8.elements(0, 1024, None)
        z_gm.elements(1024, 512, None)[:] = l0b8.elements(1024, 512, None)

    x = np.arange(512, dtype=np.float16)
    y = np.zeros(1024, np.float16)
    z = (np.arange(1024) % 127).astype(np.int8)
    z_in = z.copy()
    z = np.concatenate([z, np.zeros(512, np.int8)])
    kern[1](x, y, z)
    frac = x.reshape(2, 16, 16)
    assert np.array_equal(y[:256].reshape(16, 16), frac[0].T)
    assert np.array_equal(y[512:768].reshape(16, 16), frac[1].T)  # after a one-fractal gap
    assert np.array_equal(y[768:].reshape(16, 16), frac[1].T)
    square = z_in.reshape(32, 32).T  # two 16x32 int8 fractals form one 32x32 square
    assert np.array_equal(z[:512].reshape(16, 32), square[:16])
    assert np.array_equal(z[1024:].reshape(16, 32), square[16:])  # dst_frac_gap = 1


# ------------------------------------------------------------------------------ fixpipe
def test_fixpipe_quant_relu_strides_and_nz():
    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(c: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
             q: asc.GlobalAddress):
        c_gm, y_gm, z_gm, q_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), \
            asc.GlobalTensor()
        c_gm.set_global_buffer(c)
        y_gm.set_global_buffer(y)
        z_gm.set_global_buffer(z)
        q_gm.set_global_buffer(q)
        l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 2048)
        l0c.elements(0, 2048, None)[:] = c_gm.elements(0, 2048, None)
        # L0C holds a 48-row x 32-col NZ tile; take 20 x 30 of it, row-major, pitch 40.
        asc.fixpipe(y_gm, l0c, asc.FixpipeParamsV220(n_size=30, m_size=20, src_stride=48,
                                                     dst_stride=40,
                                                     quant_pre=asc.QuantModes.F322F16,
                                                     relu_en=True))
        asc.fixpipe(z_gm, l0c, asc.FixpipeParamsV220(32, 48, 48, 48), asc.FixpipeConfig.cfg_nz())
        asc.fixpipe(q_gm, l0c, asc.FixpipeParamsV220(32, 48, 48, 32,
                                                     quant_pre=asc.QuantModes.F322BF16))

    rng = np.random.default_rng(3)
    tile = rng.standard_normal((48, 32)).astype(np.float32)
    nz = np.zeros(2048, np.float32)
    nz[:48 * 32] = fractal.nd_to_nz(tile, 16).ravel()
    y = np.full((20, 40), 7, np.float16)
    z = np.zeros(48 * 32, np.float32)
    q = np.zeros((48, 32), BF16)
    kern[1](nz, y, z, q)
    assert np.array_equal(y[:, :30], np.maximum(tile[:20, :30], 0).astype(np.float16))
    assert np.all(y[:, 30:] == 7)  # the row pitch leaves the rest of each row alone
    assert np.array_equal(z, nz[:48 * 32])
    assert np.array_equal(q, tile.astype(BF16))


def _first_aiv_ub(count: int):
    """A float32 tensor in the UB of the launch's first AIV (the AIC's partner)."""
    aiv = [x for x in current_core().launch.cores if x.kind == "AIV"][0]
    return LocalTensor.bound(aiv.mem["UB"], asc.TPosition.VECIN, 0, count, asc.float32)


def _l0c_to_ub_kernel():
    captured = {}

    @asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
    def kern(c: asc.GlobalAddress):
        if asc.ascend_is_aic():
            ub = _first_aiv_ub(256)
            l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
            l0c.elements(0, 256, None)[:] = 3.0
            asc.fixpipe(ub, l0c, asc.FixpipeParamsV220(16, 16, 16, 16))
            captured["ub"] = ub.elements(0, 256, None).copy()

    return kern, captured


def test_fixpipe_to_ub_only_where_the_path_exists(soc):
    kern, captured = _l0c_to_ub_kernel()
    soc("Ascend950PR_9579")
    kern[1](np.zeros(4, np.float32))
    assert np.all(captured["ub"] == 3.0)
    soc("Ascend910B1")
    with pytest.raises(KernelError, match=r"test_cube.py:\d+: there is no L0C->UB data path on "
                                          r"Ascend910B1"):
        kern[1](np.zeros(4, np.float32))


def test_misaligned_l0a_is_an_alignment_finding():
    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(x: asc.GlobalAddress):
        x_gm = asc.GlobalTensor()
        x_gm.set_global_buffer(x)
        l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
        l0a = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 1024)
        asc.data_copy(l1, x_gm, 256)
        asc.load_data(l0a[16:], l1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))

    report = kern[1](np.zeros(256, np.float16))
    found = [f for f in report.findings if f.category == "alignment"]
    assert found and "L0A address 32 is not 512-byte aligned" in found[0].message


def test_mmad_rejects_wrong_positions():
    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(x: asc.GlobalAddress):
        l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
        l0b = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
        l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        asc.mmad(l0c, l1, l0b, asc.MmadParams(16, 16, 16, 0, False, True))

    with pytest.raises(KernelError, match="fm .* must be in L0A"):
        kern[1](np.zeros(4, np.float16))


def test_params_validate_and_accept_both_mmad_forms():
    new = asc.MmadParams(m=16, n=32, k=48, unit_flag=0, cmatrix_source=False,
                         cmatrix_init_val=False)
    assert new.accumulate and (new.m, new.n, new.k) == (16, 32, 48)
    old = asc.MmadParams(16, 32, 48, True, 0, False, False, False)
    assert old.accumulate and old.is_bias
    assert not asc.MmadParams(16, 32, 48).accumulate
    with pytest.raises(ValueError):
        asc.MmadParams(m=5000, n=1, k=1)
    with pytest.raises(ValueError):
        asc.LoadData2DParams(0, 300, 1, 0, 0, False, 0)
    with pytest.raises(ValueError):
        asc.Nd2NzParams(1, 70000, 16, 0, 16, 16, 1, 0)


# ------------------------------------------------------------------------------ linear example
@pytest.mark.parametrize("platform", ["Ascend910B1", "Ascend950PR_9579"])
@pytest.mark.parametrize("shape", [(128, 256, 256), (100, 200, 300), (16, 16, 600)])
def test_linear_example(soc, platform, shape):
    example = _load("examples/linear_cube.py", "linear_cube_example")
    report = example.run(config.Platform(platform), *shape)
    assert report.soc == platform
    assert not [f for f in report.findings if f.category != "uninitialized-read"]


def test_linear_calibration_quick(capsys):
    bench = _load("benchmarks/linear_calibration.py", "linear_calibration_bench")
    rows = bench.main(["--quick"])
    out = capsys.readouterr().out
    assert rows and all(r["simulated_us"] > 0 for r in rows)
    assert "error" in out and "[128,512]" in out


def test_nd2nz_indices_are_shared_and_read_only():
    """A cube loop copies the same slab shape over and over: its index arrays are made once."""
    from ascsim.asc.basic.cube import _nd2nz_indices

    first = _nd2nz_indices(16, 1, 4, 40, 0, 64, 0, 1, 4)
    assert _nd2nz_indices(16, 1, 4, 40, 0, 64, 0, 1, 4) is first
    src, dst, rows = first
    assert not (src.flags.writeable or dst.flags.writeable or rows.flags.writeable)
    # Row 2 starts at element 128 of the ND source; its third 16-wide piece holds columns
    # 32..39, then the zero-filled rest of the 32-byte block.
    assert rows[0, 2, 0, 0] == 128
    assert list(src[0, 2, 2, 6:10]) == [128 + 38, 128 + 39, -1, -1]
    # NZ: piece p of row j lands at (p * c0_stride + j) * c0.
    assert dst[0, 2, 2, 0] == (2 * 4 + 2) * 16
