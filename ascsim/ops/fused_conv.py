"""``fused_conv_tanh`` / ``fused_conv_sigmoid``: y = act(conv2d(x, filter) + bias), computed by
ascsim kernels on the simulated chip.

The host side only validates, dispatches, plans the tiling (integer metadata: the tile sizes
and the index tables of the ``gather`` layout changes), allocates the output and workspaces and
launches kernels; no arithmetic touches the data outside the kernels. Variants (see
docs/ops.md):

* ``semi``: K1 convolution -> fp32 NC1HWC0 workspace; K2 activation + NCHW layout (AIV);
* ``fused``: one MIX kernel, tiles handed from the AIC to its AIVs with cross-core flags, by
  FixPipe L0C->UB on 950 and through a GM workspace on 910B;
* ``unfused``: convolution writing the output dtype, then the activation kernel (casting up);
* ``auto``: the variant with the least simulated device time for this shape and SoC (each
  variant simulated once per (shape, SoC); the choice is cached, never results).

``tiling={"nt": 64, "pixels": 128}`` fixes tiling knobs (``conv_plan.TILING_KNOBS``). Without
it, a shape tuned by ``ascsim bench <op> --tune`` (``ascsim/tune/data``) runs on its tuned
knobs, and ``auto`` runs its tuned fastest variant; ``info.notes`` says so.
"""

from __future__ import annotations

import numpy as np
import torch

from ascsim.asc.runtime.config import KernelType
from ascsim.ops.conv_plan import TILING_KNOBS, ConvPlan, plan_conv
from ascsim.ops.conv_spec import ConvSpec, conv_spec_from
from ascsim.ops.dispatch import dispatch
from ascsim.ops.kernels.conv_vector import (
    PRE_ELEMS,
    conv_kernel,
    epilogue_kernel,
    fused_kernel,
    pre_layout,
)
from ascsim.ops.result import OpInfo
from ascsim.session import SESSION
from ascsim.sim.l2_carry import carried_l2

VARIANTS = ("semi", "fused", "unfused")
_TORCH_NAMES = {torch.float16: "float16", torch.float32: "float32", torch.bfloat16: "bfloat16"}
_TORCH_DTYPES = {v: k for k, v in _TORCH_NAMES.items()}
_AUTO_TIMES: dict[tuple, dict[str, float]] = {}  # (spec, soc, act) -> variant -> device µs


def _dtype_name(t) -> str:
    if isinstance(t, torch.Tensor):
        return _TORCH_NAMES.get(t.dtype, str(t.dtype).replace("torch.", ""))
    if isinstance(t, np.ndarray):
        return np.dtype(t.dtype).name
    raise ValueError(f"inputs must be torch tensors or numpy arrays, got {type(t).__name__}")


def _tensor(t) -> torch.Tensor:
    """A torch view of an input (numpy arrays are wrapped, never converted)."""
    if isinstance(t, torch.Tensor):
        if t.device.type != "cpu":
            raise ValueError(f"inputs must be CPU tensors, got one on {t.device}")
        return t
    if t.dtype.name == "bfloat16":
        return torch.from_numpy(np.ascontiguousarray(t).view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(t))


# ------------------------------------------------------------------------------ index tables
def _epilogue_table(out_dtype: str, pixels: int) -> np.ndarray:
    """Byte offsets that transpose [pixels][16 channels] into [16][pixels] (gather)."""
    size = 4 if out_dtype == "float32" else 2
    c, p = np.meshgrid(np.arange(16), np.arange(pixels), indexing="ij")
    return ((p * 16 + c) * size).astype(np.uint32).reshape(-1)


def _prepass_tables(plan: ConvPlan) -> np.ndarray:
    """Gather offsets of the 910B pre-pass: NCHW rows -> NHWC, OIHW -> OHWI (full and tail
    channel block), each PRE_ELEMS long; padding channels read the zero block."""
    size = 4 if plan.dtype == "float32" else 2
    xq, x_pitch, wr, w_pitch, _, zero_at = pre_layout(plan)
    out = np.full((3, PRE_ELEMS), zero_at * size, dtype=np.int64)
    q, c = np.meshgrid(np.arange(xq), np.arange(plan.cp), indexing="ij")
    x_tab = np.where(c < plan.cin, (c * x_pitch + q) * size, zero_at * size).reshape(-1)
    out[0, : x_tab.size] = x_tab
    r, pos, ch = np.meshgrid(np.arange(wr), np.arange(plan.kk), np.arange(plan.c0),
                             indexing="ij")
    for row, valid in ((1, plan.c0), (2, plan.cin - (plan.c1 - 1) * plan.c0)):
        w_tab = np.where(ch < valid, (r * w_pitch + ch * plan.kk + pos) * size, zero_at * size)
        out[row, : w_tab.size] = w_tab.reshape(-1)
    return out.astype(np.uint32).reshape(-1)


def _weight_tables(plan: ConvPlan) -> np.ndarray:
    """Gather offsets of the 950 filter pre-pass (``weights_prepass``): [kh, kw][rows][C0]
    from its unit's OIHW rows (full and tail channel block), each PRE_ELEMS long; padding
    channels read the zero block."""
    size = 4 if plan.dtype == "float32" else 2
    wr, w_pitch, _, zero_at = plan.prepass_layout
    out = np.full((2, PRE_ELEMS), zero_at * size, dtype=np.int64)
    pos, r, ch = np.meshgrid(np.arange(plan.kk), np.arange(wr), np.arange(plan.c0),
                             indexing="ij")
    for row, valid in ((0, plan.c0), (1, plan.cin - (plan.c1 - 1) * plan.c0)):
        tab = np.where(ch < valid, (r * w_pitch + ch * plan.kk + pos) * size, zero_at * size)
        out[row, : tab.size] = tab.reshape(-1)
    return out.astype(np.uint32).reshape(-1)


# ------------------------------------------------------------------------------ variants
class _Call:
    """One operator call: inputs, plan, buffers and the kernel launches of each variant."""

    def __init__(self, x, w, b, spec: ConvSpec, plan: ConvPlan, soc, act: str):
        self.x, self.w, self.b = x, w, b
        self.spec, self.plan, self.soc, self.act = spec, plan, soc, act
        self.dtype = _TORCH_DTYPES[spec.dtype]
        # The constant of the bias K block: 16 in a row (950: one DN2NZ burst of a column).
        self.one = torch.ones(16, dtype=self.dtype)
        self.epi_table = _epilogue_table(spec.dtype, plan.epi_pix)
        if plan.w_prepass:  # zeros: the pre-pass leaves the padding rows of a block unset
            self.xt = torch.zeros(1, dtype=self.dtype)
            self.wt = torch.zeros(plan.wt_elems, dtype=self.dtype)
            self.tables = _weight_tables(plan)
            self.pre_bytes = self.wt.numel() * self.wt.element_size()
        elif plan.dn2nz:
            self.xt = self.wt = torch.zeros(1, dtype=self.dtype)
            self.tables = np.zeros(1, dtype=np.uint32)
            self.pre_bytes = 0
        else:
            self.xt = torch.zeros(plan.n * plan.h * plan.w * plan.cp, dtype=self.dtype)
            self.wt = torch.zeros(plan.cout * plan.kk * plan.cp, dtype=self.dtype)
            self.tables = _prepass_tables(plan)
            self.pre_bytes = (self.xt.numel() + self.wt.numel()) * self.xt.element_size()

    def _conv(self, out) -> object:
        p = self.plan
        kind = KernelType.AIC_ONLY if p.dn2nz and not p.w_prepass else KernelType.MIX_AIC_1_2
        return conv_kernel[p.cores](self.x, self.w, self.b, self.one, out, self.xt, self.wt,
                                    self.tables, p, kernel_type=kind)

    def _epilogue(self, src, y) -> object:
        p = self.plan
        return epilogue_kernel[p.epi_cores](src, y, self.epi_table, p, self.act, 0.0)

    def run(self, variant: str, y: torch.Tensor):
        """(kernel reports, workspace bytes, cross-core hand-offs) of ``variant``."""
        p = self.plan
        handoffs = 0 if p.dn2nz and not p.w_prepass else 1  # the pre-pass -> cube barrier
        if variant == "semi":
            ws = torch.empty(p.workspace_elems, dtype=torch.float32)
            reports = (self._conv(ws), self._epilogue(ws, y))
            return reports, ws.numel() * 4 + self.pre_bytes, handoffs
        if variant == "unfused":
            mid = torch.empty(p.workspace_elems, dtype=self.dtype)
            reports = (self._conv(mid), self._epilogue(mid, y))
            return reports, mid.numel() * mid.element_size() + self.pre_bytes, handoffs
        # 950: tiles go L0C -> UB, no workspace; 910B: through the fp32 workspace in GM.
        ws = torch.empty(1 if p.dn2nz else p.workspace_elems, dtype=torch.float32)
        table = _epilogue_table(self.spec.dtype, p.ub_pix) if p.dn2nz else self.epi_table
        report = fused_kernel[p.cores](self.x, self.w, self.b, self.one, ws, y, self.xt,
                                       self.wt, self.tables, table, p, self.act, 0.0,
                                       kernel_type=KernelType.MIX_AIC_1_2)
        ws_bytes = 0 if p.dn2nz else ws.numel() * 4
        return (report,), ws_bytes + self.pre_bytes, handoffs + p.tiles


def shape_key(spec: ConvSpec) -> str:
    """How tuned settings name a problem: every ConvSpec field, ``name=value``."""
    return ",".join(f"{name}={getattr(spec, name)}" for name in spec.__dataclass_fields__)


def _plan(spec: ConvSpec, soc, knobs) -> ConvPlan:
    unknown = sorted(set(knobs) - set(TILING_KNOBS))
    if unknown:
        raise ValueError(f"unknown tiling knobs {unknown}; the knobs are {TILING_KNOBS}")
    return plan_conv(spec, soc, **knobs)


def _run_variant(call: _Call, variant: str, op: str, notes=(), remember: bool = True):
    y = torch.empty(call.spec.out_shape, dtype=call.dtype)
    with carried_l2():  # one operator call: K2 finds in L2 what K1 left there
        reports, ws_bytes, handoffs = call.run(variant, y)
    info = OpInfo(op=op, variant=variant, soc=call.soc.name, reports=tuple(reports),
                  workspace_bytes=ws_bytes, cross_core_handoffs=handoffs, notes=notes)
    if remember:  # only times of the default plan feed ``auto``'s cache
        _AUTO_TIMES.setdefault((call.spec, call.soc.name, call.act), {})[variant] = \
            info.device_time_us
    return y, info


def fused_conv(x, w, b, strides, pads, dilations=(1, 1), *, act: str, op: str,
               variant: str = "auto", soc=None, return_report: bool = False, tiling=None,
               timing_only: bool = False):
    """y = act(conv2d(x, w) + b) on the simulated SoC (see the module docstring);
    ``timing_only``: the kernels are timed, the output holds no result."""
    from ascsim.tune import tuned

    if variant not in (*VARIANTS, "auto"):
        raise ValueError(f"variant {variant!r} is not one of {(*VARIANTS, 'auto')}")
    inputs = (x, w, b)
    names = tuple(_dtype_name(t) for t in inputs)
    dispatch("conv2d_act", tuple((len(t.shape), d) for t, d in zip(inputs, names)))
    spec = conv_spec_from(x.shape, w.shape, b.shape, names[0], strides, pads, dilations)
    with SESSION.using_soc(soc) as soc_spec, SESSION.values(not timing_only):
        entry = None if tiling is not None else tuned.lookup(op, soc_spec.name, shape_key(spec))
        if entry is not None:
            if variant == "auto":
                variant = entry.best
            if variant in entry.variants:
                plan = _plan(spec, soc_spec, entry.variants[variant].knobs)
                call = _Call(_tensor(x), _tensor(w), _tensor(b), spec, plan, soc_spec, act)
                y, info = _run_variant(call, variant, op, (tuned.note(entry, variant),),
                                       remember=False)
                return _output(x, y, names[0], info, return_report)
        plan = _plan(spec, soc_spec, tiling or {})
        call = _Call(_tensor(x), _tensor(w), _tensor(b), spec, plan, soc_spec, act)
        ran = {}
        if variant == "auto" and tiling is None:
            known = _AUTO_TIMES.get((spec, soc_spec.name, act), {})
            for v in VARIANTS:
                if v not in known:
                    ran[v] = _run_variant(call, v, op)
            known = _AUTO_TIMES[(spec, soc_spec.name, act)]
            variant = min(VARIANTS, key=known.__getitem__)
        elif variant == "auto":
            # Fixed knobs: time each variant with them (not cached: the cache is for defaults).
            ran = {v: _run_variant(call, v, op, remember=False) for v in VARIANTS}
            variant = min(VARIANTS, key=lambda v: ran[v][1].device_time_us)
        y, info = ran[variant] if variant in ran else \
            _run_variant(call, variant, op, remember=tiling is None)
    return _output(x, y, names[0], info, return_report)


def _output(x, y, dtype: str, info, return_report: bool):
    if isinstance(x, np.ndarray):
        y = y.view(torch.uint16).numpy().view(x.dtype) if dtype == "bfloat16" else y.numpy()
    return (y, info) if return_report else y


def fused_conv_tanh(x, w, b, strides, pads, dilations=(1, 1), *, variant: str = "auto",
                    soc=None, return_report: bool = False, tiling=None,
                    timing_only: bool = False):
    """tanh(conv2d(x, w, strides, pads [top, bottom, left, right], dilations) + b)."""
    return fused_conv(x, w, b, strides, pads, dilations, act="tanh", op="fused_conv_tanh",
                      variant=variant, soc=soc, return_report=return_report, tiling=tiling,
                      timing_only=timing_only)


def fused_conv_sigmoid(x, w, b, strides, pads, dilations=(1, 1), *, variant: str = "auto",
                       soc=None, return_report: bool = False, tiling=None,
                       timing_only: bool = False):
    """sigmoid(conv2d(x, w, strides, pads [top, bottom, left, right], dilations) + b)."""
    return fused_conv(x, w, b, strides, pads, dilations, act="sigmoid",
                      op="fused_conv_sigmoid", variant=variant, soc=soc,
                      return_report=return_report, tiling=tiling, timing_only=timing_only)
