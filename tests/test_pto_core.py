"""The PyPTO Pro front-end's core: the kernel rewrite, launches, tiles, layouts, auto_mutex."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim.pto import layout
from ascsim.pto.enums import TensorLayout
from ascsim.pto.errors import ParserSyntaxError, UnsupportedFeatureError
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"


@pytest.fixture(autouse=True)
def _on_950():
    with SESSION.using_soc(SOC):
        yield


# ------------------------------------------------------------------ layouts
def test_nz_of_nk_is_zn_of_kn():
    """[N, K] NZ and [K, N] ZN are the same bytes (a transpose moves nothing)."""
    n, k = 32, 48
    nz = layout.make_frame(TensorLayout.NZ, n, k, 2)
    zn = layout.make_frame(TensorLayout.ZN, k, n, 2)
    assert np.array_equal(layout.window_offsets(nz, 0, 0, n, k),
                          layout.window_offsets(zn, 0, 0, k, n).T)


@pytest.mark.parametrize("lay", list(TensorLayout))
@pytest.mark.parametrize("elem", [1, 2, 4])
def test_every_layout_is_a_permutation_of_its_frame(lay, elem):
    frame = layout.make_frame(lay, 40, 72, elem)
    offsets = layout.window_offsets(frame, 0, 0, frame.rows, frame.cols)
    assert sorted(offsets.ravel().tolist()) == list(range(frame.elements))


def test_nz_fractals_are_16_rows_of_32_bytes():
    frame = layout.make_frame(TensorLayout.NZ, 16, 32, 2)  # two 16x16 fp16 fractals
    off = layout.window_offsets(frame, 0, 0, 16, 32)
    assert off[0, :16].tolist() == list(range(16))
    assert off[1, 0] == 16 and off[0, 16] == 256


# ------------------------------------------------------------------ kernels
@pl.jit
def add_rows(a: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], b: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32],
             out: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
    tt = pl.TileType(shape=[16, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    ga = pl.make_tile_group(type=tt, addrs=0x0, mutex_ids=[0, 1])
    gb = pl.make_tile_group(type=tt, addrs=0x10000, mutex_ids=[2, 3])
    go = pl.make_tile_group(type=tt, addrs=0x20000, mutex_ids=[4, 5])
    rows = a.shape[0]
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), (rows + 15) // 16, pl.get_block_num()):
            n = min(16, rows - t * 16)
            ta, tb, to = ga.next(), gb.next(), go.next()
            pl.set_validshape(ta, [n, 64])
            pl.set_validshape(tb, [n, 64])
            pl.set_validshape(to, [n, 64])
            pl.load(ta, a, [t * 16, 0])
            pl.load(tb, b, [t * 16, 0])
            pl.add(to, ta, tb)
            pl.mul(to, to, 0.5)
            pl.store(out, to, [t * 16, 0])


@pytest.mark.parametrize("rows,blocks", [(64, 4), (70, 3), (5, 2)])
def test_vector_kernel_with_tails_matches_torch(rows, blocks):
    a, b = torch.randn(rows, 64), torch.randn(rows, 64)
    out = torch.zeros(rows, 64)
    report = add_rows[None, blocks](a, b, out)
    torch.testing.assert_close(out, (a + b) * 0.5)
    assert report.findings == [], [f.format() for f in report.findings]
    assert report.kernel_type == "AIV_ONLY"


def test_call_without_brackets_is_one_block():
    a, b = torch.randn(16, 64), torch.randn(16, 64)
    out = torch.zeros(16, 64)
    report = add_rows(a, b, out)
    assert report.block_num == 1
    torch.testing.assert_close(out, (a + b) * 0.5)


def test_auto_mutex_orders_the_pipes_of_one_buffer():
    """With auto_mutex the vector op waits for the load of its buffer and the store for the
    vector op: no race findings. Without it (and no sync) the same kernel races."""
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    report = add_rows[None, 1](a, b, torch.zeros(32, 64))
    assert report.findings == []
    unsynced = pl.jit(auto_mutex=False)(add_rows.fn)
    report = unsynced[None, 1](a, b, torch.zeros(32, 64))
    kinds = {f.category for f in report.findings}
    assert "race" in kinds, [f.format() for f in report.findings]
    lines = {line for f in report.findings for (_, line) in f.locations}
    assert any("test_pto_core.py" in f.locations[0][0] for f in report.findings)
    assert lines


@pl.jit
def sections(out: pl.Tensor[[3], pl.DT_INT32]):
    with pl.section_cube():
        out[0] = 1
    with pl.section_vector():
        out[1 + pl.get_subblock_idx()] = 10 + pl.get_block_idx()


def test_sections_run_on_their_cores_and_vector_block_idx_is_flattened():
    out = torch.zeros(3, dtype=torch.int32)
    report = sections[None, 1](out)
    assert report.kernel_type == "MIX"
    assert out.tolist() == [1, 10, 11]


def _helper_with_section(out):
    with pl.section_vector():
        out[0] = 7


@pl.jit
def calls_helper(out: pl.Tensor[[1], pl.DT_INT32]):
    _helper_with_section(out)


def test_helpers_are_inlined_with_their_sections():
    out = torch.zeros(1, dtype=torch.int32)
    report = calls_helper(out)
    assert out.item() == 7 and report.kernel_type == "AIV_ONLY"


def test_builtin_range_is_refused_with_the_line():
    @pl.jit
    def bad(out: pl.Tensor[[4], pl.DT_INT32]):
        with pl.section_vector():
            for i in range(4):
                out[i] = i

    with pytest.raises(ParserSyntaxError, match=r"test_pto_core.py:\d+: use pl.range"):
        bad(torch.zeros(4, dtype=torch.int32))


def test_other_context_managers_are_refused():
    @pl.jit
    def bad(out: pl.Tensor[[4], pl.DT_INT32]):
        with open("x"):
            out[0] = 1

    with pytest.raises(UnsupportedFeatureError, match="section_cube"):
        bad(torch.zeros(4, dtype=torch.int32))


def test_arguments_are_checked_like_pypto_pro():
    a = torch.randn(16, 64)
    with pytest.raises(TypeError, match="expected dtype torch.float32"):
        add_rows(a.half(), a, a)
    with pytest.raises(TypeError, match="dimension 1 must be 64"):
        add_rows(torch.randn(16, 32), a, a)
    with pytest.raises(TypeError, match="expected rank 2"):
        add_rows(torch.randn(64), a, a)
    with pytest.raises(ValueError, match="block_dim must be a positive int"):
        add_rows[None, 0]
    with pytest.raises(ValueError, match="block_dim"):
        add_rows[None, True]


def test_910b_is_refused_with_unsupported_platform():
    with SESSION.using_soc("Ascend910B1"), pytest.raises(RuntimeError,
                                                          match="unsupported platform"):
        add_rows(torch.randn(16, 64), torch.randn(16, 64), torch.zeros(16, 64))


def test_misaligned_tile_address_is_a_parse_error():
    @pl.jit
    def bad(out: pl.Tensor[[16, 16], pl.DT_FP32]):
        with pl.section_vector():
            pl.make_tile(pl.TileType(shape=[16, 16], dtype=pl.DT_FP32), addr=0x10)

    with pytest.raises(ParserSyntaxError, match="32-byte aligned"):
        bad(torch.zeros(16, 16))


def test_tile_beyond_ub_is_a_finding():
    @pl.jit
    def big(out: pl.Tensor[[16, 16], pl.DT_FP32]):
        with pl.section_vector():
            pl.make_tile(pl.TileType(shape=[256, 256], dtype=pl.DT_FP32), addr=0x20000)

    report = big(torch.zeros(16, 16))
    assert [f.category for f in report.findings] == ["local-overflow"]


def test_tile_group_cursor_starts_at_the_last_slot():
    seen = []

    @pl.jit
    def ring(out: pl.Tensor[[4], pl.DT_INT32]):
        g = pl.make_tile_group(type=pl.TileType(shape=[8, 8], dtype=pl.DT_FP32),
                               addrs=0, depth=3)
        with pl.section_vector():
            seen.append(g.current().addr)
            for _ in pl.range(4):
                seen.append(g.next().addr)

    ring(torch.zeros(4, dtype=torch.int32))
    assert seen == [512, 0, 256, 512, 0]


def test_pypto_pro_names_and_950_default_under_run(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "k.py"
    script.write_text(
        "import pypto_pro.language as pl\n"
        "import pypto\n"
        "import torch, torch_npu\n"
        "from pypto_pro.language.parser.diagnostics._exceptions import ParserSyntaxError\n"
        "from pypto_pro.runtime.platform import get_platform_info\n"
        "print(torch.npu.get_device_name(), get_platform_info().arch)\n")
    done = subprocess.run([sys.executable, "-m", "ascsim", "run", str(script)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Ascend950PR_9579 a5" in done.stdout


@pl.jit
def copy_static(x: pl.Tensor[[pl.DYNAMIC, pl.STATIC], pl.DT_FP32],
                y: pl.Tensor[[pl.DYNAMIC, pl.STATIC], pl.DT_FP32]):
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP32), addr=0)
        pl.set_validshape(t, [x.shape[0], x.shape[1]])
        pl.load(t, x, [0, 0])
        pl.store(y, t, [0, 0])


def test_compile_cache_keeps_one_variant_per_static_shape():
    """A DYNAMIC dimension reuses the kernel's variant; a STATIC one makes a new variant per
    value (PyPTO Pro's cache, counted by its tests)."""
    copy_static._compiled_by_signature.clear()
    for rows, cols in [(4, 32), (8, 32), (4, 64), (8, 64), (4, 32)]:
        x = torch.randn(rows, cols)
        y = torch.zeros(rows, cols)
        copy_static(x, y)
        torch.testing.assert_close(y, x)
    assert len(copy_static._compiled_by_signature) == 2


def _double(t: pl.Tile[[8, 64], pl.DT_FP32], x: pl.Tensor[[8, 64], pl.DT_FP32]):
    pl.load(t, x, [0, 0])
    pl.add(t, t, t)


@pl.jit
def annotated_helper(x: pl.Tensor[[8, 64], pl.DT_FP32], y: pl.Tensor[[8, 64], pl.DT_FP32]):
    with pl.section_vector():
        t = pl.make_tile(pl.TileType(shape=[8, 64], dtype=pl.DT_FP32), addr=0)
        _double(t, x)
        pl.store(y, t, [0, 0])


def test_helpers_may_annotate_tiles():
    x = torch.randn(8, 64)
    y = torch.zeros(8, 64)
    annotated_helper(x, y)
    torch.testing.assert_close(y, 2 * x)


@pl.jit
def gather_pairs(x: pl.Tensor[[64, 32], pl.DT_FP32], steps: pl.Tensor[[4], pl.DT_INT32],
                 out: pl.Tensor[[8, 32], pl.DT_FP32]):
    ring = pl.make_tile_group(type=pl.TileType(shape=[2, 32], dtype=pl.DT_FP32), addrs=0,
                              mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(4):
            t = ring.next()
            pl.set_stride(x, [steps[i], 1])
            pl.load(t, x, [i, 0])
            pl.store(out, t, [2 * i, 0])


def test_set_stride_spaces_the_rows_not_the_offsets():
    """After set_stride(x, [s, 1]) a load at row i reads rows i and i + s / width."""
    x = torch.randn(64, 32)
    lines = [5, 1, 30, 7]
    out = torch.zeros(8, 32)
    report = gather_pairs(x, torch.tensor([k * 32 for k in lines], dtype=torch.int32), out)
    want = torch.stack([x[r] for i, k in enumerate(lines) for r in (i, i + k)])
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    assert report.findings == []


def test_compact_cube_buffers_lay_their_fractals_out_for_the_valid_window():
    """compact=1: an NZ L0 tile's column strips are as high as its valid rows (rounded to 16),
    not its physical rows; without compact they keep the physical height. An L1 (Mat) tile
    keeps its physical layout: the AIVs insert into it through their own descriptor, which
    does not carry the valid shape the cube side sets (PyPTO Pro's FA tail kernels)."""
    seen = {}

    @pl.jit
    def probe(out: pl.Tensor[[1], pl.DT_INT32]):
        with pl.section_cube():
            for compact in pl.range(2):
                left = pl.make_tile(pl.TileType(shape=[64, 64], dtype=pl.DT_FP16,
                                                target_memory=pl.MemorySpace.Left,
                                                layout=pl.NZ, compact=compact), addr=0)
                mat = pl.make_tile(pl.TileType(shape=[64, 64], dtype=pl.DT_FP16,
                                               target_memory=pl.MemorySpace.Mat,
                                               layout=pl.NZ, compact=compact), addr=0)
                pl.set_validshape(left, [20, 64])
                pl.set_validshape(mat, [20, 64])
                seen["Left", compact] = int(left.offsets(1, 1, 0, 16)[0, 0])
                seen["Mat", compact] = int(mat.offsets(1, 1, 0, 16)[0, 0])

    probe(torch.zeros(1, dtype=torch.int32))
    assert seen == {("Left", 0): 64 * 16, ("Left", 1): 32 * 16,
                    ("Mat", 0): 64 * 16, ("Mat", 1): 64 * 16}


@pytest.mark.parametrize("how,expect", [
    ({"env": {"ASCSIM_SOC": "Ascend950DT_9581"}}, "Ascend950DT_9581"),
    ({"args": ["--soc", "Ascend950DT_9581"]}, "Ascend950DT_9581"),
    ({}, "Ascend950PR_9579"),
])
def test_pypto_pro_part_follows_the_choice_or_defaults_to_the_950pr(tmp_path, how, expect):
    import os
    import subprocess
    import sys

    script = tmp_path / "k.py"
    script.write_text("import pypto_pro.language as pl\nimport torch, torch_npu\n"
                      "print(torch.npu.get_device_name())\n")
    env = {k: v for k, v in os.environ.items() if k != "ASCSIM_SOC"}
    env.update(how.get("env", {}))
    done = subprocess.run([sys.executable, "-m", "ascsim", "run", *how.get("args", []),
                           str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[0] == expect


# ------------------------------------------------------------------ stores of another type
@pl.jit
def bits_store_kernel(x: pl.Tensor[[1, 64], pl.DT_UINT16], o: pl.Tensor[[1, 64], pl.DT_INT16],
                      w: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_INT32]):
    t = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_UINT16,
                                 target_memory=pl.MemorySpace.Vec), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(o, t, [0, 0])
        if w.shape[0] == 1:
            pl.store(w, t, [0, 0])


def test_a_store_into_a_tensor_of_another_type_of_the_same_width_keeps_the_bits():
    x = torch.arange(0, 64 * 1000, 1000, dtype=torch.int32).to(torch.uint16).reshape(1, 64)
    o = torch.zeros(1, 64, dtype=torch.int16)
    bits_store_kernel(x, o, torch.zeros(2, 64, dtype=torch.int32))  # (no int32 store)
    assert torch.equal(o, x.view(torch.int16))
    with pytest.raises(ParserSyntaxError, match="differ in width"):
        bits_store_kernel(x, o, torch.zeros(1, 64, dtype=torch.int32))


@pl.jit
def wide_valid_kernel(x: pl.Tensor[[4, 64], pl.DT_FP32], o: pl.Tensor[[4, 64], pl.DT_FP32],
                      rows: pl.DT_INT64):
    t = pl.make_tile(pl.TileType(shape=[4, 64], dtype=pl.DT_FP32,
                                 target_memory=pl.MemorySpace.Vec), addr=0)
    with pl.section_vector():
        pl.set_validshape(t, [rows, 64])  # a runtime valid shape is not checked ...
        pl.set_validshape(t, [4, 64])     # ... and here is never used past the tile
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE3, event_id=0)
        pl.store(o, t, [0, 0])


def test_a_runtime_valid_shape_above_the_tile_is_taken_and_a_negative_one_refused():
    x, o = torch.randn(4, 64), torch.zeros(4, 64)
    wide_valid_kernel(x, o, 8)
    torch.testing.assert_close(o, x)
    from ascsim.isa import KernelError

    with pytest.raises(KernelError, match="cannot be negative"):
        wide_valid_kernel(x, o, -1)
