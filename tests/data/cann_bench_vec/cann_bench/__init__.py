"""A test operator package: ``fused_conv_tanh`` for 1x1, stride-1, unpadded fp32 convolutions."""

from cann_bench.conv1x1 import fused_conv_tanh

__all__ = ["fused_conv_tanh"]
