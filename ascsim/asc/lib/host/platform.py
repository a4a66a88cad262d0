"""``PlatformAscendC``: what the host tiling code may ask about the simulated SoC.

pyasc gets it from ``PlatformAscendCManager.get_instance(soc_version)``; here it wraps an
:class:`ascsim.hw.SocSpec`, by default the one :attr:`ascsim.session.SESSION.soc` selects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ascsim.hw import SocSpec, get_soc
from ascsim.session import SESSION
from ascsim.tiling import default_core_count

from .enums import CoreMemType

#: Workspace (bytes) the high-level APIs (Matmul's GM staging of C, cross-core messages)
#: need in GM on top of the user's: 16 MiB, the size pyasc's examples allocate.
LIB_API_WORKSPACE_BYTES = 16 * 1024 * 1024

#: Size of each CoreMemType, read from the spec.
_MEM_SIZE: Mapping[CoreMemType, Callable[[SocSpec], int]] = MappingProxyType({
    CoreMemType.L0_A: lambda s: s.l0a_bytes,
    CoreMemType.L0_B: lambda s: s.l0b_bytes,
    CoreMemType.L0_C: lambda s: s.l0c_bytes,
    CoreMemType.L1: lambda s: s.l1_bytes,
    CoreMemType.L2: lambda s: s.l2_bytes,
    CoreMemType.UB: lambda s: s.ub_bytes,
    CoreMemType.HBM: lambda s: s.hbm_bytes,
    CoreMemType.FB: lambda s: sum(s.fb_bytes),
    CoreMemType.BT: lambda s: s.bt_bytes,
})  # fmt: skip


class PlatformAscendC:
    """Hardware facts of one SoC for host-side tiling code."""

    def __init__(self, soc: SocSpec | str | None = None) -> None:
        if soc is None:
            soc = SESSION.soc
        elif isinstance(soc, str):
            soc = get_soc(soc)
        elif not isinstance(soc, SocSpec):
            raise TypeError(f"PlatformAscendC: soc must be a SocSpec or a SoC name, got "
                            f"{type(soc).__name__}")
        self._soc = soc

    @property
    def soc(self) -> SocSpec:
        """The wrapped SoC spec."""
        return self._soc

    def get_soc_version(self) -> str:
        """SoC version string, e.g. ``"Ascend910B1"``."""
        return self._soc.name

    def get_core_num(self) -> int:
        """Cores a kernel can be split over: AIVs on split SoCs, else AICs."""
        return default_core_count(self._soc)

    def get_core_num_aic(self) -> int:
        return self._soc.aic_count

    def get_core_num_aiv(self) -> int:
        return self._soc.aiv_count

    def get_core_num_vector(self) -> int:
        """Stand-alone Vector Cores beside the AI Cores (none on the split SoCs we model)."""
        return 0

    def get_core_mem_size(self, mem_type: CoreMemType) -> int:
        """Bytes of one on-core memory (or of L2 / HBM for the whole chip)."""
        if not isinstance(mem_type, CoreMemType):
            raise TypeError(f"get_core_mem_size: argument 'mem_type' must be "
                            f"asc.lib.host.CoreMemType, got {mem_type!r}")
        return _MEM_SIZE[mem_type](self._soc)

    def get_lib_api_work_space_size(self) -> int:
        """GM workspace bytes the high-level APIs need (see :data:`LIB_API_WORKSPACE_BYTES`)."""
        return LIB_API_WORKSPACE_BYTES

    def calc_tsch_block_dim(self, slice_num: int, aic_core_num: int, aiv_core_num: int) -> int:
        """Blocks to launch for ``slice_num`` slices of a kernel using the given AIC / AIV
        counts per block type: on a split SoC a MIX block holds ``aiv/aic`` AIV slices."""
        if aic_core_num <= 0 or aiv_core_num <= 0 or not self._soc.cube_vector_split:
            return slice_num
        per_block = max(aiv_core_num // aic_core_num, 1)
        return -(-slice_num // per_block)

    def __repr__(self) -> str:
        return f"PlatformAscendC({self._soc.name!r})"


class PlatformAscendCManager:
    """pyasc's factory: ``PlatformAscendCManager.get_instance(soc_version)``."""

    @staticmethod
    def get_instance(soc_version: Any = None) -> PlatformAscendC:
        """The platform of ``soc_version`` (a name or pyasc ``Platform``), default current."""
        if soc_version is None:
            return PlatformAscendC()
        return PlatformAscendC(get_soc(soc_version))


def get_ascendc_platform() -> PlatformAscendC:
    """The platform of the SoC being simulated (:attr:`ascsim.session.SESSION.soc`)."""
    return PlatformAscendC(SESSION.soc)
