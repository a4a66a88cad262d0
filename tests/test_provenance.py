"""Wrong-output provenance (issue 35 part 1): five buggy kernels, each explained by the right
pattern at the right line; the writer map itself; the assert hooks of ``ascsim run``.

Expected lines come from ``# mark: NAME`` comments in this file.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from source_marks import SourceMarks, f32

import ascsim
import ascsim.asc as asc
from ascsim.session import SESSION
from ascsim.sim import provenance

HERE = os.path.abspath(__file__)
_MARKS = SourceMarks(HERE)
T = 64  # fp32 elements per tile


def line(name: str) -> str:
    return f"{HERE}:{_MARKS.mark(name)}"


@pytest.fixture(autouse=True)
def writers_on():
    saved = (SESSION.provenance, SESSION.checks, SESSION.strict)
    SESSION.provenance, SESSION.checks, SESSION.strict = True, True, False
    provenance.forget_all()
    yield
    SESSION.provenance, SESSION.checks, SESSION.strict = saved
    provenance.forget_all()


def _globals(*addresses):
    out = []
    for address in addresses:
        g = asc.GlobalTensor()
        g.set_global_buffer(address)
        out.append(g)
    return out


@asc.jit
def doubled_tail(x: asc.GlobalAddress, z: asc.GlobalAddress, full: asc.ConstExpr[int],
                 tail: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2 * 4 * T)
    a = buf.get(asc.float32)
    o = a[T:]
    gx, gz = _globals(x, z)
    for i in range(full + 1):
        count = T if i < full else tail
        asc.data_copy(a, gx[i * T:], count)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.muls(o, a, 2.0, count)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        if i < full:
            asc.data_copy(gz[i * T:], o, T)
        else:
            asc.data_copy(gz[(full - 1) * T:], o, tail)  # mark: tail-out
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)


def test_wrong_tail_offset_is_the_tail_tile():
    x, z = f32(3 * T + 16, 1), np.zeros(3 * T + 16, np.float32)
    doubled_tail[1](x, z, 3, 16)
    e = ascsim.explain(z, 2 * x)
    assert e.differing == 32
    assert e.pattern.name == "tail tile", str(e)
    assert e.lines == (line("tail-out"),)
    assert {p.name for p in e.patterns} >= {"tail tile", "written twice", "never written"}


@asc.jit
def block_tiles(x: asc.GlobalAddress, z: asc.GlobalAddress, wrong: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2 * 4 * T)
    a = buf.get(asc.float32)
    o = a[T:]
    gx, gz = _globals(x, z)
    block = asc.get_block_idx()
    source = block + 1 if block == wrong else block  # one core's index off by one
    asc.data_copy(a, gx[source * T:], T)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(o, a, 1.0, T)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gz[block * T:], o, T)  # mark: block-out


def test_one_cores_block_index_off_by_one_is_one_core():
    x, z = f32(5 * T), np.zeros(4 * T, np.float32)
    block_tiles[4](x, z, 2)
    e = ascsim.explain(z, x[:4 * T] + 1)
    assert e.differing == T
    assert e.pattern.name == "one core", str(e)
    assert "core 2 (block 2)" in e.pattern.detail
    assert e.lines == (line("block-out"),)
    assert [g.core for g in e.groups] == [2]
    block_tiles[4](x, z, -1)
    assert ascsim.explain(z, x[:4 * T] + 1).differing == 0


@asc.jit
def hand_back(x: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress,
              synced: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * T)
    t = buf.get(asc.float32)
    gx, gw, gy = _globals(x, ws, y)
    if asc.get_block_idx() == 1:
        asc.data_copy(t, gx, T)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gw, t, T)  # mark: producer
    if synced:
        asc.sync_all()
    if asc.get_block_idx() == 0:
        asc.data_copy(t, gw, T)  # mark: consumer
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gy, t, T)  # mark: consumer-out


def test_missing_wait_is_a_race():
    x, ws, y = f32(T, 1), np.zeros(T, np.float32), np.zeros(T, np.float32)
    hand_back[2](x, ws, y, False)
    e = ascsim.explain(y, x)
    assert e.differing == T
    assert e.pattern.name == "race", str(e)
    assert set(e.lines) == {line("producer"), line("consumer")}
    assert [g.where for g in e.groups] == [line("consumer-out")]
    hand_back[2](x, ws, y, True)
    assert ascsim.explain(y, x).differing == 0


@asc.jit
def boundary_blocks(x: asc.GlobalAddress, z: asc.GlobalAddress, tiles: asc.ConstExpr[int],
                    back: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2 * 4 * T)
    a = buf.get(asc.float32)
    o = a[T:]
    gx, gz = _globals(x, z)
    for i in range(tiles):
        asc.data_copy(a, gx[i * T:], T)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.muls(o, a, 3.0, T - 8)
        # The tile's last block, read with a stride error: one block too far back.
        asc.muls(o[T - 8:], a[T - 8 - back:], 3.0, 8)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(gz[i * T:], o, T)  # mark: boundary-out
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)


def test_tile_boundary_stride_error_is_a_tile_boundary():
    x, z = f32(4 * T), np.zeros(4 * T, np.float32)
    boundary_blocks[1](x, z, 4, 8)
    e = ascsim.explain(z, 3 * x)
    assert e.differing == 4 * 8
    assert e.pattern.name == "tile boundary", str(e)
    assert "last 8 elements of 4 tiles" in e.pattern.detail
    assert e.lines == (line("boundary-out"),)
    boundary_blocks[1](x, z, 4, 0)
    assert ascsim.explain(z, 3 * x).differing == 0


@asc.jit
def half_computed(x: asc.GlobalAddress, z: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=3 * 4 * T)
    a = buf.get(asc.float32)
    o = a[T:]
    gx, gz = _globals(x, z)
    asc.data_copy(a, gx, T)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.muls(o, a, 2.0, T)  # the second tile of o is never computed
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gz, o, 2 * T)  # mark: uninit-out


def test_uninitialised_ub_tile_is_uninitialised():
    x, z = f32(2 * T, 1), np.zeros(2 * T, np.float32)
    half_computed[1](x[:T].copy(), z)
    want = np.concatenate([2 * x[:T], 2 * x[:T]])
    e = ascsim.explain(z, want)
    assert e.differing == T
    assert e.pattern.name == "uninitialised", str(e)
    assert line("uninit-out") in e.lines


def test_boundary_report_also_names_the_period_and_the_writer_groups():
    x, z = f32(4 * T), np.zeros(4 * T, np.float32)
    boundary_blocks[1](x, z, 4, 8)
    e = ascsim.explain(z, 3 * x)
    assert [p.name for p in e.patterns] == ["tile boundary", "stride period"]
    assert "every 64 elements from element 56" in e.patterns[1].detail
    (group,) = e.groups
    assert group.tiles == (0, 1, 2, 3) and group.count == 32
    text = str(e)
    assert "pattern: tile boundary" in text and "tiles 0, 1, 2 and 3: 32 elements" in text


# ------------------------------------------------------------------------------------------
# The other front-ends go through the same machine.
@pytest.fixture
def soc_950():
    with SESSION.using_soc("Ascend950PR_9579"):
        yield


def test_triton_program_reading_the_next_block_is_one_core():
    from ascsim.triton import language as tl
    from ascsim.triton.jit import jit

    @jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, WRONG: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offsets = pid * BLOCK + tl.arange(0, BLOCK)
        source = offsets + tl.where(pid == WRONG, BLOCK, 0)
        x = tl.load(x_ptr + source, mask=source < n)
        y = tl.load(y_ptr + offsets, mask=offsets < n)
        tl.store(out_ptr + offsets, x + y, mask=offsets < n)  # mark: triton-store

    import torch

    x, y, z = torch.arange(1024, dtype=torch.float32), torch.ones(1024), torch.empty(1024)
    add_kernel[(4,)](x, y, z, 1024, WRONG=1, BLOCK=256)
    e = ascsim.explain(z, x + y)
    assert e.pattern.name == "one core" and "core 1 (block 1)" in e.pattern.detail, str(e)
    assert e.lines == (line("triton-store"),)


def test_pypto_pro_block_storing_a_wrong_tile_is_one_core(soc_950):
    import torch

    import ascsim.pto.language as pl

    m, n, tn = 16, 256, 128

    @pl.jit
    def add_columns(x: pl.Tensor[[16, 256], pl.DT_FP32], y: pl.Tensor[[16, 256], pl.DT_FP32],
                    z: pl.Tensor[[16, 256], pl.DT_FP32]):
        tile = pl.TileType(shape=[16, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        xs = pl.make_tile_group(type=tile, addrs=0x00000, mutex_ids=[0, 1])
        ys = pl.make_tile_group(type=tile, addrs=0x04000, mutex_ids=[2, 3])
        zs = pl.make_tile_group(type=tile, addrs=0x08000, mutex_ids=[4, 5])
        with pl.section_vector():
            c0 = pl.get_block_idx() * 128
            a = xs.next()
            b = ys.next()
            c = zs.next()
            pl.load(a, x, [0, c0])
            pl.load(b, y, [0, 0])  # every block adds y's first column tile
            pl.add(c, a, b)
            pl.store(z, c, [0, c0])  # mark: pto-store

    torch.manual_seed(0)
    x, y, z = torch.randn(m, n), torch.randn(m, n), torch.zeros(m, n)
    add_columns[None, 2](x, y, z)
    e = ascsim.explain(z, x + y)
    assert e.pattern.name == "one core" and "core 1" in e.pattern.detail, str(e)
    assert e.lines == (line("pto-store"),)
    assert e.differing == m * tn
    assert any(p.name == "stride period" and f"every {n} elements" in p.detail
               for p in e.patterns)


# ------------------------------------------------------------------------------------------
# The writer map and the lookup.
def test_element_map_counts_stores_and_strided_rows():
    w = (0, ("k.py", 1), "copy", None)
    a = (1, ("k.py", 2), "copy", "add")
    log = provenance.BufferWriters("k", "z", 64, (
        (("GM", 0), 0, 16),                 # elements 0..3
        (("GM", 0), 8, 48, 8, 16),          # rows of 2 elements every 4: 2-3, 6-7, 10-11
        (("GM", 0), 40, 48)), (w, w, a), {0: 0, 1: 1}, (), 2)  # an atomic add over 10-11
    assert [x.tile for x in log.writers] == [0, 1, 0]
    last, stores = log.element_map(4, 16)
    assert last.tolist() == [0, 0, 1, 1, -1, -1, 1, 1, -1, -1, 2, 2, -1, -1, -1, -1]
    assert stores.tolist() == [1, 1, 2, 2, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0]


def test_a_copy_of_an_output_is_found_by_its_values_and_others_are_not():
    import torch

    x = f32(4 * T)
    z = torch.zeros(4 * T)
    block_tiles[4](x, z.numpy(), 2)
    assert provenance.lookup(z) is not None  # the same memory
    assert provenance.lookup(z.clone()) is not None  # equal values
    assert provenance.lookup(torch.ones(4 * T)) is None
    e = ascsim.explain(torch.ones(8), torch.zeros(8))
    assert e.differing == 8 and "no writer record" in str(e)


def test_matching_tensors_explain_nothing():
    x, z = f32(4 * T), np.zeros(4 * T, np.float32)
    boundary_blocks[1](x, z, 4, 0)
    e = ascsim.explain(z, 3 * x)
    assert e.differing == 0 and e.pattern is None
    assert str(e) == f"ascsim: all {4 * T} elements match"


def test_the_bench_precision_rule_explains_a_failed_output():
    from ascsim.bench.precision import check_precision

    x, z = f32(5 * T, 1), np.zeros(4 * T, np.float32)
    block_tiles[4](x, z, 1)
    result = check_precision(z, x[:4 * T] + 1, "float32")
    assert not result.passed
    assert "pattern: one core" in result.provenance and "core 1 (block 1)" in result.provenance
    block_tiles[4](x, z, -1)
    assert check_precision(z, x[:4 * T] + 1, "float32").provenance == ""


def test_shapes_that_do_not_broadcast_are_refused():
    with pytest.raises(ValueError, match=r"shape \(3,\), which does not broadcast"):
        ascsim.explain(np.zeros(4), np.zeros(3))
