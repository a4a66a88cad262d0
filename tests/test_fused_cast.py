"""Fused vector casts and dequantisation (add_relu_cast, sub_relu_cast, mul_cast,
add_deq_relu, cast_deq with set_deq_scale / VdeqInfo) against numpy references written from
Ascend C's formulas: the fused result in the sources' type, then nearest-even rounding with
saturation for integer targets; DEQSCALE's fp32 scale cut to 10 mantissa bits."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector, strided_index

import ascsim.asc as asc
from ascsim.isa import KernelError

RNG = np.random.default_rng(7)


def _sat(x, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.rint(x.astype(np.float64)), info.min, info.max).astype(dtype)


def _fused_reference(name, a, b, dst_dtype):
    with np.errstate(all="ignore"):
        if a.dtype == np.int16:
            r = {"add_relu_cast": a + b, "sub_relu_cast": a - b}[name]
            r = np.maximum(r, 0)
        else:
            wide = a.astype(np.float64), b.astype(np.float64)
            r = {"add_relu_cast": np.maximum(wide[0] + wide[1], 0),
                 "sub_relu_cast": np.maximum(wide[0] - wide[1], 0),
                 "mul_cast": wide[0] * wide[1]}[name]
            r = r.astype(a.dtype)  # the fused op's result in the sources' type
    if np.dtype(dst_dtype).kind in "iu":
        return _sat(r, dst_dtype)
    return r.astype(np.float64).astype(dst_dtype)


CASES = [("add_relu_cast", np.float16, np.int8), ("add_relu_cast", np.int16, np.int8),
         ("add_relu_cast", np.float32, np.float16), ("sub_relu_cast", np.float16, np.int8),
         ("sub_relu_cast", np.int16, np.int8), ("sub_relu_cast", np.float32, np.float16),
         ("mul_cast", np.float16, np.int8), ("mul_cast", np.float16, np.uint8)]


def _inputs(src, n):
    if np.dtype(src).kind == "i":
        return (RNG.integers(-300, 300, n).astype(src), RNG.integers(-300, 300, n).astype(src))
    return (RNG.uniform(-200, 200, n).astype(src), RNG.uniform(-3, 3, n).astype(src))


@pytest.mark.parametrize("name,src,dst", CASES)
def test_fused_cast_count_form(name, src, dst):
    n = 300
    a, b = _inputs(src, n)
    got, _ = run_vector(lambda d, s0, s1: getattr(asc, name)(d, s0, s1, n),
                        np.zeros(n, dst), a, b)
    np.testing.assert_array_equal(got, _fused_reference(name, a, b, dst))


@pytest.mark.parametrize("name,src,dst", [CASES[0], CASES[2], CASES[6]])
def test_fused_cast_mask_repeat_form(name, src, dst):
    a, b = _inputs(src, 1024)
    size = max(np.dtype(src).itemsize, np.dtype(dst).itemsize)
    per = 256 // size
    mask = [0x00FF_00FF_00FF_00FF, 0x0F] if per == 128 else 40
    sizes = {s: np.dtype(s).itemsize for s in (src, dst)}
    # Each operand fills its own blocks: the narrower side strides by its share of a repeat.
    rep = {s: 8 * sizes[s] // size for s in (src, dst)}
    params = asc.BinaryRepeatParams(1, 1, 1, rep[dst], rep[src], rep[src])
    out = np.full(512, 5, dst)
    got, _ = run_vector(lambda d, s0, s1: getattr(asc, name)(d, s0, s1, mask, 2, params),
                        out, a, b)
    expected = out.copy()
    di = strided_index(mask, 2, per, sizes[dst], 1, rep[dst])
    si = strided_index(mask, 2, per, sizes[src], 1, rep[src])
    for drow, srow in zip(di, si):
        expected[drow] = _fused_reference(name, a[srow], b[srow], dst)
    np.testing.assert_array_equal(got, expected)


def test_fused_cast_rejects_a_type_pair_it_has_not():
    a, b = _inputs(np.float32, 64)
    with pytest.raises(KernelError, match="float32 -> int8 is not supported"):
        run_vector(lambda d, s0, s1: asc.add_relu_cast(d, s0, s1, 64), np.zeros(64, np.int8),
                   a, b)


def test_add_deq_relu_scales_and_clamps():
    n = 256
    a = RNG.integers(-5000, 5000, n).astype(np.int32)
    b = RNG.integers(-5000, 5000, n).astype(np.int32)
    scale = 0.0137

    def body(d, s0, s1):
        asc.set_deq_scale(scale)
        asc.add_deq_relu(d, s0, s1, n)

    got, _ = run_vector(body, np.zeros(n, np.float16), a, b)
    exact = (a.astype(np.float32) + b.astype(np.float32)) * np.float32(np.float16(scale))
    np.testing.assert_array_equal(got, np.maximum(exact, 0).astype(np.float16))


def test_cast_deq_int32_to_half():
    n = 200
    a = RNG.integers(-100000, 100000, n).astype(np.int32)

    def body(d, s):
        asc.set_deq_scale(0.25)
        asc.cast_deq(d, s, n)

    got, _ = run_vector(body, np.zeros(n, np.float16), a)
    np.testing.assert_array_equal(got, (a.astype(np.float32) * np.float32(0.25))
                                  .astype(np.float16))


def _cut(scale):
    return (np.float32(scale).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.parametrize("half_block", [True, False])
@pytest.mark.parametrize("signed", [True, False])
def test_cast_deq_int16_to_b8_with_one_scale(half_block, signed):
    n = 96  # six source blocks
    src = RNG.integers(-3000, 3000, n).astype(np.int16)
    dst_type = np.int8 if signed else np.uint8
    scale, offset = 0.0731, -37

    def body(d, s):
        asc.set_deq_scale(scale, offset, signed)
        asc.cast_deq(d, s, n, False, half_block)

    out = np.full(2 * n, 9, dst_type)
    got, _ = run_vector(body, out, src)
    values = np.rint(src.astype(np.float32) * _cut(scale) + np.float32(offset))
    values = np.clip(values, -128, 127) if signed else np.clip(values, 0, 255)
    expected = out.copy()
    for j in range(n // 16):
        first = j * 32 + (16 if half_block else 0)
        expected[first:first + 16] = values[j * 16:(j + 1) * 16].astype(dst_type)
    np.testing.assert_array_equal(got, expected)


def test_cast_deq_vector_table_one_word_per_lane():
    src = RNG.integers(-2000, 2000, 256).astype(np.int16)
    scales = RNG.uniform(0.01, 0.2, 16).astype(np.float32)
    offsets = RNG.integers(-256, 256, 16)
    info_args = ([float(s) for s in scales], [int(o) for o in offsets], [True] * 16)

    @asc.jit
    def kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, info_args: asc.ConstExpr[tuple]):
        pipe = asc.TPipe()
        bs = asc.TBuf(asc.TPosition.VECCALC)
        bd = asc.TBuf(asc.TPosition.VECCALC)
        bt = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=bs, num=512)
        pipe.init_buffer(buf=bd, num=512)
        pipe.init_buffer(buf=bt, num=128)
        ls, ld, lt = bs.get(asc.int16), bd.get(asc.int8), bt.get(asc.uint64)
        gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
        gx.set_global_buffer(x)
        gy.set_global_buffer(y)
        asc.data_copy(ls, gx, 256)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.duplicate(ld.reinterpret_cast(asc.int16), 0, 256)
        asc.set_deq_scale(lt, asc.VdeqInfo(info_args[0], info_args[1], info_args[2]))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        params = asc.UnaryRepeatParams(1, 1, 8, 8)
        asc.cast_deq(ld, ls, 128, 2, params, True, True, True)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(gy, ld, 512)

    out = np.zeros(512, np.int8)
    kernel[1](src, out, info_args)
    lane = np.arange(256) % 16
    values = np.rint(src.astype(np.float32) * np.array([_cut(s) for s in scales])[lane]
                     + offsets[lane].astype(np.float32))
    expected = np.zeros(512, np.int8)
    for j in range(16):
        expected[j * 32 + 16: j * 32 + 32] = np.clip(values[j * 16:(j + 1) * 16], -128, 127)
    np.testing.assert_array_equal(out, expected)


def test_cast_deq_without_set_deq_scale_reads_the_reset_register():
    a = np.arange(64, dtype=np.int32)
    got, report = run_vector(lambda d, s: asc.cast_deq(d, s, 64), np.ones(64, np.float16), a)
    np.testing.assert_array_equal(got, np.zeros(64, np.float16))  # scale 0
    assert [f.category for f in report.findings] == ["register-unset"]


def test_cast_deq_with_the_other_form_of_set_deq_scale_is_an_error():
    a = np.zeros(64, np.int32)

    def body(d, s):
        asc.set_deq_scale(1.0, 0, True)
        asc.cast_deq(d, s, 64)

    with pytest.raises(KernelError, match="last set by set_deq_scale\\(scale, offset"):
        run_vector(body, np.zeros(64, np.float16), a)
