"""gather's mask/repeat form (and keyword count form) against numpy loops written from Ascend C's
Gather page: lane p of repeat r reads its byte offset from src_offset[r * per_repeat + p] and
writes dst element r * dst_rep_stride * per_block + p."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.isa import KernelError

RNG = np.random.default_rng(23)


def _expected(out, src, offsets, base, positions, repeats, rep_stride):
    size = src.itemsize
    per_repeat, per_block = 256 // size, 32 // size
    expected = out.copy()
    for r in range(repeats):
        for p in positions:
            expected[r * rep_stride * per_block + p] = src[(base + offsets[r * per_repeat + p])
                                                           // size]
    return expected


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
@pytest.mark.parametrize("mask", [40, "bits"])
def test_gather_mask_repeat_form(dtype, mask):
    size = np.dtype(dtype).itemsize
    per = 256 // size
    src = RNG.uniform(-9, 9, 300).astype(dtype)
    base = 8 * size
    offsets = (RNG.integers(0, 290, 2 * per) * size).astype(np.uint32)
    out = np.full(3 * per, -1, dtype)
    if mask == "bits":
        words = [0x00FF00FF00FF00F1, 0x8000000000000001]
        bits = [(words[i // 64] >> (i % 64)) & 1 for i in range(per)]
        positions = [i for i in range(per) if bits[i]]
    else:
        words, positions = 40, list(range(40))
    rep_stride = 12  # blocks between repeats: leaves a gap that must stay untouched

    def body(d, s, o):
        asc.gather(d, s, o, src_base=base, mask=words, repeat_times=2, dst_rep_stride=rep_stride)

    got, _ = run_vector(body, out, src, offsets)
    np.testing.assert_array_equal(
        got, _expected(out, src, offsets, base, positions, 2, rep_stride))


def test_gather_count_form_by_keyword():
    src = RNG.uniform(-9, 9, 512).astype(np.float16)
    offsets = (RNG.integers(0, 500, 200) * 2).astype(np.uint32)
    out = np.zeros(200, np.float16)
    got, _ = run_vector(lambda d, s, o: asc.gather(d, s, o, src_base=4, count=200),
                        out, src, offsets)
    np.testing.assert_array_equal(got, src[(offsets.astype(np.int64) + 4) // 2])


def test_gather_repeat_form_rejects_a_misaligned_offset():
    src = np.zeros(128, np.float32)
    offsets = np.full(64, 6, np.uint32)
    with pytest.raises(KernelError, match="not a non-negative multiple of the element size 4"):
        run_vector(lambda d, s, o: asc.gather(d, s, o, 0, 64, 1, 8), np.zeros(64, np.float32),
                   src, offsets)


def test_gather_repeat_form_needs_all_its_arguments():
    src = np.zeros(128, np.float32)
    with pytest.raises(KernelError, match="mask, repeat_times and dst_rep_stride"):
        run_vector(lambda d, s, o: asc.gather(d, s, o, 0, mask=64, repeat_times=1),
                   np.zeros(64, np.float32), src, np.zeros(64, np.uint32))


def test_gather_repeat_form_timing_only_matches_the_full_run():
    from ascsim.session import SESSION

    src = np.arange(256, dtype=np.float32)
    offsets = (np.arange(128)[::-1] * 4).astype(np.uint32)

    def run():
        return run_vector(lambda d, s, o: asc.gather(d, s, o, 0, 48, 2, 8),
                          np.zeros(128, np.float32), src, offsets)[1]

    full = run()
    with SESSION.values(False):
        timing = run()
    assert timing.device_time_us == pytest.approx(full.device_time_us)
    assert sorted(f.category for f in timing.findings) == \
        sorted(f.category for f in full.findings)
