"""``asc.lib.runtime``: the device runtime, answered by the simulator (pyasc-api §3.11)."""

from __future__ import annotations

from ascsim.asc.lib.runtime.support import (
    CoreType,
    DeviceInfoType,
    DeviceModuleType,
    Function,
    Kernel,
    Memory,
    Stream,
)
from ascsim.session import SESSION

__all__ = [
    "CoreType", "DeviceInfoType", "DeviceModuleType", "Function", "Kernel", "Memory", "Stream",
    "current_stream", "device_info", "synchronize", "use_model", "use_npu", "is_model",
]

_STREAM = Stream(1)


def use_model() -> None:
    SESSION.set_backend("Model")


def use_npu() -> None:
    from ascsim.asc.runtime.config import NPU_UNAVAILABLE

    raise RuntimeError(NPU_UNAVAILABLE)


def is_model() -> bool:
    return True


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


def reset_device(device_id: int = 0) -> None:
    """Nothing to reset: every launch gets fresh device memory."""


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
