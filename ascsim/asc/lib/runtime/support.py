"""Types and enums of the runtime layer (pyasc's ``asc.lib.runtime.support``)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from enum import IntEnum

Stream = ctypes.c_void_p
Memory = ctypes.c_void_p
Kernel = ctypes.c_void_p
Function = ctypes.c_void_p


class CoreType(IntEnum):
    AiCore = 0
    VectorCore = 1
    CubeCore = 2
    AiCpu = 3


class DeviceModuleType(IntEnum):
    RT_MODULE_TYPE_SYSTEM = 0
    RT_MODULE_TYPE_AICPU = 1
    RT_MODULE_TYPE_CCPU = 2
    RT_MODULE_TYPE_DCPU = 3
    RT_MODULE_TYPE_AICORE = 4
    RT_MODULE_TYPE_TSCPU = 5
    RT_MODULE_TYPE_PCIE = 6
    RT_MODULE_TYPE_VECTOR_CORE = 7
    RT_MODULE_TYPE_HOST_AICPU = 8


class DeviceInfoType(IntEnum):
    INFO_TYPE_ENV = 0
    INFO_TYPE_VERSION = 1
    INFO_TYPE_MASTERID = 2
    INFO_TYPE_CORE_NUM = 3
    INFO_TYPE_OS_SCHED = 4
    INFO_TYPE_IN_USED = 5
    INFO_TYPE_ERROR_MAP = 6
    INFO_TYPE_OCCUPY = 7
    INFO_TYPE_ID = 8
    INFO_TYPE_IP = 9
    INFO_TYPE_ENDIAN = 10
    INFO_TYPE_CUBE_NUM = 0x775A5A5A


class MagicElf(IntEnum):
    """The magic number a device binary is registered with, per core type (CANN's
    ``RT_DEV_BINARY_MAGIC_ELF*``); :func:`magic_elf_value` picks one."""

    RT_DEV_BINARY_MAGIC_ELF = 0x43554245
    RT_DEV_BINARY_MAGIC_ELF_AIVEC = 0x41415246
    RT_DEV_BINARY_MAGIC_ELF_AICUBE = 0x41494343
    RT_DEV_BINARY_MAGIC_ELF_AICPU = 0x41415243


class MemoryType(IntEnum):
    """Where ``malloc`` places an allocation; the simulator has one GM, so all are GM."""

    RT_MEMORY_DEFAULT = 0
    RT_MEMORY_HBM = 2
    RT_MEMORY_DDR = 4
    RT_MEMORY_SPM = 8
    RT_MEMORY_P2P_HBM = 0x10
    RT_MEMORY_P2P_DDR = 0x11
    RT_MEMORY_DDR_NC = 0x20
    RT_MEMORY_TS_4G = 0x40
    RT_MEMORY_TS = 0x80
    RT_MEMORY_RESERVED = 0x100
    RT_MEMORY_L1 = 0x10000
    RT_MEMORY_L2 = 0x20000


class MallocPolicy(IntEnum):
    """Page policy of an allocation (no effect on simulated GM)."""

    RT_MEMORY_POLICY_NONE = 0x0
    RT_MEMORY_POLICY_HUGE_PAGE_FIRST = 0x400
    RT_MEMORY_POLICY_HUGE_PAGE_ONLY = 0x800
    RT_MEMORY_POLICY_DEFAULT_PAGE_ONLY = 0x1000
    RT_MEMORY_POLICY_HUGE_PAGE_FIRST_P2P = 0x2000
    RT_MEMORY_POLICY_HUGE_PAGE_ONLY_P2P = 0x4000
    RT_MEMORY_POLICY_DEFAULT_PAGE_ONLY_P2P = 0x8000


class MemcpyKind(IntEnum):
    """Direction of a ``memcpy``."""

    RT_MEMCPY_HOST_TO_HOST = 0
    RT_MEMCPY_HOST_TO_DEVICE = 1
    RT_MEMCPY_DEVICE_TO_HOST = 2
    RT_MEMCPY_DEVICE_TO_DEVICE = 3
    RT_MEMCPY_MANAGED = 4
    RT_MEMCPY_ADDR_DEVICE_TO_DEVICE = 5
    RT_MEMCPY_HOST_TO_DEVICE_EX = 6
    RT_MEMCPY_DEVICE_TO_HOST_EX = 7
    RT_MEMCPY_RESERVED = 8


class MsprofTaskType(IntEnum):
    """The task type a kernel launch is reported under to the profiler."""

    MSPROF_TASK_TYPE_AI_CORE = 0
    MSPROF_TASK_TYPE_AI_CPU = 1
    MSPROF_TASK_TYPE_AIV = 2
    MSPROF_TASK_TYPE_MIX_AIC = 4
    MSPROF_TASK_TYPE_MIX_AIV = 5
    MSPROF_TASK_TYPE_INVALID = 11


class ProfilingValues:
    """Array bounds of the profiling command (device list, path and parameter lengths)."""

    RT_PROF_MAX_DEV_NUM = 64
    RT_PROF_PATH_LEN_MAX = 1023
    RT_PROF_PARAM_LEN_MAX = 4095


#: Bits of ``ProfilingCommandHandle.profSwitch`` that turn on task-time reporting: level 0
#: (``PROF_TASK_TIME``) and level 1 (``PROF_TASK_TIME_L1``), as in CANN's prof_common.h.
PROF_TASK_TIME_L0 = 0x800
PROF_TASK_TIME_L1 = 0x2


class ProfilingCommandHandle(ctypes.Structure):
    """The profiling switch command ``set_pro_switch`` sends (the runtime's C layout)."""

    class Type(IntEnum):
        INIT = 0
        START = 1
        STOP = 2
        FINALIZE = 3
        MODEL_SUBSCRIBE = 4
        MODEL_UNSUBSCRIBE = 5

    class Params(ctypes.Structure):
        _fields_ = [  # noqa: RUF012 - ctypes reads the class attribute
            ("pathLen", ctypes.c_uint32),
            ("storageLimit", ctypes.c_uint32),
            ("profDataLen", ctypes.c_uint32),
            ("path", ctypes.c_char * (ProfilingValues.RT_PROF_PATH_LEN_MAX + 1)),
            ("profData", ctypes.c_char * (ProfilingValues.RT_PROF_PARAM_LEN_MAX + 1)),
        ]

    _fields_ = [  # noqa: RUF012 - ctypes reads the class attribute
        ("profSwitch", ctypes.c_uint64),
        ("profSwitchHi", ctypes.c_uint64),
        ("devNums", ctypes.c_uint32),
        ("devIdList", ctypes.c_uint32 * ProfilingValues.RT_PROF_MAX_DEV_NUM),
        ("modelId", ctypes.c_uint32),
        ("type", ctypes.c_uint32),
        ("cacheFlag", ctypes.c_uint32),
        ("commandHandleParams", Params),
    ]


@dataclass(frozen=True)
class MemorySizes:
    """Sizes of a core's buffers and of the L2 cache (bytes, or counts for ``*_num``), as the
    runtime's memory-size query returns them. A plain record: the simulated SoC's own sizes
    are in :class:`ascsim.hw.SocSpec` (and ``asc.lib.host.PlatformAscendC``)."""

    l0a_size: int
    l0b_size: int
    l0c_size: int
    l1_size: int
    ub_size: int
    l2_size: int
    l2_page_num: int
    block_size: int
    bank_size: int
    bank_num: int
    burst_in_one_block: int
    bank_group_num: int


#: The magic a kernel binary registers with, per core type of the kernel.
MAGIC_OF_CORE_TYPE = {
    CoreType.AiCore: MagicElf.RT_DEV_BINARY_MAGIC_ELF,
    CoreType.VectorCore: MagicElf.RT_DEV_BINARY_MAGIC_ELF_AIVEC,
    CoreType.CubeCore: MagicElf.RT_DEV_BINARY_MAGIC_ELF_AICUBE,
    CoreType.AiCpu: MagicElf.RT_DEV_BINARY_MAGIC_ELF_AICPU,
}
#: The task type a launch is reported under to the profiler, per core type of the kernel.
TASK_TYPE_OF_CORE_TYPE = {
    CoreType.AiCore: MsprofTaskType.MSPROF_TASK_TYPE_AI_CORE,
    CoreType.VectorCore: MsprofTaskType.MSPROF_TASK_TYPE_AIV,
    CoreType.CubeCore: MsprofTaskType.MSPROF_TASK_TYPE_AI_CORE,
    CoreType.AiCpu: MsprofTaskType.MSPROF_TASK_TYPE_AI_CPU,
}
#: The core type a kernel of each kind runs as (what its binary registers as, and what the
#: profiler is told).
CORE_TYPE_OF_KIND = {"AIV_ONLY": CoreType.VectorCore, "AIC_ONLY": CoreType.CubeCore,
                     "MIX": CoreType.AiCore}
