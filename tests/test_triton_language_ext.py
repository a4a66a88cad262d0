"""The rest of the Triton language on the vector path: combine-function reductions and scans,
sort / topk / flip / gather / histogram, cat / join / split / interleave, the cann extension
module, the remaining atomics, operators on tiles (floordiv, shifts, umulhi), accesses through
loaded offsets and masks, element-wise ``not`` / ``and`` / ``or`` -- each against torch, with
no race finding, and clear errors at the kernel line for what is refused."""

from __future__ import annotations

import pytest
import torch

from ascsim.session import SESSION
from ascsim.triton import extension as ext
from ascsim.triton import language as tl
from ascsim.triton.errors import CompilationError
from ascsim.triton.jit import jit


@pytest.fixture(autouse=True)
def _collect():
    with SESSION.collect(launches=True) as collection:
        yield collection


def _races(report) -> list:
    return [f.category for f in report.findings if "race" in f.category]


@jit
def _max_fn(a, b):
    return tl.maximum(a, b)


@jit
def _argmax_fn(v0, i0, v1, i1):
    """(value, index) pairs: the larger value, the first index on a tie (not commutative)."""
    take = (v1 > v0) | ((v1 == v0) & (i1 < i0))
    return tl.where(take, v1, v0), tl.where(take, i1, i0)


@jit
def scans(x_ptr, cs_ptr, cp_ptr, cm_ptr, red_ptr, idx_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(cs_ptr + offs, tl.cumsum(x, axis=1))
    tl.store(cp_ptr + offs, tl.cumprod(x, axis=0, reverse=True))
    tl.store(cm_ptr + offs, tl.associative_scan(x, 1, _max_fn, reverse=True))
    tl.store(red_ptr + tl.arange(0, C), tl.reduce(x, 0, _max_fn))
    index = tl.broadcast_to(tl.arange(0, C)[None, :], (R, C))
    _, where = tl.reduce((x, index), 1, _argmax_fn)
    tl.store(idx_ptr + tl.arange(0, R), where)


def test_scans_and_combine_reductions_match_torch():
    R, C = 5, 7  # odd lengths: the tree carries its last element, the scan its head
    x = (torch.randn(R, C) * 4).round() / 4 + 1
    cs, cp, cm = (torch.empty(R, C) for _ in range(3))
    red, idx = torch.empty(C), torch.empty(R, dtype=torch.int32)
    report = scans[(1,)](x, cs, cp, cm, red, idx, R, C)
    torch.testing.assert_close(cs, x.cumsum(1))
    torch.testing.assert_close(cp, x.flip(0).cumprod(0).flip(0))
    torch.testing.assert_close(cm, x.flip(1).cummax(1).values.flip(1))
    torch.testing.assert_close(red, x.max(0).values)
    assert idx.tolist() == x.argmax(1).int().tolist()
    assert _races(report) == []


@jit
def int_scan(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))
    tl.store(out_ptr + N + tl.arange(0, 1), tl.xor_sum(tl.load(x_ptr + offs), 0) +
             tl.zeros([1], tl.int32))


def test_int8_cumsum_accumulates_in_int32_and_xor_sum():
    x = torch.full((40,), 100, dtype=torch.int8)
    out = torch.empty(41, dtype=torch.int32)
    int_scan[(1,)](x, out, 40)
    assert out[:40].tolist() == list(range(100, 4100, 100))
    assert out[40].item() == 0  # 40 equal values xor to zero


@jit
def reorders(x_ptr, s_ptr, t_ptr, f_ptr, g_ptr, h_ptr, i_ptr, R: tl.constexpr,
             C: tl.constexpr, K: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(s_ptr + offs, tl.sort(x, descending=True))
    tl.store(t_ptr + tl.arange(0, R)[:, None] * K + tl.arange(0, K)[None, :], tl.topk(x, K))
    tl.store(f_ptr + offs, tl.flip(x, 0))
    idx = tl.load(i_ptr + offs)
    tl.store(g_ptr + offs, tl.gather(x, idx, 1))
    tl.store(h_ptr + tl.arange(0, 4), tl.histogram(idx, 4))


def test_sort_topk_flip_gather_histogram_match_torch():
    R, C, K = 3, 40, 5  # 40 > 32: one sort pass and a merge pass
    x = torch.randn(R, C)
    idx = torch.randint(0, C, (R, C), dtype=torch.int32)
    s, f, g = (torch.empty(R, C) for _ in range(3))
    t, h = torch.empty(R, K), torch.empty(4, dtype=torch.int32)
    report = reorders[(1,)](x, s, t, f, g, h, idx, R, C, K)
    torch.testing.assert_close(s, x.sort(1, descending=True).values)
    torch.testing.assert_close(t, x.topk(K, 1).values)
    torch.testing.assert_close(f, x.flip(0))
    torch.testing.assert_close(g, torch.gather(x, 1, idx.long()))
    assert h.tolist() == torch.bincount(idx.flatten().long(), minlength=C)[:4].tolist()
    assert _races(report) == []


@jit
def regroup(a_ptr, b_ptr, cat_ptr, join_ptr, inter_ptr, split_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
    tl.store(cat_ptr + tl.arange(0, 2 * N), tl.cat(a, b, can_reorder=True))
    pair = tl.join(a, b)
    tl.store(join_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :], pair)
    tl.store(inter_ptr + tl.arange(0, 2 * N), tl.interleave(a, b))
    left, right = tl.split(pair)
    tl.store(split_ptr + offs, left - right)


def test_cat_join_interleave_split():
    a, b = torch.randn(16), torch.randn(16)
    c, i = torch.empty(32), torch.empty(32)
    j, s = torch.empty(16, 2), torch.empty(16)
    regroup[(1,)](a, b, c, j, i, s, 16)
    torch.testing.assert_close(c, torch.cat([a, b]))
    torch.testing.assert_close(j, torch.stack([a, b], 1))
    torch.testing.assert_close(i, torch.stack([a, b], 1).flatten())
    torch.testing.assert_close(s, a - b)


@jit
def int_ops(x_ptr, y_ptr, q_ptr, l_ptr, r_ptr, h_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(q_ptr + offs, x // y)
    tl.store(l_ptr + offs, x << (y & 7))
    tl.store(r_ptr + offs, x >> 2)
    tl.store(h_ptr + offs, tl.umulhi(x, y))


def test_floordiv_shifts_and_umulhi_on_tiles():
    x = torch.randint(-1000, 1000, (64,), dtype=torch.int32)
    y = torch.randint(1, 50, (64,), dtype=torch.int32) * torch.where(
        torch.rand(64) > 0.5, 1, -1).int()
    q, sl, sr, hi = (torch.empty(64, dtype=torch.int32) for _ in range(4))
    int_ops[(1,)](x, y, q, sl, sr, hi, 64)
    assert q.tolist() == torch.div(x, y, rounding_mode="trunc").tolist()  # C truncation
    assert sl.tolist() == (x << (y & 7)).tolist()
    assert sr.tolist() == (x >> 2).tolist()
    assert hi.tolist() == ((x.long() * y.long()) >> 32).int().tolist()


@jit
def extension_ops(x_ptr, out_ptr, sat_ptr, e_ptr, N: tl.constexpr, S: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    part = ext.extract_slice(x, [2], [S], [1])
    with ext.scope(core_mode="vector"):
        doubled = part * 2
    y = ext.insert_slice(x, doubled, [2], [S], [1])
    ext.compile_hint(y, "hint")
    ext.multibuffer(y, 2)
    for _ in ext.parallel(0, 1, 1):
        tl.store(out_ptr + offs, ext.sort(ext.flip(y), descending=False))
    tl.store(sat_ptr + offs, ext.cast(x * 100.0, tl.int8, overflow_mode="saturate"))
    tl.store(e_ptr + tl.arange(0, 1), tl.zeros([1], tl.float32) + ext.get_element(x, (3,)))


def test_extension_slices_sort_flip_saturating_cast_get_element():
    N, S = 16, 4
    x = torch.randn(N) * 3
    out, e = torch.empty(N), torch.empty(1)
    sat = torch.empty(N, dtype=torch.int8)
    report = extension_ops[(1,)](x, out, sat, e, N, S)
    y = x.clone()
    y[2:2 + S] *= 2
    torch.testing.assert_close(out, y.sort().values)
    assert sat.tolist() == (x * 100).clamp(-128, 127).to(torch.int8).tolist()
    assert e.item() == pytest.approx(x[3].item())
    assert _races(report) == []


@jit
def needs_mix_mode(x_ptr):
    ext.sync_block_set("cube", "vector", 0)


def test_mix_mode_extension_ops_refuse_at_the_kernel_line():
    with pytest.raises(CompilationError, match=r"test_triton_language_ext.py:\d+: "
                                               r"extension.sync_block_set .*mix mode"):
        needs_mix_mode[(1,)](torch.zeros(4))


@jit
def atomics(val_ptr, or_ptr, xchg_ptr, cas_ptr, old_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(val_ptr + tl.program_id(0) * N + offs)
    tl.atomic_or(or_ptr + offs, v)
    tl.atomic_xchg(xchg_ptr + offs, v)
    old = tl.atomic_cas(cas_ptr + offs, 0, v)
    tl.store(old_ptr + tl.program_id(0) * N + offs, old)


def test_atomic_or_xchg_cas_across_programs():
    N, P = 8, 3
    vals = torch.randint(1, 64, (P, N), dtype=torch.int32)
    acc = torch.zeros(N, dtype=torch.int32)
    xchg = torch.zeros(N, dtype=torch.int32)
    cas = torch.zeros(N, dtype=torch.int32)
    old = torch.empty(P, N, dtype=torch.int32)
    atomics[(P,)](vals, acc, xchg, cas, old, N)
    expected = vals[0] | vals[1] | vals[2]
    assert acc.tolist() == expected.tolist()
    assert cas.tolist() == vals[0].tolist()  # the first program swaps, the others see it
    assert old[0].tolist() == [0] * N
    assert xchg.tolist() in (vals[0].tolist(), vals[1].tolist(), vals[2].tolist())


@jit
def indirect(x_ptr, idx_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    idx = tl.load(idx_ptr + offs)
    values = tl.load(x_ptr + idx)  # a gather through offsets loaded from memory
    keep = values > 0  # a mask computed from loaded data
    tl.store(out_ptr + offs, values, mask=keep)


def test_gather_through_loaded_offsets_and_data_masks():
    x = torch.randn(50)
    idx = torch.randint(0, 50, (16,), dtype=torch.int32)
    out = torch.full((16,), -7.0)
    indirect[(1,)](x, idx, out, 16)
    picked = x[idx.long()]
    torch.testing.assert_close(out, torch.where(picked > 0, picked, torch.tensor(-7.0)))


@jit
def logic(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    keep = not (x > 1.0) and offs < N - 2 or x < -1.0
    tl.store(out_ptr + offs, tl.where(keep, 1.0, 0.0))


def test_not_and_or_on_blocks_are_element_wise():
    x = torch.linspace(-2, 2, 16)
    out = torch.empty(16)
    logic[(1,)](x, out, 16)
    offs = torch.arange(16)
    ref = ((~(x > 1.0)) & (offs < 14)) | (x < -1.0)
    assert out.tolist() == ref.float().tolist()


@jit
def descriptor_copy(out_ptr, x_ptr, M: tl.constexpr, N: tl.constexpr, BM: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, N])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, N])
    block = src.load([tl.program_id(0) * BM, 0])
    tl.store_tensor_descriptor(dst, [tl.program_id(0) * BM, 0], block * 2)


def test_tensor_descriptors_load_and_store_blocks():
    x = torch.randn(8, 16)
    out = torch.empty_like(x)
    report = descriptor_copy[(4,)](out, x, 8, 16, 2)
    torch.testing.assert_close(out, x * 2)
    assert _races(report) == []


@jit
def half_math(x_ptr, sum_ptr, exp2_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(sum_ptr + tl.arange(0, R), tl.sum(x, 1))
    tl.store(exp2_ptr + offs, tl.exp2(x * 4))


def test_fp16_sums_and_exp2_keep_fp32_intermediates():
    x = torch.rand(8, 256).half() * 2 - 1
    sums = torch.empty(8, dtype=torch.float16)
    e = torch.empty(8, 256, dtype=torch.float16)
    half_math[(1,)](x, sums, e, 8, 256)
    torch.testing.assert_close(sums, x.float().sum(1).half(), rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(e, torch.exp2(x.float() * 4).half(), rtol=1e-3, atol=1e-3)


@jit
def int8_argmax(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(out_ptr + tl.arange(0, C), tl.argmax(tl.load(x_ptr + offs), 0))


def test_int8_argmax_of_a_large_block_fits_ub():
    x = torch.randint(-100, 100, (64, 512), dtype=torch.int8)  # 32 KiB of int8
    out = torch.empty(512, dtype=torch.int32)
    int8_argmax[(1,)](x, out, 64, 512)
    values = x.gather(0, out.long()[None, :])[0]
    assert values.tolist() == x.max(0).values.tolist()


@jit
def scatter_add(idx_ptr, val_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.atomic_add(out_ptr + tl.load(idx_ptr + offs), tl.load(val_ptr + offs))


def test_atomic_add_through_loaded_offsets_accumulates_repeats():
    idx = torch.tensor([3, 1, 3, 3, 0, 1, 7, 2], dtype=torch.int32)
    val = torch.arange(1, 9, dtype=torch.float32)
    out = torch.zeros(8)
    scatter_add[(1,)](idx, val, out, 8)
    torch.testing.assert_close(out, torch.zeros(8).index_add_(0, idx.long(), val))


@jit
def tile_cdiv(x_ptr, y_ptr, out_ptr, f_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.cdiv(x, y))
    tl.store(f_ptr + offs, tl.cdiv(x.to(tl.float32) * 0.5, 0.75))


def test_cdiv_of_blocks_rounds_up_for_any_sign():
    x = torch.randint(-50, 50, (32,), dtype=torch.int32)
    y = torch.randint(1, 7, (32,), dtype=torch.int32) * torch.where(
        torch.rand(32) > 0.5, 1, -1).int()
    out = torch.empty(32, dtype=torch.int32)
    f = torch.empty(32)
    tile_cdiv[(1,)](x, y, out, f, 32)
    assert out.tolist() == torch.ceil(x.double() / y.double()).int().tolist()
    torch.testing.assert_close(f, torch.ceil(x.float() * 0.5 / 0.75))
