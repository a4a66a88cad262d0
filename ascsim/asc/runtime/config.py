"""``asc.runtime.config``: backend and platform selection (pyasc-api §2.1)."""

from __future__ import annotations

from enum import Enum, IntEnum

from ascsim import npu
from ascsim.hw import soc_names
from ascsim.session import SESSION


class Backend(Enum):
    """Where kernels run. Both run on the simulated chip: ``NPU`` says so once on stderr."""

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


def set_platform(backend, soc_version=None, device_id=None, check: bool = True) -> None:
    """Select the backend and the simulated SoC (default: the runner's ``-v`` or Ascend910B1).

    ``Backend.NPU`` runs on the simulated chip too (pyasc would detect the device's SoC; here
    the device is the simulated one), after a one-line notice on stderr.
    """
    backend = Backend(backend.value if isinstance(backend, Enum) else backend)
    if backend is Backend.NPU:
        npu.notice("backend NPU")
    SESSION.set_backend(backend.value)
    if soc_version is not None:
        name = soc_version.value if isinstance(soc_version, Enum) else str(soc_version)
        SESSION.set_soc(name)
    else:
        SESSION.set_soc(SESSION.requested_soc)


def current_platform() -> Platform:
    return Platform(SESSION.soc.name)
