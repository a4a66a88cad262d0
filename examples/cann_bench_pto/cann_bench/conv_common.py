"""The host side shared by the classes: check the call, allocate, launch the kernels.

The wrapper computes nothing with torch: it reads the inputs' metadata, allocates the output,
the prepared-input buffer (zeros; the kernel fills its interior), a row of ones (the bias
step's B) and, in the semi design, the fp32 workspace, and launches the PyPTO-Pro kernels of
``cann_bench.conv_kernels``. Kernels are built once per geometry and design and reused (only
the compiled kernels are kept, never a result).

The design is chosen per call by the environment variable ``CANN_BENCH_CONV_DESIGN``:
``semi`` (default: conv kernel + activation kernel through an fp32 workspace) or ``fused``
(one kernel, the accumulator moved on chip into the vector cores).
"""

import os

import torch
from pypto_pro.runtime import get_platform_info

from cann_bench.conv_kernels import build_act, build_conv
from cann_bench.conv_plan import ConvGeometry, ConvPlan

#: The environment variable naming the design, and the designs it may name.
DESIGN_VAR = "CANN_BENCH_CONV_DESIGN"
DESIGNS = ("semi", "fused")

_KERNELS: dict = {}


def design() -> str:
    """The design named by ``CANN_BENCH_CONV_DESIGN`` (``semi`` when unset)."""
    value = os.environ.get(DESIGN_VAR, "semi").strip().lower() or "semi"
    if value not in DESIGNS:
        raise ValueError(f"{DESIGN_VAR}={value!r}: expected one of {', '.join(DESIGNS)}")
    return value

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


def _kernels(plan: ConvPlan, act: str, vectors: int):
    key = (plan, act, vectors)
    if key not in _KERNELS:
        conv = build_conv(plan, act)
        _KERNELS[key] = (conv, None if plan.fused else build_act(plan, act, vectors))
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
    info = get_platform_info()
    cubes, vectors = info.cube_core_num, info.vector_core_num
    plan = ConvPlan(g, fused=design() == "fused", cores=cubes, act=act)
    (conv, blocks), act_k = _kernels(plan, act, vectors)
    device = x.device
    xs = torch.zeros(plan.xs_elems, dtype=dtype, device=device) if plan.prepared else x
    ones = torch.ones(1, plan.tp, dtype=dtype, device=device)
    y = torch.empty(g.n, g.cout, g.ho, g.wo, dtype=dtype, device=device)
    if plan.fused:
        conv[None, min(blocks, cubes)](x, xs, filter, bias, ones, y)
        return y
    ws = torch.empty(g.n * g.cout, plan.pixels, dtype=torch.float32, device=device)
    conv[None, min(blocks, cubes)](x, xs, filter, bias, ones, ws)
    kernel, tasks = act_k
    kernel[None, min(tasks, vectors)](ws, y)
    return y
