"""The compile-time tiling of a Matmul whose config fixes its shape (``get_mm_config`` with a
``MatmulShapeParams``), used when ``register_matmul`` gets no tiling.

In Ascend C such a config carries the per-core extents (``singleCoreM/N/K``) and the base block
(``basicM/N/K``); the compiler derives the remaining tiling fields (L1 depths and steps) from
them and the Matmul runs without a runtime ``TCubeTiling``. Here the same derivation is the
host tiling solver (:mod:`ascsim.tiling`) run on one core's region with that base block fixed,
so a static Matmul caches and loads exactly as a runtime-tiled one with the same blocks would.
"""

from __future__ import annotations

from dataclasses import fields as dataclass_fields
from types import SimpleNamespace

from ascsim.asc.adv.matmul_config import MatmulApiStaticTiling, MatmulConfig, MatmulType
from ascsim.asc.context import current_core, user_location
from ascsim.sim.errors import KernelError
from ascsim.tiling import MatmulTilingRequest, TilingError, compute_matmul_tiling

#: The config fields a static tiling needs, all > 0.
STATIC_SHAPE_FIELDS = ("single_core_m", "single_core_n", "single_core_k",
                       "basic_m", "basic_n", "basic_k")


def has_static_shape(config: MatmulConfig) -> bool:
    """Whether ``config`` fixes the whole shape (every :data:`STATIC_SHAPE_FIELDS` > 0)."""
    return all(int(getattr(config, name)) > 0 for name in STATIC_SHAPE_FIELDS)


def _operand(prefix: str, mtype: MatmulType) -> dict:
    return {f"{prefix}_dtype": mtype.dtype.name, f"{prefix}_position": mtype.position.name}


def static_tiling(a: MatmulType, b: MatmulType, c: MatmulType, bias: MatmulType | None,
                  config: MatmulConfig, soc, loc, l1_bytes: int = -1) -> SimpleNamespace:
    """The TCubeTiling fields (as attributes) of a shape-fixed config on ``soc`` (with
    ``l1_bytes`` of L1 when > 0, else the whole L1)."""
    if not has_static_shape(config):
        missing = [n for n in STATIC_SHAPE_FIELDS if int(getattr(config, n)) <= 0]
        raise KernelError("register_matmul without a tiling needs a config that fixes the "
                          f"shape (get_mm_config with MatmulShapeParams); {missing} are 0. "
                          "Pass a TCubeTiling or call mm.init(tiling)", loc)
    m, n, k = (int(getattr(config, f"single_core_{d}")) for d in "mnk")
    fields = dict(m=m, n=n, k=k, single_core_m=m, single_core_n=n, single_core_k=k,
                  base_m=int(config.basic_m), base_n=int(config.basic_n),
                  base_k=int(config.basic_k), dim=1, trans_a=a.is_trans, trans_b=b.is_trans,
                  a_format=a.format.name, b_format=b.format.name, c_format=c.format.name,
                  has_bias=bias is not None and bool(config.enable_set_bias),
                  l1_bytes=int(l1_bytes), **_operand("a", a), **_operand("b", b),
                  **_operand("c", c))
    if bias is not None:
        fields.update(_operand("bias", bias))
    try:
        values = compute_matmul_tiling(MatmulTilingRequest(**fields), soc)
    except TilingError as exc:
        raise KernelError(f"the Matmul config's static shape does not tile: {exc}", loc) from None
    return SimpleNamespace(**values)


#: MatmulApiStaticTiling field <- the tiling solver's field of another name.
_SOLVER_NAME = {"ka": "k_a", "kb": "k_b", "step_ka": "step_k_a", "step_kb": "step_k_b"}


def get_matmul_api_tiling(mm_cfg: MatmulConfig, a_type=None, b_type=None, c_type=None,
                          bias_type=None, l1_size=None) -> MatmulApiStaticTiling:
    """Ascend C ``GetMatmulApiTiling``: the compile-time tiling of a Matmul config.

    A config that fixes the whole shape (``single_core_m/n/k`` and ``basic_m/n/k``) gets every
    field, derived for ``l1_size`` bytes of L1 (default: the SoC's L1) as the host tiler
    derives them; otherwise the fields the config fixes are set and the others stay -1 (taken
    from the runtime tiling). ``cfg`` is the config. Both of pyasc's argument orders are taken:
    ``(mm_cfg, a_type, b_type, c_type, bias_type, l1_size)`` and
    ``(mm_cfg, l1_size, a_type, b_type, c_type, bias_type)``."""
    if isinstance(a_type, int):  # RuntimeInt is an int too
        # The (mm_cfg, l1_size, a_type, b_type, c_type, bias_type) order.
        l1_size, a_type, b_type, c_type, bias_type = a_type, b_type, c_type, bias_type, l1_size
    loc = user_location()
    if not isinstance(mm_cfg, MatmulConfig):
        raise KernelError(f"get_matmul_api_tiling: mm_cfg must be a MatmulConfig, got "
                          f"{type(mm_cfg).__name__}", loc)
    for name, value in (("a_type", a_type), ("b_type", b_type), ("c_type", c_type)):
        if not isinstance(value, MatmulType):
            raise KernelError(f"get_matmul_api_tiling: {name} must be an asc.adv.MatmulType, "
                              f"got {type(value).__name__}", loc)
    l1 = current_core().soc.l1_bytes if l1_size is None else int(l1_size)
    if l1 <= 0:
        raise KernelError(f"get_matmul_api_tiling: l1_size must be > 0, got {l1}", loc)
    if has_static_shape(mm_cfg):
        values = vars(static_tiling(a_type, b_type, c_type, bias_type, mm_cfg,
                                    current_core().soc, loc, l1_bytes=l1))
        known = {f.name for f in dataclass_fields(MatmulApiStaticTiling)} - {"cfg"}
        return MatmulApiStaticTiling(
            **{name: int(values[_SOLVER_NAME.get(name, name)]) for name in known}, cfg=mm_cfg)
    fixed = {f"single_core_{d}": int(getattr(mm_cfg, f"single_core_{d}")) for d in "mnk"}
    fixed.update({f"base_{d}": int(getattr(mm_cfg, f"basic_{d}")) for d in "mnk"})
    return MatmulApiStaticTiling(**{k: v for k, v in fixed.items() if v > 0}, cfg=mm_cfg)


__all__ = ["STATIC_SHAPE_FIELDS", "get_matmul_api_tiling", "has_static_shape", "static_tiling"]
