"""fused_conv_tanh / fused_conv_sigmoid and the convolution instructions behind them.

* Load3D (img2col), DN2NZ and gather against numpy references written here (the im2col
  reference is an explicit pad + strided slice per filter position, not ascsim's index math).
* The operators on bench cases in all three variants on Ascend950PR_9579 and Ascend910B1,
  judged by the bench precision rule against the fp64 truth; heavier cases are marked slow.
* Validation errors, output type/contiguity, numpy inputs, auto.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest
import torch

import ascsim.asc as asc
from ascsim.asc.runtime import config
from ascsim.bench.precision import check_precision
from ascsim.bench.references import make_references
from ascsim.bench.tasks import load_task
from ascsim.hw import get_soc
from ascsim.ops import conv_plan, fused_conv_sigmoid, fused_conv_tanh
from ascsim.ops import fused_conv as fused_conv_module
from ascsim.ops.conv_plan import epilogue_ub_bytes_per_pixel, plan_conv
from ascsim.ops.conv_spec import conv_spec_from
from ascsim.session import SESSION
from ascsim.sim.errors import KernelError
from ascsim.tune import tuned

SOCS = ("Ascend950PR_9579", "Ascend910B1")
VARIANTS = ("semi", "fused", "unfused")
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(autouse=True)
def default_plans():
    """These tests recompute the planner's default plan: run without tuned settings
    (ascsim/tune/data), which tests/test_tune_ops.py covers."""
    with tuned.ignored():
        yield


@pytest.fixture
def soc():
    previous = SESSION.soc
    yield lambda name: SESSION.set_soc(name)
    SESSION.set_soc(previous)


# ------------------------------------------------------------------------------ references
def im2col_reference(fmap, pads, stride, filt, dil):
    """fmap [C1][H][W][C0] -> im2col [Ho*Wo][C1*Kh*Kw*C0] (columns ordered c1, kh, kw, c0)."""
    c1, h, w, c0 = fmap.shape
    pl, pr, pt, pb = pads
    padded = np.zeros((c1, h + pt + pb, w + pl + pr, c0), fmap.dtype)
    padded[:, pt:pt + h, pl:pl + w] = fmap
    ho = (h + pt + pb - (filt[0] - 1) * dil[0] - 1) // stride[0] + 1
    wo = (w + pl + pr - (filt[1] - 1) * dil[1] - 1) // stride[1] + 1
    cols = []
    for c in range(c1):
        for kh in range(filt[0]):
            for kw in range(filt[1]):
                r0, q0 = kh * dil[0], kw * dil[1]
                win = padded[c, r0:r0 + stride[0] * (ho - 1) + 1:stride[0],
                             q0:q0 + stride[1] * (wo - 1) + 1:stride[1]]
                cols.append(win.reshape(ho * wo, c0))
    return np.concatenate(cols, axis=1)


def _l0a_to_matrix(flat, rows, cols, c0, arch):
    """Undo the L0A fractal layout: ZZ [m1][k1][16][c0] on 2201, NZ [k1][m][c0] on 3510."""
    m1, k1 = rows // 16, cols // c0
    if arch == 3510:
        return flat.reshape(k1, rows, c0).transpose(1, 0, 2).reshape(rows, cols)
    return flat.reshape(m1, k1, 16, c0).transpose(0, 2, 1, 3).reshape(rows, cols)


# ------------------------------------------------------------------------------ Load3D
@pytest.mark.parametrize("name", SOCS)
@pytest.mark.parametrize("dtype,geom", [
    (np.float16, dict(c1=2, h=6, w=7, pads=(1, 2, 1, 0), stride=(1, 2), filt=(3, 2),
                      dil=(1, 1), m=(5, 20), k=(16, 64))),
    (np.float32, dict(c1=1, h=9, w=8, pads=(3, 3, 3, 3), stride=(2, 2), filt=(7, 7),
                      dil=(1, 1), m=(0, 32), k=(8, 384))),
    (BF16, dict(c1=1, h=8, w=8, pads=(2, 2, 2, 2), stride=(1, 1), filt=(3, 3), dil=(2, 2),
                m=(60, 4), k=(0, 144))),
])
def test_load3d_matches_numpy_im2col(soc, name, dtype, geom):
    spec = soc(name)
    c0 = 32 // np.dtype(dtype).itemsize
    g = geom
    rng = np.random.default_rng(1)
    fmap = rng.uniform(-4, 4, (g["c1"], g["h"], g["w"], c0)).astype(dtype)
    m0, mn = g["m"]
    k0, kn = g["k"]
    rows, cols = -(-mn // 16) * 16, -(-kn // c0) * c0
    captured = {}

    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(x: asc.GlobalAddress):
        x_gm = asc.GlobalTensor()
        x_gm.set_global_buffer(x)
        l1 = asc.LocalTensor(x.dtype, asc.TPosition.A1, 0, fmap.size)
        l0a = asc.LocalTensor(x.dtype, asc.TPosition.A2, 0, rows * cols)
        asc.data_copy(l1, x_gm, fmap.size)
        asc.set_fmatrix(g["h"], g["w"], list(g["pads"]))
        asc.set_load_data_padding_value(0)
        asc.load_data(l0a, l1, asc.LoadData3DParamsV2(
            channel_size=g["c1"] * c0, k_extension=kn, m_extension=mn, k_start_pt=k0,
            m_start_pt=m0, stride_w=g["stride"][1], stride_h=g["stride"][0],
            filter_w=g["filt"][1], filter_h=g["filt"][0], dilation_filter_w=g["dil"][1],
            dilation_filter_h=g["dil"][0]), asc.IsResetLoad3dConfig(False, False))
        captured["l0a"] = l0a.elements(0, rows * cols, None).copy()

    report = kern[1](fmap.reshape(-1))
    full = im2col_reference(fmap, g["pads"], g["stride"], g["filt"], g["dil"])
    got = _l0a_to_matrix(captured["l0a"], rows, cols, c0, spec.npu_arch)
    want = full[m0:m0 + mn, k0:k0 + kn]
    assert np.array_equal(got[: want.shape[0], :kn], want)
    assert report.bytes_moved.get("L1->L0A") == rows * cols * np.dtype(dtype).itemsize


def test_load3d_rejects_misuse(soc):
    soc("Ascend910B1")

    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(bad: asc.ConstExpr[str]):
        l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 4096)
        l0a = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 4096)
        params = asc.LoadData3DParamsV2(l1_h=4, l1_w=4, channel_size=12 if bad == "c" else 16,
                                        k_extension=16, m_extension=16)
        asc.load_data(l0a if bad == "c" else l1, l1, params)

    with pytest.raises(KernelError, match="channel_size 12 is not a multiple"):
        kern[1]("c")
    with pytest.raises(KernelError, match="destination must be in L0A or L0B"):
        kern[1]("dst")
    with pytest.raises(ValueError, match="pad_list"):
        asc.LoadData3DParamsV2(pad_list=(1, 2, 3))


# ------------------------------------------------------------------------------ DN2NZ
def test_dn2nz_matches_numpy_and_is_950_only(soc):
    x = np.arange(3 * 20 * 30, dtype=np.float16).reshape(3, 20, 30)  # 3 matrices, D=20, N=30
    captured = {}

    @asc.jit(kernel_type=config.KernelType.AIC_ONLY)
    def kern(src: asc.GlobalAddress):
        s = asc.GlobalTensor()
        s.set_global_buffer(src)
        l1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 16384)
        # per matrix: n = 30 rows, d = 20 columns (2 strips), strips 32 rows apart, rows 1
        # block apart, matrices 2 * 32 * 16 elements apart.
        asc.data_copy(l1, s, asc.Dn2NzParams(3, 30, 20, 600, 30, 32, 1, 1024))
        captured["l1"] = l1.elements(0, 3 * 1024, None).copy()

    soc("Ascend950PR_9579")
    kern[1](x.reshape(-1))
    got = captured["l1"].reshape(3, 2, 32, 16)
    for i in range(3):
        nd = x[i].T  # (n, d): element (n, d) at d * 30 + n
        want = np.zeros((32, 32), np.float16)
        want[:30, :20] = nd
        assert np.array_equal(got[i, 0, :30], want[:30, :16])
        assert np.array_equal(got[i, 1, :30], want[:30, 16:])  # zero-filled past d = 20
    soc("Ascend910B1")
    with pytest.raises(KernelError, match="no DN2NZ"):
        kern[1](x.reshape(-1))


# ------------------------------------------------------------------------------ gather
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_gather_permutes_by_byte_offsets(soc, dtype):
    soc("Ascend910B1")
    n = 512
    rng = np.random.default_rng(2)
    src = rng.uniform(-1, 1, n).astype(dtype)
    perm = rng.permutation(n)
    offsets = (perm * np.dtype(dtype).itemsize).astype(np.uint32)
    out = np.zeros(n, dtype)

    @asc.jit(kernel_type=config.KernelType.AIV_ONLY)
    def kern(s: asc.GlobalAddress, o: asc.GlobalAddress, d: asc.GlobalAddress):
        sg, og, dg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        sg.set_global_buffer(s)
        og.set_global_buffer(o)
        dg.set_global_buffer(d)
        pipe = asc.TPipe()
        b0, b1, b2 = (asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC),
                      asc.TBuf(asc.TPosition.VECCALC))
        pipe.init_buffer(buf=b0, num=n * 4)
        pipe.init_buffer(buf=b1, num=n * 4)
        pipe.init_buffer(buf=b2, num=n * 4)
        a, off, y = b0.get(s.dtype), b1.get(asc.uint32), b2.get(s.dtype)
        asc.data_copy(a, sg, n)
        asc.data_copy(off, og, n)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.gather(y, a, off, 0, n)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(dg, y, n)

    kern[1](src, offsets, out)
    assert np.array_equal(out, src[perm])


# ------------------------------------------------------------------------------ operators
TASKS = {"tanh": load_task("fused_conv_tanh"), "sigmoid": load_task("fused_conv_sigmoid")}
OPS = {"tanh": fused_conv_tanh, "sigmoid": fused_conv_sigmoid}
_REFS: dict = {}


def _refs(act: str, case_id: int):
    key = (act, case_id)
    if key not in _REFS:
        task = TASKS[act]
        _REFS[key] = make_references(task, task.case(case_id))
    return _REFS[key]


def _check_case(act: str, case_id: int, variant: str, soc_name: str):
    refs = _refs(act, case_id)
    case = refs.case
    out, info = OPS[act](*(t.clone() for t in refs.inputs), **case.kwargs(), variant=variant,
                         soc=soc_name, return_report=True)
    assert out.dtype == refs.golden.dtype and out.is_contiguous()
    assert tuple(out.shape) == case.output_shape
    prec = check_precision(out, refs.golden, case.output_dtype, truth=refs.truth,
                           reference=refs.same_precision)
    assert prec.passed, f"case {case_id} {variant} on {soc_name}: {prec}"
    assert info.variant == variant and info.soc == soc_name
    assert info.device_time_us == pytest.approx(sum(r.device_time_us for r in info.kernels))
    assert len(info.kernels) == (1 if variant == "fused" else 2)
    return info


# Small cases covering the features: 1x1 stride 2 no pad (5, fp16), dilation 2 (23), pads 2
# (17), bf16 (13), fp32 1x1 (12).
FAST_CASES = [("tanh", 5), ("tanh", 23), ("sigmoid", 17), ("tanh", 13), ("sigmoid", 12)]


@pytest.mark.parametrize("soc_name", SOCS)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("act,case_id", FAST_CASES)
def test_cases_pass_the_bench_precision_rule(act, case_id, variant, soc_name):
    _check_case(act, case_id, variant, soc_name)


@pytest.mark.slow
@pytest.mark.parametrize("soc_name", SOCS)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("act,case_id", [("tanh", 10), ("sigmoid", 16), ("tanh", 18),
                                         ("sigmoid", 11)])
def test_heavy_cases_pass_the_bench_precision_rule(act, case_id, variant, soc_name):
    _check_case(act, case_id, variant, soc_name)


def _inputs(dtype=torch.float16, n=1, cin=5, h=9, w=10, cout=18, k=3):
    g = torch.Generator().manual_seed(3)
    x = (torch.rand(n, cin, h, w, generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    wt = (torch.rand(cout, cin, k, k, generator=g, dtype=torch.float64) * 0.4 - 0.2).to(dtype)
    b = (torch.rand(cout, generator=g, dtype=torch.float64) * 0.4 - 0.2).to(dtype)
    return x, wt, b


@pytest.mark.parametrize("soc_name", SOCS)
def test_tails_asymmetric_pads_and_numpy_inputs(soc_name):
    """Cin, Cout and pixel counts that are not multiples of a fractal, unequal pads."""
    x, wt, b = _inputs(torch.float32)
    pads = [0, 2, 1, 3]
    xp = torch.nn.functional.pad(x.double(), (pads[2], pads[3], pads[0], pads[1]))
    want = torch.sigmoid(torch.nn.functional.conv2d(xp, wt.double(), b.double(), stride=(2, 1)))
    y = fused_conv_sigmoid(x.numpy(), wt.numpy(), b.numpy(), [2, 1], pads, [1, 1],
                           variant="semi", soc=soc_name)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.flags.c_contiguous
    assert np.allclose(y, want.numpy(), rtol=1e-5, atol=1e-6)


def test_auto_picks_the_fastest_variant():
    x, wt, b = _inputs()
    times = {v: fused_conv_tanh(x, wt, b, [1, 1], [1, 1, 1, 1], variant=v, soc="Ascend910B1",
                                return_report=True)[1].device_time_us for v in VARIANTS}
    y, info = fused_conv_tanh(x, wt, b, [1, 1], [1, 1, 1, 1], soc="Ascend910B1",
                              return_report=True)
    assert info.variant == min(times, key=times.get)
    assert info.device_time_us == pytest.approx(times[info.variant])
    assert y.dtype == torch.float16 and y.is_contiguous()


def _plan_of(act: str, case_id: int, soc_name: str = "Ascend950PR_9579"):
    case = TASKS[act].case(case_id)
    xs, ws, bs = case.input_shapes
    kw = case.kwargs()
    spec = conv_spec_from(xs, ws, bs, case.dtypes[0], kw["strides"], kw["pads"],
                          kw["dilations"])
    return plan_conv(spec, get_soc(soc_name))


@pytest.mark.parametrize("case_id", [3, 7, 14, 18])
def test_plan_spreads_the_pixels_evenly_over_the_aics(case_id):
    """The busiest AIC (ceil(tiles / AICs) tiles of whole rows) gets at most 10 % more pixel x
    channel work than an even share; the old fixed 256-pixel tiles gave case 7 twice the
    share (32 tiles on 28 AICs)."""
    p = _plan_of("tanh", case_id)
    busiest = -(-p.tiles // p.cores) * p.tp * p.nt
    even = p.n * p.hw * p.cout / get_soc("Ascend950PR_9579").aic_count
    assert busiest <= 1.1 * even, (p.rows, p.nt, p.tiles)


@pytest.mark.parametrize("case_id", [1, 5, 3, 14])
def test_epilogue_deals_even_strip_shares_in_pieces_that_fit_ub(case_id):
    """Every AIV of the epilogue gets the same number of 16-pixel strips (one more at most),
    small outputs reach one AIV per strip, and a piece's buffers fit UB."""
    soc_spec = get_soc("Ascend950PR_9579")
    p = _plan_of("tanh", case_id)
    assert p.epi_cores == min(soc_spec.aiv_count, p.epi_strips)
    shares = [(i + 1) * p.epi_strips // p.epi_cores - i * p.epi_strips // p.epi_cores
              for i in range(p.epi_cores)]
    assert max(shares) - min(shares) <= 1 and min(shares) >= 1
    assert p.epi_pix % 16 == 0
    assert p.epi_pix * epilogue_ub_bytes_per_pixel(p.dtype) <= soc_spec.ub_bytes
    assert -(-max(shares) // (p.epi_pix // 16)) < p.epi_pieces


@pytest.mark.parametrize("soc_name,variant", [("Ascend950PR_9579", "semi"),
                                              ("Ascend950PR_9579", "fused"),
                                              ("Ascend910B1", "semi")])
def test_resident_weights_are_reloaded_per_channel_block(soc_name, variant):
    """Four channel blocks, several tiles per AIC: a core whose contiguous range of tiles
    crosses a block boundary reloads the block's weights in L1 after MTE1 is done with the
    previous block's; the result matches the fp64 reference."""
    x, wt, b = _inputs(torch.float16, n=2, cin=32, h=16, w=16, cout=64)
    tiling = {"nt": 16, "pixels": 32, "window": False}  # the window: see its own test
    spec = conv_spec_from(x.shape, wt.shape, b.shape, "float16", [1, 1], [1, 1, 1, 1], [1, 1])
    p = plan_conv(spec, get_soc(soc_name), **tiling)
    assert p.w_resident and p.n_blocks == 4 and p.tiles >= 2 * p.cores
    assert p.tiles % p.cores  # uneven ranges: some cross a block boundary mid-range
    want = torch.tanh(torch.nn.functional.conv2d(x.double(), wt.double(), b.double(),
                                                 padding=1))
    y = fused_conv_tanh(x, wt, b, [1, 1], [1, 1, 1, 1], variant=variant, soc=soc_name,
                        tiling=tiling)
    assert torch.allclose(y.double(), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("variant", ["semi", "unfused"])
def test_epilogue_share_of_several_pieces_across_images(variant):
    """A result larger than the AIVs' UB holds at once: each AIV's share runs in several
    pieces, crossing (image, channel block) boundaries and a short last strip (hw = 13560)."""
    x, wt, b = _inputs(torch.float16, n=2, cin=3, h=120, w=113, cout=48, k=1)
    spec = conv_spec_from(x.shape, wt.shape, b.shape, "float16", [1, 1], [0, 0, 0, 0], [1, 1])
    p = plan_conv(spec, get_soc("Ascend950PR_9579"))
    assert p.hw % 16 and -(-p.epi_strips // p.epi_cores) > 2 * (p.epi_pix // 16)
    want = torch.tanh(torch.nn.functional.conv2d(x.double(), wt.double(), b.double()))
    y, info = fused_conv_tanh(x, wt, b, [1, 1], [0, 0, 0, 0], [1, 1], variant=variant,
                              soc="Ascend950PR_9579", return_report=True)
    assert torch.allclose(y.double(), want, rtol=2e-3, atol=2e-3)
    assert not any(r.findings for r in info.kernels)


@pytest.mark.parametrize("soc_name,variant", [("Ascend950PR_9579", "semi"),
                                              ("Ascend950PR_9579", "fused"),
                                              ("Ascend910B1", "fused")])
def test_even_tiles_split_an_image_by_strips_and_match_the_reference(monkeypatch, soc_name,
                                                                     variant):
    """Tiles that split an image's 16-pixel strips evenly (sizes differ by one strip; they
    start mid-row) cover every pixel once, and the kernels compute the right result on them,
    with a first L1 stage of one channel block."""
    x, wt, b = _inputs(torch.float16, n=3, cin=40, h=20, w=23, cout=32)
    spec = conv_spec_from(x.shape, wt.shape, b.shape, "float16", [1, 1], [1, 1, 1, 1], [1, 1])
    k = 5  # 29 strips of 460 pixels: tiles of 5 or 6 strips, the last one short
    plan = conv_plan._plan(spec, get_soc(soc_name), 16, -(-29 // k) * 16, k)
    assert plan.even and plan.pix_blocks == k and plan.c1 == 3
    spans = [plan.tile_pixels(j) for j in range(k)]
    assert [p0 for p0, _ in spans] == [0] + [p0 + m for p0, m in spans[:-1]]
    assert sum(m for _, m in spans) == plan.hw and max(m for _, m in spans) <= plan.tp
    plan = dataclasses.replace(plan, g=2, g0=1)  # stages of 1 and 2 channel blocks
    assert [plan.stage_blocks(s) for s in range(plan.stages)] == [(0, 1), (1, 2)]
    monkeypatch.setattr(fused_conv_module, "plan_conv", lambda *args, **kwargs: plan)
    want = torch.tanh(torch.nn.functional.conv2d(x.double(), wt.double(), b.double(),
                                                 padding=1))
    y, info = fused_conv_tanh(x, wt, b, [1, 1], [1, 1, 1, 1], variant=variant, soc=soc_name,
                              return_report=True, tiling={})
    assert torch.allclose(y.double(), want, rtol=2e-3, atol=2e-3)
    assert not any(r.findings for r in info.kernels)


@pytest.mark.parametrize("soc_name,variant,buffers", [("Ascend950PR_9579", "semi", 2),
                                                      ("Ascend950PR_9579", "fused", 1),
                                                      ("Ascend910B1", "semi", 2)])
def test_feature_map_window_reads_each_row_once_and_matches_the_reference(
        monkeypatch, soc_name, variant, buffers):
    """With the L1 window each core's segment (its tiles of one image and channel block) keeps
    its input rows in L1 and a tile copies in only the rows earlier tiles have not: less GM
    traffic than staging every tile's rows, and the same result, across images, channel
    blocks (the weights reload), stride 2, unequal pads, with one window or two alternating."""
    x, wt, b = _inputs(torch.float16, n=3, cin=40, h=21, w=23, cout=48)
    pads, strides = [1, 2, 0, 1], [2, 1]
    spec = conv_spec_from(x.shape, wt.shape, b.shape, "float16", strides, pads, [1, 1])
    soc = get_soc(soc_name)
    staged = plan_conv(spec, soc, nt=16, pixels=32, window=False)
    plan = plan_conv(spec, soc, nt=16, pixels=32, window=True)
    assert plan.window and not staged.window and plan.n_blocks == 3
    assert plan.tiles > 2 * plan.cores and plan.win_buffers == 2
    assert conv_plan._traffic(plan) < conv_plan._traffic(staged)
    segments = plan.segments()
    assert sum(end - first for _, first, end in segments) == plan.tiles
    assert any(first % plan.pix_blocks for _, first, _ in segments)  # mid-image starts
    per_block = plan.n * plan.pix_blocks
    crosses = any(c == d and f // per_block != g // per_block  # a core reloads the weights
                  for (c, f, _), (d, g, _) in zip(segments, segments[1:]))
    assert crosses == (soc_name == "Ascend950PR_9579")  # 910B: ranges end on block edges
    plan = dataclasses.replace(plan, win_buffers=buffers)
    monkeypatch.setattr(fused_conv_module, "plan_conv", lambda *args, **kwargs: plan)
    xp = torch.nn.functional.pad(x.double(), (pads[2], pads[3], pads[0], pads[1]))
    want = torch.tanh(torch.nn.functional.conv2d(xp, wt.double(), b.double(), stride=strides))
    y, info = fused_conv_tanh(x, wt, b, strides, pads, variant=variant, soc=soc_name,
                              return_report=True, tiling={})
    assert torch.allclose(y.double(), want, rtol=2e-3, atol=2e-3)
    assert not any(r.findings for r in info.kernels)


@pytest.mark.parametrize("variant,window", [("semi", False), ("semi", True),
                                            ("fused", True), ("unfused", False)])
def test_filter_prepass_lays_the_weights_out_as_l1_holds_them(variant, window):
    """950 filter pre-pass: the AIVs lay OIHW out in GM as [block][c1][kh][kw][nt_pad][C0]
    and every AIC copies its weights in contiguously after sync_all; a tail input channel
    block (40 = 16 + 16 + 8) and a short last output block (48 = 32 + 16, pitch 16) come
    out right, with and without the feature-map window, and in one kernel with the fused
    epilogue."""
    x, wt, b = _inputs(torch.float16, n=2, cin=40, h=14, w=15, cout=48)
    spec = conv_spec_from(x.shape, wt.shape, b.shape, "float16", [1, 1], [1, 1, 1, 1], [1, 1])
    soc = get_soc("Ascend950PR_9579")
    tiling = {"nt": 32, "pixels": 32, "window": window, "w_prepass": True}
    plan = plan_conv(spec, soc, **tiling)
    assert plan.w_prepass and plan.window == window and plan.n_blocks == 2 and plan.c1 == 3
    want = torch.tanh(torch.nn.functional.conv2d(x.double(), wt.double(), b.double(),
                                                 padding=1))
    y, info = fused_conv_tanh(x, wt, b, [1, 1], [1, 1, 1, 1], variant=variant,
                              soc="Ascend950PR_9579", return_report=True, tiling=tiling)
    assert torch.allclose(y.double(), want, rtol=2e-3, atol=2e-3)
    assert not any(r.findings for r in info.kernels)
    assert info.kernels[0].kernel_type.startswith("MIX")
    assert info.workspace_bytes >= plan.wt_elems * 2


def test_filter_prepass_is_chosen_where_it_saves_weight_bursts():
    """By default the pre-pass runs where DN2NZ's burst per (output, input) channel pair
    would cost the busiest AIC more than the pre-pass; never for a 1x1 filter or on 910B."""
    soc = get_soc("Ascend950PR_9579")
    big = conv_spec_from((2, 128, 56, 56), (128, 128, 3, 3), (128,), "float32", [2, 2],
                         [1, 1, 1, 1], [1, 1])
    assert plan_conv(big, soc).w_prepass
    small = conv_spec_from((1, 8, 16, 16), (16, 8, 3, 3), (16,), "float16", [1, 1],
                           [1, 1, 1, 1], [1, 1])
    assert not plan_conv(small, soc).w_prepass
    pointwise = conv_spec_from((1, 128, 16, 16), (128, 128, 1, 1), (128,), "float32", [1, 1],
                               [0, 0, 0, 0], [1, 1])
    assert not plan_conv(pointwise, soc).w_prepass
    assert not plan_conv(big, get_soc("Ascend910B1")).w_prepass
    with pytest.raises(ValueError, match="w_prepass=True: the filter pre-pass is for SoCs"):
        plan_conv(big, get_soc("Ascend910B1"), w_prepass=True)


def test_window_knob_is_checked():
    x, wt, b = _inputs(torch.float16)
    spec = conv_spec_from(x.shape, wt.shape, b.shape, "float16", [1, 1], [1, 1, 1, 1], [1, 1])
    with pytest.raises(ValueError, match="window='yes' must be True, False or None"):
        plan_conv(spec, get_soc("Ascend950PR_9579"), window="yes")
    with pytest.raises(ValueError, match="window=True: no tiling"):  # one tile per core
        plan_conv(spec, get_soc("Ascend950PR_9579"), window=True)


@pytest.mark.parametrize("change,match", [
    (dict(w=torch.zeros(8, 4, 3, 3, dtype=torch.float16)), "filter has 4 input channels"),
    (dict(b=torch.zeros(7, dtype=torch.float16)), "bias has 7 values"),
    (dict(b=torch.zeros(18, dtype=torch.float32)), "all inputs must share one dtype"),
    (dict(x=torch.zeros(1, 5, 9, 10, dtype=torch.float64),
          w=torch.zeros(18, 5, 3, 3, dtype=torch.float64),
          b=torch.zeros(18, dtype=torch.float64)), "float64 is not supported"),
    (dict(x=torch.zeros(5, 9, 10, dtype=torch.float16)), "inputs must be x 4-D"),
    (dict(pads=[1, 1, 1]), "pads must be four values"),
    (dict(strides=[3, 1]), r"stride = 3 is outside the supported range \[1, 2\]"),
    (dict(dilations=[1, 0]), "dilation = 0"),
    (dict(x=torch.zeros(1, 2, 9, 10, dtype=torch.float16),
          w=torch.zeros(18, 2, 3, 3, dtype=torch.float16)), "Cin = 2 is outside"),
    (dict(variant="fastest"), "variant 'fastest'"),
])
def test_invalid_input_is_a_value_error(change, match):
    x, w, b = _inputs()
    args = dict(x=x, w=w, b=b, strides=[1, 1], pads=[1, 1, 1, 1], dilations=[1, 1],
                variant="semi")
    args.update(change)
    with pytest.raises(ValueError, match=match):
        fused_conv_tanh(args.pop("x"), args.pop("w"), args.pop("b"), soc="Ascend910B1",
                        **args)


# ------------------------------------------------------------------------------ 950 L0C->UB
@pytest.mark.parametrize("act,case_id", [("tanh", 13), ("sigmoid", 12), ("tanh", 19)])
def test_fused_on_950_hands_tiles_over_by_fixpipe_to_ub(act, case_id):
    """950 fused: every tile leaves L0C for the AIVs' UB (FixPipe L0C->UB), none for GM."""
    info = _check_case(act, case_id, "fused", "Ascend950PR_9579")
    moved = info.kernels[0].bytes_moved
    case = TASKS[act].case(case_id)
    xs, ws, bs = case.input_shapes
    kw = case.kwargs()
    plan = plan_conv(conv_spec_from(xs, ws, bs, case.dtypes[0], kw["strides"], kw["pads"],
                                    kw["dilations"]), get_soc("Ascend950PR_9579"))
    # Every pixel x padded channel of every tile, in fp32; no result through GM (the only
    # workspace is the filter pre-pass's, with its one barrier).
    assert moved["L0C->UB"] == plan.n * plan.hw * plan.n_blocks * plan.nt_pad * 4
    assert info.cross_core_handoffs == plan.tiles + plan.w_prepass
    size = 4 if plan.dtype == "float32" else 2
    assert moved.get("L0C->GM", 0) == 0
    assert info.workspace_bytes == plan.w_prepass * plan.wt_elems * size
    # GM->UB: the gather table, once per AIV; with the pre-pass also the filter (once) and
    # the pre-pass's offset tables.
    table = 2 * plan.cores * 16 * plan.ub_pix * 4
    if plan.w_prepass:
        assert moved["GM->UB"] > table + plan.cout * plan.cin * plan.kk * size
    else:
        assert moved["GM->UB"] == table


def test_fused_on_910b_still_goes_through_the_gm_workspace():
    info = _check_case("tanh", 13, "fused", "Ascend910B1")
    moved = info.kernels[0].bytes_moved
    assert "L0C->UB" not in moved and moved["L0C->GM"] > 0 and info.workspace_bytes > 0


def test_fixpipe_to_ub_reaches_the_named_aiv_only_from_the_aic(soc):
    """An AIC's UB tensor is an address in its AIVs' UB: FixPipe's sub_block_id picks the AIV
    (here rows 0-15 to AIV 0, rows 8-15 to AIV 1); any other path from the AIC into that UB is
    an error."""
    soc("Ascend950PR_9579")
    seen = {}
    acc = np.arange(256, dtype=np.float32)  # NZ: one 16x16 fractal, row r at r*16

    @asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
    def kern(c: asc.GlobalAddress, bad: asc.ConstExpr[bool]):
        if asc.ascend_is_aic():
            ub = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
            l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
            l0c.elements(0, 256, None)[:] = acc
            asc.fixpipe(ub, l0c, asc.FixpipeParamsV220(16, 16, 16, 16),
                        asc.FixpipeConfig.cfg_nz())
            asc.fixpipe(ub, l0c[8 * 16:], asc.FixpipeParamsV220(16, 8, 16, 8, sub_block_id=1),
                        asc.FixpipeConfig.cfg_nz())
            if bad:
                c_gm = asc.GlobalTensor()
                c_gm.set_global_buffer(c)
                asc.data_copy(ub, c_gm, 64)
            asc.cross_core_set_flag(0, 2, asc.PipeID.PIPE_FIX)
        else:
            asc.cross_core_wait_flag(0, 2, asc.PipeID.PIPE_V)
            ub = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
            seen[asc.get_sub_block_idx()] = ub.elements(0, 256, None).copy()

    report = kern[1](np.zeros(64, np.float32), False)
    assert np.array_equal(seen[0], acc)
    assert np.array_equal(seen[1][:128], acc[128:])
    assert report.bytes_moved["L0C->UB"] == (256 + 128) * 4
    with pytest.raises(KernelError, match="cannot reach another core's local memory"):
        kern[1](np.zeros(64, np.float32), True)
