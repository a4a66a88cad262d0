"""Atomic stores to GM (set_atomic_add/max/min/none/type, the store atomic config) against
numpy: every core's copy combined with what GM holds, and no race reported between them."""

from __future__ import annotations

import numpy as np
import pytest
from source_marks import checks_on_not_strict  # noqa: F401 - a fixture

import ascsim.asc as asc
from ascsim.sim.errors import KernelError

pytestmark = pytest.mark.usefixtures("checks_on_not_strict")
N = 64


@asc.jit
def _accumulate(x: asc.GlobalAddress, out: asc.GlobalAddress, how: asc.ConstExpr[str],
                config: asc.GlobalAddress):
    gx, go, gc = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x + asc.get_block_idx() * N)
    go.set_global_buffer(out)
    gc.set_global_buffer(config)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=N * x.dtype.sizeof())
    t = buf.get(x.dtype)
    asc.data_copy(t, gx, count=N)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    if how == "add":
        asc.set_atomic_add(x.dtype)
    elif how == "max":
        asc.set_atomic_max(x.dtype)
    elif how == "min":
        asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_F32, asc.AtomicOp.ATOMIC_MIN)
    kind, op = asc.get_store_atomic_config()
    gc.set_value(asc.get_block_idx() * 2, kind)
    gc.set_value(asc.get_block_idx() * 2 + 1, op)
    asc.data_copy(go, t, count=N)
    asc.set_atomic_none()
    asc.data_copy(go[N:], t, count=N)  # a plain store again


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


REFERENCE = {"add": np.sum, "max": np.max, "min": np.min}
CONFIG = {"add": (1, 0), "max": (1, 1), "min": (1, 2)}  # (ATOMIC_F32, op)


@pytest.mark.parametrize("how", ["add", "max", "min"])
def test_atomic_stores_combine_every_cores_rows(how):
    cores = 4
    x = np.random.default_rng(1).integers(-50, 50, (cores, N)).astype(np.float32)
    out = np.zeros(2 * N, np.float32)
    out[:N] = 7.0
    config = np.zeros(2 * cores, np.int32)
    report = _accumulate[cores](x, out, how, config)
    start = np.full(N, 7.0, np.float32)
    expected = REFERENCE[how](np.vstack([start, x]), axis=0)
    np.testing.assert_array_equal(out[:N], expected)
    assert config.reshape(cores, 2).tolist() == [list(CONFIG[how])] * cores
    assert any((out[N:] == row).all() for row in x)  # a plain store: one core's row
    # Atomic stores of several cores to the same bytes are not a race; the plain ones are.
    races = [f for f in report.findings if "race" in f.category]
    lines = {loc[1] for f in races for loc in f.locations}
    assert races and lines == {_line_of("asc.data_copy(go[N:], t, count=N)")}


@asc.jit
def _int_add(x: asc.GlobalAddress, out: asc.GlobalAddress):
    gx, go = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    go.set_global_buffer(out)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=N * 4)
    t = buf.get(asc.int32)
    asc.data_copy(t, gx, count=N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.set_atomic_add(asc.int32)
    asc.data_copy(go, t, count=N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(go, t, count=N)


def test_integer_atomic_add_wraps():
    x = np.full(N, 2**30, np.int32)
    out = np.full(N, 5, np.int32)
    _int_add[1](x, out)
    np.testing.assert_array_equal(out, (5 + 2 * x.astype(np.int64)).astype(np.int32))


@asc.jit
def _mismatch(x: asc.GlobalAddress):
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=N * 4)
    asc.set_atomic_add(asc.float16)
    asc.data_copy(gx, buf.get(asc.float32), count=N)


def test_atomic_type_must_match_the_store():
    with pytest.raises(KernelError, match="atomic add is set for float16, but this copy stores "
                                          "float32"):
        _mismatch[1](np.zeros(N, np.float32))
