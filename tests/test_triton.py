"""The Triton front-end: kernels written against ``triton.language`` run on the simulated chip,
match torch, are race-free without any sync in the source, and report what the device's
compiler or memory would (UB overflow, grid limit, out-of-bounds reads)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from ascsim.session import SESSION
from ascsim.triton import language as tl
from ascsim.triton.jit import MAX_GRID, jit
from ascsim.triton.ub import UbOverflow


@jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@jit
def unmasked_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets))


@jit
def softmax_rows(out_ptr, in_ptr, stride, n_rows, n_cols, BLOCK: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * stride + cols, mask=mask, other=-float("inf"))
        z = x - tl.max(x, axis=0)
        num = tl.exp(z)
        tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=mask)


@jit
def row_block_norm(out_ptr, in_ptr, n_cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    """2-D blocks: a row reduction along axis 1 and a broadcast back over the columns."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    offs = rows[:, None] * n_cols + cols[None, :]
    mask = cols[None, :] < n_cols
    x = tl.load(in_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / n_cols
    centred = tl.where(mask, x - mean[:, None], 0.0)
    tl.store(out_ptr + offs, centred, mask=mask)


@jit
def column_sums(out_ptr, in_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    x = tl.load(in_ptr + offs)
    tl.store(out_ptr + tl.arange(0, COLS), tl.sum(x, axis=0))


@jit
def strided_gather(out_ptr, in_ptr, BLOCK: tl.constexpr):
    """Every third element: a gather through computed offsets (the discrete path)."""
    idx = tl.arange(0, BLOCK)
    tl.store(out_ptr + idx, tl.load(in_ptr + (idx * 3) % 7 + idx))


@jit
def grid_2d(out_ptr, COLS: tl.constexpr):
    x, y = tl.program_id(0), tl.program_id(1)
    value = tl.zeros([1], tl.int32) + (y * tl.num_programs(0) + x)
    tl.store(out_ptr + y * COLS + x + tl.arange(0, 1), value)


@jit
def too_big(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offsets)
    b = tl.exp(a)
    tl.store(out_ptr + offsets, a + b)


@pytest.fixture(autouse=True)
def _collect():
    with SESSION.collect(launches=True) as collection:
        yield collection


def _findings(report) -> list:
    return [f.category for f in report.findings]


def test_vector_add_with_a_masked_tail_matches_torch_and_has_no_findings():
    x, y = torch.rand(3000), torch.rand(3000)
    out = torch.empty_like(x)
    report = add_kernel[(triton_cdiv(3000, 1024),)](x, y, out, 3000, BLOCK=1024)
    torch.testing.assert_close(out, x + y)
    assert _findings(report) == []
    assert report.block_num == 3 and report.kernel_type == "AIV_ONLY"
    assert report.device_time_us > 0


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def test_grid_as_a_function_of_the_meta_parameters():
    x, y = torch.rand(100), torch.rand(100)
    out = torch.empty_like(x)
    report = add_kernel[lambda meta: (triton_cdiv(meta["n"], meta["BLOCK"]),)](
        x, y, out, 100, BLOCK=32, num_warps=4)
    torch.testing.assert_close(out, x + y)
    assert report.block_num == 4


def test_persistent_softmax_matches_torch_race_free():
    x = torch.randn(37, 200)
    out = torch.empty_like(x)
    report = softmax_rows[(8,)](out, x, x.stride(0), 37, 200, 256)
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
    assert _findings(report) == []


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_two_dimensional_blocks_reduce_and_broadcast(dtype):
    x = torch.randn(16, 50).to(dtype)
    out = torch.empty(16, 50, dtype=torch.float32)
    report = row_block_norm[(4,)](out, x, 50, ROWS=4, COLS=64)
    ref = x.float() - x.float().mean(dim=1, keepdim=True)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    assert _findings(report) == []


def test_reduction_along_axis_zero():
    x = torch.randn(8, 32)
    out = torch.empty(32)
    column_sums[(1,)](out, x, 8, 32)
    torch.testing.assert_close(out, x.sum(dim=0), atol=1e-5, rtol=1e-5)


def test_computed_offsets_take_the_discrete_path():
    x = torch.arange(64, dtype=torch.float32)
    out = torch.empty(16)
    with SESSION.collect(launches=True) as collection:
        strided_gather[(1,)](out, x, 16)
    idx = np.arange(16)
    torch.testing.assert_close(out, x[torch.from_numpy((idx * 3) % 7 + idx)])
    launch = collection.launches[-1]
    ops = [type(i.record).__name__ for core in launch.cores for i in core.instrs]
    assert "IndexedCopy" in ops


def test_program_ids_of_a_two_dimensional_grid():
    out = torch.full((3, 4), -1, dtype=torch.int32)
    grid_2d[(4, 3)](out, 4)
    assert out.flatten().tolist() == list(range(12))


def test_unmasked_load_past_the_end_is_a_finding_not_an_exception():
    x = torch.rand(100)
    out = torch.empty(128)
    report = unmasked_copy[(1,)](x, out, BLOCK=128)
    assert "gm-out-of-bounds" in _findings(report)
    torch.testing.assert_close(out[:100], x)


def test_ub_overflow_is_reported_at_the_kernel_line_and_nothing_runs():
    x = torch.rand(65536)
    out = torch.zeros(65536)
    with pytest.raises(UbOverflow, match=r"ub overflow, requires \d+ bits while 1572864 bits "
                                         r"available!") as info:
        too_big[(1,)](x, out, BLOCK=65536)
    assert "test_triton.py:" in str(info.value)
    assert out.abs().sum() == 0  # the outputs were never written


def test_grid_limit_and_all_blocks_parallel(monkeypatch):
    x, y = torch.rand(2 * MAX_GRID + 2), torch.rand(2 * MAX_GRID + 2)
    out = torch.empty_like(x)
    monkeypatch.delenv("TRITON_ALL_BLOCKS_PARALLEL", raising=False)
    with pytest.raises(RuntimeError, match="coreDim=65536 can't be greater than UINT16_MAX"):
        add_kernel[(MAX_GRID + 1,)](x, y, out, x.numel(), BLOCK=2)
    monkeypatch.setenv("TRITON_ALL_BLOCKS_PARALLEL", "1")
    small = torch.rand(300)
    out_small = torch.empty_like(small)
    report = add_kernel[(150,)](small, small, out_small, 300, BLOCK=2)
    torch.testing.assert_close(out_small, small + small)
    assert report.block_num == SESSION.soc.aiv_count  # folded onto the vector cores


def test_constexpr_and_type_promotion_of_known_values():
    a = tl.arange(0, 4)
    assert a.dtype == tl.int32
    assert (a + 1.5).dtype == tl.float32
    assert (a * tl.full([4], 2, tl.int64)).dtype == tl.int64
    assert (a < 2).dtype == tl.int1
    assert tl.constexpr(8) * 2 == 16
    assert tl.arange(0, 6).shape == (6,)  # triton-ascend's blocks need not be powers of two
    with pytest.raises(ValueError, match="greater than its start"):
        tl.arange(4, 4)


def test_import_triton_under_ascsim_run(tmp_path):
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent("""
        import torch, torch_npu, triton
        import triton.language as tl
        from triton.runtime import driver

        @triton.jit
        def double(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        props = driver.active.utils.get_device_properties(torch.npu.current_device())
        x = torch.arange(10, dtype=torch.float32, device="npu")
        double[(triton.cdiv(10, 8),)](x, 10, BLOCK=triton.next_power_of_2(5))
        assert x.tolist() == [2.0 * i for i in range(10)], x
        print("ok", props["num_vectorcore"] > 0, driver.active.get_current_target().backend)
    """))
    proc = subprocess.run([sys.executable, "-m", "ascsim", "run", "--quiet", str(script)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ok True npu" in proc.stdout


@jit
def relu_by_mask(out_ptr, flags_ptr, in_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs)
    positive = x > 0
    tl.store(out_ptr + offs, tl.where(positive, x, 0.0))
    tl.store(flags_ptr + offs, positive & (x < 1.0))


def test_data_dependent_masks_compare_select_and_store_as_bools():
    x = torch.randn(64)
    out = torch.empty(64)
    flags = torch.zeros(64, dtype=torch.bool)
    report = relu_by_mask[(1,)](out, flags, x, 64)
    torch.testing.assert_close(out, torch.relu(x))
    assert torch.equal(flags, (x > 0) & (x < 1))
    assert _findings(report) == []


@jit
def argmax_rows(out_ptr, in_ptr, n_cols, ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    x = tl.load(in_ptr + rows[:, None] * n_cols + cols[None, :],
                mask=cols[None, :] < n_cols, other=-float("inf"))
    tl.store(out_ptr + rows, tl.argmax(x, 1))
    tl.store(out_ptr + ROWS + cols, tl.argmin(x, 0), mask=cols < n_cols)
    tl.store(out_ptr + ROWS + COLS + rows, rows * 2)  # index arithmetic stored as data


def test_argmax_argmin_and_index_arithmetic_as_data():
    x = torch.randn(8, 13)
    out = torch.zeros(8 + 16 + 8, dtype=torch.int32)
    report = argmax_rows[(1,)](out, x, 13, ROWS=8, COLS=16)
    assert out[:8].tolist() == x.argmax(dim=1).tolist()
    assert out[8:21].tolist() == x.argmin(dim=0).tolist()
    assert out[24:].tolist() == [2 * i for i in range(8)]
    assert _findings(report) == []


@jit
def block_copy(out_ptr, in_ptr, rows, cols, BR: tl.constexpr, BC: tl.constexpr):
    r0 = tl.program_id(0) * BR
    src = tl.make_block_ptr(in_ptr, (rows, cols), (cols, 1), (r0, 0), (BR, BC), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (rows, cols), (cols, 1), (r0, 0), (BR, BC), (1, 0))
    for _ in range(0, cols, BC):
        tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")
        tl.store(dst, tile * 2, boundary_check=(0, 1))
        src = tl.advance(src, (0, BC))
        dst = tl.advance(dst, (0, BC))


def test_block_pointers_with_boundary_checks():
    x = torch.randn(10, 21)
    out = torch.zeros(10, 21)
    report = block_copy[(3,)](out, x, 10, 21, BR=4, BC=8)
    torch.testing.assert_close(out, x * 2)
    assert _findings(report) == []


@jit
def math_functions(out_ptr, flags_ptr, in_ptr, BLOCK: tl.constexpr):
    from ascsim.triton import libdevice

    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs)
    y = tl.sin(x) + libdevice.acos(x * 0.5) + libdevice.atan2(x, 2.0)
    tl.store(out_ptr + offs, y)
    tl.store(flags_ptr + offs, libdevice.signbit(x))


def test_libdevice_routines_match_numpy():
    x = torch.rand(32, dtype=torch.float16) * 2 - 1
    out = torch.empty(32, dtype=torch.float16)
    flags = torch.zeros(32, dtype=torch.bool)
    report = math_functions[(1,)](out, flags, x, 32)
    xf = x.float().numpy()
    ref = np.sin(xf) + np.arccos(xf * 0.5) + np.arctan2(xf, 2.0)
    torch.testing.assert_close(out.float(), torch.from_numpy(ref), atol=5e-3, rtol=5e-3)
    assert torch.equal(flags, x < 0)
    assert _findings(report) == []


@jit
def three_tiles_per_iteration(out_ptr, in_ptr, BLOCK: tl.constexpr):
    for i in range(3):
        offs = i * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(in_ptr + offs)
        y = tl.exp(x)
        z = y * 2.0
        tl.store(out_ptr + offs, z)


def test_loop_tiles_die_at_the_end_of_their_iteration_as_for_the_compiler():
    """3 tiles of 50 KB live per iteration fit the 192 KB UB; the previous iteration's three,
    still named in Python when the next load runs, are dead for the compiler."""
    block = 12800
    x = torch.randn(3 * block)
    out = torch.empty_like(x)
    report = three_tiles_per_iteration[(1,)](out, x, BLOCK=block)
    torch.testing.assert_close(out, torch.exp(x) * 2)
    assert _findings(report) == []


@jit
def atomic_column_sums(out_ptr, in_ptr, COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, COLS)
    tl.atomic_add(out_ptr + cols, tl.load(in_ptr + row * COLS + cols))


def test_atomic_add_from_every_program():
    x = torch.randn(6, 16)
    out = torch.zeros(16)
    report = atomic_column_sums[(6,)](out, x, 16)
    torch.testing.assert_close(out, x.sum(dim=0), atol=1e-5, rtol=1e-5)
    assert _findings(report) == []
