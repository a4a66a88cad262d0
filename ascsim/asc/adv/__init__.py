"""``asc.adv``: the high-level API (math, activations, normalisation, Matmul)."""

from __future__ import annotations

from ascsim.asc.adv.activation import swiglu
from ascsim.asc.adv.math import MATH
from ascsim.asc.adv.norm import RmsNormTiling, rmsnorm
# HELPER-PENDING from ascsim.asc.adv.tiling_structs import TCubeTiling

globals().update(MATH)

__all__ = ["RmsNormTiling", "rmsnorm", "swiglu", *MATH]
