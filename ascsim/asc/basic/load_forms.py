"""The other parameter forms of ``load_data`` / ``load_data_with_transpose``.

- ``LoadData2DParamsV2`` (Ascend 950, L1 -> L0A/L0B): the window of ``m_step`` x ``k_step``
  fractals from fractal row ``m_start_position`` and column ``k_start_position`` of an NZ
  matrix in L1 whose K-columns of fractals are ``src_stride`` fractals apart; in the
  destination the K-columns go ``dst_stride`` fractals apart (fractal ``(i, j)`` of the
  window from ``(k_start + j) * src_stride + m_start + i``, to ``j * dst_stride + i``, the
  page's start-address formula). ``if_transpose`` transposes each 16-bit fractal; the 8- and
  32-bit transposes are not modelled (an error says so).
- ``LoadData2dTransposeParamsV2`` (Ascend 950): ``LoadData2dTransposeParams`` with
  ``src_frac_gap``, the fractals between the two source fractals of an 8-/32-bit square.
- ``LoadData3DParamsV2Pro``: Load3D v2 with its fields packed as Ascend C packs them --
  ``ext_config = m_start_pt << 48 | k_start_pt << 32 | m_extension << 16 | k_extension`` and
  ``filter_config = dilation_h << 40 | dilation_w << 32 | filter_h << 24 | filter_w << 16 |
  stride_h << 8 | stride_w``; the feature map and pad value come from ``set_fmatrix`` /
  ``set_load_data_padding_value`` (``f_matrix_ctrl`` picks the right feature map).
- ``LoadData3DParamsV1``: the first Load3D generation (Atlas training / inference series);
  none of the simulated SoCs has it, so a load with it is an error naming the SoC, as the
  compiler would reject it there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ascsim.asc.basic import cube as _cube
from ascsim.asc.basic import img2col as _img2col
from ascsim.asc.context import current_core, user_location
from ascsim.asc.img2col_params import IsResetLoad3dConfig, LoadData3DParamsV2
from ascsim.asc.params import U8, U16, _check_ranges, coerce_fields
from ascsim.isa import KernelError

FRACTAL_BYTES = _cube.FRACTAL_BYTES


@dataclass(frozen=True)
class LoadData2DParamsV2:
    """``LoadData2DParamsV2(m_start_position=0, k_start_position=0, m_step=0, k_step=0,
    src_stride=0, dst_stride=0, if_transpose=False, sid=0)`` (see the module docstring)."""

    m_start_position: int = 0
    k_start_position: int = 0
    m_step: int = 0
    k_step: int = 0
    src_stride: int = 0
    dst_stride: int = 0
    if_transpose: bool = False
    sid: int = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"m_start_position": U16, "k_start_position": U16, "m_step": U8,
                             "k_step": U8, "src_stride": U16, "dst_stride": U16, "sid": U8})


def load_2d_v2(dst, src, p: LoadData2DParamsV2, loc) -> None:
    op = "load_data(LoadData2DParamsV2)"
    core = current_core()
    if not core.soc.load2d_v2:
        raise KernelError(f"{op}: {core.soc.name} has no LoadData 2D v2 (an Ascend 950 form); "
                          "use LoadData2DParams", loc)
    _cube._require(src, ("L1",), "the source", op, loc)
    _cube._require(dst, ("L0A", "L0B"), "the destination", op, loc)
    _cube._same_size(op, dst, src, loc)
    size = dst.dtype.sizeof()
    if p.if_transpose and size != 2:
        raise KernelError(f"{op}: if_transpose is modelled for 16-bit types only", loc)
    if p.m_step == 0 or p.k_step == 0:  # a documented NOP
        core.call_overhead()
        return
    src_idx, dst_idx = _load_2d_v2_indices(
        FRACTAL_BYTES // size, bool(p.if_transpose), p.m_step, p.k_step, p.m_start_position,
        p.k_start_position, p.src_stride, p.dst_stride)
    _cube.indexed_copy("load_data_v2", dst, src, src_idx, dst_idx,
                       p.m_step * p.k_step * FRACTAL_BYTES, p.k_step, loc)


@lru_cache(maxsize=1024)
def _load_2d_v2_indices(per: int, transpose: bool, m_step: int, k_step: int, m_start: int,
                        k_start: int, src_stride: int, dst_stride: int):
    """(source, destination) element indices of a LoadData2DV2, as read-only arrays shared by
    every load of the same parameters: a cube loop issues the same few loads over and over,
    and each record keeps its indices until the launch ends."""
    within = np.arange(per)
    if transpose:
        within = within.reshape(16, 16).T.reshape(-1)
    i = np.arange(m_step)[None, :, None]
    j = np.arange(k_step)[:, None, None]
    src_frac = (k_start + j) * src_stride + m_start + i
    dst_frac = j * dst_stride + i
    src_idx = src_frac * per + within
    src_idx.flags.writeable = False
    dst_idx = np.broadcast_to(dst_frac * per + np.arange(per), src_idx.shape)
    return src_idx, dst_idx


@dataclass(frozen=True)
class LoadData2dTransposeParamsV2:
    """``LoadData2dTransposeParamsV2(start_index=0, repeat_times=0, src_stride=0, dst_gap=0,
    dst_frac_gap=0, src_frac_gap=0, addr_mode=0)``: ``LoadData2dTransposeParams`` plus
    ``src_frac_gap``."""

    start_index: int = 0
    repeat_times: int = 0
    src_stride: int = 0
    dst_gap: int = 0
    dst_frac_gap: int = 0
    src_frac_gap: int = 0
    addr_mode: int = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"start_index": U16, "repeat_times": U8, "src_stride": U16,
                             "dst_gap": U16, "dst_frac_gap": U16, "src_frac_gap": U16,
                             "addr_mode": U8})


def load_transposed_v2(dst, src, p: LoadData2dTransposeParamsV2, loc) -> None:
    op = "load_data_with_transpose(LoadData2dTransposeParamsV2)"
    core = current_core()
    if not core.soc.load2d_v2:
        raise KernelError(f"{op}: {core.soc.name} takes LoadData2dTransposeParams (the V2 "
                          "form is the Ascend 950's)", loc)
    if p.repeat_times == 0:  # nothing to move
        core.call_overhead()
        return
    _cube._load_transposed(dst, src, p, loc)


def load_data_with_transpose(dst, src, *args, **kwargs) -> None:
    """``load_data_with_transpose(dst, src, params)`` with either transpose parameter form."""
    params = kwargs.get("params", kwargs.get("load_data_params"))
    if params is None:
        params = next((a for a in args if isinstance(a, LoadData2dTransposeParamsV2)), None)
    if isinstance(params, LoadData2dTransposeParamsV2):
        load_transposed_v2(dst, src, params, user_location())
        return
    _cube.load_data_with_transpose(dst, src, *args, **kwargs)


@dataclass(frozen=True)
class LoadData3DParamsV2Pro:
    """``LoadData3DParamsV2Pro(channel_size=0, en_transpose=False, en_small_k=False,
    filter_size_w=False, filter_size_h=False, f_matrix_ctrl=False, ext_config=0,
    filter_config=0x10101010101)`` (see the module docstring)."""

    channel_size: int = 0
    en_transpose: bool = False
    en_small_k: bool = False
    filter_size_w: bool = False
    filter_size_h: bool = False
    f_matrix_ctrl: bool = False
    ext_config: int = 0
    filter_config: int = 0x10101010101

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"channel_size": U16, "ext_config": (0, 2**64 - 1),
                             "filter_config": (0, 2**64 - 1)})

    def unpacked(self) -> LoadData3DParamsV2:
        """The same load as a LoadData3DParamsV2 (its feature map from the registers)."""
        ext, flt = self.ext_config, self.filter_config

        def field(word, shift, bits):
            return (word >> shift) & ((1 << bits) - 1)

        return LoadData3DParamsV2(
            channel_size=self.channel_size, k_extension=field(ext, 0, 16),
            m_extension=field(ext, 16, 16), k_start_pt=field(ext, 32, 16),
            m_start_pt=field(ext, 48, 16), stride_w=field(flt, 0, 8), stride_h=field(flt, 8, 8),
            filter_w=field(flt, 16, 8), filter_h=field(flt, 24, 8),
            dilation_filter_w=field(flt, 32, 8), dilation_filter_h=field(flt, 40, 8),
            en_transpose=self.en_transpose, en_small_k=self.en_small_k,
            filter_size_w=self.filter_size_w, filter_size_h=self.filter_size_h,
            f_matrix_ctrl=self.f_matrix_ctrl)


def load_3d_v2_pro(dst, src, p: LoadData3DParamsV2Pro, loc) -> None:
    _img2col._load3d(dst, src, p.unpacked(), IsResetLoad3dConfig(False, False), loc)


@dataclass(frozen=True)
class LoadData3DParamsV1:
    """``LoadData3DParamsV1(pad_list=(0, 0, 0, 0), l1_h=1, l1_w=1, c1_index=0,
    fetch_filter_w=0, fetch_filter_h=0, left_top_w=0, left_top_h=0, stride_w=1, stride_h=1,
    filter_w=1, filter_h=1, dilation_filter_w=1, dilation_filter_h=1, jump_stride=1,
    repeat_mode=0, repeat_time=1, c_size=0, pad_value=0)``: Load3D v1's fields, validated
    (see the module docstring for where it runs)."""

    pad_list: tuple = (0, 0, 0, 0)
    l1_h: int = 1
    l1_w: int = 1
    c1_index: int = 0
    fetch_filter_w: int = 0
    fetch_filter_h: int = 0
    left_top_w: int = 0
    left_top_h: int = 0
    stride_w: int = 1
    stride_h: int = 1
    filter_w: int = 1
    filter_h: int = 1
    dilation_filter_w: int = 1
    dilation_filter_h: int = 1
    jump_stride: int = 1
    repeat_mode: int = 0
    repeat_time: int = 1
    c_size: int = 0
    pad_value: float = 0

    def __post_init__(self):
        coerce_fields(self)
        pads = tuple(int(v) for v in self.pad_list)
        if len(pads) != 4 or not all(0 <= v <= 255 for v in pads):
            raise ValueError("LoadData3DParamsV1.pad_list must be four values in [0, 255]")
        object.__setattr__(self, "pad_list", pads)
        _check_ranges(self, {"l1_h": U16, "l1_w": U16, "c1_index": (0, 4095),
                             "fetch_filter_w": U8, "fetch_filter_h": U8,
                             "left_top_w": (-32768, 32767), "left_top_h": (-32768, 32767),
                             "stride_w": (1, 63), "stride_h": (1, 63), "filter_w": (1, 255),
                             "filter_h": (1, 255), "dilation_filter_w": (1, 255),
                             "dilation_filter_h": (1, 255), "jump_stride": (1, 127),
                             "repeat_mode": (0, 1), "repeat_time": (1, 255), "c_size": (0, 1)})


def load_3d_v1(dst, src, p: LoadData3DParamsV1, loc) -> None:
    core = current_core()
    raise KernelError(f"load_data(LoadData3DParamsV1): {core.soc.name} has Load3D v2 only (v1 "
                      "is the Atlas training / inference series' form); use "
                      "LoadData3DParamsV2 or LoadData3DParamsV2Pro", loc)


#: Parameter type -> the load it selects (``load_data`` dispatches on this table).
LOAD_FORMS = {LoadData2DParamsV2: load_2d_v2, LoadData3DParamsV2Pro: load_3d_v2_pro,
              LoadData3DParamsV1: load_3d_v1, LoadData2dTransposeParamsV2: load_transposed_v2}


def load_data(dst, src, *args, **kwargs) -> None:
    """``load_data(dst, src, params[, config])`` for every parameter form."""
    params = kwargs.get("params", kwargs.get("load_data_params"))
    if params is None:
        params = next((a for a in args if type(a) in LOAD_FORMS), None)
    handler = LOAD_FORMS.get(type(params))
    if handler is None:
        _img2col.load_data(dst, src, *args, **kwargs)
        return
    handler(dst, src, params, user_location())


__all__ = ["LoadData2DParamsV2", "LoadData2dTransposeParamsV2", "LoadData3DParamsV1",
           "LoadData3DParamsV2Pro", "load_data", "load_data_with_transpose"]
