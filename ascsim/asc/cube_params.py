"""Parameter structs of the low-level cube API (pyasc-api §3.7), validated on construction.

Positional order and keyword names follow pyasc, so ``Nd2NzParams(1, m, k, 0, k, 128, 1, 0)``
and ``MmadParams(m=.., n=.., k=.., unit_flag=0, cmatrix_source=False, cmatrix_init_val=True)``
both work. Field ranges are the hardware encodings (uint8/uint16 registers), so a value the
instruction cannot hold fails where it is written.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ascsim.asc.enums import CO2Layout, QuantModes
from ascsim.asc.params import U8, U16, U32, _check_ranges, coerce_fields
from ascsim.isa import KernelError

MMAD_DIM = (0, 4095)  # m, n, k of one Mmad (12-bit fields)


@dataclass(frozen=True)
class Nd2NzParams:
    """GM (ND) -> L1 (NZ) conversion on the fly.

    ``nd_num`` matrices of ``n_value`` rows x ``d_value`` columns; source matrices start
    ``src_nd_matrix_stride`` elements apart and their rows ``src_d_value`` elements apart. In L1
    the 32-byte pieces of a row go ``dst_nz_c0_stride`` 32-byte blocks apart (the padded height of
    a C0 strip), consecutive rows ``dst_nz_n_stride`` blocks apart, matrices
    ``dst_nz_matrix_stride`` elements apart. A row's last piece is zero-padded to 32 bytes.
    """

    nd_num: int
    n_value: int
    d_value: int
    src_nd_matrix_stride: int
    src_d_value: int
    dst_nz_c0_stride: int
    dst_nz_n_stride: int
    dst_nz_matrix_stride: int

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, dict.fromkeys([f.name for f in fields(self)], U16))


@dataclass(frozen=True)
class LoadData2DParams:
    """Load2D: ``repeat_times`` 512-byte fractals, the r-th read from fractal
    ``start_index + r * src_stride`` of the source and written ``dst_gap`` fractals after the
    previous one; ``if_transpose`` transposes each (16-bit) fractal on the way."""

    start_index: int = 0
    repeat_times: int = 1
    src_stride: int = 0
    sid: int = 0
    dst_gap: int = 0
    if_transpose: bool = False
    addr_mode: int = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"start_index": U16, "repeat_times": U8, "src_stride": U16,
                             "sid": U16, "dst_gap": U16, "addr_mode": U8})


@dataclass(frozen=True)
class LoadData2dTransposeParams:
    """LoadDataWithTranspose: per repeat one square block (512 B for 16-bit types, 1 KB for
    8/32-bit ones, i.e. two fractals) is transposed; ``src_stride`` counts squares, ``dst_gap``
    fractals between repeats, ``dst_frac_gap`` fractals between the two halves of a square."""

    start_index: int = 0
    repeat_times: int = 1
    src_stride: int = 0
    dst_gap: int = 0
    dst_frac_gap: int = 0
    addr_mode: int = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"start_index": U16, "repeat_times": U8, "src_stride": U16,
                             "dst_gap": U16, "dst_frac_gap": U16, "addr_mode": U8})


#: ``unit_flag`` of MmadParams / FixpipeParamsV220 -> the phase of the L0C buffer's unit-flag
#: handshake (:mod:`ascsim.sim.unit_flag`): 0 off, 2 on and left on after the instruction (an
#: Mmad that is not the last of its accumulation), 3 on and turned off after it (the last
#: Mmad, or the FixPipe that drains the buffer); 1 is reserved.
UNIT_FLAG_PHASES = {0: None, 2: "partial", 3: "final"}


def unit_flag_phase(value: int, op: str, loc):
    """The unit-flag phase of a pyasc ``unit_flag`` value, or a clear error for a reserved one."""
    try:
        return UNIT_FLAG_PHASES[int(value)]
    except KeyError:
        raise KernelError(f"{op}: unit_flag {value} is reserved; use 0 (off), 2 (on, more "
                          "instructions on this L0C buffer follow) or 3 (on, the last one: "
                          "the Mmad that completes the buffer or the FixPipe that drains it)",
                          loc) from None


_MMAD_OLD = ("is_bias", "fm_offset", "en_ssparse", "en_winograd_a", "en_winograd_b")
_MMAD_NEW = ("unit_flag", "cmatrix_source", "cmatrix_init_val")


@dataclass(frozen=True, init=False)
class MmadParams:
    """One Mmad: C[m x n] (+)= A[m x k] . B[k x n].

    New form ``(m, n, k, unit_flag, cmatrix_source, cmatrix_init_val)``: ``cmatrix_init_val``
    True starts from zero, False from the existing C (``cmatrix_source`` False: L0C; True: the
    bias table). Old form ``(m, n, k, is_bias, fm_offset, en_ssparse, en_winograd_a,
    en_winograd_b)``: ``is_bias`` True accumulates into C. Three extra positional arguments mean
    the new form, five the old one; keywords may mix freely.
    """

    m: int
    n: int
    k: int
    unit_flag: int
    cmatrix_source: bool
    cmatrix_init_val: bool
    is_bias: bool
    fm_offset: int
    en_ssparse: bool
    en_winograd_a: bool
    en_winograd_b: bool

    def __init__(self, m=0, n=0, k=0, *rest, **kw):
        if len(rest) > 5:
            raise TypeError(f"MmadParams takes at most 8 positional arguments, got {3 + len(rest)}")
        names = _MMAD_NEW if 0 < len(rest) <= 3 and not (set(kw) & set(_MMAD_OLD)) else _MMAD_OLD
        values = dict(zip(names, rest, strict=False))
        clash = set(values) & set(kw)
        if clash:
            raise TypeError(f"MmadParams got multiple values for {sorted(clash)}")
        values.update(kw)
        unknown = set(values) - set(_MMAD_OLD) - set(_MMAD_NEW)
        if unknown:
            raise TypeError(f"MmadParams got unexpected argument(s) {sorted(unknown)}")
        defaults = {"unit_flag": 0, "cmatrix_source": False, "cmatrix_init_val": None,
                    "is_bias": False, "fm_offset": 0, "en_ssparse": False,
                    "en_winograd_a": False, "en_winograd_b": False}
        defaults.update(values)
        if defaults["cmatrix_init_val"] is None:
            # The old form says "accumulate" through is_bias; the new one defaults to "start at 0".
            defaults["cmatrix_init_val"] = not bool(defaults["is_bias"])
        for name, value in (("m", m), ("n", n), ("k", k), *defaults.items()):
            object.__setattr__(self, name, value)
        self.__post_init__()

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"m": MMAD_DIM, "n": MMAD_DIM, "k": MMAD_DIM, "unit_flag": (0, 3)})

    @property
    def accumulate(self) -> bool:
        """Whether the product is added to an existing C (L0C or bias table)."""
        return not self.cmatrix_init_val


#: FixPipe's dual-destination modes: ``dual_dst_ctl`` -> the axis split over the two AIVs.
DUAL_DST_SPLITS = {0: None, 1: "M", 2: "N"}


@dataclass(frozen=True)
class FixpipeParamsV220:
    """FixPipe L0C -> GM/L1/UB: an ``m_size`` x ``n_size`` block of the NZ matrix in L0C.

    ``src_stride``: rows (16-element units) between the starts of neighbouring 16-column strips
    in L0C, i.e. the padded M of the L0C tile. ``dst_stride``: for a row-major (NZ2ND)
    destination the row pitch in elements; for an NZ destination the distance between strips in
    destination fractal rows (one 32-byte block for fp16 output). ``nd_num`` blocks are moved,
    ``src_nd_stride`` 1 KB fractals and ``dst_nd_stride`` elements apart. ``quant_pre``
    converts fp32 -> fp16/bf16; ``relu_en`` applies ReLU first.

    L0C -> UB (3510): ``sub_block_id`` picks which AIV of the group receives the block, or
    ``dual_dst_ctl`` (Ascend C's ``dualDstCtl`` of the 3510's fixpipe parameters) splits it over
    both, to the same UB address in each: 1 splits M (``m_size`` even; AIV 0 the first half of
    the rows, AIV 1 the second), 2 splits N (``n_size`` a multiple of 32; halves of the
    columns). 0 (the default) writes one destination.
    """

    n_size: int
    m_size: int
    src_stride: int
    dst_stride: int
    quant_pre: QuantModes = QuantModes.NoQuant
    deq_scalar: int = 0
    nd_num: int = 1
    src_nd_stride: int = 0
    dst_nd_stride: int = 0
    relu_en: bool = False
    unit_flag: int = 0
    is_channel_split: bool = False
    sub_block_id: int = 0  # L0C->UB (3510): which AIV of the group receives the block
    dual_dst_ctl: int = 0  # L0C->UB (3510): 1 / 2 split the block over both AIVs by M / N

    def __post_init__(self):
        coerce_fields(self)
        object.__setattr__(self, "quant_pre", QuantModes(int(self.quant_pre)))
        if self.sub_block_id not in (0, 1):
            raise ValueError(f"FixpipeParamsV220 sub_block_id is 0 or 1 (the group's two "
                             f"AIVs), got {self.sub_block_id}")
        if self.dual_dst_ctl not in DUAL_DST_SPLITS:
            raise ValueError(f"FixpipeParamsV220 dual_dst_ctl is 0 (one destination), 1 (split "
                             f"M) or 2 (split N), got {self.dual_dst_ctl}")
        if self.dual_dst_ctl and self.sub_block_id:
            raise ValueError("FixpipeParamsV220: dual_dst_ctl writes both AIVs; sub_block_id "
                             f"{self.sub_block_id} picks one -- set one of the two")
        _check_ranges(self, {"n_size": U16, "m_size": U16, "src_stride": U16,
                             "dst_stride": U32, "nd_num": U16, "src_nd_stride": U16,
                             "dst_nd_stride": U16, "unit_flag": U8})
        if self.n_size < 1 or self.m_size < 1:
            raise ValueError(f"FixpipeParamsV220 needs n_size, m_size >= 1, got "
                             f"{self.n_size}, {self.m_size}")


@dataclass(frozen=True)
class FixpipeConfig:
    """Layout FixPipe writes: ``CO2Layout.ROW_MAJOR`` (NZ -> ND) or ``CO2Layout.NZ``."""

    layout: CO2Layout = CO2Layout.ROW_MAJOR

    def __post_init__(self):
        layout = CO2Layout(int(self.layout))
        if layout not in (CO2Layout.ROW_MAJOR, CO2Layout.NZ):
            raise ValueError(f"FixpipeConfig layout {layout.name} is not supported on this "
                             "architecture (ROW_MAJOR or NZ)")
        object.__setattr__(self, "layout", layout)

    @classmethod
    def cfg_row_major(cls) -> FixpipeConfig:
        return cls(CO2Layout.ROW_MAJOR)

    @classmethod
    def cfg_nz(cls) -> FixpipeConfig:
        return cls(CO2Layout.NZ)


__all__ = ["FixpipeConfig", "FixpipeParamsV220", "LoadData2DParams", "LoadData2dTransposeParams",
           "MmadParams", "Nd2NzParams"]
