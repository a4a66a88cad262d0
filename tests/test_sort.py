"""sort32, sort, mrg_sort and the sort helpers against numpy: (score, index) entries, ties,
merging with and without exhausted suspension, repeats."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

RNG = np.random.default_rng(0)


def entries(scores: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Host-side entries in the scores' type: score in the low bytes, index in the high 4."""
    raw = np.zeros((scores.size, 8), np.uint8)
    w = scores.dtype.itemsize
    raw[:, :w] = scores.reshape(-1, 1).view(np.uint8).reshape(-1, w)
    raw[:, 4:] = index.astype(np.uint32).reshape(-1, 1).view(np.uint8).reshape(-1, 4)
    return raw.reshape(-1).view(scores.dtype)


def decode(out: np.ndarray, count: int):
    raw = out.view(np.uint8)[:count * 8].reshape(count, 8)
    w = out.dtype.itemsize
    return (np.ascontiguousarray(raw[:, :w]).view(out.dtype).reshape(-1),
            np.ascontiguousarray(raw[:, 4:]).view(np.uint32).reshape(-1), raw)


def reference(scores, index):
    order = sorted(range(scores.size), key=lambda i: (-float(scores[i]), i))  # ties: input order
    return scores[order], index[order]


def _scores(n, dtype):
    return RNG.integers(-20, 20, n).astype(dtype)  # small integers: many ties


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_sort32_sorts_each_group_of_32(dtype):
    n = 4 * 32
    scores, index = _scores(n, dtype), np.arange(n, dtype=np.uint32) + 1000
    out = np.full(n * 8 // np.dtype(dtype).itemsize, 7, dtype)
    got, _ = run_vector(lambda d, s, i: asc.sort32(d, s, i, repeat_time=4), out, scores, index)
    values, indices, raw = decode(got, n)
    for g in range(4):
        part = slice(32 * g, 32 * g + 32)
        want_v, want_i = reference(scores[part], index[part])
        np.testing.assert_array_equal(values[part], want_v)
        np.testing.assert_array_equal(indices[part], want_i)
    if dtype == np.float16:  # the two reserved bytes are not written
        np.testing.assert_array_equal(raw[:, 2:4].view(np.float16).reshape(-1), 7)


@pytest.mark.parametrize("full", [False, True])
def test_sort_in_groups_or_as_one_list(full):
    n = 3 * 32
    scores, index = _scores(n, np.float32), np.arange(n, dtype=np.uint32)
    out = np.zeros(2 * n, np.float32)

    def body(d, s, i):
        asc.sort(d, s, i, s, 3, is_full_sort=full)

    got, _ = run_vector(body, out, scores, index)
    values, indices, _ = decode(got, n)
    groups = [slice(0, n)] if full else [slice(32 * g, 32 * g + 32) for g in range(3)]
    for part in groups:
        want_v, want_i = reference(scores[part], index[part])
        np.testing.assert_array_equal(values[part], want_v)
        np.testing.assert_array_equal(indices[part], want_i)


def _queues(lengths, dtype):
    """Sorted queues, one after the other, indices telling queue and position apart."""
    parts, all_scores, all_index = [], [], []
    for q, n in enumerate(lengths):
        s = -np.sort(-_scores(n, dtype).astype(np.float64)).astype(dtype)
        i = np.arange(n, dtype=np.uint32) + 100 * q
        parts.append(entries(s, i))
        all_scores.append(s)
        all_index.append(i)
    return parts, all_scores, all_index


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("valid_bit, lengths", [(15, (16, 8, 24, 5)), (7, (10, 32, 3, 0)),
                                                (3, (7, 9, 0, 0))])
def test_mrg_sort_merges_the_valid_queues(dtype, valid_bit, lengths):
    parts, scores, index = _queues(lengths, dtype)
    per = 8 // np.dtype(dtype).itemsize
    offsets = np.cumsum([0, *[p.size for p in parts]])
    src = np.concatenate(parts)
    n_q = {3: 2, 7: 3, 15: 4}[valid_bit]
    total = sum(lengths[:n_q])
    out = np.zeros(max(total, 1) * per, dtype)
    record = {}

    def body(d, s):
        queues = [s[int(offsets[q])] for q in range(4)]
        sorted_num = [0, 0, 0, 0]
        asc.mrg_sort(d, asc.MrgSortSrcList(asc.float16, *queues), list(lengths), sorted_num,
                     valid_bit=valid_bit, repeat_time=1)
        record["sorted_num"] = sorted_num
        record["result"] = asc.get_mrg_sort_result()

    got, _ = run_vector(body, out, src)
    values, indices, _ = decode(got, total)
    merged_v = np.concatenate(scores[:n_q])
    merged_i = np.concatenate(index[:n_q])
    want_v, want_i = reference(merged_v, merged_i)  # stable: earlier queue first on a tie
    np.testing.assert_array_equal(values, want_v)
    np.testing.assert_array_equal(indices, want_i)
    expected_counts = list(lengths[:n_q]) + [0] * (4 - n_q)
    assert record["sorted_num"] == expected_counts
    assert list(record["result"]) == expected_counts


def test_mrg_sort_stops_when_a_queue_is_exhausted():
    a = np.array([9, 5, 1], np.float32)
    b = np.array([8, 7], np.float32)
    src = np.concatenate([entries(a, np.arange(3)), entries(b, np.arange(2) + 10)])
    out = np.zeros(10, np.float32)
    record = {}

    def body(d, s):
        info = asc.MrgSort4Info([3, 2, 0, 0], if_exhausted_suspension=True, valid_bit=3,
                                repeat_times=1)
        asc.mrg_sort(d, asc.MrgSortSrcList(s[0], s[6], s[0], s[0]), info)
        record["result"] = asc.get_mrg_sort_result()

    got, _ = run_vector(body, out, src)
    values, indices, _ = decode(got, 4)  # 9, 8, 7: b runs out after two
    np.testing.assert_array_equal(values[:3], [9, 8, 7])
    np.testing.assert_array_equal(indices[:3], [0, 10, 11])
    assert list(record["result"]) == [1, 2, 0, 0]
    np.testing.assert_array_equal(got[6:], 0)  # nothing after the stop


def test_mrg_sort_repeats_over_contiguous_queues():
    n = 8
    blocks = [_queues((n, n, n, n), np.float32) for _ in range(2)]
    src = np.concatenate([np.concatenate(parts) for parts, _, _ in blocks])
    out = np.zeros(2 * 4 * n * 2, np.float32)

    def body(d, s):
        queues = [s[2 * n * q] for q in range(4)]
        asc.mrg_sort(d, asc.MrgSortSrcList(*queues), asc.MrgSort4Info([n] * 4, False, 15, 2))

    got, _ = run_vector(body, out, src)
    values, indices, _ = decode(got, 8 * n)
    for r, (_, scores, index) in enumerate(blocks):
        want_v, want_i = reference(np.concatenate(scores), np.concatenate(index))
        np.testing.assert_array_equal(values[r * 4 * n:(r + 1) * 4 * n], want_v)
        np.testing.assert_array_equal(indices[r * 4 * n:(r + 1) * 4 * n], want_i)


def test_sort_helpers_and_the_older_proposal_instructions():
    assert asc.get_sort_len(100) == 200 and asc.get_sort_offset(10) == 20  # float entries
    assert asc.get_sort_len(100, asc.float16) == 400
    x = np.zeros(64, np.float32)
    with pytest.raises(KernelError, match="do not have it"):
        run_vector(lambda d, s: asc.rp_sort16(d, s, repeat_time=1), x, x)
    with pytest.raises(KernelError, match="valid_bit is 3, 7 or 15"):
        run_vector(lambda d, s: asc.mrg_sort(d, asc.MrgSortSrcList(s, s, s, s),
                                             asc.MrgSort4Info([1, 1, 1, 1], False, 5, 1)), x, x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_concat_sort_extract_round_trip(dtype):
    n = 64
    scores, index = _scores(n, dtype), np.arange(n, dtype=np.uint32) + 7
    out = np.zeros(n, dtype)
    record = {}

    def body(d, s, i):
        per = 8 // np.dtype(dtype).itemsize
        concat = d.reinterpret_cast(d.dtype)  # dst's buffer serves as the concat area first
        asc.adv.concat(concat, s, s, n // 16)
        sorted_entries = s[n:]  # room after the scores: n entries
        asc.sort(sorted_entries, concat, i, s, n // 32, is_full_sort=True)
        asc.adv.extract(d, i, sorted_entries, n * per // (256 // np.dtype(dtype).itemsize))
        record["ok"] = True

    src = np.concatenate([scores, np.zeros(n * 8 // np.dtype(dtype).itemsize, dtype)])
    got, _ = run_vector(body, out, src, index.copy())
    want_v, _ = reference(scores, index)
    np.testing.assert_array_equal(got, want_v)
    assert record["ok"]


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_extract_gives_the_indices(dtype):
    n = 64  # two repeats of 32 entries
    scores, index = _scores(n, dtype), RNG.integers(0, 2**31, n).astype(np.uint32)
    got, _ = run_vector(lambda d, s, v: asc.adv.extract(v, d, s, 2), np.zeros(n, np.uint32),
                        entries(scores, index), np.zeros(n, dtype))
    np.testing.assert_array_equal(got, index)
