"""The @asc.jit front-end: options, launch syntax, AST rewriting, runtime values."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.values import GlobalAddress, RuntimeInt
from ascsim.sim.errors import KernelError


@asc.jit
def _copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=n * x.dtype.sizeof())
    offset = asc.get_block_idx() * n
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x + offset, n)
    yg.set_global_buffer(y + offset, n)
    t = q.alloc_tensor(x.dtype)
    asc.data_copy(t, xg, n)
    q.enque(t)
    t = q.deque(x.dtype)
    asc.data_copy(yg, t, n)
    q.free_tensor(t)


def test_launch_copies_in_and_back():
    x = np.arange(4 * 64, dtype=np.float32)
    y = np.zeros_like(x)
    report = _copy_kernel[4](x, y, 64)
    np.testing.assert_array_equal(y, x)
    assert report.block_num == 4 and len(report.cores) == 4
    assert report.device_time_us > report.launch_overhead_us


def test_launch_with_stream_and_torch_tensors():
    import torch

    x = torch.rand(2 * 64)
    y = torch.zeros(2 * 64)
    _copy_kernel[2, None](x, y, 64)
    assert torch.equal(x, y)


@pytest.mark.parametrize("core_num", [0, -1])
def test_core_num_must_be_positive(core_num):
    with pytest.raises(ValueError, match="core_num"):
        _copy_kernel[core_num]


def test_unknown_option_is_rejected_like_pyasc():
    with pytest.raises(RuntimeError, match="The following option names are unknown: bogus"):
        asc.jit(bogus=True)


def test_calling_a_kernel_without_launch_says_how():
    with pytest.raises(RuntimeError, match=r"_copy_kernel\[core_num\]"):
        _copy_kernel(1, 2, 3)


def _helper_source_line(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if marker in line)


def test_unsupported_syntax_names_file_and_line():
    def kernel(x: asc.GlobalAddress):
        values = [i for i in range(3)]  # marker: comprehension
        del values

    jitted = asc.jit(kernel)
    with pytest.raises(KernelError) as err:
        jitted[1](np.zeros(8, np.float32))
    line = _helper_source_line(kernel, "marker: comprehension")
    assert f"test_jit.py:{line}" in str(err.value)
    assert "list comprehensions are not supported" in str(err.value)


def test_kernel_cannot_return_a_value():
    @asc.jit
    def kernel(x: asc.GlobalAddress):
        return 1

    with pytest.raises(KernelError, match="cannot return a value"):
        kernel[1](np.zeros(8, np.float32))


@asc.jit
def _offsets(n, m):
    return n.ceildiv(m), n // m, n % m


@asc.jit
def _helper_kernel(out: asc.GlobalAddress, n: int, m: int):
    a, b, c = _offsets(n, m)
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    g.set_value(0, a)
    g.set_value(1, b)
    g.set_value(2, c)
    g.set_value(3, asc.get_block_num())


def test_helpers_return_tuples_of_runtime_ints():
    out = np.zeros(8, np.int32)
    _helper_kernel[3](out, 10, 4)
    assert list(out[:4]) == [3, 2, 2, 3]


def test_runtime_int_arithmetic_keeps_type_and_c_division():
    v = RuntimeInt(7)
    assert isinstance(v + 1, RuntimeInt) and isinstance(3 * v, RuntimeInt)
    assert v.ceildiv(2) == 4 and (v // 2) == 3
    assert RuntimeInt(-7) / 2 == -3  # C semantics: truncation toward zero
    with pytest.raises(TypeError):
        v ** 2  # noqa: B018


def test_global_address_offsets_in_elements():
    from ascsim.sim.memory import DeviceMemory

    buf = DeviceMemory().alloc(64, "x")
    addr = GlobalAddress(buf, 0, asc.float32)
    assert (addr + 3).offset == 3
    assert (addr + 3).byte_address == buf.address + 12
    with pytest.raises(TypeError):
        addr + 1.5  # noqa: B018


@asc.jit
def _iterate_loop(out: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    total = 0
    for i in asc.range(n):
        total += i
    for _ in asc.static_range(2):
        total += 100
    g.set_value(0, total)


def test_loops_charge_the_scalar_unit():
    out = np.zeros(8, np.int32)
    short = _iterate_loop[1](out, 2)
    long = _iterate_loop[1](out, 200)
    assert out[0] == sum(range(200)) + 200
    assert long.pipe_busy_us()["S"] > short.pipe_busy_us()["S"]


def test_same_launch_twice_is_identical():
    x = np.random.default_rng(0).random(8 * 64).astype(np.float32)
    runs = []
    for _ in range(2):
        y = np.zeros_like(x)
        report = _copy_kernel[8](x, y, 64)
        runs.append((y.copy(), report.device_time_us, [c.end_us for c in report.cores]))
    assert np.array_equal(runs[0][0], runs[1][0])
    assert runs[0][1:] == runs[1][1:]
