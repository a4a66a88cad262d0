"""pyasc's unit-test hooks: ``asc.runtime.launcher.Launcher.run`` (called once per launch, after
the kernel ran on the simulator, to hand the results to the host), ``asc.runtime.jit.MockTensor``
/ ``MockValue``, and pyasc's module names."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from unittest.mock import patch

import numpy as np
import pytest
import torch

from ascsim.runner import install_asc_alias
from ascsim.session import SESSION

install_asc_alias()

import asc  # noqa: E402 - served by the alias above
import asc.runtime.launcher as launcher  # noqa: E402
from asc.runtime.jit import MockTensor, MockValue  # noqa: E402

N = 64


@asc.jit
def copy_scaled(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: asc.float32,
                n: asc.ConstExpr[int]):
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    buf = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    asc.data_copy(buf, x_gm, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.muls(buf, buf, scale, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(y_gm, buf, n)



def test_launcher_run_delivers_the_results_once_per_launch():
    x = torch.rand(N)
    y = torch.zeros(N)
    calls = []
    real = launcher.Launcher.run

    def spy(self, kernel, function_name, user_args):
        calls.append((function_name, kernel.block_num, len(user_args)))
        return real(self, kernel, function_name, user_args)

    with patch.object(launcher.Launcher, "run", spy):
        copy_scaled[1](x, y, 2.0, N)
        copy_scaled[1](x, y, 3.0, N)
    assert calls == [("copy_scaled", 1, 4)] * 2
    assert torch.allclose(y, x * 3.0)


def test_patched_run_counts_launches_and_leaves_the_host_tensors_alone():
    x = torch.rand(N)
    y = torch.zeros(N)
    with patch("asc.runtime.launcher.Launcher.run", return_value=None) as mock, \
            SESSION.collect() as run:
        copy_scaled[1](x, y, 2.0, N)
    assert mock.call_count == 1
    assert torch.count_nonzero(y) == 0  # pyasc's patched launcher does not run the kernel either
    assert len(run.reports) == 1  # but the kernel ran on the simulator, checked and timed


def test_a_kernel_with_a_bad_call_form_never_reaches_launcher_run():
    # pyasc's compile step rejects an unknown keyword: a compile-only launch stops too.
    @asc.jit
    def bad(x: asc.GlobalAddress):
        buf = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 8)
        asc.add(buf, buf, buf, count=8, bogus=1)

    with patch("asc.runtime.launcher.Launcher.run", return_value=None) as mock:
        with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['bogus'\]"):
            bad[1](MockTensor(asc.float32))
    assert mock.call_count == 0


def test_mock_arguments_are_zero_of_their_type():
    y = torch.full((N,), 7.0)
    copy_scaled[1](MockTensor(asc.float32), y, MockValue(asc.float32), N)
    assert torch.count_nonzero(y) == 0  # 0 * 0 from a zero-filled mock tensor
    mock = MockTensor(asc.float16)
    assert mock.dtype is asc.float16 and mock.host_value().dtype == np.float16
    assert MockValue(asc.int32).host_value() == np.int32(0)


def test_modules_carry_pyasc_names():
    import asc.language

    assert asc.__name__ == "asc" and asc.__spec__.name == "asc"
    assert asc.language.__name__ == "asc.language"
    assert launcher.__name__ == "asc.runtime.launcher"
    assert launcher.Launcher.get_core_num() > 0


def test_pyasc_style_unit_test_file_runs_under_ascsim_run(tmp_path):
    (tmp_path / "conftest.py").write_text(textwrap.dedent('''
        import pytest
        from unittest.mock import patch

        @pytest.fixture
        def mock_launcher_run():
            with patch("asc.runtime.launcher.Launcher.run", return_value=None) as mock:
                yield mock
    '''))
    (tmp_path / "test_unit_style.py").write_text(textwrap.dedent('''
        import asc
        from asc.runtime import config
        from asc.runtime.jit import MockTensor

        def setup_function():
            config.set_platform(config.Backend.Model, check=False)

        def test_add(mock_launcher_run):
            @asc.jit
            def add_kernel(x: asc.GlobalAddress):
                a = asc.LocalTensor(dtype=asc.float16, pos=asc.TPosition.VECIN, addr=0,
                                    tile_size=128)
                asc.duplicate(a, asc.float16(1.0), 128)
                asc.add(a, a, a, count=128)

            add_kernel[1](MockTensor(asc.float16))
            assert mock_launcher_run.call_count == 1
    '''))
    done = subprocess.run([sys.executable, "-m", "ascsim", "run", "--quiet", "-m", "pytest", "-q",
                           "-p", "no:cacheprovider", "test_unit_style.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


@asc.jit
def queue_before_init(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """A compile-only unit-test kernel: the queue never gets memory, so the device would fault
    at alloc_tensor; the copy after it never runs."""
    que = asc.TQue(asc.TPosition.VECIN, 1)
    local = que.alloc_tensor(asc.float32)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 8)
    asc.data_copy(y_gm, local, 8)


def test_a_mocked_launcher_makes_a_fault_a_compile_only_finding():
    with patch("asc.runtime.launcher.Launcher.run", return_value=None) as mock, \
            SESSION.collect() as run:
        queue_before_init[1](MockTensor(asc.float32), MockTensor(asc.float32))
    assert mock.call_count == 1  # compiled, handed to the launcher once, as in pyasc
    (finding,) = [f for f in run.reports[0].findings if f.category == "compile-only-fault"]
    assert "queue used before pipe.init_buffer" in finding.message
    assert finding.locations[0][1] == queue_before_init.fn.__code__.co_firstlineno + 5


def test_without_the_mock_the_fault_stops_the_launch():
    with pytest.raises(Exception, match="queue used before pipe.init_buffer"):
        queue_before_init[1](np.zeros(8, np.float32), np.zeros(8, np.float32))


def test_strict_mode_stops_a_compile_only_launch_too():
    previous = SESSION.strict
    SESSION.strict = True
    try:
        with patch("asc.runtime.launcher.Launcher.run", return_value=None), \
                pytest.raises(Exception, match="queue used before pipe.init_buffer"):
            queue_before_init[1](MockTensor(asc.float32), MockTensor(asc.float32))
    finally:
        SESSION.strict = previous


def test_dry_run_compiles_only_and_delivers_nothing(monkeypatch):
    monkeypatch.setenv("DRY_RUN", "1")
    y = np.full(8, 5.0, np.float32)
    with SESSION.collect() as run:
        queue_before_init[1](np.zeros(8, np.float32), y)
        copy_scaled[1](np.ones(N, np.float32), np.zeros(N, np.float32), 2.0, N)
    assert [f.category for f in run.reports[0].findings] == ["compile-only-fault"]
    assert not run.reports[1].findings
    np.testing.assert_array_equal(y, 5.0)
