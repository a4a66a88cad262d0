"""Operators built from ascsim kernels: ``fused_conv_tanh``, ``fused_conv_sigmoid``."""

from ascsim.ops.fused_conv import fused_conv_sigmoid, fused_conv_tanh

__all__ = ["fused_conv_sigmoid", "fused_conv_tanh"]
