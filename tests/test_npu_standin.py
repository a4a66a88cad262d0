"""The NPU stand-in: ``torch_npu`` / ``torch.npu`` / NPU devices inside ``ascsim run`` only."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from ascsim import npu
from ascsim.hw import DEFAULT_SOC
from ascsim.session import SESSION

# One small kernel written the way NPU-targeted pyasc scripts are: backend NPU, tensors created
# on "npu:0" and moved with .npu() / .to("npu"), torch.npu.synchronize() after the launch.
NPU_SCRIPT = textwrap.dedent('''
    import torch
    import torch_npu
    import asc
    import asc.lib.runtime as rt
    import asc.runtime.config as config

    @asc.jit
    def add(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
            n: asc.ConstExpr[int]):
        x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        x_gm.set_global_buffer(x, n)
        y_gm.set_global_buffer(y, n)
        z_gm.set_global_buffer(z, n)
        xl = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, n)
        yl = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, n * 4, n)
        zl = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 2 * n * 4, n)
        asc.data_copy(xl, x_gm, n)
        asc.data_copy(yl, y_gm, n)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.add(zl, xl, yl, n)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(z_gm, zl, n)

    config.set_platform(config.Backend.NPU)
    torch.npu.set_device("npu:0")
    x_host = torch.rand(256)
    x = x_host.npu()
    y = torch.rand(256).to("npu")
    z = torch.zeros(256, device="npu:0")
    add[1, rt.current_stream()](x, y, z, 256)
    torch.npu.synchronize()
    assert torch.allclose(z.cpu(), x_host + y.cpu()), "wrong sum"
    print("device", torch.npu.get_device_name(), "ok")
''')


def _cli(*args, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascsim", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "COLUMNS": "120"})


@pytest.fixture(autouse=True)
def standin():
    npu.install()
    yield
    SESSION.request_soc(DEFAULT_SOC)


def test_torch_npu_imports_and_names_the_simulated_soc():
    import torch_npu

    assert torch_npu.npu is torch.npu
    assert torch.npu.is_available() and torch.npu.device_count() == 1
    SESSION.request_soc("Ascend950PR_9579")
    assert torch.npu.get_device_name() == "Ascend950PR_9579"
    assert torch.npu.get_device_name(0) == "Ascend950PR_9579"
    assert torch.npu.get_soc_version() == 260  # hicann/pypto's conftest: 260 is the 950
    props = torch.npu.get_device_properties("npu:0")
    assert props.name == "Ascend950PR_9579" and props.multi_processor_count > 0
    assert torch.npu.synchronize() is None and torch.npu.current_stream().query()


def test_set_device_accepts_npu_names_and_indices_only():
    torch.npu.set_device("npu:3")
    assert torch.npu.current_device() == 3
    torch.npu.set_device(0)
    assert torch.npu.current_device() == 0
    with pytest.raises(ValueError, match="'cuda:0'"):
        torch.npu.set_device("cuda:0")
    with pytest.raises(ValueError, match="'npu:x'"):
        torch.npu.set_device("npu:x")


def test_unprovided_names_say_so():
    import torch_npu

    with pytest.raises(AttributeError, match="npu_rms_norm is not provided by ascsim"):
        torch_npu.npu_rms_norm  # noqa: B018 - the attribute access is the test
    with pytest.raises(AttributeError, match="torch.npu.Event is not provided"):
        torch.npu.Event  # noqa: B018


@pytest.mark.parametrize("make", [
    lambda: torch.zeros(4, 2, device="npu:0"),
    lambda: torch.randn(4, 2, device="npu"),
    lambda: torch.full((4, 2), 1.5, device="npu:1"),
    lambda: torch.arange(8.0, device="npu"),
    lambda: torch.tensor([[1.0, 2.0]] * 4, device="NPU:0"),
    lambda: torch.ones(2).new_zeros((4, 2), device="npu"),
])
def test_factories_on_the_npu_give_cpu_tensors(make):
    t = make()
    assert t.device.type == "cpu" and t.numel() == 8
    assert getattr(t, npu.ON_NPU)


def test_moving_to_the_npu_copies_once_and_back_copies_again():
    host = torch.arange(6.0)
    moved = host.npu()
    assert moved.device.type == "cpu" and torch.equal(moved, host)
    moved[0] = 100.0  # a kernel writing the device copy leaves the host tensor alone
    assert host[0] == 0.0
    assert moved.npu() is moved and moved.to("npu:0") is moved
    via_to = host.to("npu", torch.float16)
    assert via_to.dtype == torch.float16 and via_to.data_ptr() != host.data_ptr()
    assert host.to(device="npu").data_ptr() != host.data_ptr()
    back = moved.cpu()
    back[1] = -1.0
    assert moved[1] == 1.0
    assert host.cpu() is host and host.to(torch.float32) is host  # plain CPU calls unchanged


def test_the_standin_exists_only_inside_ascsim_run(tmp_path):
    probe = "import importlib.util as u; print(u.find_spec('torch_npu'), u.find_spec('asc'))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.split() == ["None", "None"]


def test_npu_script_runs_on_the_simulated_chip_with_one_notice(tmp_path):
    script = tmp_path / "npu_add.py"
    script.write_text(NPU_SCRIPT)
    done = _cli("run", "--quiet", str(script), "-r", "NPU", "-v", "Ascend910B4")
    assert done.returncode == 0, done.stderr
    assert "device Ascend910B4 ok" in done.stdout
    notices = [ln for ln in done.stderr.splitlines() if "no NPU is used" in ln]
    assert notices == ["ascsim: -r NPU: running on the simulated Ascend910B4 (no NPU is used)"]


def test_set_platform_npu_gives_the_notice_too(tmp_path):
    script = tmp_path / "npu_add.py"
    script.write_text(NPU_SCRIPT)
    done = _cli("run", "--quiet", "--soc", "Ascend950PR_9579", str(script))
    assert done.returncode == 0, done.stderr
    assert "device Ascend950PR_9579 ok" in done.stdout
    assert done.stderr.count("no NPU is used") == 1
    assert "backend NPU: running on the simulated Ascend950PR_9579" in done.stderr


def test_bundled_example_runs_with_backend_npu():
    done = _cli("run", "--quiet", "examples/gelu.py", "-r", "NPU",
                cwd=os.path.dirname(os.path.dirname(__file__)))
    assert done.returncode == 0, done.stderr
    assert "matches the torch reference" in done.stdout
    assert "no NPU is used" in done.stderr


def test_soc_option_rejects_an_unknown_name():
    done = _cli("run", "--soc", "Ascend999", "-m", "pytest", "--version")
    assert done.returncode == 2
    assert "unknown SoC 'Ascend999'" in " ".join(done.stdout.split())
