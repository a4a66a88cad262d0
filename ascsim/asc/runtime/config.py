"""``asc.runtime.config``: backend and platform selection (pyasc-api §2.1)."""

from __future__ import annotations

from enum import Enum, IntEnum

from ascsim import npu
from ascsim.asc.lib import runtime as rt
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
    """Select the backend and the simulated SoC (default: the runner's ``-v`` or Ascend910B1),
    through ``asc.lib.runtime`` as pyasc does (``rt`` here is that module).

    ``Backend.NPU`` runs on the simulated chip too (pyasc would detect the device's SoC; here
    the device is the simulated one), after a one-line notice on stderr. ``check``: raise if the
    runtime is not available (the simulator's always is, unless a test patches
    ``rt.is_available``).
    """
    backend = Backend(backend.value if isinstance(backend, Enum) else backend)
    if backend is Backend.NPU:
        npu.notice("backend NPU")  # said once per process: before rt.use_npu's own wording
    (rt.use_npu if backend is Backend.NPU else rt.use_model)()
    rt.set_soc_version(soc_version if soc_version is not None else SESSION.requested_soc)
    if device_id is not None:
        rt.set_device(device_id)
    if check and not rt.is_available():
        name = getattr(soc_version, "value", soc_version) or SESSION.soc.name
        raise RuntimeError(
            f"the runtime of backend {backend.value} is not available (pyasc's Model backend "
            f"loads the CANN simulator from $ASCEND_HOME_PATH/tools/simulator/{name}/lib, "
            "which LD_LIBRARY_PATH must include)")


def current_platform() -> Platform:
    return Platform(SESSION.soc.name)
