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
