"""``asc.lib.runtime``: the device runtime, answered by the simulator (pyasc-api §3.11).

Device memory is simulated GM (:mod:`.device_memory`: ``malloc``/``free``/``memcpy`` and the
``copy_data_*`` helpers, bounds-checked), kernel binaries are images of ``@asc.jit`` kernels
that ``launch_kernel`` runs on the simulated chip (:mod:`.kernels`), and the profiling names
report simulated device cycles (:mod:`.profiling`). There is one device (0) and every launch is
synchronous, so streams carry no state.
"""

from __future__ import annotations

import ctypes

from ascsim.asc.lib.runtime.device_memory import DeviceMemoryError, RuntimeMemory
from ascsim.asc.lib.runtime.device_memory import memcpy as _memcpy
from ascsim.asc.lib.runtime.profiling import NPU_UTILS, NpuUtils
from ascsim.asc.lib.runtime.support import (
    MAGIC_OF_CORE_TYPE,
    TASK_TYPE_OF_CORE_TYPE,
    CoreType,
    DeviceInfoType,
    DeviceModuleType,
    Function,
    Kernel,
    MagicElf,
    MallocPolicy,
    MemcpyKind,
    Memory,
    MemorySizes,
    MemoryType,
    MsprofTaskType,
    ProfilingCommandHandle,
    ProfilingValues,
    Stream,
)
from ascsim.session import SESSION

__all__ = [
    "CoreType", "DeviceInfoType", "DeviceMemoryError", "DeviceModuleType", "Function",
    "Kernel", "MagicElf",
    "MallocPolicy", "MemcpyKind", "Memory", "MemorySizes", "MemoryType", "MsprofTaskType",
    "ProfilingCommandHandle", "Stream", "acl_finalize", "acl_init", "build_kernel",
    "c2c_ctrl_addr", "call_print_interface", "check_device_handle", "copy_data_from_device",
    "copy_data_to_device", "current_device", "current_platform", "current_stream",
    "current_tick", "default_device", "destroy_stream", "device_count", "device_info", "free",
    "free_mem", "get_soc_version", "is_available", "is_initialized", "is_model", "launch_kernel",
    "magic_elf_value", "malloc", "memcpy", "msprof_task_type", "npu_utils",
    "register_device_binary_kernel", "register_function", "reset_device", "set_device",
    "set_pro_switch", "set_soc_version", "synchronize", "synchronize_device",
    "unregister_device_binary_kernel", "use_model", "use_npu",
]

#: The simulated device's memory (one device, kept for the whole process).
MEMORY = RuntimeMemory()

_STREAM = Stream(1)


def use_model() -> None:
    SESSION.set_backend("Model")


def use_npu() -> None:
    """The NPU is the simulated chip: say so once, then run there."""
    from ascsim import npu

    npu.notice("the NPU runtime")
    SESSION.set_backend("NPU")


def is_model() -> bool:
    """True unless the script chose the NPU backend (which the simulator also runs)."""
    return SESSION.backend == "Model"


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def set_soc_version(platform) -> None:
    SESSION.set_soc(getattr(platform, "value", platform))


def get_soc_version():
    from ascsim.asc.runtime.config import Platform

    return Platform(SESSION.soc.name)


current_platform = get_soc_version


def default_device() -> int:
    return 0


def current_device() -> int:
    return 0


def set_device(device_id: int) -> None:
    if int(device_id) != 0:
        raise ValueError(f"the simulator has one device (0), not {device_id}")


def check_device_handle(device_id) -> None:
    """A device id must be an int >= 0 (the simulator has device 0 only; ``set_device`` says
    so for any other)."""
    if isinstance(device_id, int) and not isinstance(device_id, bool) and device_id >= 0:
        return
    raise RuntimeError(f"Device handle should be int >= 0, but '{device_id}' with "
                       f"{type(device_id)} type was given")


def reset_device(device_id: int | None = None) -> None:
    """Release everything the runtime holds on the device: its allocations and registered
    kernel binaries (``launch`` of a ``kernel[n](...)`` keeps no device state)."""
    if device_id is not None:
        check_device_handle(device_id)
    MEMORY.free_all()
    _kernels().unregister_all()


def device_count() -> int:
    return 1


_INFO = {
    (DeviceModuleType.RT_MODULE_TYPE_VECTOR_CORE, DeviceInfoType.INFO_TYPE_CORE_NUM):
        lambda soc: soc.aiv_count,
    (DeviceModuleType.RT_MODULE_TYPE_AICORE, DeviceInfoType.INFO_TYPE_CORE_NUM):
        lambda soc: soc.aic_count,
    (DeviceModuleType.RT_MODULE_TYPE_AICORE, DeviceInfoType.INFO_TYPE_CUBE_NUM):
        lambda soc: soc.aic_count,
    (DeviceModuleType.RT_MODULE_TYPE_SYSTEM, DeviceInfoType.INFO_TYPE_CORE_NUM):
        lambda soc: soc.aic_count,
}


def device_info(module_type: DeviceModuleType, info_type: DeviceInfoType,
                device_id: int | None = None) -> int:
    """Core counts of the simulated SoC (AIV for VECTOR_CORE, AIC for AICORE)."""
    key = (DeviceModuleType(module_type), DeviceInfoType(info_type))
    answer = _INFO.get(key)
    if answer is None:
        raise ValueError(f"device_info{key} is not modelled; known: {sorted(_INFO)}")
    return answer(SESSION.soc)


def create_stream(priority: int = 0) -> Stream:
    return Stream(2)


def destroy_stream(stream) -> None:
    """Streams carry no state in the simulator."""


def current_stream(device_id: int | None = None) -> Stream:
    return _STREAM


def synchronize(stream=None, timeout: int = 0) -> None:
    """Launches are synchronous in the simulator, as in pyasc."""


def synchronize_device() -> None:
    """Launches are synchronous in the simulator."""


def current_tick() -> int:
    """Simulated cycles of the last kernel launched (0 before any launch)."""
    report = SESSION.last_report
    if report is None:
        return 0
    return int(SESSION.soc.us_to_cycles(report.device_time_us))


# -- kernel binaries ---------------------------------------------------------------------------

def _kernels():
    """The kernel registry (imported on first use: it needs the jit front-end, which needs
    this package's types)."""
    from ascsim.asc.lib.runtime import kernels

    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = kernels.KernelRegistry()
    return _REGISTRY


_REGISTRY = None

def _core_type(core_type, what: str) -> CoreType:
    if not isinstance(core_type, CoreType):
        raise RuntimeError(f"{what}: core type {core_type!r} is not supported (expected an "
                           "asc.lib.runtime.CoreType)")
    return core_type


def magic_elf_value(core_type: CoreType) -> int:
    """The magic number a kernel binary for ``core_type`` is registered with."""
    return int(MAGIC_OF_CORE_TYPE[_core_type(core_type, "magic_elf_value")])


def msprof_task_type(core_type: CoreType) -> int:
    """The task type a launch on ``core_type`` is reported under to the profiler."""
    return int(TASK_TYPE_OF_CORE_TYPE[_core_type(core_type, "msprof_task_type")])


def build_kernel(kernel, *args, **kwargs):
    """The simulator's compiled form of an ``@asc.jit`` kernel (an
    ``asc.runtime.compiler.CompiledKernel`` whose ``binary`` registers with
    ``register_device_binary_kernel``). ``args``/``kwargs`` are the kernel's arguments or
    their types: ``MockTensor(dtype)`` or an array/tensor for a GM tensor, ``MockValue(dtype)``
    or a scalar for a scalar, the value for a ConstExpr; jit options (``kernel_type``, ...)
    may be given too. An ascsim addition: pyasc gets its binary from its compiler."""
    return _kernels().build(kernel, *args, **kwargs)


def register_device_binary_kernel(kernel_binary: bytes, core_type_id: int) -> Kernel:
    """Register a kernel binary (from :func:`build_kernel`) under its core type's magic."""
    return _kernels().register_binary(kernel_binary, core_type_id)


def unregister_device_binary_kernel(kernel_handle: Kernel) -> None:
    _kernels().unregister_binary(kernel_handle)


def register_function(kernel_handle: Kernel, fn_name: str, mode: int = 0) -> Function:
    """The entry function ``fn_name`` of a registered binary, as a launchable handle."""
    return _kernels().register_function(kernel_handle, fn_name, mode)


def launch_kernel(fn_handle: Function, block_num: int, args, num_args: int | None = None,
                  sm_desc=None, stream_handle: Stream | None = None):
    """Run a registered function on ``block_num`` cores of the simulated chip; ``args`` is the
    argument block as 64-bit words (device addresses and packed scalars, see
    :mod:`.kernels`). Synchronous; returns the launch's report. ``sm_desc`` (an L2 cache
    descriptor) and the stream change nothing on the simulator."""
    return _kernels().launch(MEMORY, fn_handle, block_num, args, num_args)


# -- device memory -----------------------------------------------------------------------------

def malloc(size: int, memory_type: MemoryType = MemoryType.RT_MEMORY_DEFAULT,
           policy: MallocPolicy = MallocPolicy.RT_MEMORY_POLICY_NONE) -> Memory:
    """``size`` bytes of simulated device memory (zero-filled); its address as a handle."""
    return MEMORY.malloc(size, memory_type, policy)


def free(mem_handle: Memory) -> None:
    MEMORY.free(mem_handle)


def free_mem() -> None:
    """Free every allocation and unregister every kernel binary."""
    _kernels().unregister_all()
    MEMORY.free_all()


#: pyasc's ``__all__`` lists ``"free_memStream"``: its ``"free_mem"`` and ``"Stream"`` entries
#: have no comma between them, so Python joins the two strings. The joined name is
#: ``free_mem``, so that every name pyasc exports exists.
free_memStream = free_mem  # noqa: N816 - the name as pyasc's list spells it


def memcpy(mem_dst_handle, dst_nbytes: int, mem_src_handle, src_nbytes: int,
           kind: MemcpyKind) -> None:
    """Copy ``src_nbytes`` bytes (at most ``dst_nbytes``) in the direction ``kind``; device
    sides are addresses from :func:`malloc` (plus an offset), host sides arrays, tensors,
    bytes or raw pointers."""
    _memcpy(MEMORY, mem_dst_handle, dst_nbytes, mem_src_handle, src_nbytes, kind)


def copy_data_to_device(src_mem_handle, nbytes: int) -> Memory:
    """A new device allocation holding ``nbytes`` of the host memory ``src_mem_handle``."""
    handle = malloc(nbytes, MemoryType.RT_MEMORY_HBM)
    memcpy(handle, nbytes, src_mem_handle, nbytes, MemcpyKind.RT_MEMCPY_HOST_TO_DEVICE)
    return handle


def copy_data_from_device(mem_dst_handle, mem_src_handle, nbytes: int) -> None:
    """Copy ``nbytes`` from device memory ``mem_src_handle`` to the host ``mem_dst_handle``."""
    memcpy(mem_dst_handle, nbytes, mem_src_handle, nbytes, MemcpyKind.RT_MEMCPY_DEVICE_TO_HOST)


#: The address pyasc passes to MIX kernels as their cross-core (FFTS) control address on the
#: CANN model; the simulator synchronises cores itself and never reads it.
MODEL_C2C_CTRL_ADDR = 255086295400448


def c2c_ctrl_addr() -> int:
    return MODEL_C2C_CTRL_ADDR


# -- profiling ---------------------------------------------------------------------------------

def npu_utils() -> NpuUtils:
    """The simulated ``npu_utils``: ACL init/finalize, the msprof cycle counter and reports."""
    return NPU_UTILS


def acl_init() -> int:
    return NPU_UTILS.acl_init()


def acl_finalize() -> int:
    return NPU_UTILS.acl_finalize()


def set_pro_switch(command_type: ProfilingCommandHandle.Type, device_id: int | None = None,
                   conf: int = 0b11111) -> None:
    """Send a profiling command (INIT/START/STOP/FINALIZE) with the switch bits ``conf``:
    START turns on task-time reporting of the simulated launches."""
    device = current_device() if device_id is None else device_id
    check_device_handle(device)
    set_device(device)
    command = ProfilingCommandHandle.Type(getattr(command_type, "value", command_type))
    devices = (ctypes.c_uint32 * ProfilingValues.RT_PROF_MAX_DEV_NUM)(device)
    handle = ProfilingCommandHandle(profSwitch=int(conf), profSwitchHi=0, devNums=1,
                                    devIdList=devices, modelId=0, type=int(command),
                                    cacheFlag=0)
    NPU_UTILS.switch(handle)


def call_print_interface(dump_address, dump_size: int, stream=None, func_name: str = "") -> None:
    """Print a launch's debug dump workspace. The simulator prints a kernel's ``printf`` and
    ``dump_tensor`` output while the kernel runs, so the workspace holds nothing more to print;
    the workspace span is still checked against device memory."""
    MEMORY.span(dump_address, int(dump_size), f"call_print_interface({func_name})")
