"""Matmul configuration objects of ``asc.adv``: ``MatmulType``, ``MatmulConfig`` and its helpers.

These are compile-time descriptions in pyasc (template arguments of Ascend C's ``Matmul``). The
simulator reads what changes behaviour (positions, formats, dtypes, transposes, the iterate
order override) and keeps the rest so scripts that set them run unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ascsim.asc.dtypes import DataType, as_dtype
from ascsim.asc.enums import (
    CubeFormat,
    IterateMode,
    IterateOrder,
    LayoutMode,
    MatmulConfigMode,
    ScheduleType,
    TPosition,
)

#: Where an operand may live for the Matmul API (GM, a UB position, or user-filled L1).
OPERAND_POSITIONS = frozenset({TPosition.GM, TPosition.VECIN, TPosition.VECOUT,
                               TPosition.VECCALC, TPosition.A1, TPosition.B1, TPosition.C1,
                               TPosition.CO2})


@dataclass(frozen=True)
class MatmulType:
    """Where one Matmul operand lives and what it is (``asc.adv.MatmulType``).

    ``is_trans`` says the operand is stored transposed in memory (A as [K, M], B as [N, K]).
    """

    position: TPosition
    format: CubeFormat
    dtype: DataType
    is_trans: bool = False
    layout: LayoutMode = LayoutMode.NONE

    def __post_init__(self):
        object.__setattr__(self, "position", TPosition(self.position))
        object.__setattr__(self, "format", CubeFormat(self.format))
        object.__setattr__(self, "dtype", as_dtype(self.dtype))
        object.__setattr__(self, "is_trans", bool(self.is_trans))
        object.__setattr__(self, "layout", LayoutMode(self.layout))
        if self.position not in OPERAND_POSITIONS:
            raise ValueError(f"MatmulType: TPosition.{self.position.name} cannot hold a "
                             "Matmul operand")


@dataclass(frozen=True)
class MatmulConfig:
    """Ascend C ``MatmulConfig``: the Matmul implementation's compile-time switches.

    ``do_norm``/``do_basic_block``/``do_multi_data_load``/``do_special_mdl`` pick the
    implementation family (NORM, BasicBlock, MDL); ``basic_m/n/k`` fix the base block of a
    BasicBlock config; ``iterate_order`` (``IterateOrder.UNDEF`` = take the tiling's) and
    ``iterate_mode`` constrain how blocks are walked. The other switches enable optional
    features and are accepted as given.
    """

    do_norm: bool = True
    do_basic_block: bool = False
    do_multi_data_load: bool = False
    basic_m: int = 0
    basic_n: int = 0
    basic_k: int = 0
    intrinsics_check: bool = False
    is_n_batch: bool = False
    en_vec_nd2nz: bool = False
    do_special_basic_block: bool = False
    do_mte2_preload: int = 0
    single_core_m: int = 0
    single_core_n: int = 0
    single_core_k: int = 0
    step_m: int = 0
    step_n: int = 0
    base_mn: int = 0
    single_core_mn: int = 0
    enable_u_b2_l1: bool = True
    enable_l1_cache_ub: bool = False
    is_per_tensor: bool = False
    has_anti_quant_offset: bool = False
    do_ib_share_norm: bool = False
    do_special_mdl: bool = False
    enable_init: bool = True
    batch_mode: int = 0
    enable_end: bool = True
    enable_get_tensor_c: bool = True
    enable_set_org_shape: bool = True
    enable_set_bias: bool = True
    enable_set_tail: bool = True
    enable_quant_vector: bool = True
    enable_set_define_data: bool = True
    iterate_mode: IterateMode = IterateMode.ITERATE_MODE_DEFAULT
    enable_reuse: bool = True
    enable_ub_reuse: bool = False
    enable_l1_cache_ub_flag: bool = False
    is_a2b2_shared: bool = False
    is_enable_channel_split: bool = False
    enable_kdim_reorder_load: bool = False
    is_co1_shared: bool = False
    shared_co1_buffer_size: int = 64 * 1024
    iterate_order: IterateOrder = IterateOrder.UNDEF
    schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT
    enable_double_cache: bool = False
    is_bias_batch: bool = True
    enable_static_pad_zeros: bool = False
    is_partial_output: bool = False
    enable_mix_dual_master: bool = False
    is_a2b2_db: bool = False
    en_unit_flag: bool = True
    intra_block_part_sum: bool = False

    def __post_init__(self):
        for name in ("basic_m", "basic_n", "basic_k", "single_core_m", "single_core_n",
                     "single_core_k"):
            if int(getattr(self, name)) < 0:
                raise ValueError(f"MatmulConfig.{name} must be >= 0, got {getattr(self, name)}")
        object.__setattr__(self, "iterate_order", IterateOrder(self.iterate_order))
        object.__setattr__(self, "iterate_mode", IterateMode(self.iterate_mode))
        object.__setattr__(self, "schedule_type", ScheduleType(self.schedule_type))


CFG_NORM = MatmulConfig()
# GetMDLConfig's default leaves UnitFlag off, GetNormalConfig's turns it on (asc-devkit
# include/adv_api/matmul/tiling.h).
CFG_MDL = MatmulConfig(do_norm=False, do_multi_data_load=True, en_unit_flag=False)


def _with(base: MatmulConfig, **changes) -> MatmulConfig:
    known = {f.name for f in fields(MatmulConfig)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise TypeError(f"unknown MatmulConfig field(s) {unknown}")
    return replace(base, **changes)


def get_normal_config(intrinsics_limit: bool = False, batch_loop: bool = False,
                      is_vec_nd2nz: bool = False, bmm_mode: int = 0,
                      is_msg_reuse: bool = True, iterate_order: IterateOrder = IterateOrder.UNDEF,
                      schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT,
                      en_unit_flag: bool = True, enable_mix_dual_master: bool = False,
                      **changes) -> MatmulConfig:
    """The NORM implementation (one base block per Iterate)."""
    return _with(CFG_NORM, intrinsics_check=intrinsics_limit, is_n_batch=batch_loop,
                 en_vec_nd2nz=is_vec_nd2nz, batch_mode=bmm_mode, enable_reuse=is_msg_reuse,
                 iterate_order=iterate_order, schedule_type=schedule_type,
                 en_unit_flag=en_unit_flag, enable_mix_dual_master=enable_mix_dual_master,
                 **changes)


def get_mdl_config(intrinsics_limit: bool = False, batch_loop: bool = False,
                   do_mte2_preload: int = 0, is_vec_nd2nz: bool = False,
                   is_per_tensor: bool = False,
                   has_anti_quant_offset: bool = False, en_unit_flag: bool = False,
                   is_msg_reuse: bool = True, enable_ub_reuse: bool = True,
                   enable_l1_cache_ub: bool = False, enable_mix_dual_master: bool = False,
                   **changes) -> MatmulConfig:
    """The MDL implementation (several base blocks per GM->L1 load)."""
    return _with(CFG_MDL, intrinsics_check=intrinsics_limit, is_n_batch=batch_loop,
                 do_mte2_preload=do_mte2_preload, en_vec_nd2nz=is_vec_nd2nz,
                 is_per_tensor=is_per_tensor, has_anti_quant_offset=has_anti_quant_offset,
                 enable_reuse=is_msg_reuse, enable_ub_reuse=enable_ub_reuse,
                 enable_l1_cache_ub=enable_l1_cache_ub, en_unit_flag=en_unit_flag,
                 enable_mix_dual_master=enable_mix_dual_master, **changes)


def get_special_mdl_config(**changes) -> MatmulConfig:
    """MDL with special (step-N) loading."""
    return _with(MatmulConfig(do_norm=False, do_special_mdl=True), **changes)


def get_basic_config(basic_m: int, basic_n: int, basic_k: int, intrinsics_limit: bool = False,
                     batch_loop: bool = False, bmm_mode: int = 0, **changes) -> MatmulConfig:
    """The BasicBlock implementation with a fixed ``basic_m x basic_n x basic_k`` block."""
    return _with(MatmulConfig(do_norm=False, do_basic_block=True, basic_m=basic_m,
                              basic_n=basic_n, basic_k=basic_k),
                 intrinsics_check=intrinsics_limit, is_n_batch=batch_loop, batch_mode=bmm_mode,
                 **changes)


def get_special_basic_config(basic_m: int, basic_n: int, basic_k: int, single_core_m: int,
                             single_core_n: int, single_core_k: int, step_m: int, step_n: int,
                             **changes) -> MatmulConfig:
    return _with(MatmulConfig(do_norm=False, do_special_basic_block=True, basic_m=basic_m,
                              basic_n=basic_n, basic_k=basic_k, single_core_m=single_core_m,
                              single_core_n=single_core_n, single_core_k=single_core_k,
                              step_m=step_m, step_n=step_n), **changes)


def get_ib_share_norm_config(**changes) -> MatmulConfig:
    return _with(MatmulConfig(do_ib_share_norm=True), **changes)


@dataclass(frozen=True)
class MatmulShapeParams:
    """Static shape parameters for :func:`get_mm_config` (0 = decided at run time)."""

    single_core_m: int = 0
    single_core_n: int = 0
    single_core_k: int = 0
    basic_m: int = 0
    basic_n: int = 0
    basic_k: int = 0

    def __post_init__(self):
        for f in fields(self):
            if int(getattr(self, f.name)) < 0:
                raise ValueError(f"MatmulShapeParams.{f.name} must be >= 0")


@dataclass(frozen=True)
class MatmulQuantParams:
    is_per_tensor: bool = False
    has_anti_quant_offset: bool = False


@dataclass(frozen=True)
class MatmulBatchParams:
    """Batch switches for :func:`get_mm_config` (pyasc's keyword names)."""

    is_b_batch: bool = False
    batch_mode: int = 1
    is_bias_batch: bool = False


@dataclass(frozen=True)
class MatmulFuncParams:
    """Feature switches for :func:`get_mm_config`, under pyasc's keyword names (which differ
    from the ``MatmulConfig`` fields they set; see ``_CONFIG_FIELD``)."""

    intrinsics_limit: bool = False
    en_vec_nd2_nz: bool = False
    enable_double_cache: bool = False
    enable_l1_cache: bool = False
    do_mte2_pre_load: int = 0
    iterate_order: IterateOrder = IterateOrder.UNDEF
    schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT
    enable_reuse: bool = True
    enable_ub_reuse: bool = False
    is_partial_output: bool = False
    is_a2_b2_shared: bool = False
    is_enable_channel_split: bool = False
    enable_kdim_reorder_load: bool = False

    def __post_init__(self):
        object.__setattr__(self, "iterate_order", IterateOrder(self.iterate_order))
        object.__setattr__(self, "schedule_type", ScheduleType(self.schedule_type))


#: Parameter-holder field -> the MatmulConfig field it sets (same name when absent).
_CONFIG_FIELD = {"intrinsics_limit": "intrinsics_check", "en_vec_nd2_nz": "en_vec_nd2nz",
                 "enable_l1_cache": "enable_l1_cache_ub", "do_mte2_pre_load": "do_mte2_preload",
                 "is_a2_b2_shared": "is_a2b2_shared", "is_b_batch": "is_n_batch"}


_MODE_BASE = {
    MatmulConfigMode.CONFIG_NORM: CFG_NORM,
    MatmulConfigMode.CONFIG_MDL: CFG_MDL,
    MatmulConfigMode.CONFIG_SPECIALMDL: MatmulConfig(do_norm=False, do_special_mdl=True),
    MatmulConfigMode.CONFIG_IBSHARE: MatmulConfig(do_ib_share_norm=True),
}
_PARAM_TYPES = (MatmulShapeParams, MatmulQuantParams, MatmulBatchParams, MatmulFuncParams)


def get_mm_config(*params, mode: MatmulConfigMode = MatmulConfigMode.CONFIG_NORM,
                  **kwargs) -> MatmulConfig:
    """Build a config from a mode and any of the four parameter holders (Ascend C
    ``GetMMConfig<mode>(params...)``); the mode may also come first positionally."""
    rest = []
    for p in params:
        if isinstance(p, MatmulConfigMode):
            mode = p
        elif isinstance(p, _PARAM_TYPES):
            rest.append(p)
        else:
            raise TypeError(f"get_mm_config: unexpected argument {p!r}")
    changes: dict = {}
    for p in rest:
        changes.update({_CONFIG_FIELD.get(f.name, f.name): getattr(p, f.name)
                        for f in fields(p)})
    return _with(_MODE_BASE[MatmulConfigMode(mode)], **changes, **kwargs)


@dataclass(frozen=True)
class MatmulApiStaticTiling:
    """Compile-time tiling constants (Ascend C ``MatmulApiStaticTiling``); 0/-1 = not fixed."""

    used_core_num: int = -1
    m: int = -1
    n: int = -1
    ka: int = -1
    kb: int = -1
    single_core_m: int = -1
    single_core_n: int = -1
    single_core_k: int = -1
    base_m: int = -1
    base_n: int = -1
    base_k: int = -1
    depth_a1: int = -1
    depth_b1: int = -1
    step_m: int = -1
    step_n: int = -1
    is_bias: int = -1
    trans_length: int = -1
    iterate_order: int = -1
    share_mode: int = -1
    step_ka: int = -1
    step_kb: int = -1
    db_l0a: int = -1
    db_l0b: int = -1
    db_l0c: int = -1
    cfg: MatmulConfig = CFG_NORM


__all__ = [
    "CFG_MDL", "CFG_NORM", "MatmulApiStaticTiling", "MatmulBatchParams", "MatmulConfig",
    "MatmulFuncParams", "MatmulQuantParams", "MatmulShapeParams", "MatmulType",
    "get_basic_config", "get_ib_share_norm_config", "get_mdl_config", "get_mm_config",
    "get_normal_config", "get_special_basic_config", "get_special_mdl_config",
]
