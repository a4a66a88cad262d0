"""The instruction set on its own: a kernel written as records against ``ascsim.isa`` and
``ascsim.sim`` runs, is priced and is checked exactly like the same kernel in pyasc."""

from __future__ import annotations

import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.hw import get_soc
from ascsim.isa import Bursts, Copy, KernelError, Region, SetFlag, Vector, WaitFlag
from ascsim.session import SESSION
from ascsim.sim.launch import Launch, LaunchConfig
from ascsim.sim.memory import DeviceMemory

N = 256
F32 = np.dtype(np.float32)
SOC = "Ascend910B1"


def _records_add(x: np.ndarray, y: np.ndarray, synchronised: bool = True):
    """z = x + y on one AIV, as instruction records: copy in, add, copy out."""
    memory = DeviceMemory()
    gx, gy = memory.from_array(x, "x"), memory.from_array(y, "y")
    gz = memory.alloc(x.nbytes, "z")
    launch = Launch(LaunchConfig(kernel="add", soc=get_soc(SOC), block_num=1), memory)
    copy = Bursts.contiguous(N * 4)

    def body(core):
        ux, uy, uz = (Region(core.mem["UB"], i * N * 4, N, F32) for i in range(3))
        core.execute(Copy(Region(gx, 0, N, F32), ux, copy, ("add.py", 1)))
        core.execute(Copy(Region(gy, 0, N, F32), uy, copy, ("add.py", 2)))
        if synchronised:
            core.execute(SetFlag("MTE2", "V", 0, ("add.py", 3)))
            core.execute(WaitFlag("MTE2", "V", 0, ("add.py", 4)))
        core.execute(Vector("add", uz, (ux, uy), ("add.py", 5)))
        core.execute(SetFlag("V", "MTE3", 0, ("add.py", 6)))
        core.execute(WaitFlag("V", "MTE3", 0, ("add.py", 7)))
        core.execute(Copy(uz, Region(gz, 0, N, F32), copy, ("add.py", 8)))

    report = launch.run(body)
    return report, gz.data.view(np.float32)[:N].copy()


@asc.jit
def _pyasc_add(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
               synchronised: asc.ConstExpr[bool]):
    gx, gy, gz = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    gz.set_global_buffer(z)
    ux = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, N)
    uy = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, N * 4, N)
    uz = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 2 * N * 4, N)
    asc.data_copy(ux, gx, N)
    asc.data_copy(uy, gy, N)
    if synchronised:
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.add(uz, ux, uy, N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gz, uz, N)


def _pyasc(x, y, synchronised: bool = True):
    z = np.zeros_like(x)
    with SESSION.using_soc(SOC), SESSION.collect() as run:
        _pyasc_add[1](x, y, z, synchronised)
    return run.reports[-1], z


@pytest.mark.parametrize("synchronised", [True, False])
def test_records_run_price_and_check_like_pyasc(synchronised):
    rng = np.random.default_rng(0)
    x, y = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    ours, z = _records_add(x, y, synchronised)
    theirs, z_pyasc = _pyasc(x, y, synchronised)
    np.testing.assert_array_equal(z, x + y)
    np.testing.assert_array_equal(z_pyasc, x + y)
    assert ours.device_time_us == theirs.device_time_us
    assert ours.cores[0].pipe_busy_us == theirs.cores[0].pipe_busy_us
    assert ours.bytes_moved == theirs.bytes_moved
    assert [f.category for f in ours.findings] == [f.category for f in theirs.findings]
    # Without the MTE2 -> V event the add races the copies in, in both.
    assert bool(ours.findings) != synchronised


def test_a_missing_path_is_a_kernel_error():
    memory = DeviceMemory()
    launch = Launch(LaunchConfig(kernel="bad", soc=get_soc(SOC), block_num=1), memory)
    g = memory.alloc(64, "g")

    def body(core):  # no DMA moves GM straight into L0C
        l0c = type("Memory", (), {"space": "L0C", "key": (0, "L0C"), "capacity": 64})()
        core.execute(Copy(Region(g, 0, 16, F32), Region(l0c, 0, 16, F32),
                          Bursts.contiguous(64), ("k.py", 7)))

    with pytest.raises(KernelError, match="k.py:7: there is no GM->L0C data path"):
        launch.run(body)
