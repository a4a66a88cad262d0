"""Types and enums of the runtime layer (pyasc's ``asc.lib.runtime.support``)."""

from __future__ import annotations

import ctypes
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
