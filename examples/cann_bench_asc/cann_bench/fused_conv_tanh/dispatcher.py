"""Route a call to the implementation class of its inputs' (ndim, dtype) signature.

The classes are numbered in the order their signature first appears in the task's cases, as
cann-bench's generated dispatchers number them: c1 fp16, c2 fp32, c3 bf16. A class's module
loads on its first call.
"""

import importlib

import torch

OP = "fused_conv_tanh"
#: class sub-package -> the (ndim, dtype) of x, filter and bias.
CLASSES = (
    ("c1", ((4, torch.float16), (4, torch.float16), (1, torch.float16))),
    ("c2", ((4, torch.float32), (4, torch.float32), (1, torch.float32))),
    ("c3", ((4, torch.bfloat16), (4, torch.bfloat16), (1, torch.bfloat16))),
)


def _entry(subdir: str):
    module = importlib.import_module(f"{__package__}.{subdir}.{OP}")
    for name in (OP, f"{OP}_wrapper"):
        fn = getattr(module, name, None)
        if callable(fn):
            return fn
    raise ImportError(f"{module.__name__} defines neither {OP} nor {OP}_wrapper")


def fused_conv_tanh(x, filter, bias, strides, pads, dilations=(1, 1)):
    """tanh(conv2d(x, filter, strides, pads [top, bottom, left, right], dilations) + bias)."""
    signature = tuple((t.dim(), t.dtype) for t in (x, filter, bias))
    for subdir, wanted in CLASSES:
        if signature == wanted:
            return _entry(subdir)(x, filter, bias, strides, pads, dilations)
    got = ", ".join(f"{n}-D {d}" for n, d in signature)
    raise ValueError(f"{OP}: no implementation for inputs ({got}); supported: 4-D x and "
                     "filter, 1-D bias, all float16, float32 or bfloat16")
