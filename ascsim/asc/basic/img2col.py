"""Convolution data movement: Load3D (img2col) L1 -> L0A/L0B, its feature-map registers, the
DN2NZ form of GM -> L1 ``data_copy`` and the vector ``gather``.

* ``set_fmatrix`` / ``set_load_data_padding_value`` write per-core registers that a Load3D call
  uses when its :class:`IsResetLoad3dConfig` says so (scalar work only).
* ``load_data(dst, src, LoadData3DParamsV2)`` expands a C1HWC0 feature map in L1 into a window
  of its im2col matrix (rows = output pixels, columns = (c1, kh, kw, c0)) and writes it in the
  destination's fractal layout (L0A: ZZ on 2201, NZ on 3510; L0B: the auto-transposed ZN form,
  16-bit types). Padding positions read the pad value. One MTE1 instruction; the data moves in
  one numpy gather. Other ``load_data`` forms go to :mod:`ascsim.asc.basic.cube`.
* ``data_copy(dst_l1, src_gm, Dn2NzParams)``: column-major GM data -> NZ in L1, Ascend 950
  only (the 2201 MTE2 has ND2NZ but no DN2NZ). NCHW feature maps and OIHW filters both reach
  L1 in the layouts Load3D and the L0B weights need with one such copy.
* ``gather(dst, src, src_offset, src_base_addr, count)``: ``dst[i]`` = the ``src`` element at
  byte ``src_base_addr + src_offset[i]`` (uint32 offsets in UB). Used on 910B for the layout
  changes 2201 has no DMA form for. Priced like VNCHWCONV (128 B/cycle), the only permuting
  vector instruction of the cost table.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

from ascsim.asc.basic import cube as _cube
from ascsim.asc.basic import data_copy as _dc
from ascsim.asc.basic.core_config import core_registers
from ascsim.asc.basic.mask import note_own_mask
from ascsim.asc.context import current_core, user_location
from ascsim.asc.img2col_params import (
    Dn2NzParams,
    FmatrixMode,
    IsResetLoad3dConfig,
    LoadData3DParamsV2,
)
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.isa import (
    REPEAT_BYTES,
    IndexedCopy,
    KernelError,
    ScalarOps,
    VectorGather,
    check_repeat,
    mask_positions,
    region_of,
    repeat_indices,
)
from ascsim.sim import fractal


def _registers(core) -> dict:
    """Per-core Load3D registers (feature map per FmatrixMode, pad value)."""
    return core.launch.shared.setdefault(("load3d_registers", core.core_id), {
        FmatrixMode.FMATRIX_LEFT: (0, 0, (0, 0, 0, 0)),
        FmatrixMode.FMATRIX_RIGHT: (0, 0, (0, 0, 0, 0)), "pad": 0})


def _require_aic(core, op: str, loc) -> None:
    if core.kind != "AIC":
        raise KernelError(f"{op} configures the cube's Load3D unit: call it on the AIC", loc)


def set_fmatrix(l1_h, l1_w, pad_list, fmatrix_mode=FmatrixMode.FMATRIX_LEFT) -> None:
    """Describe the feature map in L1 (height, width, [left, right, top, bottom] padding)."""
    loc = user_location()
    core = current_core()
    _require_aic(core, "set_fmatrix", loc)
    pads = tuple(int(p) for p in pad_list)
    if len(pads) != 4 or not all(0 <= p <= 255 for p in pads):
        raise KernelError(f"set_fmatrix: pad_list must be four values in [0, 255], got "
                          f"{list(pad_list)}", loc)
    h, w = int(l1_h), int(l1_w)
    if not (0 <= h <= 32767 and 0 <= w <= 32767):
        raise KernelError(f"set_fmatrix: l1_h, l1_w must be in [0, 32767], got {h}, {w}", loc)
    core.call_overhead()
    _registers(core)[FmatrixMode(int(fmatrix_mode))] = (h, w, pads)


def set_load_data_padding_value(pad_value) -> None:
    """The value Load3D writes for padding positions when its call does not set one."""
    loc = user_location()
    core = current_core()
    _require_aic(core, "set_load_data_padding_value", loc)
    core.call_overhead()
    _registers(core)["pad"] = pad_value.item() if hasattr(pad_value, "item") else pad_value


# ------------------------------------------------------------------------------ Load3D
def load_data(dst, src, *args, **kwargs) -> None:
    """``load_data(dst, src, params[, config])``: Load3D for ``LoadData3DParamsV2``, else the
    2-D forms of :func:`ascsim.asc.basic.cube.load_data`."""
    params = kwargs.get("params", kwargs.get("load_data_params"))
    if params is None:
        params = next((a for a in args if isinstance(a, LoadData3DParamsV2)), None)
    if not isinstance(params, LoadData3DParamsV2):
        _cube.load_data(dst, src, *args, **kwargs)
        return
    config = kwargs.get("config")
    if config is None:
        config = next((a for a in args if isinstance(a, IsResetLoad3dConfig)),
                      IsResetLoad3dConfig())
    _load3d(dst, src, params, config, user_location())


def _geometry(p: LoadData3DParamsV2, regs: dict, config: IsResetLoad3dConfig):
    if config.is_set_fmatrix:
        h, w, pads = p.l1_h, p.l1_w, p.pad_list
    else:
        h, w, pads = regs[FmatrixMode.FMATRIX_RIGHT if p.f_matrix_ctrl
                          else FmatrixMode.FMATRIX_LEFT]
    pad_value = p.pad_value if config.is_set_padding else regs["pad"]
    return h, w, pads, pad_value


@lru_cache(maxsize=256)
def im2col_indices(h, w, pads, channel_size, c0, p: LoadData3DParamsV2):
    """(element index into the C1HWC0 feature map, valid mask) for the [m_extension,
    k_extension] window of the im2col matrix; also the output size (ho, wo). Cached: kernels
    repeat the same geometry tile after tile (the arrays are never written)."""
    pl, pr, pt, pb = pads
    fh = p.filter_h + (256 if p.filter_size_h else 0)
    fw = p.filter_w + (256 if p.filter_size_w else 0)
    span_h = (fh - 1) * p.dilation_filter_h + 1
    span_w = (fw - 1) * p.dilation_filter_w + 1
    ho = (h + pt + pb - span_h) // p.stride_h + 1
    wo = (w + pl + pr - span_w) // p.stride_w + 1
    m = p.m_start_pt + np.arange(p.m_extension)
    k = p.k_start_pt + np.arange(p.k_extension)
    oh, ow = (m // max(wo, 1))[:, None], (m % max(wo, 1))[:, None]
    k1, ci = k // c0, k % c0
    c1, pos = k1 // (fh * fw), k1 % (fh * fw)
    kh, kw = pos // fw, pos % fw
    hi = oh * p.stride_h + (kh * p.dilation_filter_h)[None, :] - pt
    wi = ow * p.stride_w + (kw * p.dilation_filter_w)[None, :] - pl
    c1_count = channel_size // c0
    valid = ((hi >= 0) & (hi < h) & (wi >= 0) & (wi < w) & (m < ho * wo)[:, None]
             & (c1 < c1_count)[None, :])
    idx = np.where(valid, ((c1[None, :] * h + hi) * w + wi) * c0 + ci[None, :], 0)
    span = (int(idx[valid].min()), int(idx[valid].max()) + 1) if valid.any() else None
    return idx, valid, (ho, wo), span


_LAYOUTS = {"ZN": fractal.nd_to_zn, "NZ": fractal.nd_to_nz, "ZZ": fractal.nd_to_zz}


@lru_cache(maxsize=256)
def _load3d_map(h, w, pads, channel_size, c0, p: LoadData3DParamsV2, layout: str,
                repeat: tuple = (1, 0, 0)):
    """The Load3D window straight in destination order: (source element index per destination
    element, -1 where the element takes the pad value; (ho, wo)). The fractal layout is applied
    to the index map once, so a load is one gather. ``repeat`` = (times, stride, mode) of
    set_load_data_repeat: the windows of the repeats, each ``stride`` further along M (mode 0,
    16 rows a unit) or K (mode 1, one C0 group a unit), stacked into one matrix."""
    times, stride, mode = repeat
    rows = -(-p.m_extension // 16) * 16
    cols = -(-p.k_extension // c0) * c0
    windows = []
    for r in range(max(times, 1)):
        q = (replace(p, m_start_pt=p.m_start_pt + r * stride * 16) if mode == 0 else
             replace(p, k_start_pt=p.k_start_pt + r * stride * c0))
        idx, valid, out_hw, _ = im2col_indices(h, w, pads, channel_size, c0, q)
        window = np.full((rows, cols), -1, dtype=np.int64)
        window[: p.m_extension, : p.k_extension] = np.where(valid, idx, -1)
        windows.append(window)
    whole = np.concatenate(windows, axis=0 if mode == 0 else 1)
    flat = _LAYOUTS[layout](whole, c0, fill=-1).reshape(-1).astype(np.intp)
    return flat, out_hw


def _wrap_at_boundary(src, src_idx: np.ndarray, boundary: int):
    """Load3D source indices with L1 addresses at or past ``boundary`` wrapped to the start
    of L1: (the source region -- all of L1 when an index wraps -- and the indices into it)."""
    region = src.region()
    size = region.dtype.itemsize
    valid = src_idx >= 0
    addr = region.offset + src_idx * size
    if not boundary or not (valid & (addr >= boundary)).any():
        return region, src_idx
    wrapped = np.where(valid, (addr % boundary) // size, -1)
    whole = region_of((region.mem, 0, region.mem.capacity // size, region.dtype, None, None,
                       None))
    return whole, wrapped


def _load3d(dst, src, p: LoadData3DParamsV2, config: IsResetLoad3dConfig, loc) -> None:
    op = "load_data(LoadData3DParamsV2)"
    _cube._require(src, ("L1",), "the source (a C1HWC0 feature map)", op, loc)
    _cube._require(dst, ("L0A", "L0B"), "the destination", op, loc)
    core = current_core()
    if not core.soc.load3d:
        raise KernelError(f"{op}: {core.soc.name} has no Load3D v2", loc)
    _cube._same_size(op, dst, src, loc)
    h, w, pads, pad_value = _geometry(p, _registers(core), config)
    size = dst.dtype.sizeof()
    c0 = 32 // size
    to_l0b = dst.mem.name == "L0B"
    if p.en_transpose and not to_l0b:
        raise KernelError(f"{op}: en_transpose into L0A is not modelled", loc)
    if to_l0b and size != 2:
        raise KernelError(f"{op}: the L1->L0B Load3D is modelled for 16-bit types only", loc)
    if p.en_small_k:
        raise KernelError(f"{op}: en_small_k is not supported by current products", loc)
    if p.channel_size % c0:
        raise KernelError(f"{op}: channel_size {p.channel_size} is not a multiple of C0={c0}; "
                          "the small-channel (4/8) modes are not modelled: pad the feature "
                          "map's channels to C0 in L1", loc)
    if p.k_start_pt % c0:
        raise KernelError(f"{op}: k_start_pt {p.k_start_pt} must be a multiple of C0={c0}", loc)
    empty = 0 in (h, w, p.channel_size, p.k_extension, p.m_extension) or \
        (p.filter_w == 0 and not p.filter_size_w) or (p.filter_h == 0 and not p.filter_size_h)
    if empty:  # documented NOP
        core.execute(ScalarOps(1, loc))
        return
    # L0B takes the auto-transposed ZN form (fractals stored [k0][m0]); L0A its arch's layout.
    layout = "ZN" if to_l0b else core.soc.l0a_layout
    config_regs = core_registers(core)
    src_idx, (ho, wo) = _load3d_map(h, w, pads, p.channel_size, c0, p, layout,
                                    config_regs["load_repeat"])
    if ho < 1 or wo < 1:
        raise KernelError(f"{op}: the filter does not fit the {h}x{w} feature map with "
                          f"padding {list(pads)} (output {ho}x{wo})", loc)
    src_region, src_idx = _wrap_at_boundary(src, src_idx, config_regs["l1_boundary"])
    core.execute(IndexedCopy(src_region, dst.region(), src_idx, None, src_idx.size * size, 1,
                             loc, "load3d",
                             fill=np.asarray(pad_value).astype(src.dtype.np_dtype)))


# ------------------------------------------------------------------------------ DN2NZ
@lru_cache(maxsize=256)
def _dn2nz_indices(p: Dn2NzParams, c0: int):
    """(shape, valid mask, source and destination element indices) of a DN2NZ copy."""
    strips = -(-p.d_value // c0)
    i = np.arange(p.dn_num)[:, None, None, None]
    n = np.arange(p.n_value)[None, :, None, None]
    s = np.arange(strips)[None, None, :, None]
    d = s * c0 + np.arange(c0)
    shape = (p.dn_num, p.n_value, strips, c0)
    valid = np.broadcast_to(d < p.d_value, shape)
    src_idx = np.broadcast_to(i * p.src_dn_matrix_stride + d * p.src_d_value + n, shape)
    dst_idx = np.broadcast_to(i * p.dst_nz_matrix_stride + s * p.dst_nz_c0_stride * c0
                              + n * p.dst_nz_n_stride * c0 + np.arange(c0), shape)
    return shape, valid, src_idx[valid], dst_idx.reshape(-1)


def dn2nz_copy(dst, src, params: Dn2NzParams, loc) -> None:
    """``data_copy(dst_l1, src_gm, Dn2NzParams)``."""
    op = "data_copy(Dn2NzParams)"
    if not isinstance(src, GlobalTensor):
        raise KernelError(f"{op} copies from GM: the source must be a GlobalTensor", loc)
    core = current_core()
    if not core.soc.mte2_dn2nz:
        raise KernelError(f"{op}: {core.soc.name} has no DN2NZ conversion on its GM->L1 path "
                          "(Ascend 950 only); bring column-major data into shape another way",
                          loc)
    _cube._require(dst, ("L1",), "the destination", op, loc)
    _cube._same_size(op, dst, src, loc)
    p = params
    c0 = fractal.c0_of(src.dtype.np_dtype)
    shape, valid, src_idx, dst_idx = _dn2nz_indices(p, c0)
    full = np.full(shape, -1, dtype=np.int64)
    full[valid] = src_idx
    # Each column of a DN matrix is one contiguous GM run: dn_num * d_value bursts, which
    # the L2 model sees as rows of n_value elements.
    runs = (np.arange(p.dn_num)[:, None] * p.src_dn_matrix_stride
            + np.arange(p.d_value)[None, :] * p.src_d_value)
    _cube.indexed_copy("data_copy_dn2nz", dst, src, full, dst_idx.reshape(shape),
                       int(dst_idx.size) * dst.dtype.sizeof(), p.dn_num * p.d_value, loc,
                       gm_rows=(runs, p.n_value))


_dc.EXTRA_FORMS[Dn2NzParams] = dn2nz_copy


# ------------------------------------------------------------------------------ gather
#: The mask/repeat form's trailing arguments, in order.
_GATHER_REPEAT_ARGS = ("mask", "repeat_times", "dst_rep_stride")


def gather(dst, src, src_offset, src_base=None, *args, src_base_addr=None, **kwargs) -> None:
    """``gather(dst, src, src_offset, src_base, count)``: dst[i] = src at byte ``src_base +
    src_offset[i]`` (offsets: uint32 LocalTensor, byte units); or ``gather(dst, src,
    src_offset, src_base, mask, repeat_times, dst_rep_stride)``: lane ``p`` of repeat ``r``
    (the mask's enabled positions) takes its offset from ``src_offset[r * per_repeat + p]``
    and writes dst element ``r * dst_rep_stride * per_block + p`` (repeats
    ``dst_rep_stride`` 32-byte blocks apart). ``src_base_addr`` is the older keyword."""
    loc = user_location()
    for name, t in (("dst", dst), ("src", src), ("src_offset", src_offset)):
        if not isinstance(t, LocalTensor):
            raise KernelError(f"gather: {name} must be a LocalTensor in UB", loc)
        _cube._require(t, ("UB",), name, "gather", loc)
    if dst.dtype != src.dtype:
        raise KernelError(f"gather: dst ({dst.dtype.name}) and src ({src.dtype.name}) types "
                          "must match", loc)
    if src_offset.dtype.name not in ("uint32", "int32"):
        raise KernelError(f"gather: src_offset must hold uint32 byte offsets, got "
                          f"{src_offset.dtype.name}", loc)
    if src_base is None:
        src_base = src_base_addr
    if src_base is None:
        raise KernelError("gather: give src_base (the byte offset added to every offset)", loc)
    rest, kwargs = list(args), dict(kwargs)
    count = kwargs.pop("count", None)
    if count is None and len(rest) == 1 and not kwargs:
        count = rest.pop()
    if count is not None:
        record = VectorGather(dst.region(), src.region(), src_offset.region(), int(src_base),
                              int(count), loc)
    else:
        values = {n: kwargs.pop(n) if n in kwargs else (rest.pop(0) if rest else None)
                  for n in _GATHER_REPEAT_ARGS}
        if None in values.values():
            raise KernelError("gather: give count, or mask, repeat_times and dst_rep_stride",
                              loc)
        size = src.dtype.sizeof()
        per_repeat = REPEAT_BYTES // size
        positions = mask_positions(values["mask"], per_repeat, loc)
        repeats = check_repeat(values["repeat_times"], loc)
        dst_lanes = repeat_indices(positions, repeats, size, 1, int(values["dst_rep_stride"]))
        offset_lanes = (np.arange(repeats)[:, None] * per_repeat + positions).reshape(-1)
        note_own_mask(values["mask"], per_repeat, loc)
        record = VectorGather(dst.region(), src.region(), src_offset.region(), int(src_base),
                              int(dst_lanes.size), loc, dst_lanes=dst_lanes,
                              offset_lanes=offset_lanes, repeats=repeats)
    if rest or kwargs:
        raise KernelError(f"gather: unexpected arguments {rest or sorted(kwargs)}", loc)
    current_core().execute(record)


__all__ = ["Dn2NzParams", "FmatrixMode", "IsResetLoad3dConfig", "LoadData3DParamsV2", "gather",
           "load_data", "set_fmatrix", "set_load_data_padding_value"]
