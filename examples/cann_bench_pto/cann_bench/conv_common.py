"""The host side shared by the classes: check the call, allocate, launch the kernels.

The wrapper computes nothing with torch: it reads the inputs' metadata, allocates the output,
the fp32 workspace, the zero-padded copy of x (when the call pads or K1's
loads need its slack) and a row of ones (the bias
step's B), and launches the PyPTO-Pro kernels of ``cann_bench.conv_kernels``. Kernels are
built once per geometry and reused (only the compiled kernels are kept, never a result).
"""

import torch
from pypto_pro.runtime import get_platform_info

from cann_bench.conv_kernels import TP, ConvGeometry, build_act, build_conv, build_pad

_KERNELS: dict = {}


def _geometry(x, filter, strides, pads, dilations, dtype) -> ConvGeometry:
    if x.dim() != 4 or filter.dim() != 4:
        raise ValueError(f"x and filter must be 4-D (NCHW, OIHW), got {x.dim()}-D and "
                         f"{filter.dim()}-D")
    if len(strides) != 2 or len(pads) != 4 or len(dilations) != 2:
        raise ValueError(f"strides [h, w], pads [top, bottom, left, right], dilations [h, w] "
                         f"expected, got {list(strides)}, {list(pads)}, {list(dilations)}")
    n, cin, h, w = x.shape
    cout, fcin, kh, kw = filter.shape
    if fcin != cin:
        raise ValueError(f"filter has {fcin} input channels, x has {cin} (no groups)")
    g = ConvGeometry(str(dtype).removeprefix("torch."), n, cin, h, w, cout, kh, kw,
                     *[int(v) for v in strides], *[int(v) for v in pads],
                     *[int(v) for v in dilations])
    if g.ho < 1 or g.wo < 1:
        raise ValueError(f"the filter window does not fit the padded input: output "
                         f"{g.ho} x {g.wo}")
    return g


def _kernels(g: ConvGeometry, act: str):
    key = (g, act)
    if key not in _KERNELS:
        _KERNELS[key] = (build_pad(g) if g.padded else None, build_conv(g), build_act(g, act))
    return _KERNELS[key]


def conv_act(x, filter, bias, strides, pads, dilations, *, act: str, dtype: torch.dtype):
    """act(conv2d(x, filter) + bias) for one class: every input of ``dtype``."""
    for name, t in (("x", x), ("filter", filter), ("bias", bias)):
        if t.dtype != dtype:
            raise ValueError(f"{name} is {t.dtype}, this class takes {dtype}")
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous")
    g = _geometry(x, filter, strides, pads, dilations, dtype)
    if bias.dim() != 1 or bias.shape[0] != g.cout:
        raise ValueError(f"bias must be [{g.cout}], got {list(bias.shape)}")
    pad, conv, act_k = _kernels(g, act)
    info = get_platform_info()
    cubes, vectors = info.cube_core_num, info.vector_core_num
    device = x.device
    xp = x
    if pad is not None:
        kernel, tasks = pad
        xp = torch.zeros(g.xp_elems, dtype=dtype, device=device)
        kernel[None, min(tasks, vectors)](x, xp)
    ones = torch.ones(1, TP, dtype=dtype, device=device)
    ws = torch.empty(g.n * g.cout, g.ho * g.wo, dtype=torch.float32, device=device)
    kernel, tasks = conv
    kernel[None, min(tasks, cubes)](xp, filter, bias, ones, ws)
    y = torch.empty(g.n, g.cout, g.ho, g.wo, dtype=dtype, device=device)
    kernel, tasks = act_k
    kernel[None, min(tasks, vectors)](ws, y)
    return y
