"""Parameter structs of the convolution data-movement instructions, validated on construction.

Field names are the snake_case spellings of Ascend C's ``Dn2NzParams``, ``LoadData3DParamsV2``
and ``IsResetLoad3dConfig``; ranges are the documented register widths (asc-devkit
"LoadData（卷积数据搬运）" and "DataCopy（GMToL1随路转换-DN2NZ搬运）" pages).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ascsim.asc.params import U8, U16, _check_ranges, coerce_fields


class FmatrixMode(IntEnum):
    """Which feature-map register ``set_fmatrix`` writes (Load3D reads the left one)."""

    FMATRIX_LEFT = 0
    FMATRIX_RIGHT = 1


@dataclass(frozen=True)
class Dn2NzParams:
    """GM (DN, i.e. column-major) -> L1 (NZ) on the fly (Ascend 950 only).

    ``dn_num`` matrices of ``n_value`` rows x ``d_value`` columns, read column by column:
    element (n, d) of matrix i is at ``i * src_dn_matrix_stride + d * src_d_value + n`` (elements).
    In L1 the C0-wide strips of columns go ``dst_nz_c0_stride`` 32-byte blocks apart, rows
    ``dst_nz_n_stride`` blocks apart, matrices ``dst_nz_matrix_stride`` elements apart; a strip
    narrower than C0 is zero-filled to 32 bytes. NCHW data read this way (n = pixel, d =
    channel, ``src_d_value`` = H*W) lands as C1HWC0, the layout Load3D reads.
    """

    dn_num: int
    n_value: int
    d_value: int
    src_dn_matrix_stride: int
    src_d_value: int
    dst_nz_c0_stride: int
    dst_nz_n_stride: int
    dst_nz_matrix_stride: int

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"dn_num": (0, 4095), "n_value": (0, 16384),
                             "d_value": (0, 2**21 - 1), "src_dn_matrix_stride": (0, 2**40 - 1),
                             "src_d_value": (1, 2**40 - 1), "dst_nz_c0_stride": (1, 16384),
                             "dst_nz_n_stride": (1, 16384), "dst_nz_matrix_stride": (0, 16384)})


@dataclass(frozen=True)
class LoadData3DParamsV2:
    """Load3D v2 (img2col): a window of the im2col matrix of a C1HWC0 feature map in L1.

    The im2col matrix has one row per output pixel (``ho * Wo + wo``) and one column per
    (c1, kh, kw, c0), i.e. column ``((c1 * filter_h + kh) * filter_w + kw) * C0 + c0``.
    ``m_start_pt``/``m_extension`` and ``k_start_pt``/``k_extension`` pick the rows and columns
    moved. ``pad_list`` is [left, right, top, bottom]; positions in the padding read
    ``pad_value``. ``l1_h``, ``l1_w``, ``pad_list`` and ``pad_value`` apply only when the call's
    :class:`IsResetLoad3dConfig` says so (the default); otherwise ``set_fmatrix`` and
    ``set_load_data_padding_value`` provide them.
    """

    pad_list: tuple = (0, 0, 0, 0)
    l1_h: int = 0
    l1_w: int = 0
    channel_size: int = 0
    k_extension: int = 0
    m_extension: int = 0
    k_start_pt: int = 0
    m_start_pt: int = 0
    stride_w: int = 1
    stride_h: int = 1
    filter_w: int = 1
    filter_h: int = 1
    dilation_filter_w: int = 1
    dilation_filter_h: int = 1
    en_transpose: bool = False
    en_small_k: bool = False
    pad_value: float = 0
    filter_size_w: bool = False
    filter_size_h: bool = False
    f_matrix_ctrl: bool = False

    def __post_init__(self):
        coerce_fields(self)
        pads = tuple(int(p) for p in self.pad_list)
        if len(pads) != 4 or not all(0 <= p <= 255 for p in pads):
            raise ValueError(f"LoadData3DParamsV2.pad_list must be four values in [0, 255] "
                             f"([left, right, top, bottom]), got {list(self.pad_list)}")
        object.__setattr__(self, "pad_list", pads)
        _check_ranges(self, {"l1_h": (0, 32767), "l1_w": (0, 32767), "channel_size": U16,
                             "k_extension": U16, "m_extension": U16, "k_start_pt": U16,
                             "m_start_pt": (0, 32767), "stride_w": (0, 63), "stride_h": (0, 63),
                             "filter_w": U8, "filter_h": U8, "dilation_filter_w": U8,
                             "dilation_filter_h": U8})


@dataclass(frozen=True)
class IsResetLoad3dConfig:
    """Whether a Load3D call sets the feature-map registers (``is_set_fmatrix``) and the pad
    value (``is_set_padding``) from its own parameters, or uses what ``set_fmatrix`` /
    ``set_load_data_padding_value`` left there."""

    is_set_fmatrix: bool = True
    is_set_padding: bool = True


__all__ = ["Dn2NzParams", "FmatrixMode", "IsResetLoad3dConfig", "LoadData3DParamsV2"]
