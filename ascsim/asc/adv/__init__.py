"""``asc.adv``: the high-level API (math, activations, normalisation, Matmul)."""

from __future__ import annotations

from ascsim.asc.adv.activation import swiglu
from ascsim.asc.adv.math import MATH
from ascsim.asc.adv.math_binary import BINARY
from ascsim.asc.adv.matmul import Matmul, register_matmul
from ascsim.asc.adv.matmul_config import *  # noqa: F403
from ascsim.asc.adv.matmul_config import __all__ as _MATMUL_CONFIG
from ascsim.asc.adv.matmul_static import get_matmul_api_tiling
from ascsim.asc.adv.norm import RmsNormTiling, rmsnorm
from ascsim.asc.adv.quant import QuantConfig, quant
from ascsim.asc.adv.softmax import (
    SoftmaxConfig,
    SoftMaxShapeInfo,
    SoftmaxTiling,
    softmax,
    softmax_flash_v2,
)
from ascsim.asc.adv.sort import concat, extract
from ascsim.asc.adv.tiling_structs import TCubeTiling

globals().update(MATH)
globals().update(BINARY)

__all__ = ["Matmul", "QuantConfig", "RmsNormTiling", "TCubeTiling", "concat", "extract",
           "get_matmul_api_tiling", "quant",
           "register_matmul",
           "rmsnorm", "softmax", "swiglu", "SoftMaxShapeInfo", "SoftmaxConfig", "SoftmaxTiling",
           "softmax_flash_v2", *_MATMUL_CONFIG, *MATH, *BINARY]
