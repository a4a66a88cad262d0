"""PyPTO Pro's debug operations on the simulator: printf formats, pto_assert (output and
finding), dump_data of GM tensors, Vec tiles and Acc tiles (through a workspace), and trap."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim.isa import KernelError
from ascsim.pto.errors import ParserSyntaxError
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"


@pytest.fixture(autouse=True)
def _soc():
    with SESSION.using_soc(SOC):
        yield


@pl.jit
def prints(out: pl.Tensor[[1], pl.DT_INT32], n: pl.DT_INT64, x: pl.DT_FP32):
    with pl.section_vector():
        pl.printf("n=%d u=%u hex=%x pad=%05d x=%.3f\n", n, n, 255, n, x)
        pl.printf("plain\n", loc=True)


@pl.jit
def bad_format(out: pl.Tensor[[1], pl.DT_INT32]):
    with pl.section_vector():
        pl.printf("%s\n", 1)


def test_printf_formats(capsys):
    prints(torch.zeros(1, dtype=torch.int32), 42, 1.5)
    text = capsys.readouterr().out
    assert "n=42 u=42 hex=ff pad=00042 x=1.500\n" in text
    assert re.search(r"\[.*test_pto_debug\.py:\d+\] plain", text)
    with pytest.raises(ParserSyntaxError, match="unsupported conversion %s"):
        bad_format(torch.zeros(1, dtype=torch.int32))


@pl.jit
def asserts(out: pl.Tensor[[1], pl.DT_INT32], n: pl.DT_INT64):
    with pl.section_vector():
        pl.pto_assert(n > 0)
        pl.pto_assert(n < 3, "n=%d\n", n)
        out[0] = 1  # the device goes on after a failed assertion


def test_pto_assert_prints_and_reports_but_goes_on(capsys):
    out = torch.zeros(1, dtype=torch.int32)
    report = asserts(out, 5)
    text = capsys.readouterr().out
    assert "Assertion failed: n < 3 n=5" in text
    assert "n > 0" not in text
    assert out.tolist() == [1]
    found = [f for f in report.findings if f.category == "assert"]
    assert len(found) == 1 and found[0].locations[0][0] == __file__


@pl.jit
def traps(out: pl.Tensor[[1], pl.DT_INT32]):
    with pl.section_vector():
        pl.trap()


def test_trap_stops_the_kernel():
    with pytest.raises(KernelError, match="trap"):
        traps(torch.zeros(1, dtype=torch.int32))


# ------------------------------------------------------------------ dump_data
ROWS, COLS = 8, 16


def _dumped(text: str) -> list[np.ndarray]:
    """The value rows of every dump in ``text``, one array per dump."""
    dumps, rows = [], None
    for line in text.splitlines():
        if line.startswith("dump_data"):
            rows = []
            dumps.append(rows)
        elif rows is not None and line.strip() and not line.startswith("["):
            rows.append([float(v) for v in line.split()])
    return [np.array(r) for r in dumps]


@pl.jit
def dump_tensor(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_vector():
        pl.dump_data(x)
        pl.dump_data(x, offsets=[2, 4], shapes=[3, 5], flag="window")


def test_dump_gm_tensor_whole_and_window(capsys):
    x = torch.randn(ROWS, COLS)
    dump_tensor(x)
    text = capsys.readouterr().out
    whole, window = _dumped(text)
    np.testing.assert_allclose(whole, x.numpy(), atol=1e-4)
    np.testing.assert_allclose(window, x.numpy()[2:5, 4:9], atol=1e-4)
    assert "[flag] window" in text


@pl.jit
def dump_vec_tile(x: pl.Tensor[[ROWS, COLS], pl.DT_INT32]):
    group = pl.make_tile_group(type=pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_INT32,
                                                target_memory=pl.MemorySpace.Vec),
                               addrs=0, mutex_ids=[0])
    with pl.section_vector():
        t = group.current()
        pl.load(t, x, [0, 0])
        pl.add(t, t, t)
        pl.dump_data(t, offsets=[1, 3], shapes=[4, 2])


@pl.jit(auto_mutex=False)
def dump_unsynced(x: pl.Tensor[[ROWS, COLS], pl.DT_INT32]):
    t = pl.make_tile(pl.TileType(shape=[ROWS, COLS], dtype=pl.DT_INT32,
                                 target_memory=pl.MemorySpace.Vec), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.dump_data(t)  # reads the tile before the load is known to be done


def test_dump_vec_tile_window_and_an_unsynchronised_dump_is_a_race(capsys):
    x = torch.arange(ROWS * COLS, dtype=torch.int32).reshape(ROWS, COLS)
    report = dump_vec_tile(x)
    (window,) = _dumped(capsys.readouterr().out)
    np.testing.assert_array_equal(window, (2 * x).numpy()[1:5, 3:5])
    assert not [f for f in report.findings if f.category == "race"]
    report = dump_unsynced(x)
    races = [f for f in report.findings if f.category == "race"]
    assert races and "dump_data" in races[0].message


ACC = pl.TileType(shape=[16, 16], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Acc)


@pl.jit(auto_mutex=False)
def dump_acc(ws: pl.Tensor[[16, 16], pl.DT_FP32]):
    acc = pl.make_tile(ACC, addr=0)
    with pl.section_cube():
        for r in pl.range(16):
            for c in pl.range(16):
                acc[r, c] = r * 16 + c  # scalar writes into L0C
        pl.system.bar_all()
        pl.dump_data(acc, offsets=[2, 8], shapes=[2, 4], workspace=ws)


@pl.jit(auto_mutex=False)
def dump_acc_without_workspace(ws: pl.Tensor[[16, 16], pl.DT_FP32]):
    acc = pl.make_tile(ACC, addr=0)
    with pl.section_cube():
        pl.dump_data(acc)


@pl.jit(auto_mutex=False)
def dump_small_workspace(ws: pl.Tensor[[8, 16], pl.DT_FP32]):
    acc = pl.make_tile(ACC, addr=0)
    with pl.section_cube():
        pl.dump_data(acc, workspace=ws)


def test_dump_acc_tile_goes_through_the_workspace(capsys):
    ws = torch.zeros(16, 16)
    dump_acc(ws)
    (window,) = _dumped(capsys.readouterr().out)
    logical = np.arange(256, dtype=np.float32).reshape(16, 16)
    np.testing.assert_array_equal(window, logical[2:4, 8:12])
    np.testing.assert_array_equal(ws.numpy(), logical)  # the whole tile, row-major
    with pytest.raises(ParserSyntaxError, match="needs workspace="):
        dump_acc_without_workspace(ws)
    with pytest.raises(ParserSyntaxError, match="needs 256"):
        dump_small_workspace(torch.zeros(8, 16))


@pl.jit
def dump_bad_window(x: pl.Tensor[[ROWS, COLS], pl.DT_FP32]):
    with pl.section_vector():
        pl.dump_data(x, offsets=[6, 0], shapes=[4, 4])


def test_dump_window_outside_the_data():
    with pytest.raises(KernelError, match="outside the data"):
        dump_bad_window(torch.zeros(ROWS, COLS))
