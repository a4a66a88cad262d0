"""The simulated platform as PyPTO Pro sees it: Ascend 950 parts only."""

from __future__ import annotations

from dataclasses import dataclass

from ascsim.hw import SocSpec
from ascsim.session import SESSION

#: The part PyPTO Pro kernels run on unless another 950 is chosen.
DEFAULT_PTO_SOC = "Ascend950PR_9579"
#: The product family PyPTO Pro supports (its documentation: Ascend 950PR/950DT only).
PTO_FAMILY = "Ascend950"


def require_pto_soc() -> SocSpec:
    """The simulated SoC, if PyPTO Pro runs on it; else PyPTO Pro's refusal."""
    soc = SESSION.soc
    if soc.family != PTO_FAMILY:
        raise RuntimeError(
            f"unsupported platform: {soc.name}. PyPTO Pro supports Ascend 950PR/950DT only "
            f"(Atlas A2/A3 are not supported); simulate one with ascsim run --soc "
            f"{DEFAULT_PTO_SOC} or ASCSIM_SOC")
    return soc


@dataclass(frozen=True)
class PlatformInfo:
    """``get_platform_info()``: the simulated part's name and core counts."""

    soc_version: str
    core_num: int
    cube_core_num: int
    vector_core_num: int

    @property
    def arch(self) -> str:
        return "a5" if self.soc_version.startswith("Ascend950") else "a3"


def get_platform_info(force_refresh: bool = False) -> PlatformInfo:
    soc = SESSION.soc
    return PlatformInfo(soc.name, soc.aic_count, soc.aic_count, soc.aiv_count)
