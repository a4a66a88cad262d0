"""Class c3 of fused_conv_sigmoid : bfloat16 inputs, kernels in cann_bench.conv_kernels."""

import torch

from cann_bench.conv_common import conv_act


def fused_conv_sigmoid(x, filter, bias, strides, pads, dilations=(1, 1)):
    return conv_act(x, filter, bias, strides, pads, dilations, act="sigmoid", dtype=torch.bfloat16)
