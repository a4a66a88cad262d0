"""PyPTO Pro's kernel language on the simulator: sections, pl.range, constexpr, early exits,
inlined helpers, closures, tiling keys, datatype specialisation, TilingData, structs, SSBuffer,
annotated scalars and the diagnostics of refused kernels (checked against torch/numpy)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim.pto.errors import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError
from ascsim.pto.runtime.tilingkey import TilingKeyField
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"
N = 16


@pytest.fixture(autouse=True)
def _soc():
    with SESSION.using_soc(SOC):
        yield


def _vec(dtype=pl.DT_FP32, rows=1, cols=N):
    return pl.TileType(shape=[rows, cols], dtype=dtype, target_memory=pl.MemorySpace.Vec)


# ------------------------------------------------------------------ control flow
def _triangle(limit):
    """Helper inlined into the kernel: it has sections and loops of its own."""
    total = 0
    for k in pl.range(limit):
        if k == 5:
            continue
        if k == 9:
            break
        total = total + k
    return total


@pl.jit
def control_flow(out: pl.Tensor[[8], pl.DT_INT64], stop: pl.DT_INT64):
    with pl.section_vector():
        out[0] = _triangle(stop)
        i = 0
        while True:
            i = i + 3
            if i > 10:
                break
        out[1] = i
        out[2] = 7 // 2
        half: pl.DT_FP32 = 7 / 2
        out[3] = int(half * 10)
        wrapped: pl.DT_INT32 = 2 ** 31 + 5
        out[4] = wrapped
        out[5] = 1 if pl.constexpr(stop > 100) else 2
        out[6] = pl.max(3, stop) + pl.min(3, stop)
        if stop > 0:
            out[7] = 42
            return
        out[7] = -1


def test_control_flow_helpers_and_scalars():
    out = torch.zeros(8, dtype=torch.int64)
    control_flow(out, 20)
    expected = [sum(k for k in range(9) if k != 5), 12, 3, 35, np.int32(2 ** 31 + 5 - 2 ** 32),
                2, 23, 42]
    assert out.tolist() == [int(v) for v in expected]


def make_scaled_kernel(factor):
    """A kernel defined inside a function: it reads the function's variables."""
    @pl.jit
    def scaled(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32]):
        a = pl.make_tile(_vec(), addr=0)
        with pl.section_vector():
            pl.load(a, x, [0, 0])
            pl.system.bar_all()
            pl.muls(a, a, factor)
            pl.system.bar_all()
            pl.store(y, a, [0, 0])

    return scaled


def test_a_kernel_sees_its_enclosing_function():
    x = torch.randn(1, N)
    for factor in (2.0, -0.5):
        y = torch.zeros(1, N)
        make_scaled_kernel(factor)(x, y)
        torch.testing.assert_close(y, x * factor)
    with pytest.raises(ValueError, match="different datatypes"):
        typed_copy[None, 1, {"x": pl.DT_FP16, "y": pl.DT_FP32}]


# ------------------------------------------------------------------ tiling keys and datatypes
class Mode:
    op = TilingKeyField(bits=2, values=[0, 1, 2])
    twice = TilingKeyField(bits=1, values=[0, 1])

    def is_valid(self, key):
        return not (key[0] == 2 and key[1] == 1)


@pl.jit(tiling_key=Mode)
def keyed(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32]):
    a = pl.make_tile(_vec(), addr=0)
    b = pl.make_tile(_vec(), addr=0x100)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.system.bar_all()
        if op == 0:  # noqa: F821 - a tiling-key field, bound per launch
            pl.add(b, a, a)
        elif op == 1:  # noqa: F821
            pl.mul(b, a, a)
        else:
            pl.sub(b, a, a)
        if twice == 1:  # noqa: F821
            pl.add(b, b, b)
        pl.system.bar_all()
        pl.store(y, b, [0, 0])


def test_tiling_key_fields_are_bound_and_checked():
    x = torch.randn(1, N)
    for key, expected in (({"op": 0, "twice": 0}, x + x), ({"op": 1, "twice": 1}, 2 * x * x),
                          ({"op": 2, "twice": 0}, x - x)):
        y = torch.zeros(1, N)
        keyed[None, 1, key](x, y)
        torch.testing.assert_close(y, expected)
    with pytest.raises(ValueError, match="not a valid combination"):
        keyed[None, 1, {"op": 2, "twice": 1}]
    with pytest.raises(ValueError, match="must name exactly"):
        keyed[None, 1, {"op": 0}]
    with pytest.raises(ValueError, match="is not one of"):
        keyed[None, 1, {"op": 3, "twice": 0}]
    with pytest.raises(ValueError, match="tiling key"):
        keyed(x, x)


@pl.jit(datatype={"x": "T", "y": "T"})
def typed_copy(x: pl.Tensor[[1, N], pl.DT_FP32], y: pl.Tensor[[1, N], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType(shape=[1, N], dtype=T, target_memory=pl.MemorySpace.Vec),  # noqa: F821
                     addr=0)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.system.bar_all()
        if T == pl.DT_FP16:  # noqa: F821
            pl.add(a, a, a)
        pl.system.bar_all()
        pl.store(y, a, [0, 0])


def test_datatype_specialisation():
    for dtype, tdtype, factor in ((pl.DT_FP16, torch.float16, 2), (pl.DT_FP32, torch.float32, 1)):
        x = torch.randn(1, N).to(tdtype)
        y = torch.zeros(1, N, dtype=tdtype)
        typed_copy[None, 1, {"x": dtype, "y": dtype}](x, y)
        torch.testing.assert_close(y, x * factor)
    with pytest.raises(ValueError, match="different datatypes"):
        typed_copy[None, 1, {"x": pl.DT_FP16, "y": pl.DT_FP32}]


# ------------------------------------------------------------------ TilingData, structs, SSBuffer
@dataclass
class Tiling:
    rows: int
    scale: float
    flags: bool[2]
    offsets: int[3]  # quoted annotations work as well


@pl.jit
def reads_tiling(out: pl.Tensor[[6], pl.DT_FP32], tiling: Tiling):
    with pl.section_vector():
        out[0] = tiling.rows
        out[1] = tiling.scale
        out[2] = 1.0 if tiling.flags[1] else 0.0
        for k in pl.range(3):
            out[3 + k] = tiling.offsets[k]


def test_tiling_data_fields_and_arrays():
    out = torch.zeros(6)
    reads_tiling(out, Tiling(rows=7, scale=0.1, flags=[False, True], offsets=[4, 5, 6]))
    assert out.tolist() == [7.0, float(np.float32(0.1)), 1.0, 4.0, 5.0, 6.0]
    with pytest.raises(ValueError, match="expected 3 elements"):
        reads_tiling(out, Tiling(rows=7, scale=0.1, flags=[False, True], offsets=[4, 5]))
    with pytest.raises(TypeError, match="expects a float"):
        reads_tiling(out, Tiling(rows=7, scale="x", flags=[False, True], offsets=[4, 5, 6]))


ZEROS = [0, 0, 0]


@pl.jit
def structs(out: pl.Tensor[[8], pl.DT_INT64]):
    s = pl.struct("Pair", n=1, arr=ZEROS)
    slots = pl.struct_array(2, "Slot", n=0)
    t = pl.make_tuple(inner=pl.make_tuple(value=5))
    with pl.section_vector():
        s.arr[0] = 9
        slot = slots[1]
        alias = slot
        alias.n = 4
        out[0] = s.arr[0]
        out[1] = ZEROS[0]  # the struct holds its own copy of the list
        out[2] = slots[1].n
        out[3] = slots[0].n
        out[4] = t.inner.value
        out[5] = s.n


@pl.jit
def through_ssbuf(out: pl.Tensor[[4], pl.DT_FP32]):
    msg = pl.struct("Msg", count=0, ratio=0.0, ok=False, pair=[0, 0])
    with pl.section_vector():
        if pl.get_subblock_idx() == 0:
            msg.count = 3
            msg.ratio = 0.25
            msg.ok = True
            msg.pair = [7, 8]
            pl.ssbuf_store(msg, 64)
            pl.system.set_cross_core(pipe=pl.PipeType.S, event_id=1)
    with pl.section_cube():
        pl.system.wait_cross_core(pipe=pl.PipeType.S, event_id=1,
                                  sync_mode=pl.CrossCoreSyncMode.UNICAST_BLOCK)
        pl.ssbuf_load(msg, 64)
        out[0] = msg.count
        out[1] = msg.ratio
        out[2] = 1.0 if msg.ok else 0.0
        out[3] = msg.pair[0] + msg.pair[1]


def test_structs_by_value_and_the_ssbuffer():
    out = torch.zeros(8, dtype=torch.int64)
    structs(out)
    assert out.tolist()[:6] == [9, 0, 4, 0, 5, 1]
    assert ZEROS == [0, 0, 0]
    out = torch.zeros(4)
    report = through_ssbuf(out)
    assert out.tolist() == [3.0, 0.25, 1.0, 15.0]
    assert not [f for f in report.findings if "race" in f.category]


# ------------------------------------------------------------------ diagnostics
@pl.jit
def builtin_range(out: pl.Tensor[[1], pl.DT_INT64]):
    for i in range(3):  # PyPTO Pro loops over pl.range only
        out[0] = i


@pl.jit
def dict_literal(out: pl.Tensor[[1], pl.DT_INT64]):
    d = {"a": 1}
    out[0] = d["a"]


@pl.jit
def two_contexts(out: pl.Tensor[[1], pl.DT_INT64]):
    with pl.section_vector(), pl.section_cube():
        out[0] = 1


@pl.jit
def returns_value(out: pl.Tensor[[1], pl.DT_INT64]):
    return 1


@pl.jit
def lambda_kernel(out: pl.Tensor[[1], pl.DT_INT64]):
    f = lambda v: v  # noqa: E731
    out[0] = f(1)


def test_refused_constructs_name_the_class_and_the_line():
    out = torch.zeros(1, dtype=torch.int64)
    cases = ((builtin_range, ParserSyntaxError, "pl.range"),
             (dict_literal, ParserTypeError, "Unsupported closure variable type: dict"),
             (two_contexts, UnsupportedFeatureError, "one per with statement"),
             (returns_value, ParserSyntaxError, "cannot return a value"),
             (lambda_kernel, UnsupportedFeatureError, "lambda"))
    for kernel, cls, text in cases:
        with pytest.raises(cls, match=text) as info:
            kernel(out)
        assert "test_pto_parse.py:" in str(info.value), kernel


def test_argument_validation():
    x = torch.zeros(1, N)
    with pytest.raises(TypeError, match="expected dtype torch.float32"):
        make_scaled_kernel(1.0)(x.half(), x)
    with pytest.raises(TypeError, match="dimension 1 must be 16"):
        make_scaled_kernel(1.0)(torch.zeros(1, 8), x)
    with pytest.raises(TypeError, match="pass an int"):
        control_flow(torch.zeros(8, dtype=torch.int64), 2.5)
    with pytest.raises(ValueError, match="block_dim must be a positive int"):
        control_flow[None, 0]
    with pytest.raises(TypeError, match="must be the last parameter"):
        reads_tiling(Tiling(rows=1, scale=1.0, flags=[True, True], offsets=[1, 2, 3]),
                     torch.zeros(6))
