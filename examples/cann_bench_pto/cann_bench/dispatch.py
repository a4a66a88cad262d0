"""Routing shared by the operators' dispatchers: the inputs' (ndim, dtype) signature, in proto
order, picks the implementation class.

The classes are numbered in the order their signature first appears in the task's cases, as
cann-bench's generated dispatchers number them; for both conv operators c1 is fp16, c2 fp32,
c3 bf16. A class's module, ``<op package>.<class>.<op>``, loads on its first call; its entry
point is ``<op>`` or ``<op>_wrapper``.
"""

import importlib

import torch

#: class sub-package -> the (ndim, dtype) of x, filter and bias.
CONV_CLASSES = (
    ("c1", ((4, torch.float16), (4, torch.float16), (1, torch.float16))),
    ("c2", ((4, torch.float32), (4, torch.float32), (1, torch.float32))),
    ("c3", ((4, torch.bfloat16), (4, torch.bfloat16), (1, torch.bfloat16))),
)


def _entry(package: str, subdir: str, op: str):
    module = importlib.import_module(f"{package}.{subdir}.{op}")
    for name in (op, f"{op}_wrapper"):
        fn = getattr(module, name, None)
        if callable(fn):
            return fn
    raise ImportError(f"{module.__name__} defines neither {op} nor {op}_wrapper")


def route(package: str, op: str, classes, inputs):
    """The entry point of the class matching ``inputs``, or a ValueError naming them."""
    signature = tuple((t.dim(), t.dtype) for t in inputs)
    for subdir, wanted in classes:
        if signature == wanted:
            return _entry(package, subdir, op)
    got = ", ".join(f"{n}-D {d}" for n, d in signature)
    supported = "; ".join(", ".join(f"{n}-D {d}" for n, d in sig) for _, sig in classes)
    raise ValueError(f"{op}: no implementation for inputs ({got}); supported: {supported}")
