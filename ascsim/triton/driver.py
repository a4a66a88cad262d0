"""``triton.runtime.driver``: what a Triton script asks the active device driver.

triton-ascend's driver answers ``get_current_target()`` (backend ``"npu"`` and the SoC name)
and ``utils.get_device_properties(device)`` with the chip's core counts (``num_aicore``: cube
cores, ``num_vectorcore``: vector cores), which kernels use to size persistent grids. Here both
describe the simulated SoC.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascsim.session import SESSION


@dataclass(frozen=True)
class GPUTarget:
    """The compilation target: backend, architecture (the SoC's name) and warp size (Triton's
    field; an Ascend vector core runs one program)."""

    backend: str
    arch: str
    warp_size: int


class _Utils:
    def get_device_properties(self, device=None) -> dict:
        soc = SESSION.soc
        return {"num_aicore": soc.aic_count, "num_vectorcore": soc.aiv_count,
                "max_shared_mem": soc.ub_bytes, "multiprocessor_count": soc.aic_count}


class _ActiveDriver:
    utils = _Utils()

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("npu", SESSION.soc.name, 1)

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device) -> None:
        """One simulated chip."""

    def get_current_stream(self, device=None) -> int:
        return 0

    def get_active_torch_device(self):
        import torch

        return torch.device("npu") if hasattr(torch, "npu") else torch.device("cpu")

    def get_device_interface(self):
        import torch

        return torch.npu


class DriverConfig:
    """``triton.runtime.driver.driver``: ``active`` is the simulated chip's driver."""

    active = _ActiveDriver()
    default = active

    def set_active(self, driver) -> None:
        raise RuntimeError("the simulated NPU is the only driver under ascsim run")


driver = DriverConfig()
# The module stands for the driver config too: ``import triton.runtime.driver as driver`` and
# ``from triton.runtime import driver`` both give ``driver.active``.
active = driver.active
default = driver.default
