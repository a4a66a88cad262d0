"""MX matmul (``pl.matmul_mx`` / ``matmul_mx_acc``: FP8 operands, E8M0 scales per 32 elements
of K in the L0A / L0B MX buffers), the 8-bit float and E8M0 converters over every code, and the
fixpipe's per-channel scale words."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim.session import SESSION
from ascsim.sim import fp4, mx
from ascsim.sim.numerics import convert

SOC = "Ascend950PR_9579"
M, K, N = 32, 128, 48
TK = 64  # K per matmul: two scale groups
G = K // 32
Mat, Left, Right, Acc = (pl.MemorySpace.Mat, pl.MemorySpace.Left, pl.MemorySpace.Right,
                         pl.MemorySpace.Acc)
SLeft, SRight = pl.MemorySpace.ScaleLeft, pl.MemorySpace.ScaleRight
E4M3, E5M2, E8M0 = pl.DT_FP8E4M3FN, pl.DT_FP8E5M2, pl.DT_FP8E8M0
E2M1, E1M2 = pl.DT_FP4E2M1, pl.DT_FP4E1M2
FP4_TYPES = (E2M1, E1M2)


@pytest.fixture(autouse=True)
def _soc():
    with SESSION.using_soc(SOC):
        yield


# ------------------------------------------------------------------ independent decodings
def _minifloat(code: int, exp_bits: int, man_bits: int, bias: int, ieee_top: bool) -> float:
    """A sign / exponent / mantissa byte from the format's definition: subnormals at exponent
    0; the all-ones exponent is inf / NaN when ``ieee_top`` (E5M2), else only the all-ones
    mantissa there is NaN (E4M3FN: no infinities)."""
    sign = -1.0 if code >> (exp_bits + man_bits) & 1 else 1.0
    e = code >> man_bits & ((1 << exp_bits) - 1)
    m = code & ((1 << man_bits) - 1)
    top = (1 << exp_bits) - 1
    if e == top and ieee_top:
        return sign * float("inf") if m == 0 else float("nan")
    if e == top and m == (1 << man_bits) - 1:
        return float("nan")
    if e == 0:
        return sign * m / (1 << man_bits) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)


DECODERS = {"float8_e4m3fn": lambda c: _minifloat(c, 4, 3, 7, False),
            "float8_e5m2": lambda c: _minifloat(c, 5, 2, 15, True)}
ML_TYPES = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}


def _fp4(code: int, exp_bits: int) -> float:
    """A 4-bit sign / exponent / mantissa code, bias 1, subnormals at exponent 0, no
    infinities or NaN (E2M1: OCP MX v1.0 §5.3.3; E1M2 the same rule with one exponent bit)."""
    man_bits = 3 - exp_bits
    sign = -1.0 if code & 8 else 1.0
    e, m = code >> man_bits & ((1 << exp_bits) - 1), code & ((1 << man_bits) - 1)
    frac = m / (1 << man_bits)
    return sign * (frac if e == 0 else (1 + frac) * 2.0 ** (e - 1))


FP4_DECODERS = {"float4_e2m1": lambda c: _fp4(c, 2), "float4_e1m2": lambda c: _fp4(c, 1)}


def _e8m0(code: int) -> float:
    """OCP MX v1.0 §5.4: 2^(e - 127), 0xFF NaN; no sign, no zero."""
    return float("nan") if code == 0xFF else 2.0 ** (code - 127)


def _same(got, want) -> bool:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return bool(np.array_equal(got, want, equal_nan=True))


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_fp8_storage_types_decode_every_code_by_the_definition(name):
    codes = np.arange(256, dtype=np.uint8)
    got = codes.view(ML_TYPES[name]).astype(np.float64)
    assert _same(got, [DECODERS[name](int(c)) for c in codes])


def test_e8m0_scales_decode_every_code_by_the_definition():
    codes = np.arange(256, dtype=np.uint8)
    want = [_e8m0(int(c)) for c in codes]
    assert _same(mx.e8m0_values(codes), want)
    assert _same(mx.e8m0_values(codes.view(ml_dtypes.float8_e8m0fnu)), want)
    assert _same(codes.view(ml_dtypes.float8_e8m0fnu).astype(np.float64), want)


@pytest.mark.parametrize("name", sorted(FP4_DECODERS))
def test_fp4_codes_decode_and_encode_by_the_definition(name):
    codes = np.arange(16, dtype=np.uint8)
    want = np.array([FP4_DECODERS[name](int(c)) for c in codes])
    assert _same(fp4.decode(codes, name), want)
    if name == "float4_e2m1":  # ml_dtypes has this one
        assert _same(codes.view(ml_dtypes.float4_e2m1fn).astype(np.float64), want)
    assert np.array_equal(fp4.encode(want, name), codes)  # every value to its own code
    assert np.array_equal(fp4.unpack(fp4.pack(codes)), codes)
    assert np.array_equal(fp4.pack(codes)[:1], [0x10])  # code 0 low, code 1 high
    mags = want[:8]
    mid = (mags[:-1] + mags[1:]) / 2
    low, high = np.arange(7), np.arange(1, 8)
    for mode, pick in (("rint", np.where(low % 2 == 0, low, high)), ("round", high),
                       ("trunc", low), ("ceil", high), ("floor", low)):
        assert np.array_equal(fp4.encode(mid, name, mode), pick), mode
        neg = fp4.encode(-mid, name, mode)
        flip = {"ceil": low, "floor": high}.get(mode, pick)
        assert np.array_equal(neg, flip | 8), mode
    top = fp4.encode(np.array([mags[-1] * 4, -np.inf]), name)
    assert np.array_equal(top, [7, 15])  # saturates: there is no infinity


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_casts_to_fp8_round_every_midpoint_as_their_mode_says(name):
    """fp32 -> FP8 on the vector unit: each finite code round-trips; the midpoint of two
    neighbours goes to the even code (rint) or away from zero (round)."""
    target = np.dtype(ML_TYPES[name])
    values = np.array([DECODERS[name](c) for c in range(256)])
    finite = np.isfinite(values)
    codes = np.arange(256, dtype=np.uint8)[finite]
    exact = values[finite].astype(np.float32)
    assert np.array_equal(convert(exact, target, "rint").view(np.uint8), codes)
    order = np.argsort(values[finite], kind="stable")
    low, high = values[finite][order][:-1], values[finite][order][1:]
    keep = (low != high) & (np.abs(low) > 0) & (np.abs(high) > 0)  # skip the +-0 pair
    low, high = low[keep], high[keep]
    mid = ((low + high) / 2).astype(np.float32)
    assert np.array_equal(mid.astype(np.float64), (low + high) / 2)  # exact in fp32
    low_codes = convert(low.astype(np.float32), target, "rint").view(np.uint8)
    high_codes = convert(high.astype(np.float32), target, "rint").view(np.uint8)
    even = np.where((low_codes & 1) == 0, low_codes, high_codes)
    assert np.array_equal(convert(mid, target, "rint").view(np.uint8), even)
    away = np.where(np.abs(low) > np.abs(high), low_codes, high_codes)
    assert np.array_equal(convert(mid, target, "round").view(np.uint8), away)


# ------------------------------------------------------------------ the kernel
def _tile(shape, dtype, space, addr, **kw):
    return pl.make_tile(pl.TileType(shape=shape, dtype=dtype, target_memory=space, **kw),
                        addr=addr)


def _sync(src, dst):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=0)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=0)


P = pl.PipeType


def _k_step(a, b, sa, sb, acc, kb, a_type, b_type):
    """One K tile of 64: GM -> L1 -> L0 / the MX buffers -> Mmad (first one, or accumulate)."""
    a_mat = _tile([M, TK], a_type, Mat, 0)
    b_mat = _tile([TK, N], b_type, Mat, 0x4000)
    sa_mat = _tile([M, TK // 32], E8M0, Mat, 0x8000, layout=pl.ZZ)
    sb_mat = _tile([TK // 32, N], E8M0, Mat, 0x9000, layout=pl.NN)
    a_l0 = _tile([M, TK], a_type, Left, 0x1000)
    b_l0 = _tile([TK, N], b_type, Right, 0x2000)
    sa_l0 = _tile([M, TK // 32], E8M0, SLeft, 0x100)
    sb_l0 = _tile([TK // 32, N], E8M0, SRight, 0x200)
    pl.load(a_mat, a, [0, kb * TK // (2 if a_type in FP4_TYPES else 1)])
    pl.load(b_mat, b, [kb * TK, 0])
    pl.load(sa_mat, sa, [0, kb, 0])
    pl.load(sb_mat, sb, [kb, 0, 0])
    _sync(P.MTE2, P.MTE1)
    pl.move(a_l0, a_mat)
    pl.move(b_l0, b_mat)
    pl.move(sa_l0, sa_mat)
    pl.move(sb_l0, sb_mat)
    _sync(P.MTE1, P.M)
    if kb == 0:
        pl.matmul_mx(acc, a_l0, b_l0, sa_l0, sb_l0)
    else:
        pl.matmul_mx_acc(acc, acc, a_l0, b_l0, sa_l0, sb_l0)
    _sync(P.M, P.MTE1)
    _sync(P.M, P.MTE2)


def _mx_kernel(a_type, b_type):
    # (MXFP4 tensors are [M, K/2] and [K, N/2] bytes: two codes to a byte)
    def mx_kernel(a: pl.Tensor[[M, pl.DYNAMIC], a_type], b: pl.Tensor[[K, pl.DYNAMIC], b_type],
                  sa: pl.Tensor[[M, G // 2, 2], E8M0], sb: pl.Tensor[[G // 2, N, 2], E8M0],
                  out: pl.Tensor[[M, N], pl.DT_FP32]):
        with pl.section_cube():
            acc = _tile([M, N], pl.DT_FP32, Acc, 0)
            _k_step(a, b, sa, sb, acc, 0, a_type, b_type)
            _k_step(a, b, sa, sb, acc, 1, a_type, b_type)
            _sync(P.M, P.FIX)
            pl.store(out, acc, [0, 0])

    return pl.jit()(mx_kernel)


TYPES = {"e4m3": (E4M3, "float8_e4m3fn", torch.float8_e4m3fn),
         "e5m2": (E5M2, "float8_e5m2", torch.float8_e5m2),
         "e2m1": (E2M1, "float4_e2m1", None), "e1m2": (E1M2, "float4_e1m2", None)}


def _operands(name, shape, rng):
    """Random finite codes of ``name`` with magnitudes in [1/4, 4], and their fp32 values
    (FP4: every code, packed two to a byte along the last axis, the first in the low bits)."""
    _, np_name, torch_type = TYPES[name]
    if torch_type is None:
        codes = rng.integers(0, 16, size=shape, dtype=np.uint8)
        values = np.array([FP4_DECODERS[np_name](c) for c in range(16)], dtype=np.float32)
        packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
        return torch.from_numpy(packed), values[codes]
    values = np.array([DECODERS[np_name](c) for c in range(256)])
    pool = np.flatnonzero(np.isfinite(values) & (np.abs(values) >= 0.25)
                          & (np.abs(values) <= 4)).astype(np.uint8)
    codes = rng.choice(pool, size=shape).astype(np.uint8)
    return torch.from_numpy(codes).view(torch_type), values[codes].astype(np.float32)


def _pack(logical: np.ndarray, group_axis: int) -> torch.Tensor:
    """E8M0 codes with the group axis split into ``[G/2, 2]``, the pair moved last (the
    physical MX scale layout: [M, G/2, 2] for A, [G/2, N, 2] for B)."""
    split = list(logical.shape)
    split[group_axis:group_axis + 1] = [split[group_axis] // 2, 2]
    parts = logical.reshape(split)
    axes = [i for i in range(parts.ndim) if i != group_axis + 1] + [group_axis + 1]
    return torch.from_numpy(np.ascontiguousarray(parts.transpose(axes)))


def _run(a_name, b_name, a, b, sa_codes, sb_codes):
    out = torch.zeros(M, N)
    with SESSION.collect() as run:
        _mx_kernel(TYPES[a_name][0], TYPES[b_name][0])(a, b, _pack(sa_codes, 1),
                                                       _pack(sb_codes, 0), out)
    findings = {f.category for r in run.reports for f in r.findings}
    assert not findings, findings
    return out


@pytest.mark.parametrize("a_name,b_name", [("e4m3", "e4m3"), ("e4m3", "e5m2"),
                                           ("e5m2", "e4m3"), ("e5m2", "e5m2"),
                                           ("e2m1", "e2m1"), ("e2m1", "e1m2"),
                                           ("e1m2", "e2m1")])
def test_mx_matmul_matches_dequantise_then_matmul(a_name, b_name):
    rng = np.random.default_rng(7)
    a, a_values = _operands(a_name, (M, K), rng)
    b, b_values = _operands(b_name, (K, N), rng)
    sa = rng.integers(120, 135, size=(M, G), dtype=np.uint8)
    sb = rng.integers(120, 135, size=(G, N), dtype=np.uint8)
    out = _run(a_name, b_name, a, b, sa, sb)
    scale = lambda e: np.exp2(e.astype(np.float32) - 127)  # noqa: E731
    a_deq = a_values * np.repeat(scale(sa), 32, axis=1)  # exact in fp32
    b_deq = b_values * np.repeat(scale(sb), 32, axis=0)
    torch.testing.assert_close(out, torch.from_numpy(a_deq @ b_deq), rtol=1e-3, atol=1e-3)
    # Tighter: within two fp32 roundings (one per K tile) of the exact sum.
    exact = a_deq.astype(np.float64) @ b_deq.astype(np.float64)
    bound = 2.0 ** -23 * (np.abs(a_deq).astype(np.float64) @ np.abs(b_deq)) * 2
    assert (np.abs(out.numpy() - exact) <= bound).all()


def test_mx_scales_combine_their_exponents_and_nan_spreads():
    """Scales 2^-127 x 2^127 (and 2^127 x 2^-127) give the unscaled product, although either
    scaled operand alone would leave fp32's range; code 0xFF is NaN."""
    rng = np.random.default_rng(3)
    a, a_values = _operands("e4m3", (M, K), rng)
    b, b_values = _operands("e5m2", (K, N), rng)
    pairs = np.array([(0, 254), (254, 0), (127, 127), (130, 124)], dtype=np.uint8)
    sa = np.repeat(pairs[None, :, 0], M, axis=0)
    sb = np.repeat(pairs[:, 1, None], N, axis=1)
    out = _run("e4m3", "e5m2", a, b, sa, sb)
    combined = np.exp2(pairs[:, 0].astype(np.float64) + pairs[:, 1] - 254)
    want = (a_values * np.repeat(combined, 32)[None, :]).astype(np.float64) @ b_values
    torch.testing.assert_close(out, torch.from_numpy(want.astype(np.float32)), rtol=1e-6,
                               atol=0)
    sa[:, 1] = 0xFF
    assert torch.isnan(_run("e4m3", "e5m2", a, b, sa, sb)).all()


# ------------------------------------------------------------------ refusals
def _refusal_kernel(case):
    @pl.jit()
    def bad_mx(out: pl.Tensor[[M, N], pl.DT_FP32]):
        with pl.section_cube():
            acc = _tile([M, N], pl.DT_FP32, Acc, 0)
            k = 32 if case == "k32" else TK
            lhs = _tile([M, k], E2M1 if case == "mixed" else E4M3, Left, 0x1000)
            rhs = _tile([k, N], E4M3, Right, 0x1000)
            sa = _tile([M, 4 if case == "shape" else k // 32], E8M0, SLeft,
                       0x120 if case == "address" else 0x100)
            sb = _tile([k // 32, N], E8M0, SRight, 0x100)
            pl.matmul_mx(acc, lhs, rhs, sa, sb)  # mark: bad-mx

    return bad_mx


@pytest.mark.parametrize("case,message", [
    ("address", r"scale_a address must equal lhs_tile address >> 4, got lhs_tile=0x1000, "
                r"expected scale_a=0x100, actual scale_a=0x120"),
    ("k32", r"K dimension must be a multiple of 64 for MX matmul, got lhs K=32"),
    ("shape", r"scale_a shape must match lhs_tile MX groups, expected \[32, 2\]"),
    ("mixed", r"\(lhs,rhs\) must be FP8/FP4 combo and dst FP32"),
])
def test_bad_mx_matmuls_are_refused_at_their_line(case, message):
    with pytest.raises(Exception, match=message) as info:
        _refusal_kernel(case)(torch.zeros(M, N))
    line = next(n for n, text in enumerate(open(__file__), 1) if "mark: bad-mx" in text
                and "next(" not in text)
    assert f"test_pto_mx.py:{line}" in str(info.value)


# ------------------------------------------------------------------ fixpipe scale words
@pl.jit()
def channel_kernel(a: pl.Tensor[[M, TK], E4M3], b: pl.Tensor[[TK, N], E4M3],
                   sa: pl.Tensor[[M, 1, 2], E8M0], sb: pl.Tensor[[1, N, 2], E8M0],
                   deq: pl.Tensor[[1, N], pl.DT_INT64], out: pl.Tensor[[M, N], pl.DT_FP32]):
    with pl.section_cube():
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        deq_mat = _tile([1, N], pl.DT_INT64, Mat, 0xA000, layout=pl.ND)
        deq_fb = _tile([1, N], pl.DT_INT64, pl.MemorySpace.Scaling, 0)
        pl.load(deq_mat, deq, [0, 0])
        _sync(P.MTE2, P.FIX)
        pl.move(deq_fb, deq_mat)
        _k_step(a, b, sa, sb, acc, 0, E4M3, E4M3)
        _sync(P.M, P.FIX)
        pl.store(out, acc, [0, 0], scale=deq_fb)


def test_a_channel_scale_keeps_ten_mantissa_bits():
    """The fixpipe uses sign, exponent and the top 10 mantissa bits of each scale word."""
    rng = np.random.default_rng(5)
    a, a_values = _operands("e4m3", (M, TK), rng)
    b, b_values = _operands("e4m3", (TK, N), rng)
    ones = np.full((M, 2), 127, dtype=np.uint8)
    scales = np.linspace(0.5, 1.5, N).astype(np.float32)
    words = torch.from_numpy(scales.view(np.uint32).astype(np.int64).reshape(1, N))
    out = torch.zeros(M, N)
    channel_kernel(a, b, _pack(ones, 1), _pack(np.full((2, N), 127, np.uint8), 0), words, out)
    kept = (scales.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    assert not np.array_equal(kept, scales)  # the test's scales do lose bits
    want = (a_values.astype(np.float64) @ b_values).astype(np.float32) * kept
    torch.testing.assert_close(out, torch.from_numpy(want), rtol=1e-6, atol=0)


# ------------------------------------------------------------------ parse-time refusals
@pl.jit()
def fp16_scale_kernel(scale: pl.DT_FP16, out: pl.Tensor[[M, N], pl.DT_INT8]):
    with pl.section_cube():
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        pl.store(out, acc, [0, 0], scale=scale)  # mark: fp16-scale


@pl.jit()
def dual_channel_kernel(out: pl.Tensor[[M, N], pl.DT_INT8]):
    vec = _tile([M, N], pl.DT_INT8, pl.MemorySpace.Vec, 0)
    with pl.section_cube():
        acc = _tile([M, N], pl.DT_FP32, Acc, 0)
        deq = pl.make_tile(pl.TileType(shape=[1, N], dtype=pl.DT_INT64,
                                       target_memory=pl.MemorySpace.Scaling), addr=0)
        pl.move(vec, acc, scale=deq, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)  # mark: dual


@pytest.mark.parametrize("run,mark,message", [
    (lambda: fp16_scale_kernel(torch.tensor(2.0, dtype=torch.float16),
                               torch.zeros(M, N, dtype=torch.int8)),
     "mark: fp16-scale", r"scale runtime scalar dtype fp16 is not supported"),
    (lambda: dual_channel_kernel(torch.zeros(M, N, dtype=torch.int8)),
     "mark: dual", r"scale \(per-channel\) only supports single-mode acc_to_vec_mode"),
])
def test_refused_scales_are_parse_errors_before_the_arguments_bind(run, mark, message):
    from ascsim.pto.errors import ParserSyntaxError

    with pytest.raises(ParserSyntaxError, match=message) as info:
        run()
    line = next(n for n, text in enumerate(open(__file__), 1) if mark in text
                and "next(" not in text and "run," not in text and '"mark' not in text)
    assert f"test_pto_mx.py:{line}" in str(info.value)
