"""``fused_conv_sigmoid(x, filter, bias, strides, pads, dilations)``, routed by the dispatcher."""

from cann_bench.fused_conv_sigmoid.dispatcher import fused_conv_sigmoid

__all__ = ["fused_conv_sigmoid"]
