"""Route fused_conv_tanh to the class of its inputs (c1 fp16, c2 fp32, c3 bf16)."""

from cann_bench.dispatch import CONV_CLASSES, route

OP = "fused_conv_tanh"


def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    """tanh(conv2d(x, filter, strides, pads [top, bottom, left, right], dilations) + bias)."""
    impl = route(__package__, OP, CONV_CLASSES, (x, filter, bias))
    return impl(x, filter, bias, strides, pads, dilations)
