"""The host side shared by the classes: check the call, then launch the kernels.

The kernels are ascsim's pyasc kernels of the semi-fusion design (``ascsim.ops``): K1, an
implicit-GEMM convolution on the Cube writing an fp32 workspace, and K2, the activation (tanh
or sigmoid) in fp32 on the vector cores writing the NCHW output. The wrapper touches no data:
it checks the arguments' metadata, and the operator allocates the output and workspace and
launches K1 and K2 on the simulated chip the run selected.
"""

import torch

from ascsim.ops.fused_conv import fused_conv


def conv_act(x, filter, bias, strides, pads, dilations, *, act: str, dtype: torch.dtype):
    """act(conv2d(x, filter) + bias) for one class: every input of ``dtype``."""
    for name, t in (("x", x), ("filter", filter), ("bias", bias)):
        if t.dtype != dtype:
            raise ValueError(f"{name} is {t.dtype}, this class takes {dtype}")
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous")
    return fused_conv(x, filter, bias, list(strides), list(pads), list(dilations), act=act,
                      op=f"fused_conv_{act}", variant="semi")
