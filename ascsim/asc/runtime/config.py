"""``asc.runtime.config``: backend and platform selection (pyasc-api §2.1)."""

from __future__ import annotations

from enum import Enum, IntEnum

from ascsim.hw import soc_names
from ascsim.session import SESSION


class Backend(Enum):
    """Where kernels run. ascsim simulates ``Model``; ``NPU`` needs Huawei's pyasc and CANN."""

    Model = "Model"
    NPU = "NPU"


# Every simulated SoC, named like pyasc's enum (``Ascend910B4_1`` has the value "Ascend910B4-1").
Platform = Enum("Platform", {name.replace("-", "_"): name for name in soc_names()})


class KernelType(IntEnum):
    AIV_ONLY = 0
    AIC_ONLY = 1
    MIX_AIV_HARD_SYNC = 2
    MIX_AIC_HARD_SYNC = 3
    MIX_AIV_1_0 = 4
    MIX_AIC_1_0 = 5
    MIX_AIC_1_1 = 6
    MIX_AIC_1_2 = 7


NPU_UNAVAILABLE = (
    "ascsim simulates Ascend devices (backend 'Model'); running on a real NPU (backend 'NPU') "
    "needs Huawei's pyasc with the CANN toolkit and an Ascend device. Use -r Model."
)


def set_platform(backend, soc_version=None, device_id=None, check: bool = True) -> None:
    """Select the backend and the simulated SoC (default: the runner's ``-v`` or Ascend910B1)."""
    backend = Backend(backend.value if isinstance(backend, Enum) else backend)
    if backend is Backend.NPU:
        raise RuntimeError(NPU_UNAVAILABLE)
    SESSION.set_backend(backend.value)
    if soc_version is not None:
        name = soc_version.value if isinstance(soc_version, Enum) else str(soc_version)
        SESSION.set_soc(name)
    else:
        SESSION.set_soc(SESSION.requested_soc)


def current_platform() -> Platform:
    return Platform(SESSION.soc.name)
