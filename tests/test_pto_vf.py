"""PyPTO Pro register-level vector functions (``@pl.vector_function``, ``vf.*``) on the simulated
950: every op against a numpy reference in the dtypes it supports, masks included (hypothesis
over the active lane count), and the findings of the VF register file."""

import math

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ascsim.pto.language as pl
from ascsim.pto.vf import VF as vf  # noqa: N811 - the name kernels use
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
FP32, FP16, BF16 = np.float32, np.float16, ml_dtypes.bfloat16
PL = {FP32: pl.DT_FP32, FP16: pl.DT_FP16, BF16: pl.DT_BF16, np.int32: pl.DT_INT32,
      np.int16: pl.DT_INT16, np.uint16: pl.DT_UINT16, np.uint32: pl.DT_UINT32,
      np.uint8: pl.DT_UINT8}
TORCH = {FP32: torch.float32, FP16: torch.float16, BF16: torch.bfloat16,
         np.int32: torch.int32, np.int16: torch.int16, np.uint16: torch.uint16,
         np.uint32: torch.uint32, np.uint8: torch.uint8}
SETTINGS = settings(max_examples=6, deadline=None)


def lanes(dt) -> int:
    return 256 // np.dtype(dt).itemsize


# ------------------------------------------------------------------ harness
@pl.vector_function
def _apply(a, b, o, name, count, dtype, extra):
    m = vf.update_mask(count, dtype=dtype)
    everything = vf.create_mask(dtype=dtype)
    x = vf.load_align(a, 0)
    y = vf.load_align(b, 0)
    r = getattr(vf, name)(x, *([y] if extra is None else [extra]), m)
    vf.store_align(o, r, everything)


@pl.vector_function
def _apply_unary(a, b, o, name, count, dtype):
    m = vf.update_mask(count, dtype=dtype)
    everything = vf.create_mask(dtype=dtype)
    x = vf.load_align(a, 0)
    r = getattr(vf, name)(x, m)
    vf.store_align(o, r, everything)


_KERNELS: dict = {}


def kernel_for(dt, out_dt=None, words=1):
    """A kernel of three UB tiles of one register each (``words``: registers per tile),
    running ``body(tile_a, tile_b, tile_o, *extra)`` on one AIV."""
    out_dt = out_dt or dt
    key = (dt, out_dt, words)
    if key in _KERNELS:
        return _KERNELS[key]
    n, n_out = lanes(dt) * words, lanes(out_dt) * words
    t_in, t_out = PL[dt], PL[out_dt]

    @pl.jit
    def kernel(a: pl.Tensor[[1, n], t_in], b: pl.Tensor[[1, n], t_in],
               o: pl.Tensor[[1, n_out], t_out], body, extra):
        ti = pl.TileType(shape=[1, n], dtype=t_in, target_memory=pl.MemorySpace.Vec)
        to = pl.TileType(shape=[1, n_out], dtype=t_out, target_memory=pl.MemorySpace.Vec)
        ta = pl.make_tile(ti, addr=0, size=256 * words)
        tb = pl.make_tile(ti, addr=256 * words, size=256 * words)
        tc = pl.make_tile(to, addr=512 * words, size=256 * words)
        with pl.section_vector():
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            pl.load(tc, o, [0, 0])  # the zeros the body's partial stores leave
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
            body(ta, tb, tc, *extra)
            pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
            pl.store(o, tc, [0, 0])

    _KERNELS[key] = kernel
    return kernel


def run(dt, body, *extra, a=None, b=None, out_dt=None, words=1, findings=()):
    """Run ``body`` on inputs ``a``, ``b`` (numpy, default random); the output as numpy."""
    out_dt = out_dt or dt
    rng = np.random.default_rng(0)
    n = lanes(dt) * words
    if a is None:
        a = rng.standard_normal(n).astype(dt) if np.dtype(dt).kind == "f" or dt is BF16 \
            else rng.integers(0, 100, n).astype(dt)
    if b is None:
        b = rng.standard_normal(n).astype(dt) if np.dtype(dt).kind == "f" or dt is BF16 \
            else rng.integers(0, 8, n).astype(dt)
    ta = torch.from_numpy(a.view(np.uint8).copy()).view(TORCH[dt]).reshape(1, -1)
    tb = torch.from_numpy(b.view(np.uint8).copy()).view(TORCH[dt]).reshape(1, -1)
    to = torch.zeros(1, lanes(out_dt) * words, dtype=TORCH[out_dt])
    with SESSION.using_soc(SOC):
        report = kernel_for(dt, out_dt, words)(ta, tb, to, body, extra)
    got = [f.category for f in report.findings]
    assert sorted(set(got)) == sorted(set(findings)), report.findings
    out = to.reshape(-1).view(torch.uint8).numpy().view(out_dt)
    return a, b, out, report


def masked(ref, count):
    out = np.array(ref, copy=True)
    out[count:] = 0
    return out


def close(got, want, dt, rtol=None):
    tol = {FP32: 1e-6, FP16: 1e-3, BF16: 1e-2}.get(dt, 0)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want).astype(np.float64),
                               rtol=rtol or tol, atol=rtol or tol)


def f32(x):
    return np.asarray(x).astype(np.float32)


# ------------------------------------------------------------------ arithmetic
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "max": np.maximum, "min": np.minimum, "abs_sub": lambda a, b: np.abs(a - b),
          "prelu": lambda x, s: np.where(x >= 0, x, x * s)}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dt", [FP32, FP16, BF16])
@SETTINGS
@given(count=st.integers(0, 128))
def test_binary_ops_zero_masked_off_lanes(name, dt, count):
    count = min(count, lanes(dt))
    a, b, out, _ = run(dt, _apply, name, count, PL[dt], None)
    with np.errstate(all="ignore"):
        want = masked(BINARY[name](f32(a), f32(b)).astype(dt), count)
    close(out, want, dt)


INT_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
              "min": np.minimum, "and_": np.bitwise_and, "or_": np.bitwise_or,
              "xor": np.bitwise_xor}


@pytest.mark.parametrize("name", sorted(INT_BINARY))
@pytest.mark.parametrize("dt", [np.int32, np.int16, np.uint16])
@SETTINGS
@given(count=st.integers(0, 128))
def test_integer_ops_wrap(name, dt, count):
    count = min(count, lanes(dt))
    a, b, out, _ = run(dt, _apply, name, count, PL[dt], None)
    want = masked(INT_BINARY[name](a, b).astype(dt), count)
    np.testing.assert_array_equal(out, want)


UNARY = {"abs": np.abs, "neg": np.negative, "relu": lambda x: np.maximum(x, 0),
         "sqrt": lambda x: np.sqrt(np.abs(x)), "exp": np.exp, "ln": lambda x: np.log(np.abs(x)),
         "log2": lambda x: np.log2(np.abs(x)), "log10": lambda x: np.log10(np.abs(x)),
         "truncate": np.trunc}
ABS_INPUT = {"sqrt", "ln", "log2", "log10"}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dt", [FP32, FP16, BF16])
@SETTINGS
@given(count=st.integers(0, 128))
def test_unary_ops(name, dt, count):
    count = min(count, lanes(dt))
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(lanes(dt)) * 2).astype(dt)
    if name in ABS_INPUT:
        a = (np.abs(f32(a)) + 0.1).astype(dt)
    a, _, out, _ = run(dt, _apply_unary, name, count, PL[dt], a=a)
    want = masked(UNARY[name](f32(a)).astype(dt), count)
    close(out, want, dt, rtol=2e-6 if dt is FP32 else None)


SCALAR = {"adds": (lambda x, s: x + s, 1.5), "subs": (lambda x, s: x - s, 0.75),
          "muls": (lambda x, s: x * s, -2.5), "maxs": (np.maximum, 0.25),
          "mins": (np.minimum, -0.25), "leaky_relu": (lambda x, s: np.where(x >= 0, x, x * s),
                                                     0.1)}


@pytest.mark.parametrize("name", sorted(SCALAR))
@pytest.mark.parametrize("dt", [FP32, FP16, BF16])
@SETTINGS
@given(count=st.integers(0, 128))
def test_ops_with_a_scalar(name, dt, count):
    count = min(count, lanes(dt))
    fn, scalar = SCALAR[name]
    a, _, out, _ = run(dt, _apply, name, count, PL[dt], scalar)
    want = masked(fn(f32(a), f32(np.asarray(scalar).astype(dt))).astype(dt), count)
    close(out, want, dt)


@pytest.mark.parametrize("dt", [np.int32, np.uint16, np.uint32])
def test_shifts_and_not(dt):
    n = lanes(dt)
    a, _, out, _ = run(dt, _apply, "shift_left", n, PL[dt], 3)
    np.testing.assert_array_equal(out, (a << 3).astype(dt))
    a, _, out, _ = run(dt, _apply, "shift_right", n, PL[dt], 2)
    np.testing.assert_array_equal(out, (a >> 2).astype(dt))
    a, _, out, _ = run(dt, _apply_unary, "not_", n // 2, PL[dt])
    np.testing.assert_array_equal(out, masked(~a, n // 2))


@pl.vector_function
def _dst_reading(a, b, o, name, count):
    m = vf.update_mask(count, dtype=pl.DT_FP32)
    x = vf.load_align(a, 0)
    y = vf.load_align(b, 0)
    d = vf.load_align(b, 0)
    if name == "axpy":
        d = vf.axpy(x, 2.0, m)
    elif name == "mul_add_dst":
        d = vf.mul_add_dst(x, x, m)
    elif name == "mul_dst_add":
        d = vf.mul_dst_add(x, y, m)
    else:
        d = vf.add(x, x, m, mode=pl.MergeMode.MERGING)
    vf.store_align(o, d, vf.create_mask())


@pytest.mark.parametrize("name,fn", [
    ("axpy", lambda a, b: a * 2 + b), ("mul_add_dst", lambda a, b: a * a + b),
    ("mul_dst_add", lambda a, b: b * a + b), ("merging", lambda a, b: a + a)])
@SETTINGS
@given(count=st.integers(0, 64))
def test_ops_that_read_their_destination_keep_it_in_masked_off_lanes(name, fn, count):
    a, b, out, _ = run(FP32, _dst_reading, name, count)
    want = np.where(np.arange(64) < count, fn(a, b), b)
    close(out, want, FP32, rtol=1e-6)


@pl.vector_function
def _mull(a, b, o, _unused):
    m = vf.create_mask(dtype=pl.DT_UINT32)
    x = vf.load_align(a, 0)
    y = vf.load_align(b, 0)
    lo, hi = vf.mull(x, y, m)
    vf.store_align(o, lo, m)
    vf.store_align(o + 32, hi, vf.update_mask(32, dtype=pl.DT_UINT32))


def test_mull_splits_the_64_bit_product():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    a, b = np.concatenate((a, a)), np.concatenate((b, b))
    _, _, out, _ = run(np.uint32, _mull, None, a=a, b=b, words=2)
    a, b = a[:64], b[:64]
    product = a.astype(np.uint64) * b.astype(np.uint64)
    np.testing.assert_array_equal(out[:32], (product & np.uint64(0xFFFFFFFF))[:32]
                                  .astype(np.uint32))
    np.testing.assert_array_equal(out[32:64], (product >> np.uint64(32))[:32].astype(np.uint32))


# ------------------------------------------------------------------ reductions
@pytest.mark.parametrize("how", ["reduce_sum", "reduce_max", "reduce_min"])
@pytest.mark.parametrize("dt", [FP32, FP16])
@SETTINGS
@given(count=st.integers(1, 128), datablock=st.booleans())
def test_reductions(how, dt, count, datablock):
    count = min(count, lanes(dt))
    a = np.random.default_rng(count).standard_normal(lanes(dt)).astype(dt)
    a, _, out, _ = run(dt, _reduce, how, count, PL[dt], datablock, a=a)
    fn = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min}[how]
    work = f32(a)
    if datablock:
        per = 32 // np.dtype(dt).itemsize
        want = np.zeros(lanes(dt), np.float32)
        for blk in range(8):
            lane = np.arange(blk * per, (blk + 1) * per)
            sel = work[lane][lane < count]
            ident = {"reduce_sum": 0.0, "reduce_max": -np.inf, "reduce_min": np.inf}[how]
            want[blk] = fn(sel) if sel.size else ident
    else:
        want = np.zeros(lanes(dt), np.float32)
        want[0] = fn(work[:count])
    # fp16 sums accumulate in fp32 and round once: within one fp16 ulp of the fp32 sum.
    close(out, want.astype(dt), dt, rtol=1e-5 if dt is FP32 else 2e-3)


@pl.vector_function
def _reduce(a, b, o, how, count, dtype, datablock):
    m = vf.update_mask(count, dtype=dtype)
    x = vf.load_align(a, 0)
    r = getattr(vf, how)(x, m, datablock=datablock)
    vf.store_align(o, r, vf.create_mask(dtype=dtype))


def test_pair_reduce_sum():
    a, _, out, _ = run(FP32, _apply_unary, "pair_reduce_sum", 64, pl.DT_FP32)
    want = np.zeros(64, np.float32)
    want[:32] = a[0::2] + a[1::2]
    close(out, want, FP32)


# ------------------------------------------------------------------ conversions
@pl.vector_function
def _cast(a, b, o, dtype, mask_dtype, layout, round_mode, count):
    m = vf.update_mask(count, dtype=mask_dtype)
    x = vf.load_align(a, 0)
    r = vf.astype(x, m, dtype=dtype, layout=layout, round_mode=round_mode)
    vf.store_align(o, r, vf.create_mask(dtype=dtype))


ROUNDS = {pl.VFRoundMode.CAST_RINT: np.rint, pl.VFRoundMode.CAST_FLOOR: np.floor,
          pl.VFRoundMode.CAST_CEIL: np.ceil, pl.VFRoundMode.CAST_TRUNC: np.trunc,
          pl.VFRoundMode.CAST_ROUND: lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)}


@pytest.mark.parametrize("mode", list(ROUNDS), ids=lambda m: m.name)
@SETTINGS
@given(count=st.integers(0, 64))
def test_float_to_int_casts_round_as_asked(mode, count):
    a = (np.random.default_rng(5).standard_normal(64) * 4).astype(np.float32)
    a[:4] = [0.5, 1.5, -0.5, -2.5]
    a, _, out, _ = run(FP32, _cast, pl.DT_INT32, pl.DT_FP32, None, mode, count, a=a,
                       out_dt=np.int32)
    np.testing.assert_array_equal(out, masked(ROUNDS[mode](a).astype(np.int32), count))


@pytest.mark.parametrize("layout", [pl.CastLayout.ZERO, pl.CastLayout.ONE], ids=str)
@pytest.mark.parametrize("target", [FP16, BF16])
def test_narrowing_casts_fill_the_even_or_odd_lanes(layout, target):
    a, _, out, _ = run(FP32, _cast, PL[target], pl.DT_FP32, layout, None, 48,
                       out_dt=target)
    want = np.zeros(128, dtype=target)
    want[layout.value::2] = masked(a.astype(target), 48)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("layout", [pl.CastLayout.ZERO, pl.CastLayout.ONE], ids=str)
def test_widening_casts_read_the_even_or_odd_lanes(layout):
    a, _, out, _ = run(FP16, _cast, pl.DT_FP32, pl.DT_FP32, layout, None, 40, out_dt=FP32)
    np.testing.assert_array_equal(out, masked(a[layout.value::2].astype(np.float32), 40))


def test_int_to_float_cast():
    a, _, out, _ = run(np.int32, _cast, pl.DT_FP32, pl.DT_FP32, None, None, 64, out_dt=FP32)
    np.testing.assert_array_equal(out, a.astype(np.float32))


@pl.vector_function
def _exp_sub(a, b, o, layout, count):
    m = vf.update_mask(count, dtype=pl.DT_FP32)
    x = vf.load_align(a, 0)
    y = vf.load_align(b, 0)
    r = vf.exp_sub(x, y, m, layout=layout)
    vf.store_align(o, r, vf.create_mask())


@pytest.mark.parametrize("layout", [pl.CastLayout.ZERO, pl.CastLayout.ONE], ids=str)
@SETTINGS
@given(count=st.integers(0, 64))
def test_exp_sub_computes_fp16_sources_in_fp32(layout, count):
    a, b, out, _ = run(FP32, _exp_sub, layout, count)
    close(out, masked(np.exp(a - b), count), FP32, rtol=2e-6)
    a16, b16, out16, _ = run(FP16, _exp_sub, layout, count, out_dt=FP32, words=1)
    want = masked(np.exp(f32(a16[layout.value::2]) - f32(b16[layout.value::2])), count)
    close(out16[:64], want, FP32, rtol=2e-6)


@pl.vector_function
def _muls_cast(a, b, o, layout):
    x = vf.load_align(a, 0)
    r = vf.muls_cast(x, 2.0, vf.create_mask(), dtype=pl.DT_FP16, layout=layout)
    vf.store_align(o, r, vf.create_mask(dtype=pl.DT_FP16))


def test_muls_cast():
    a, _, out, _ = run(FP32, _muls_cast, pl.CastLayout.ONE, out_dt=FP16)
    want = np.zeros(128, FP16)
    want[1::2] = (a * 2).astype(FP16)
    np.testing.assert_array_equal(out, want)


@pl.vector_function
def _rearrange(a, b, o, what):
    x = vf.load_align(a, 0)
    y = vf.load_align(b, 0)
    m = vf.create_mask(dtype=pl.DT_UINT16)
    if what == "interleave":
        lo, hi = vf.interleave(x, y)
    elif what == "de_interleave":
        lo, hi = vf.de_interleave(x, y)
    else:
        lo = vf.pack(x, dtype=pl.DT_UINT8)
        hi = vf.unpack(x, dtype=pl.DT_UINT32, part=pl.PackPart.UPPER)
    vf.store_align(o, lo, m)
    vf.store_align(o + 128, hi, m)


def test_interleave_de_interleave_pack_unpack():
    dt = np.uint16
    a, b, out, _ = run(dt, _rearrange, "interleave", words=2)
    both = np.empty(256, dt)
    both[0::2], both[1::2] = a[:128], b[:128]
    np.testing.assert_array_equal(out, both)
    a, b, out, _ = run(dt, _rearrange, "de_interleave", words=2)
    cat = np.concatenate((a[:128], b[:128]))
    np.testing.assert_array_equal(out, np.concatenate((cat[0::2], cat[1::2])))
    a, b, out, _ = run(dt, _rearrange, "pack", words=2)
    packed = np.zeros(256, np.uint8)
    packed[:128] = a[:128].astype(np.uint8)
    np.testing.assert_array_equal(out[:128].view(np.uint8), packed)
    np.testing.assert_array_equal(out[128:].view(np.uint32), a[64:128].astype(np.uint32))


# ------------------------------------------------------------------ fills and indices
@pl.vector_function
def _fills(a, b, o, what):
    m = vf.create_mask()
    x = vf.load_align(a, 0)
    if what == "scalar":
        r = vf.full(2.5, vf.update_mask(10))
    elif what == "lowest":
        r = vf.full(x, m)
    elif what == "highest":
        r = vf.full(x, m, pos=pl.DuplicatePos.HIGHEST)
    else:
        r = vf.arange(3, dtype=pl.DT_FP32, index_order=pl.IndexOrder.DECREASE_ORDER)
    vf.store_align(o, r, m)


def test_full_and_arange():
    a, _, out, _ = run(FP32, _fills, "scalar")
    np.testing.assert_array_equal(out, masked(np.full(64, 2.5, np.float32), 10))
    a, _, out, _ = run(FP32, _fills, "lowest")
    np.testing.assert_array_equal(out, np.full(64, a[0]))
    a, _, out, _ = run(FP32, _fills, "highest")
    np.testing.assert_array_equal(out, np.full(64, a[-1]))
    _, _, out, _ = run(FP32, _fills, "arange")
    np.testing.assert_array_equal(out, 3 - np.arange(64, dtype=np.float32))


# ------------------------------------------------------------------ loads and stores
@pl.vector_function
def _load_dist(a, b, o, dist, dtype):
    r = vf.load_align(a, 0, dist=dist, dtype=dtype)
    vf.store_align(o, r, vf.create_mask(dtype=dtype))


LOADS = {  # dist -> reference of the register from the source's bytes, as uint16 elements
    "BRC_B16": lambda s: np.full(128, s[0]),
    "US_B16": lambda s: np.repeat(s[:64], 2),
    "DS_B16": lambda s: s[0:256:2],
    "UNPK_B16": lambda s: np.stack([s[:64], np.zeros(64, s.dtype)], 1).reshape(-1),
    "BLK": lambda s: np.tile(s[:16], 8),
    "E2B_B16": lambda s: np.repeat(s[:8], 16),
}


@pytest.mark.parametrize("dist", sorted(LOADS))
def test_load_distributions(dist):
    a, _, out, _ = run(np.uint16, _load_dist, getattr(pl.LoadDist, dist), pl.DT_UINT16,
                       words=2)
    np.testing.assert_array_equal(out[:128], LOADS[dist](a).astype(np.uint16))


@pl.vector_function
def _deinterleaved_load(a, b, o):
    even, odd = vf.load_align(a, 0, dist=pl.LoadDist.DINTLV_B32)
    m = vf.create_mask()
    vf.store_align(o, even, m)
    vf.store_align(o + 64, odd, m)


def test_deinterleaving_load_fills_two_registers():
    a, _, out, _ = run(FP32, _deinterleaved_load, words=2)
    np.testing.assert_array_equal(out, np.concatenate((a[0::2], a[1::2])))


@pl.vector_function
def _stores(a, b, o, dist, count):
    x = vf.load_align(a, 0)
    y = vf.load_align(b, 0)
    m = vf.update_mask(count)
    if dist == "INTLV":
        vf.store_align(o, x, y, m, dist=pl.StoreDist.INTLV)
    else:
        vf.store_align(o, x, m, dist=getattr(pl.StoreDist, dist))


@pytest.mark.parametrize("dist", ["NORM", "FIRST_ELEMENT", "PACK", "PACK4", "INTLV"])
@SETTINGS
@given(count=st.integers(0, 64))
def test_store_distributions(dist, count):
    a, b, out, _ = run(np.uint32, _stores, dist, count, words=2)
    bits = out.view(np.uint8)
    if dist == "NORM":
        np.testing.assert_array_equal(out[:64], masked(a[:64], count))
    elif dist == "FIRST_ELEMENT":
        assert out[0] == a[0] and not out[1:].any()
    elif dist == "PACK":
        want = np.zeros(256, np.uint16)
        want[:count] = a[:count].astype(np.uint16)
        np.testing.assert_array_equal(bits.view(np.uint16), want)
    elif dist == "PACK4":
        want = np.zeros(512, np.uint8)
        want[:count] = a[:count].astype(np.uint8)
        np.testing.assert_array_equal(bits, want)
    else:
        both = np.stack([a[:64], b[:64]], 1).reshape(-1)
        np.testing.assert_array_equal(out, np.where(np.repeat(np.arange(64) < count, 2),
                                                    both, 0))


@pl.vector_function
def _block_copy(a, b, o, stride, count):
    m = vf.update_mask(count)
    r = vf.load_align(a, m, data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY, block_stride=stride)
    vf.store_align(o, r, vf.create_mask(), data_copy_mode=pl.DataCopyMode.DATA_BLOCK_COPY,
                   block_stride=1)


@pytest.mark.parametrize("count", [64, 20, 0])
def test_data_block_copy_skips_blocks_the_mask_leaves_off(count):
    a, _, out, _ = run(FP32, _block_copy, 2, count, words=2)
    blocks = [a[16 * b:16 * b + 8] if 8 * b < count else np.zeros(8, np.float32)
              for b in range(8)]
    np.testing.assert_array_equal(out[:64], np.concatenate(blocks))


@pl.vector_function
def _gather_scatter(a, b, o, what):
    m = vf.create_mask(dtype=pl.DT_UINT32)
    idx = vf.load_align(b, 0, dtype=pl.DT_UINT32)
    if what == "gather":
        r = vf.gather(a, idx, m)
        vf.store_align(o, r, m)
    else:
        x = vf.load_align(a, 0)
        vf.scatter(o, x, idx, m)


def test_gather_and_scatter():
    perm = np.random.default_rng(2).permutation(64).astype(np.int32)
    a, _, out, _ = run(np.int32, _gather_scatter, "gather", b=perm)
    np.testing.assert_array_equal(out, a[perm])
    a, _, out, _ = run(np.int32, _gather_scatter, "scatter", b=perm)
    want = np.zeros(64, np.int32)
    want[perm] = a
    np.testing.assert_array_equal(out, want)


@pl.vector_function
def _unaligned(a, b, o, shift, count):
    ureg = vf.load_unalign_init()
    vf.load_unalign_pre(ureg, a + shift)
    r = vf.load_unalign(ureg, a + shift)
    vf.store(o, r, count)


def test_unaligned_load_and_counted_store():
    a, _, out, _ = run(FP32, _unaligned, 3, 10, words=2)
    np.testing.assert_array_equal(out[:64], masked(a[3:67], 10))


# ------------------------------------------------------------------ masks
@pl.vector_function
def _masks(a, b, o, what, pattern):
    x = vf.load_align(a, 0)
    y = vf.load_align(b, 0)
    every = vf.create_mask()
    if what == "pattern":
        m = vf.create_mask(pattern=pattern)
    elif what == "compare":
        m = vf.gt(x, y, every)
    elif what == "compare_scalar":
        m = vf.le(x, 0.0, every)
    elif what == "logic":
        m1 = vf.ge(x, 0.0, every)
        m2 = vf.ge(y, 0.0, every)
        m = vf.xor(m1, m2, every)
    else:  # a mask through UB and back
        m3 = vf.lt(x, y, every)
        vf.store_align(o + 64, m3)
        vf.mem_bar(mode=pl.MemBarMode.VST_VLD)
        m = vf.create_mask()
        m = vf.load_align(o + 64)
    r = vf.select(x, y, m)
    vf.store_align(o, r, every)


PATTERNS = {"ALL": np.ones(64, bool), "ALLF": np.zeros(64, bool), "VL8": np.arange(64) < 8,
            "H": np.arange(64) < 32, "Q": np.arange(64) < 16, "M3": np.arange(64) % 3 == 0,
            "M4": np.arange(64) % 4 == 0}


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_mask_patterns_select(pattern):
    a, b, out, _ = run(FP32, _masks, "pattern", getattr(pl.MaskPattern, pattern), words=2)
    np.testing.assert_array_equal(out[:64], np.where(PATTERNS[pattern], a[:64], b[:64]))


@pytest.mark.parametrize("what,fn", [
    ("compare", lambda a, b: a > b), ("compare_scalar", lambda a, b: a <= 0),
    ("logic", lambda a, b: (a >= 0) ^ (b >= 0)), ("through_ub", lambda a, b: a < b)])
def test_compares_and_mask_logic(what, fn):
    a, b, out, _ = run(FP32, _masks, what, None, words=2)
    np.testing.assert_array_equal(out[:64], np.where(fn(a[:64], b[:64]), a[:64], b[:64]))


# ------------------------------------------------------------------ findings
@pl.vector_function
def _uses_unwritten(a, b, o, which):
    m = vf.create_mask()
    x = vf.load_align(a, 0)
    if which == "register":
        acc = vf.axpy(x, 2.0, m)  # reads acc, which nothing wrote
        vf.store_align(o, acc, m)
    else:
        for i in pl.range(0, 2):
            if i == 1:
                late = vf.create_mask()
            y = vf.abs(x, late)  # the first iteration reads a mask never set
            vf.store_align(o, y, m)


@pytest.mark.parametrize("which", ["register", "mask"])
def test_reading_an_unwritten_register_is_a_finding_at_its_line(which):
    _, _, _, report = run(FP32, _uses_unwritten, which, findings=("uninitialized-register",))
    (finding,) = [f for f in report.findings if f.category == "uninitialized-register"]
    lines = {"register": "acc = vf.axpy", "mask": "y = vf.abs(x, late)"}
    path, line = finding.locations[0]
    with open(path) as source:
        assert lines[which] in source.read().splitlines()[line - 1]


def _many_registers_source(n: int) -> str:
    loads = "\n".join(f"    r{i} = vf.load_align(a, 0)" for i in range(n))
    total = " + ".join(f"r{i}" for i in range(n))
    adds = "\n".join(f"    s = vf.add(s, r{i}, m)" for i in range(n))
    return (f"def body(a, b, o):\n    m = vf.create_mask()\n{loads}\n    s = vf.full(0.0, m)\n"
            f"{adds}\n    vf.store_align(o, s, m)\n    # {total}\n")


def test_more_live_registers_than_the_file_holds_is_a_spill_finding(tmp_path):
    import importlib.util

    path = tmp_path / "many_registers.py"
    path.write_text("import ascsim.pto.language as pl\nfrom ascsim.pto.vf import VF as vf\n\n"
                    "@pl.vector_function\n" + _many_registers_source(40))
    spec = importlib.util.spec_from_file_location("many_registers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a, _, out, report = run(FP32, module.body, findings=("register-spill",))
    close(out, a * 40, FP32, rtol=1e-5)
    _, _, _, fine = run(FP32, _apply, "add", 64, pl.DT_FP32, None)
    assert not fine.findings


def test_a_bare_int_where_an_enum_is_expected_is_refused():
    from ascsim.pto.errors import FinalRejectionError

    with pytest.raises(FinalRejectionError, match="MaskPattern"):
        run(FP32, _masks, "pattern", 3)


def test_vector_function_instructions_are_timed_on_the_vector_pipe():
    _, _, _, add = run(FP32, _apply, "add", 64, pl.DT_FP32, None)
    _, _, _, exp = run(FP32, _apply_unary, "exp", 64, pl.DT_FP32)
    assert add.pipe_busy_us()["V"] > 0 and math.isfinite(add.device_time_us)
    # exp's cost class is slower per repeat than add's (the SoC's vector table)
    assert exp.pipe_busy_us()["V"] > add.pipe_busy_us()["V"]


@pl.vector_function
def _double(src, dst):
    m = vf.create_mask()
    x = vf.load_align(src, 0)
    vf.store_align(dst, vf.add(x, x, m), m)


@pl.jit
def auto_mutex_kernel(a: pl.Tensor[[4, 64], pl.DT_FP32], o: pl.Tensor[[4, 64], pl.DT_FP32]):
    t = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    src = pl.make_tile_group(type=t, addrs=[0x0, 0x100], mutex_ids=[0, 1])
    dst = pl.make_tile_group(type=t, addrs=[0x200, 0x300], mutex_ids=[2, 3])
    with pl.section_vector():
        for row in pl.range(0, 4):
            s = src.next()
            d = dst.next()
            pl.load(s, a, [row, 0])
            _double(s, d)
            pl.store(o, d, [row, 0])


def test_a_vector_function_call_takes_its_tiles_buffer_tokens_under_auto_mutex():
    a, o = torch.randn(4, 64), torch.zeros(4, 64)
    with SESSION.using_soc(SOC):
        report = auto_mutex_kernel(a, o)
    assert report.findings == [], report.findings  # no race between MTE2/MTE3 and the VF
    torch.testing.assert_close(o, a * 2)


@pl.vector_function
def _compact_positive(a, b, o):
    every = vf.create_mask()
    tail = vf.unalign_reg_for_store()
    for half in pl.range(0, 2):
        x = vf.load_align(a, half * 64)
        keep = vf.gt(x, 0.0, every)
        packed = vf.squeeze(x, keep, gather_mode=pl.SqueezeMode.STORE_REG)
        vf.store_unalign(o, packed, tail, post_update=True)
    vf.store_unalign_post(o, tail)


def test_squeeze_and_unaligned_stores_compact_a_stream():
    a, _, out, _ = run(FP32, _compact_positive, words=2)
    kept = a[a > 0]
    np.testing.assert_array_equal(out[:kept.size], kept)
    assert not out[kept.size:].any()


@pl.jit
def vf_outside_kernel(a: pl.Tensor[[1, 64], pl.DT_FP32]):
    with pl.section_vector():
        vf.create_mask()  # not inside a vector function


def test_a_vf_op_outside_a_vector_function_is_refused_at_its_line():
    from ascsim.pto.errors import UnsupportedFeatureError

    with SESSION.using_soc(SOC), pytest.raises(UnsupportedFeatureError,
                                               match=r"test_pto_vf\.py:\d+"):
        vf_outside_kernel(torch.zeros(1, 64))


@pl.vector_function
def _add_rows(tile, value, rows, stride):
    every = vf.create_mask(dtype=pl.DT_FP32)
    for row in pl.range(0, rows):
        x = vf.load_align(tile, row * stride)
        vf.store_align(tile + row * stride, vf.adds(x, value, every), every)


@pl.jit
def subview_kernel(x: pl.Tensor[[4, 128], pl.DT_FP32], o: pl.Tensor[[4, 128], pl.DT_FP32]):
    t = pl.TileType(shape=[4, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    whole = pl.make_tile(t, addr=0)
    with pl.section_vector():
        right = whole[:, 64:]
        pl.load(whole, x, [0, 0])
        _add_rows(right, 3.0, 4, 128)
        pl.store(o, whole, [0, 0])


def test_a_sub_tile_view_passed_to_a_vector_function_points_at_its_first_element():
    x, o = torch.rand(4, 128), torch.zeros(4, 128)
    with SESSION.using_soc(SOC):
        subview_kernel(x, o)
    want = x.clone()
    want[:, 64:] += 3.0
    torch.testing.assert_close(o, want, rtol=0, atol=0)


@pl.vector_function
def _byte_mask_row(a, b, o, row):
    every = vf.create_mask(dtype=pl.DT_FP32)
    keep = vf.create_mask(dtype=pl.DT_FP32)
    keep = vf.load_align(a, row * 64, dist=pl.LoadDist.DS)  # 64 bytes, one per fp32 lane
    ones = vf.full(1.0)
    zeros = vf.full(0.0)
    vf.store_align(o, vf.select(ones, zeros, keep), every)


@pytest.mark.parametrize("row", [0, 3])
def test_a_mask_load_at_an_integer_offset_reads_from_there(row):
    """The causal FA kernels read row ``k`` of a 0/1 byte mask into a predicate with
    ``load_align(mask_tile, k * 64, dist=DS)``: each byte's low bit becomes an fp32 lane's."""
    a = (np.random.default_rng(1).random(512) < 0.5).astype(np.uint8)
    _, _, out, _ = run(np.uint8, _byte_mask_row, row, a=a, out_dt=FP32, words=2)
    np.testing.assert_array_equal(out[:64], a[row * 64:(row + 1) * 64].astype(np.float32))


@pl.vector_function
def _cursor_and_base(a, b, o):
    every = vf.create_mask()
    x = vf.load_align(a, 0)
    vf.store_align(o, x, every, post_update=True)  # advances o's cursor by one register
    y = vf.load_align(o, 0)                          # a plain load: from o's start
    vf.store_align(o, vf.adds(y, 1.0, every), every, 64, post_update=True)  # at the cursor


def test_a_post_update_moves_a_cursor_that_plain_accesses_of_the_tile_do_not_see():
    """PyPTO Pro's code generator gives a tile's post-update accesses a cursor of their own,
    apart from its base pointer (the lightning indexer reads a squeezed stream back from
    its start after storing it with post-updates)."""
    a, _, out, _ = run(FP32, _cursor_and_base, words=2)
    np.testing.assert_array_equal(out[:64], a[:64])
    np.testing.assert_array_equal(out[64:], a[:64] + np.float32(1.0))
