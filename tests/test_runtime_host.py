"""``asc.lib.runtime``'s host runtime on the simulator: device memory (malloc/free/memcpy and the
copy helpers, bounds-checked), kernel binaries launched by hand with an argument block of device
addresses and packed scalars (results checked against numpy), and the profiling names reporting
simulated device cycles."""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np
import pytest

import ascsim.asc as asc
from ascsim.asc.lib import runtime as rt
from ascsim.asc.lib.runtime import kernels
from ascsim.asc.lib.runtime.support import MemcpyKind
from ascsim.asc.runtime import launcher
from ascsim.asc.runtime.jit import MockTensor, MockValue
from ascsim.session import SESSION

N = 256


@asc.jit
def axpy(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, alpha: asc.float32,
         count: int, n: asc.ConstExpr[int]):
    """z[b*n:(b+1)*n] = alpha * x + y for each block b (count must equal n)."""
    offset = asc.get_block_idx() * n
    x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, n)
    y_gm.set_global_buffer(y + offset, n)
    z_gm.set_global_buffer(z + offset, n)
    bx = asc.LocalTensor(x.dtype, asc.TPosition.VECCALC, 0, n)
    by = asc.LocalTensor(y.dtype, asc.TPosition.VECCALC, n * 4, n)
    asc.data_copy(bx, x_gm, count)
    asc.data_copy(by, y_gm, count)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.axpy(by, bx, alpha, count)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(z_gm, by, count)


@pytest.fixture(autouse=True)
def clean_device():
    rt.free_mem()
    yield
    rt.free_mem()
    rt.set_pro_switch(rt.ProfilingCommandHandle.Type.STOP)
    rt.npu_utils().clear_records()


def words(*values: int) -> list[ctypes.c_uint64]:
    return [ctypes.c_uint64(v) for v in values]


def pack(alpha: float, count: int) -> int:
    """alpha (fp32) and count (int32) in one 64-bit word, as pyasc's launcher packs them."""
    return int.from_bytes(np.float32(alpha).tobytes() + np.int32(count).tobytes(), "little")


# -- device memory ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16, np.int8])
def test_copy_in_and_out_round_trips(dtype):
    host = (np.arange(100) % 37).astype(dtype)
    handle = rt.copy_data_to_device(host, host.nbytes)
    back = np.zeros_like(host)
    rt.copy_data_from_device(back, handle, host.nbytes)
    np.testing.assert_array_equal(back, host)


def test_memcpy_with_offsets_device_to_device_and_raw_pointers():
    src = np.arange(64, dtype=np.int32)
    a = rt.malloc(src.nbytes)
    b = rt.malloc(src.nbytes)
    # Raw host pointer on the host side, as the C runtime takes it.
    rt.memcpy(a, src.nbytes, ctypes.c_void_p(src.ctypes.data), src.nbytes,
              MemcpyKind.RT_MEMCPY_HOST_TO_DEVICE)
    # The second half of a into the first half of b.
    rt.memcpy(b, src.nbytes, ctypes.c_void_p(a.value + 128), 128,
              MemcpyKind.RT_MEMCPY_DEVICE_TO_DEVICE)
    out = np.full(64, -1, np.int32)
    rt.memcpy(out, out.nbytes, b, src.nbytes, MemcpyKind.RT_MEMCPY_DEVICE_TO_HOST)
    np.testing.assert_array_equal(out[:32], src[32:])
    np.testing.assert_array_equal(out[32:], 0)  # malloc'd memory starts zeroed


def test_malloc_addresses_are_aligned_and_apart():
    a, b = rt.malloc(1), rt.malloc(1000)
    assert a.value % 512 == 0 and b.value % 512 == 0
    assert b.value - a.value > 512  # a guard gap: one past a's end is no allocation


@pytest.mark.parametrize("call, message", [
    (lambda: rt.malloc(0), "greater than 0"),
    (lambda: rt.free(ctypes.c_void_p(0x1234)), "not an allocation"),
    (lambda: rt.copy_data_from_device(np.zeros(8, np.uint8), ctypes.c_void_p(0x10), 8),
     "not in any live allocation"),
])
def test_bad_memory_calls_say_what_is_wrong(call, message):
    with pytest.raises(rt.DeviceMemoryError, match=message):
        call()


def test_spans_past_an_allocation_end_are_refused_with_the_overrun():
    handle = rt.malloc(100)
    with pytest.raises(rt.DeviceMemoryError, match="run 28 bytes past the end of the 100-byte"):
        rt.copy_data_from_device(np.zeros(128, np.uint8), handle, 128)
    with pytest.raises(rt.DeviceMemoryError, match="do not fit the destination"):
        rt.memcpy(handle, 100, np.zeros(101, np.uint8), 101, MemcpyKind.RT_MEMCPY_HOST_TO_DEVICE)
    with pytest.raises(rt.DeviceMemoryError, match="asked of a 16-byte host buffer"):
        rt.memcpy(handle, 100, np.zeros(16, np.uint8), 32, MemcpyKind.RT_MEMCPY_HOST_TO_DEVICE)


def test_freed_memory_is_gone():
    handle = rt.malloc(64)
    inside = ctypes.c_void_p(handle.value + 8)
    with pytest.raises(rt.DeviceMemoryError, match="only its start address frees"):
        rt.free(inside)
    rt.free(handle)
    with pytest.raises(rt.DeviceMemoryError, match="not in any live allocation"):
        rt.copy_data_from_device(np.zeros(8, np.uint8), handle, 8)


# -- kernels launched by hand -----------------------------------------------------------------

def registered(kernel, *types, **kw):
    compiled = rt.build_kernel(kernel, *types, **kw)
    handle = rt.register_device_binary_kernel(compiled.binary,
                                              rt.magic_elf_value(compiled.core_type))
    return rt.register_function(handle, kernel.fn.__name__, 0)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_launch_kernel_computes_on_device_memory(dtype):
    blocks = 2
    rng = np.random.default_rng(1)
    x = rng.standard_normal(blocks * N).astype(dtype)
    y = rng.standard_normal(blocks * N).astype(dtype)
    fn = registered(axpy, MockTensor(dtype), MockTensor(dtype), MockTensor(dtype),
                    MockValue(asc.float32), MockValue(asc.int32), n=N)
    dx = rt.copy_data_to_device(x, x.nbytes)
    dy = rt.copy_data_to_device(y, y.nbytes)
    dz = rt.malloc(x.nbytes)
    report = rt.launch_kernel(fn, blocks, words(dx.value, dy.value, dz.value, pack(1.5, N)))
    z = np.zeros_like(x)
    rt.copy_data_from_device(z, dz, z.nbytes)
    expected = (np.float32(1.5) * x.astype(np.float32) + y.astype(np.float32)).astype(dtype)
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(z.astype(np.float32), expected.astype(np.float32), rtol=tol,
                               atol=tol)
    assert report.kernel == "axpy" and report.block_num == blocks
    # The inputs are untouched on the device.
    back = np.zeros_like(x)
    rt.copy_data_from_device(back, dx, x.nbytes)
    np.testing.assert_array_equal(back, x)


def test_pointer_arguments_may_point_into_one_allocation():
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, dtype=np.float32)
    fn = registered(axpy, x, y, x, 2.0, N, n=N)  # types taken from example arguments
    whole = rt.malloc(3 * x.nbytes)
    rt.memcpy(whole, 3 * x.nbytes, np.concatenate([x, y]), 2 * x.nbytes,
              MemcpyKind.RT_MEMCPY_HOST_TO_DEVICE)
    base = whole.value
    rt.launch_kernel(fn, 1, words(base, base + x.nbytes, base + 2 * x.nbytes, pack(2.0, N)))
    z = np.zeros(N, np.float32)
    rt.copy_data_from_device(z, ctypes.c_void_p(base + 2 * x.nbytes), z.nbytes)
    np.testing.assert_allclose(z, 2.0 * x + y)


def test_launch_kernel_errors_name_the_problem():
    fn = registered(axpy, MockTensor(np.float32), MockTensor(np.float32),
                    MockTensor(np.float32), MockValue(asc.float32), MockValue(asc.int32), n=N)
    d = rt.malloc(N * 4)
    with pytest.raises(kernels.KernelLaunchError, match=r"takes 32 bytes of arguments .*got 24"):
        rt.launch_kernel(fn, 1, words(d.value, d.value, d.value))
    with pytest.raises(rt.DeviceMemoryError, match="argument 'y'.*not in any live allocation"):
        rt.launch_kernel(fn, 1, words(d.value, 0x99, d.value, pack(1.0, N)))
    with pytest.raises(kernels.KernelLaunchError, match="same device address"):
        rt.launch_kernel(fn, 1, words(d.value, d.value, d.value, pack(1.0, N)))
    with pytest.raises(kernels.KernelLaunchError, match="block_num must be an int > 0"):
        rt.launch_kernel(fn, 0, words(d.value, d.value, d.value, pack(1.0, N)))
    with pytest.raises(kernels.KernelLaunchError, match="not a function handle"):
        rt.launch_kernel(ctypes.c_void_p(5), 1, [])


def test_registration_checks_binary_magic_and_name():
    compiled = rt.build_kernel(axpy, MockTensor(np.float32), MockTensor(np.float32),
                               MockTensor(np.float32), 1.0, 1, n=N)
    assert compiled.core_type == rt.CoreType.VectorCore
    with pytest.raises(kernels.KernelLaunchError, match="Ascend device ELF"):
        rt.register_device_binary_kernel(b"\x7fELF....", rt.magic_elf_value(rt.CoreType.AiCore))
    with pytest.raises(kernels.KernelLaunchError, match="not a kernel image"):
        rt.register_device_binary_kernel(b"junk", rt.magic_elf_value(rt.CoreType.AiCore))
    with pytest.raises(kernels.KernelLaunchError, match="registers with "
                       "RT_DEV_BINARY_MAGIC_ELF_AIVEC"):
        rt.register_device_binary_kernel(compiled.binary, rt.magic_elf_value(rt.CoreType.AiCore))
    handle = rt.register_device_binary_kernel(compiled.binary,
                                              rt.magic_elf_value(compiled.core_type))
    with pytest.raises(kernels.KernelLaunchError, match="holds the function 'axpy', not 'axpz'"):
        rt.register_function(handle, "axpz", 0)
    rt.unregister_device_binary_kernel(handle)
    with pytest.raises(kernels.KernelLaunchError, match="not a registered kernel binary"):
        rt.register_function(handle, "axpy", 0)


def test_magic_and_task_type_tables():
    assert rt.magic_elf_value(rt.CoreType.AiCore) == 0x43554245
    assert rt.magic_elf_value(rt.CoreType.VectorCore) == 0x41415246
    assert rt.msprof_task_type(rt.CoreType.VectorCore) == rt.MsprofTaskType.MSPROF_TASK_TYPE_AIV
    with pytest.raises(RuntimeError, match="not supported"):
        rt.magic_elf_value("AiCore")
    rt.check_device_handle(0)
    with pytest.raises(RuntimeError, match="int >= 0"):
        rt.check_device_handle(-1)


# -- profiling --------------------------------------------------------------------------------

def test_profiling_reports_simulated_cycles_only_while_switched_on():
    x = np.ones(N, np.float32)
    utils = rt.npu_utils()
    assert utils.msprof_sys_cycle_time() == 0  # off: msprof reads 0
    axpy[1](x, x, np.zeros(N, np.float32), 1.0, N, N)
    assert utils.records() == ()
    rt.set_pro_switch(rt.ProfilingCommandHandle.Type.START)  # default conf: task time L1
    z = np.zeros(N, np.float32)
    report = axpy[1](x, x, z, 1.0, N, N)
    api = [r for r in utils.records() if hasattr(r, "begin_cycle")]
    compact = [r for r in utils.records() if hasattr(r, "block_num")]
    assert [r.name for r in api] == ["axpy"] and [r.name for r in compact] == ["axpy"]
    assert compact[0].task_type == rt.MsprofTaskType.MSPROF_TASK_TYPE_AIV
    expected = SESSION.soc.us_to_cycles(report.device_time_us)
    assert api[0].cycles == pytest.approx(expected, abs=1)
    rt.set_pro_switch(rt.ProfilingCommandHandle.Type.STOP)
    assert utils.msprof_sys_cycle_time() == 0


def test_acl_init_and_finalize_return_acl_codes():
    utils = rt.npu_utils()
    if utils.acl_init() != 0:  # an earlier test initialised it
        assert rt.acl_finalize() == 0
        assert rt.acl_init() == 0
    assert rt.acl_init() == 100002  # ACL_ERROR_REPEAT_INITIALIZE
    assert rt.acl_finalize() == 0
    assert rt.acl_finalize() == 100037  # ACL_ERROR_REPEAT_FINALIZE


def test_msprof_launcher_reports_through_npu_utils():
    assert isinstance(launcher.Launcher(launcher.LaunchOptions(1)).msprof,
                      launcher.MsprofLauncher)
    rt.set_pro_switch(rt.ProfilingCommandHandle.Type.START, conf=0x800)  # level 0 only
    msprof = launcher.MsprofLauncher(True)
    msprof.start()
    msprof.process("k", 4, 2)
    records = rt.npu_utils().records()
    assert len(records) == 1 and records[0].name == "k"  # compact info needs level 1


def test_print_interface_checks_the_workspace():
    workspace = rt.malloc(1024)
    rt.call_print_interface(workspace, 1024, rt.current_stream(), "k")
    with pytest.raises(rt.DeviceMemoryError, match="past the end"):
        rt.call_print_interface(workspace, 2048, rt.current_stream(), "k")


def test_set_platform_goes_through_the_runtime_and_checks_it(monkeypatch):
    from ascsim.asc.runtime import config

    before = SESSION.soc.name
    try:
        config.set_platform(config.Backend.Model, soc_version=config.Platform.Ascend910B3)
        assert rt.get_soc_version() == config.Platform.Ascend910B3
        monkeypatch.setattr(config.rt, "is_available", lambda: False)
        with pytest.raises(RuntimeError, match="tools/simulator/Ascend910B3/lib"):
            config.set_platform(config.Backend.Model, soc_version=config.Platform.Ascend910B3)
    finally:
        SESSION.set_soc(before)
