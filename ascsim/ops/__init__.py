"""Operators built from ascsim kernels: ``fused_conv_tanh``, ``fused_conv_sigmoid``,
``matmul_leaky_relu``."""

from ascsim.ops.fused_conv import fused_conv_sigmoid, fused_conv_tanh
from ascsim.ops.matmul_leaky_relu import matmul_leaky_relu

__all__ = ["fused_conv_sigmoid", "fused_conv_tanh", "matmul_leaky_relu"]
