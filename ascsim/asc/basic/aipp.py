"""AI Core pre-processing (AIPP): ``set_aipp_functions`` configures it, ``load_image_to_local``
loads an image window with it, and the parameter structs (``AippParams`` and its parts,
``AippInputFormat``, ``LoadImageToLocalParams``) in pyasc's names and defaults.

``set_aipp_functions`` keeps the configuration in the core's AIPP registers (a scalar call);
``load_image_to_local`` is one :class:`~ascsim.isa.instr.ImageLoad` record, whose arithmetic
(:mod:`ascsim.sim.aipp`) says each step and where it comes from. The destination is L1 (UB
on the 950); its element type is the output type (uint8: no data type conversion).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ascsim.asc.context import current_core, user_location
from ascsim.asc.params import _check_ranges, coerce_fields
from ascsim.asc.tensor import GlobalTensor, LocalTensor
from ascsim.isa import ImageLoad, KernelError
from ascsim.sim.aipp import AippConfig, Window


class AippInputFormat(IntEnum):
    """Source image formats (Ascend C's values)."""

    YUV420SP_U8 = 0
    XRGB8888_U8 = 1
    RGB888_U8 = 4
    YUV400_U8 = 9


@dataclass(frozen=True)
class AippPaddingParams:
    """Spatial padding: ``padding_mode`` 0 constant (per-channel values), 1 nearest row or
    column (2 and 3, block copies, are not modelled)."""

    padding_mode: int = 0
    padding_value_ch0: float = 0
    padding_value_ch1: float = 0
    padding_value_ch2: float = 0
    padding_value_ch3: float = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"padding_mode": (0, 3)})


@dataclass(frozen=True)
class AippSwapParams:
    """Channel swaps: R<->B (RGB888, XRGB8888), U<->V (YUV420SP), XRGB -> RGBX."""

    is_swap_rb: bool = False
    is_swap_uv: bool = False
    is_swap_ax: bool = False


@dataclass(frozen=True)
class AippSingleLineParams:
    """``is_single_line_copy``: read one row of the source only."""

    is_single_line_copy: bool = False


@dataclass(frozen=True)
class AippDataTypeConvParams:
    """Per-channel mean (uint8), min and var (fp16) of the data type conversion."""

    dtc_mean_ch0: int = 0
    dtc_mean_ch1: int = 0
    dtc_mean_ch2: int = 0
    dtc_min_ch0: float = 0.0
    dtc_min_ch1: float = 0.0
    dtc_min_ch2: float = 0.0
    dtc_var_ch0: float = 1.0
    dtc_var_ch1: float = 1.0
    dtc_var_ch2: float = 1.0
    dtc_round_mode: int = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"dtc_mean_ch0": (0, 255), "dtc_mean_ch1": (0, 255),
                             "dtc_mean_ch2": (0, 255), "dtc_round_mode": (0, 1)})


@dataclass(frozen=True)
class AippChannelPaddingParams:
    """Channel padding: mode 0 to 32 bytes of channels, mode 1 to 4 channels."""

    c_padding_mode: int = 0
    c_padding_value: float = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"c_padding_mode": (0, 1)})


@dataclass(frozen=True)
class AippColorSpaceConvParams:
    """Colour-space conversion: the int16 matrix and the uint8 biases (``csc_bias_in`` for
    RGB -> YUV, ``csc_bias_out`` for YUV -> RGB)."""

    is_enable_csc: bool = False
    csc_matrix_r0_c0: int = 0
    csc_matrix_r0_c1: int = 0
    csc_matrix_r0_c2: int = 0
    csc_matrix_r1_c0: int = 0
    csc_matrix_r1_c1: int = 0
    csc_matrix_r1_c2: int = 0
    csc_matrix_r2_c0: int = 0
    csc_matrix_r2_c1: int = 0
    csc_matrix_r2_c2: int = 0
    csc_bias_in_0: int = 0
    csc_bias_in_1: int = 0
    csc_bias_in_2: int = 0
    csc_bias_out_0: int = 0
    csc_bias_out_1: int = 0
    csc_bias_out_2: int = 0

    def __post_init__(self):
        coerce_fields(self)
        matrix = (-32768, 32767)
        bias = (0, 255)
        _check_ranges(self, {f.name: (matrix if "matrix" in f.name else bias)
                             for f in self.__dataclass_fields__.values()
                             if f.name != "is_enable_csc"})


class AippParams:
    """``AippParams(dtype, padding_params=None, swap_params=None, single_line_params=None,
    dtc_params=None, c_padding_params=None, csc_params=None)``: ``dtype`` (asc.int8 or
    asc.float16) is the output type of the data type conversion."""

    def __init__(self, dtype, padding_params=None, swap_params=None, single_line_params=None,
                 dtc_params=None, c_padding_params=None, csc_params=None):
        name = getattr(dtype, "name", str(dtype))
        if name not in ("int8", "float16"):
            raise TypeError(f"AippParams dtype must be asc.int8 or asc.float16, got {name}")
        self.dtype = dtype
        self.padding_params = padding_params or AippPaddingParams()
        self.swap_params = swap_params or AippSwapParams()
        self.single_line_params = single_line_params or AippSingleLineParams()
        self.dtc_params = dtc_params or AippDataTypeConvParams()
        self.c_padding_params = c_padding_params or AippChannelPaddingParams()
        self.csc_params = csc_params or AippColorSpaceConvParams()

    def config(self, input_format: AippInputFormat) -> AippConfig:
        """The registers these parameters set for ``input_format``."""
        pad, swap, dtc, cpad, csc = (self.padding_params, self.swap_params, self.dtc_params,
                                     self.c_padding_params, self.csc_params)
        return AippConfig(
            input_format=AippInputFormat(int(input_format)).name,
            padding_mode=pad.padding_mode,
            padding_values=(pad.padding_value_ch0, pad.padding_value_ch1,
                            pad.padding_value_ch2, pad.padding_value_ch3),
            swap_rb=bool(swap.is_swap_rb), swap_uv=bool(swap.is_swap_uv),
            swap_ax=bool(swap.is_swap_ax),
            single_line=bool(self.single_line_params.is_single_line_copy),
            dtc_mean=(dtc.dtc_mean_ch0, dtc.dtc_mean_ch1, dtc.dtc_mean_ch2),
            dtc_min=(dtc.dtc_min_ch0, dtc.dtc_min_ch1, dtc.dtc_min_ch2),
            dtc_var=(dtc.dtc_var_ch0, dtc.dtc_var_ch1, dtc.dtc_var_ch2),
            c_padding_mode=cpad.c_padding_mode, c_padding_value=cpad.c_padding_value,
            csc=bool(csc.is_enable_csc),
            csc_matrix=((csc.csc_matrix_r0_c0, csc.csc_matrix_r0_c1, csc.csc_matrix_r0_c2),
                        (csc.csc_matrix_r1_c0, csc.csc_matrix_r1_c1, csc.csc_matrix_r1_c2),
                        (csc.csc_matrix_r2_c0, csc.csc_matrix_r2_c1, csc.csc_matrix_r2_c2)),
            csc_bias_in=(csc.csc_bias_in_0, csc.csc_bias_in_1, csc.csc_bias_in_2),
            csc_bias_out=(csc.csc_bias_out_0, csc.csc_bias_out_1, csc.csc_bias_out_2))


@dataclass(frozen=True)
class LoadImageToLocalParams:
    """``LoadImageToLocalParams(horiz_size=2, vert_size=2, horiz_start_pos=0,
    vert_start_pos=0, src_horiz_size=2, top_pad_size=0, bot_pad_size=0, left_pad_size=0,
    right_pad_size=0, sid=0)``: the window (pixels) and the padding around it."""

    horiz_size: int = 2
    vert_size: int = 2
    horiz_start_pos: int = 0
    vert_start_pos: int = 0
    src_horiz_size: int = 2
    top_pad_size: int = 0
    bot_pad_size: int = 0
    left_pad_size: int = 0
    right_pad_size: int = 0
    sid: int = 0

    def __post_init__(self):
        coerce_fields(self)
        size, pos, pad = (2, 4095), (0, 4095), (0, 32)
        _check_ranges(self, {"horiz_size": size, "vert_size": size, "horiz_start_pos": pos,
                             "vert_start_pos": pos, "src_horiz_size": size, "top_pad_size": pad,
                             "bot_pad_size": pad, "left_pad_size": pad, "right_pad_size": pad})


def _registers(core) -> dict:
    return core.launch.shared.setdefault(("aipp", core.core_id), {})


def set_aipp_functions(*args, **kwargs) -> None:
    """``set_aipp_functions(src0, input_format, config)`` or ``(src0, src1, input_format,
    config)`` (src1: the UV plane of a YUV420SP image)."""
    loc = user_location()
    if len(args) + len(kwargs) == 3 and "src1" not in kwargs:
        names = ("src0", "input_format", "config")
    else:
        names = ("src0", "src1", "input_format", "config")
    values = dict(zip(names, args))
    values.update(kwargs)
    missing = [n for n in ("src0", "input_format", "config") if values.get(n) is None]
    if missing:
        raise KernelError(f"set_aipp_functions: missing {missing}", loc)
    fmt = AippInputFormat(int(values["input_format"]))
    src0, src1 = values["src0"], values.get("src1")
    if not isinstance(src0, GlobalTensor):
        raise KernelError("set_aipp_functions: src0 must be a GlobalTensor (the image in GM)",
                          loc)
    if fmt == AippInputFormat.YUV420SP_U8 and not isinstance(src1, GlobalTensor):
        raise KernelError("set_aipp_functions: a YUV420SP image needs src1, its UV plane", loc)
    config = values["config"]
    if not isinstance(config, AippParams):
        raise KernelError("set_aipp_functions: config must be an AippParams", loc)
    core = current_core()
    core.call_overhead()
    _registers(core).update(src0=src0, src1=src1 if fmt == AippInputFormat.YUV420SP_U8 else None,
                            config=config.config(fmt))


def load_image_to_local(dst, load_data_params: LoadImageToLocalParams) -> None:
    """Load the window ``load_data_params`` names of the image ``set_aipp_functions`` set up,
    pre-processed, into ``dst``."""
    loc = user_location()
    core = current_core()
    regs = _registers(core)
    if "config" not in regs:
        raise KernelError("load_image_to_local: call set_aipp_functions first", loc)
    if not isinstance(dst, LocalTensor):
        raise KernelError("load_image_to_local: dst must be a LocalTensor", loc)
    allowed = (core.soc.aipp_destination,)
    if dst.mem is None or dst.mem.name not in allowed:
        raise KernelError(f"load_image_to_local: on {core.soc.name} the image goes to "
                          f"{' or '.join(allowed)}", loc)
    if dst.dtype.name not in ("uint8", "int8", "float16"):
        raise KernelError(f"load_image_to_local: dst must be uint8, int8 or float16, got "
                          f"{dst.dtype.name}", loc)
    p = load_data_params
    window = Window(p.horiz_size, p.vert_size, p.horiz_start_pos, p.vert_start_pos,
                    p.src_horiz_size, p.top_pad_size, p.bot_pad_size, p.left_pad_size,
                    p.right_pad_size)
    src1 = regs["src1"]
    core.execute(ImageLoad(dst.region(), regs["src0"].region(),
                           None if src1 is None else src1.region(), regs["config"], window, loc))


__all__ = ["AippChannelPaddingParams", "AippColorSpaceConvParams", "AippDataTypeConvParams",
           "AippInputFormat", "AippPaddingParams", "AippParams", "AippSingleLineParams",
           "AippSwapParams", "LoadImageToLocalParams", "load_image_to_local",
           "set_aipp_functions"]
