"""data_copy / data_copy_pad between GM and UB, the checks they trigger, buffer capacity, and
determinism of the whole launch (outputs and simulated times)."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.session import SESSION
from ascsim.sim.errors import KernelError

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
UB_BYTES = 64 * 1024


def _line_of(marker: str) -> int:
    """Line number in this file of the statement tagged with ``marker``."""
    with open(__file__) as f:
        for number, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return number
    raise AssertionError(marker)


@asc.jit
def _copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, body: asc.ConstExpr[object]):
    pipe = asc.TPipe()
    buf_a = asc.TBuf(asc.TPosition.VECCALC)
    buf_b = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf_a, num=UB_BYTES)
    pipe.init_buffer(buf=buf_b, num=UB_BYTES)
    gx = asc.GlobalTensor()
    gy = asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    body(gx, gy, buf_a.get(x.dtype), buf_b.get(x.dtype))


def _barrier():
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def _categories(report) -> list[str]:
    return [f.category for f in report.findings]


# ------------------------------------------------------------------------ count form
@pytest.mark.parametrize("dtype", [F16, F32, np.dtype(np.int8)], ids=lambda d: d.name)
def test_count_form_round_trip_gm_ub_gm(dtype):
    n = 1024 // dtype.itemsize
    x = (np.arange(n) % 100).astype(dtype)
    y = np.zeros(n, dtype)

    def body(gx, gy, ua, ub):
        asc.data_copy(ua, gx, n)
        _barrier()
        asc.data_copy(ub, ua, n)  # UB -> UB
        _barrier()
        asc.data_copy(gy, ub, n)

    report = _copy_kernel[1](x, y, body)
    np.testing.assert_array_equal(y, x)
    assert report.findings == []


def test_count_form_with_offsets_on_both_sides():
    x = np.arange(512, dtype=F32)
    y = np.full(512, -1, F32)

    def body(gx, gy, ua, ub):
        asc.data_copy(ua[8:], gx[64:], 128)
        _barrier()
        asc.data_copy(gy[16:], ua[8:], 128)

    _copy_kernel[1](x, y, body)
    expected = np.full(512, -1, F32)
    expected[16:144] = x[64:192]
    np.testing.assert_array_equal(y, expected)


def test_unaligned_count_drops_the_tail_and_reports_alignment():
    x = np.arange(64, dtype=F32)
    y = np.full(64, -1, F32)

    def body(gx, gy, ua, ub):
        asc.data_copy(ua, gx, 64)
        _barrier()
        asc.data_copy(gy, ua, 13)  # 52 bytes: one 32-byte block moves  # <- unaligned count

    report = _copy_kernel[1](x, y, body)
    np.testing.assert_array_equal(y[:8], x[:8])
    assert (y[8:] == -1).all()
    found = [f for f in report.findings if f.category == "alignment"]
    assert len(found) == 1
    assert found[0].locations[0][1] == _line_of("# <- unaligned count")
    assert "52 B" in found[0].message


# ------------------------------------------------------------------------ strided form
def test_strided_data_copy_params_gm_to_ub_and_back():
    # 4 blocks of 2x32 B from GM with 1-block gaps; UB packs them with a 3-block gap.
    x = np.arange(4 * 3 * 8, dtype=F32)
    y = np.full(4 * 5 * 8, -1, F32)

    def body(gx, gy, ua, ub):
        asc.data_copy(ua, gx, asc.DataCopyParams(4, 2, 1, 3))
        _barrier()
        asc.data_copy(gy, ua, repeat_params=asc.DataCopyParams(4, 2, 3, 3))

    _copy_kernel[1](x, y, body)
    expected = np.full(y.size, -1, F32)
    for i in range(4):
        expected[i * 40: i * 40 + 16] = x[i * 24: i * 24 + 16]
    np.testing.assert_array_equal(y, expected)


def test_ub_to_ub_strided_copy():
    x = np.arange(256, dtype=F16)
    y = np.zeros(256, F16)

    def body(gx, gy, ua, ub):
        asc.data_copy(ua, gx, 256)
        asc.duplicate(ub, 0.0, 256)
        _barrier()
        asc.data_copy(ub, ua, asc.DataCopyParams(3, 1, 2, 1))  # every 3rd block, 1-block gaps
        _barrier()
        asc.data_copy(gy, ub, 256)

    _copy_kernel[1](x, y, body)
    expected = np.zeros(256, F16)
    for i in range(3):
        expected[i * 32: i * 32 + 16] = x[i * 48: i * 48 + 16]
    np.testing.assert_array_equal(y, expected)


# ------------------------------------------------------------------------ data_copy_pad
PAD_FORMS = {
    "positional": lambda: asc.DataCopyPadExtParams(True, 1, 2, 7.0),
    # pyasc's form: the padding value's type as the keyword dtype.
    "keywords": lambda: asc.DataCopyPadExtParams(dtype=asc.float32, is_pad=True, left_padding=1,
                                                 right_padding=2, padding_value=7.0),
}


@pytest.mark.parametrize("pad_form", sorted(PAD_FORMS))
@pytest.mark.parametrize("ub_gap", [0, 1])
def test_data_copy_pad_gm_to_ub_pads_each_row_to_a_block(ub_gap, pad_form):
    # 3 rows of 5 fp32 (20 B) with a 4-byte gap in GM; each row lands on its own 32-byte block
    # (plus ``ub_gap`` blocks) with 1 element of left padding and 2 of right padding, value 7.
    x = np.arange(3 * 6, dtype=F32)
    pitch = 8 * (1 + ub_gap)
    y = np.full(3 * pitch, -1, F32)

    def body(gx, gy, ua, ub):
        asc.duplicate(ua, -1.0, 64)
        _barrier()
        asc.data_copy_pad(ua, gx, asc.DataCopyExtParams(3, 20, 4, ub_gap), PAD_FORMS[pad_form]())
        _barrier()
        asc.data_copy(gy, ua, 3 * pitch)

    report = _copy_kernel[1](x, y, body)
    expected = np.full((3, pitch), -1, F32)
    for i in range(3):
        expected[i, 0] = 7
        expected[i, 1:6] = x[i * 6: i * 6 + 5]
        expected[i, 6:8] = 7
    np.testing.assert_array_equal(y.reshape(3, pitch), expected)
    assert report.findings == []


def test_data_copy_pad_ub_to_gm_writes_exact_bytes():
    # 2 rows of 3 fp16 (6 B) from 32-byte aligned UB rows to GM with a 2-byte gap.
    x = np.arange(32, dtype=F16)
    y = np.full(16, -1, F16)

    def body(gx, gy, ua, ub):
        asc.data_copy(ua, gx, 32)
        _barrier()
        asc.data_copy_pad(gy, ua, asc.DataCopyExtParams(2, 6, 0, 2))

    report = _copy_kernel[1](x, y, body)
    expected = np.full(16, -1, F16)
    expected[0:3] = x[0:3]
    expected[4:7] = x[16:19]
    np.testing.assert_array_equal(y, expected)
    assert "alignment" not in _categories(report)


# ------------------------------------------------------------------------ GM bounds
def test_read_past_the_end_inside_padding_is_a_finding():
    x = np.arange(40, dtype=F32)  # 160 B: the allocator pads to 1024 B
    y = np.zeros(64, F32)

    def body(gx, gy, ua, ub):
        asc.data_copy(ua, gx, 64)  # <- past the end
        _barrier()
        asc.data_copy(gy, ua, 64)

    report = _copy_kernel[1](x, y, body)
    np.testing.assert_array_equal(y[:40], x)
    found = [f for f in report.findings if f.category == "gm-out-of-bounds"]
    assert len(found) == 1
    assert found[0].locations[0][1] == _line_of("# <- past the end")


@asc.jit
def _past_padding(a: asc.GlobalAddress, b: asc.GlobalAddress, out: asc.GlobalAddress,
                  mark: asc.ConstExpr[int]):
    ga, gb, go = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    ga.set_global_buffer(a)
    gb.set_global_buffer(b)
    go.set_global_buffer(out)
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 264)
    asc.data_copy(u, ga, 264)  # <- read past the padding
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(go, u[256:], 8)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(u, u, 1.0, 264)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(ga, u, 264)  # <- write past the padding


def test_past_the_padding_reads_the_next_allocation_and_stores_only_in_bounds_bytes():
    a = np.arange(40, dtype=F32)  # 160 B, padded to 1024 B: elements 256.. are b's bytes
    b = np.arange(100, 108, dtype=F32)
    out = np.zeros(8, F32)
    with SESSION.collect() as run:
        _past_padding[1](a, b, out, 0)
    np.testing.assert_array_equal(out, b)  # read what lies there: the next allocation
    # The write spanning a, its padding and b's bytes stores a's part and drops the rest.
    np.testing.assert_array_equal(a, np.arange(40, dtype=F32) + 1)
    np.testing.assert_array_equal(b, np.arange(100, 108, dtype=F32))
    found = [f for f in run.reports[0].findings if f.category == "gm-out-of-bounds"]
    assert sorted(f.locations[0][1] for f in found) == [_line_of("# <- read past the padding"),
                                                        _line_of("# <- write past the padding")]
    assert "stores only its bytes within the allocation" in found[0].message


def test_past_the_padding_stops_a_strict_run_at_its_line():
    saved = SESSION.strict
    SESSION.strict = True
    try:
        with pytest.raises(KernelError) as info:
            _past_padding[1](np.zeros(40, F32), np.zeros(8, F32), np.zeros(8, F32), 1)
    finally:
        SESSION.strict = saved
    assert info.value.where[1] == _line_of("# <- read past the padding")


@asc.jit
def _alloc_kernel(x: asc.GlobalAddress, nbytes: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    que = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=que, num=1, len=nbytes)  # <- init_buffer
    t = que.alloc_tensor(x.dtype)
    que.free_tensor(t)


@pytest.mark.parametrize(("soc", "capacity"), [("Ascend910B1", 196608),
                                               ("Ascend950PR_9579", 253952)])
def test_init_buffer_beyond_ub_capacity(soc, capacity):
    before = SESSION.soc
    SESSION.set_soc(soc)
    try:
        x = np.zeros(8, F32)
        _alloc_kernel[1](x, capacity)  # exactly full is fine
        with pytest.raises(KernelError) as info:
            _alloc_kernel[1](x, capacity + 32)
    finally:
        SESSION.set_soc(before)
    msg = str(info.value)
    assert f"test_data_copy.py:{_line_of('# <- init_buffer')}" in msg
    assert str(capacity + 32) in msg and str(capacity) in msg and "UB" in msg


# ------------------------------------------------------------------------ determinism
def test_same_kernel_twice_gives_identical_outputs_and_times():
    rng = np.random.default_rng(20)
    a, b = rng.uniform(-1, 1, 4000).astype(F16), rng.uniform(-1, 1, 4000).astype(F16)

    def body(d, x, y):
        asc.mul(d, x, y, 4000)
        asc.exp(d, d, 4000)
        asc.cast(d, d, asc.RoundMode.CAST_RINT, 4000)

    first, rep1 = run_vector(body, np.zeros(4000, F16), a, b)
    second, rep2 = run_vector(body, np.zeros(4000, F16), a, b)
    np.testing.assert_array_equal(first.view(np.uint16), second.view(np.uint16))
    assert rep1.device_time_us == rep2.device_time_us > 0
    assert [c.time_us for c in rep1.cores] == [c.time_us for c in rep2.cores]
    assert [c.pipe_busy_us for c in rep1.cores] == [c.pipe_busy_us for c in rep2.cores]


# ------------------------------------------------------------------------ bad operands
@asc.jit
def _copy_from_bare_address(x: asc.GlobalAddress, y: asc.GlobalAddress):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    asc.data_copy(t, x, 64)  # mark: bare-address


def test_a_bare_gm_address_is_named_at_the_copy():
    x = np.zeros(64, dtype=F32)
    with pytest.raises(KernelError, match=rf"test_data_copy\.py:{_line_of('mark: bare-address')}"
                       r": data_copy copies between tensors: src is a GlobalAddress"):
        _copy_from_bare_address[1](x, x.copy())
