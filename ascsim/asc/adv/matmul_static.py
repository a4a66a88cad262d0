"""The compile-time tiling of a Matmul whose config fixes its shape (``get_mm_config`` with a
``MatmulShapeParams``), used when ``register_matmul`` gets no tiling.

In Ascend C such a config carries the per-core extents (``singleCoreM/N/K``) and the base block
(``basicM/N/K``); the compiler derives the remaining tiling fields (L1 depths and steps) from
them and the Matmul runs without a runtime ``TCubeTiling``. Here the same derivation is the
host tiling solver (:mod:`ascsim.tiling`) run on one core's region with that base block fixed,
so a static Matmul caches and loads exactly as a runtime-tiled one with the same blocks would.
"""

from __future__ import annotations

from types import SimpleNamespace

from ascsim.asc.adv.matmul_config import MatmulConfig, MatmulType
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
                  config: MatmulConfig, soc, loc) -> SimpleNamespace:
    """The TCubeTiling fields (as attributes) of a shape-fixed config on ``soc``."""
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
                  **_operand("a", a), **_operand("b", b), **_operand("c", c))
    if bias is not None:
        fields.update(_operand("bias", bias))
    try:
        values = compute_matmul_tiling(MatmulTilingRequest(**fields), soc)
    except TilingError as exc:
        raise KernelError(f"the Matmul config's static shape does not tile: {exc}", loc) from None
    return SimpleNamespace(**values)


__all__ = ["STATIC_SHAPE_FIELDS", "has_static_shape", "static_tiling"]
