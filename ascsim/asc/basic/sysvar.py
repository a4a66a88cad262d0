"""System registers and compile-time properties: block index, core kind, buffer sizes."""

from __future__ import annotations

from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import Property
from ascsim.asc.values import RuntimeInt
from ascsim.sim.errors import KernelError
from ascsim.sim.lanes import Lanes


def get_block_idx() -> RuntimeInt:
    """Index of this block; on the AIVs of a MIX kernel it spans [0, 2·block_num). In a wave
    of cores (ascsim/sim/wave.py), one value per lane (a :class:`~ascsim.sim.lanes.Lanes`)."""
    idx = current_core().block_idx
    return idx if type(idx) is Lanes else RuntimeInt(idx)


def get_block_num() -> RuntimeInt:
    """Blocks launched (on the AIVs of a MIX kernel, AIVs launched: 2·block_num)."""
    core = current_core()
    n = core.launch.config.block_num
    return RuntimeInt(2 * n if core.launch.kind == "MIX" and core.kind == "AIV" else n)


def get_sub_block_idx() -> RuntimeInt:
    return RuntimeInt(current_core().sub_block_idx)


def get_sub_block_num() -> RuntimeInt:
    core = current_core()
    return RuntimeInt(2 if core.launch.kind == "MIX" and core.kind == "AIV" else 1)


def get_task_ratio() -> RuntimeInt:
    return get_sub_block_num()


def ascend_is_aic() -> bool:
    return current_core().kind == "AIC"


def ascend_is_aiv() -> bool:
    return current_core().kind == "AIV"


def get_system_cycle() -> RuntimeInt:
    """The core's scalar clock, in cycles since the launch started."""
    return RuntimeInt(int(current_core().scalar))


def get_data_block_size_in_bytes() -> RuntimeInt:
    return RuntimeInt(32)


def get_program_counter() -> RuntimeInt:
    return RuntimeInt(0)


def get_arch_version(core_version=None) -> RuntimeInt:
    """The core's architecture version. Ascend C writes it into ``core_version`` (pyasc passes
    that variable); a Python int cannot be written into, so the version is returned."""
    return RuntimeInt(current_core().soc.arch_version)


def trap() -> None:
    """The kernel stops here, as the device's trap instruction stops the core."""
    raise KernelError("trap() executed", user_location())


_PROPERTIES = {
    Property.DEFAULT_C0_SIZE: lambda soc: 32,
    Property.ONE_BLK_SIZE: lambda soc: 32,
    Property.ONE_REPEAT_BYTE_SIZE: lambda soc: 256,
    Property.TOTAL_L1_SIZE: lambda soc: soc.l1_bytes,
    Property.TOTAL_L0A_SIZE: lambda soc: soc.l0a_bytes,
    Property.TOTAL_L0B_SIZE: lambda soc: soc.l0b_bytes,
    Property.TOTAL_L0C_SIZE: lambda soc: soc.l0c_bytes,
    Property.TOTAL_UB_SIZE: lambda soc: soc.ub_bytes,
}


def property(prop: Property) -> int:  # noqa: A001 - pyasc's name
    """``asc.property(asc.DEFAULT_C0_SIZE)`` etc.: a compile-time constant of the SoC."""
    from ascsim.session import SESSION

    return _PROPERTIES[Property(prop)](SESSION.soc)
