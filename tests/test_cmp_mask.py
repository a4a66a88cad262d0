"""The compare-mask register: compare into the register, get_cmp_mask / set_cmp_mask, and
select by the register (VSEL_CMPMASK_SPR), against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_compare_into_the_register_and_read_it_back(dtype):
    per = 256 // np.dtype(dtype).itemsize
    a = RNG.uniform(-1, 1, per).astype(dtype)
    b = RNG.uniform(-1, 1, per).astype(dtype)
    out = np.full(32, 0xAA, np.uint8)

    def body(d, s0, s1):
        asc.compare(s0, s1, asc.CMPMODE.LT, per, asc.BinaryRepeatParams())
        asc.get_cmp_mask(d)

    got, _ = run_vector(body, out, a, b)
    bits = np.zeros(128, np.uint8)
    bits[:per] = a < b
    expected = out.copy()
    expected[:16] = np.packbits(bits, bitorder="little")
    np.testing.assert_array_equal(got, expected)


def test_compare_with_a_bit_mask_keeps_the_other_bits():
    a = RNG.uniform(-1, 1, 64).astype(np.float32)
    b = RNG.uniform(-1, 1, 64).astype(np.float32)
    low = 0x0000_FFFF_0000_00FF

    def body(d, s0, s1):
        asc.compare(s0, s1, asc.CMPMODE.GE, [low, 0], asc.BinaryRepeatParams())
        asc.get_cmp_mask(d)

    got, _ = run_vector(body, np.zeros(16, np.uint8), a, b)
    bits = np.zeros(128, np.uint8)
    enabled = [(low >> p) & 1 for p in range(64)]
    for p in range(64):
        if enabled[p]:
            bits[p] = a[p] >= b[p]
    np.testing.assert_array_equal(got, np.packbits(bits, bitorder="little"))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_select_by_the_register_applies_its_bits_in_every_repeat(dtype):
    per = 256 // np.dtype(dtype).itemsize
    n = 3 * per
    a = RNG.uniform(-1, 1, n).astype(dtype)
    b = RNG.uniform(-1, 1, n).astype(dtype)
    mask_bytes = RNG.integers(0, 256, 16).astype(np.uint8)

    @asc.jit
    def kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, m: asc.GlobalAddress,
               z: asc.GlobalAddress, n: asc.ConstExpr[int]):
        pipe = asc.TPipe()
        ba = asc.TBuf(asc.TPosition.VECCALC)
        bb = asc.TBuf(asc.TPosition.VECCALC)
        bm = asc.TBuf(asc.TPosition.VECCALC)
        bz = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=ba, num=n * x.dtype.sizeof())
        pipe.init_buffer(buf=bb, num=n * x.dtype.sizeof())
        pipe.init_buffer(buf=bm, num=32)
        pipe.init_buffer(buf=bz, num=n * x.dtype.sizeof())
        la = ba.get(x.dtype)
        lb = bb.get(x.dtype)
        lm = bm.get(asc.uint8)
        lz = bz.get(x.dtype)
        gx = asc.GlobalTensor()
        gy = asc.GlobalTensor()
        gm = asc.GlobalTensor()
        gz = asc.GlobalTensor()
        gx.set_global_buffer(x)
        gy.set_global_buffer(y)
        gm.set_global_buffer(m)
        gz.set_global_buffer(z)
        asc.data_copy(la, gx, n)
        asc.data_copy(lb, gy, n)
        asc.data_copy(lm, gm, 32)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.set_cmp_mask(lm)
        asc.reset_mask()
        asc.select(lz, la, lb, repeat_times=3, repeat_params=asc.BinaryRepeatParams(),
                   sel_mode=asc.SELMODE.VSEL_CMPMASK_SPR)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(gz, lz, n)

    out = np.zeros(n, dtype)
    kernel[1](a, b, np.concatenate([mask_bytes, np.zeros(16, np.uint8)]), out, n)
    bits = np.unpackbits(mask_bytes, bitorder="little")[:per].astype(bool)
    expected = np.where(np.tile(bits, 3), a, b)
    np.testing.assert_array_equal(out, expected)


@asc.jit
def _select_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, m: asc.GlobalAddress,
                   z: asc.GlobalAddress, n: asc.ConstExpr[int], form: asc.ConstExpr[str],
                   scalar: asc.ConstExpr[float]):
    pipe = asc.TPipe()
    ba = asc.TBuf(asc.TPosition.VECCALC)
    bb = asc.TBuf(asc.TPosition.VECCALC)
    bm = asc.TBuf(asc.TPosition.VECCALC)
    br = asc.TBuf(asc.TPosition.VECCALC)
    bz = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=ba, num=n * 2)
    pipe.init_buffer(buf=bb, num=n * 2)
    pipe.init_buffer(buf=bm, num=64)
    pipe.init_buffer(buf=br, num=32)
    pipe.init_buffer(buf=bz, num=n * 2)
    la = ba.get(asc.float16)
    lb = bb.get(asc.float16)
    lm = bm.get(asc.uint8)
    lz = bz.get(asc.float16)
    gx = asc.GlobalTensor()
    gy = asc.GlobalTensor()
    gm = asc.GlobalTensor()
    gz = asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    gm.set_global_buffer(m)
    gz.set_global_buffer(z)
    asc.data_copy(la, gx, n)
    asc.data_copy(lb, gy, n)
    asc.data_copy(lm, gm, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.reset_mask()
    params = asc.BinaryRepeatParams()
    if form == "tensor":  # the register holds the selection mask's UB address
        reg = br.get(asc.uint64)
        reg.set_value(0, lm.get_phy_addr())
        asc.set_cmp_mask(reg)
        asc.select(lz, la, lb, repeat_times=2, repeat_params=params,
                   sel_mode=asc.SELMODE.VSEL_TENSOR_TENSOR_MODE)
    else:  # the register holds the scalar
        reg = br.get(asc.float16)
        reg.set_value(0, scalar)
        asc.set_cmp_mask(reg)
        asc.select(lz, lm, la, 2, params)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gz, lz, n)


@pytest.mark.parametrize("form", ["tensor", "scalar"])
def test_register_select_forms_consume_the_mask_repeat_after_repeat(form):
    n = 256
    a = RNG.uniform(-1, 1, n).astype(np.float16)
    b = RNG.uniform(-1, 1, n).astype(np.float16)
    mask = RNG.integers(0, 256, 64).astype(np.uint8)
    out = np.zeros(n, np.float16)
    _select_kernel[1](a, b, mask, out, n, form, 2.5)
    bits = np.unpackbits(mask, bitorder="little")[:n].astype(bool)
    other = b if form == "tensor" else np.float16(2.5)
    np.testing.assert_array_equal(out, np.where(bits, a, other))
