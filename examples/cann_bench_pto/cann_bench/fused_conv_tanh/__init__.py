"""``fused_conv_tanh(x, filter, bias, strides, pads, dilations)``, routed by the dispatcher."""

from cann_bench.fused_conv_tanh.dispatcher import fused_conv_tanh

__all__ = ["fused_conv_tanh"]
