"""AI Core pre-processing (AIPP) of an image window loaded from GM, and the executor of
:class:`~ascsim.isa.instr.ImageLoad`.

Sources: Ascend C's SetAippFunctions and LoadImageToLocal pages (formats, crop, swap, data
type conversion, padding, channel padding) and the ACL AIPP colour-space formulas
(aclmdlSetAIPPCscParams). Steps, in order:

1. **Read** rows ``vert_start .. +vert_size`` (one row in single-line mode) and columns
   ``horiz_start .. +horiz_size`` of an image ``src_horiz_size`` pixels wide. RGB888: 3 bytes
   a pixel, XRGB8888: 4, YUV400: 1; YUV420SP: a Y plane and an interleaved UV plane of half
   the rows, each (U, V) pair shared by a 2x2 block (nearest sample, no interpolation).
2. **Swap**: RGB888 R<->B; XRGB8888 R<->B and XRGB -> RGBX; YUV420SP U<->V.
3. **Colour-space conversion** (when enabled) on three channels with the int16 matrix ``M``:
   YUV input -> ``(M (p - bias_out)) >> 8``; RGB input -> ``((M p) >> 8) + bias_in``
   (Ascend C names the YUV->RGB bias ``csc_bias_out``, the RGB->YUV one ``csc_bias_in``);
   ``>>`` is an arithmetic shift; results saturate to [0, 255].
4. **Data type conversion** to the destination type, per channel 0..2: uint8 -> uint8 as is;
   -> int8 ``p - mean`` saturated to [-128, 127]; -> fp16 ``(p - mean - min) * var`` in fp32
   rounded once to fp16.
5. **Spatial padding**: mode 0 a constant per channel, left/right only (the page); mode 1 the
   nearest row/column of the window. Modes 2 and 3 (block and mirrored-block copies) are not
   modelled: an error says so.
6. **Channel padding** to 32 bytes of channels (mode 0: 32 for 8-bit, 16 for fp16 output) or
   to 4 channels (mode 1) with ``c_padding_value``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.isa.errors import KernelError
from ascsim.isa.instr import ImageLoad
from ascsim.sim.views import check_accesses, gates_done, gates_ready, view

#: Input format -> (bytes a pixel of plane 0, channels delivered, YUV input).
FORMATS = {"YUV420SP_U8": (1, 3, True), "XRGB8888_U8": (4, 4, False),
           "RGB888_U8": (3, 3, False), "YUV400_U8": (1, 1, True)}
CSC_SHIFT = 8


@dataclass(frozen=True)
class AippConfig:
    """The AIPP registers as ``set_aipp_functions`` leaves them (plain numbers)."""

    input_format: str
    padding_mode: int = 0
    padding_values: tuple = (0, 0, 0, 0)
    swap_rb: bool = False
    swap_uv: bool = False
    swap_ax: bool = False
    single_line: bool = False
    dtc_mean: tuple = (0, 0, 0)
    dtc_min: tuple = (0.0, 0.0, 0.0)
    dtc_var: tuple = (1.0, 1.0, 1.0)
    c_padding_mode: int = 0
    c_padding_value: float = 0
    csc: bool = False
    csc_matrix: tuple = ((0, 0, 0), (0, 0, 0), (0, 0, 0))
    csc_bias_in: tuple = (0, 0, 0)
    csc_bias_out: tuple = (0, 0, 0)


@dataclass(frozen=True)
class Window:
    """What one load reads (pixels) and the padding it adds around it."""

    horiz_size: int
    vert_size: int
    horiz_start: int
    vert_start: int
    src_horiz_size: int
    top: int = 0
    bottom: int = 0
    left: int = 0
    right: int = 0


def output_channels(config: AippConfig, out_dtype: np.dtype) -> int:
    """Channels per destination pixel after channel padding."""
    if config.c_padding_mode == 1:
        return 4
    return 32 // np.dtype(out_dtype).itemsize


def out_shape(config: AippConfig, window: Window, out_dtype) -> tuple[int, int, int]:
    rows = 1 if config.single_line else window.vert_size
    return (rows + window.top + window.bottom, window.horiz_size + window.left + window.right,
            output_channels(config, out_dtype))


def read_pixels(config: AippConfig, window: Window, plane0: np.ndarray,
                plane1: np.ndarray | None) -> np.ndarray:
    """The window as an (h, w, channels) int64 array (steps 1)."""
    step, channels, _ = FORMATS[config.input_format]
    rows = np.arange(1 if config.single_line else window.vert_size) + window.vert_start
    cols = np.arange(window.horiz_size) + window.horiz_start
    width = window.src_horiz_size
    if config.input_format == "YUV420SP_U8":
        y = plane0[(rows[:, None] * width + cols[None, :])]
        uv_at = (rows[:, None] // 2) * width + (cols[None, :] // 2) * 2
        return np.stack([y, plane1[uv_at], plane1[uv_at + 1]], axis=-1).astype(np.int64)
    base = (rows[:, None] * width + cols[None, :]) * step
    return np.stack([plane0[base + c] for c in range(channels)], axis=-1).astype(np.int64)


def swap(config: AippConfig, px: np.ndarray) -> np.ndarray:
    """Step 2."""
    fmt = config.input_format
    if fmt == "RGB888_U8" and config.swap_rb:
        px = px[..., [2, 1, 0]]
    elif fmt == "XRGB8888_U8":
        if config.swap_rb:
            px = px[..., [0, 3, 2, 1]]
        if config.swap_ax:
            px = px[..., [1, 2, 3, 0]]
    elif fmt == "YUV420SP_U8" and config.swap_uv:
        px = px[..., [0, 2, 1]]
    return px


def colour_space(config: AippConfig, px: np.ndarray) -> np.ndarray:
    """Step 3 (on the three colour channels; XRGB's X stays where the swap put it)."""
    if not config.csc or px.shape[-1] < 3:
        return px
    matrix = np.asarray(config.csc_matrix, dtype=np.int64)
    colour = [1, 2, 3] if (config.input_format == "XRGB8888_U8" and not config.swap_ax) \
        else [0, 1, 2]
    p = px[..., colour]
    if FORMATS[config.input_format][2]:  # YUV -> RGB
        out = ((p - np.asarray(config.csc_bias_out, dtype=np.int64)) @ matrix.T) >> CSC_SHIFT
    else:  # RGB -> YUV
        out = ((p @ matrix.T) >> CSC_SHIFT) + np.asarray(config.csc_bias_in, dtype=np.int64)
    px = px.copy()
    px[..., colour] = np.clip(out, 0, 255)
    return px


def convert_type(config: AippConfig, px: np.ndarray, out_dtype: np.dtype) -> np.ndarray:
    """Step 4."""
    out_dtype = np.dtype(out_dtype)
    channels = px.shape[-1]
    mean = np.zeros(channels, np.int64)
    mean[:min(3, channels)] = config.dtc_mean[:min(3, channels)]
    if out_dtype == np.uint8:
        return px.astype(np.uint8)
    if out_dtype == np.int8:
        return np.clip(px - mean, -128, 127).astype(np.int8)
    if out_dtype == np.float16:
        low = np.zeros(channels, np.float32)
        var = np.ones(channels, np.float32)
        low[:min(3, channels)] = np.float16(config.dtc_min[:min(3, channels)])
        var[:min(3, channels)] = np.float16(config.dtc_var[:min(3, channels)])
        return ((px.astype(np.float32) - mean - low) * var).astype(np.float16)
    raise ValueError(f"AIPP outputs uint8, int8 or float16, not {out_dtype.name}")


def pad(config: AippConfig, window: Window, px: np.ndarray, loc) -> np.ndarray:
    """Step 5."""
    widths = ((window.top, window.bottom), (window.left, window.right), (0, 0))
    if not (window.top or window.bottom or window.left or window.right):
        return px
    if config.padding_mode == 0:
        if window.top or window.bottom:
            raise KernelError("load_image_to_local: constant padding (padding_mode 0) pads "
                              "left and right only; top/bottom padding needs another mode",
                              loc)
        out = np.empty((px.shape[0], px.shape[1] + window.left + window.right, px.shape[2]),
                       px.dtype)
        values = np.zeros(px.shape[2], px.dtype)
        values[:min(4, px.shape[2])] = np.asarray(
            config.padding_values[:min(4, px.shape[2])]).astype(px.dtype)
        out[:] = values
        out[:, window.left:window.left + px.shape[1]] = px
        return out
    if config.padding_mode == 1:
        return np.pad(px, widths, mode="edge")
    raise KernelError(f"load_image_to_local: padding_mode {config.padding_mode} (block "
                      "copies) is not modelled; modes 0 (constant) and 1 (nearest row/column) "
                      "are", loc)


def channel_pad(config: AippConfig, px: np.ndarray, channels: int) -> np.ndarray:
    """Step 6."""
    if px.shape[-1] > channels:
        return px[..., :channels]
    out = np.empty(px.shape[:2] + (channels,), px.dtype)
    out[...] = np.asarray(config.c_padding_value).astype(px.dtype)
    out[..., :px.shape[-1]] = px
    return out


def preprocess(config: AippConfig, window: Window, plane0: np.ndarray,
               plane1: np.ndarray | None, out_dtype, loc) -> np.ndarray:
    """Every step: the (h, w, channels) result in ``out_dtype``."""
    px = read_pixels(config, window, plane0, plane1)
    px = colour_space(config, swap(config, px))
    px = pad(config, window, convert_type(config, px, out_dtype), loc)
    return channel_pad(config, px, output_channels(config, out_dtype))


# ------------------------------------------------------------------------------ executor
def _source_span(config: AippConfig, window: Window) -> tuple[int, int, int]:
    """Bytes of plane 0 and plane 1 the window reads from, and plane 0's first byte."""
    step = FORMATS[config.input_format][0]
    rows = 1 if config.single_line else window.vert_size
    first = (window.vert_start * window.src_horiz_size + window.horiz_start) * step
    last = ((window.vert_start + rows - 1) * window.src_horiz_size + window.horiz_start
            + window.horiz_size) * step
    uv_end = ((window.vert_start + rows - 1) // 2 + 1) * window.src_horiz_size
    return first, last, uv_end


def execute_image_load(core, rec: ImageLoad):
    loc, dst, config, window = rec.loc, rec.dst, rec.config, rec.window
    shape = out_shape(config, window, dst.dtype)
    count = shape[0] * shape[1] * shape[2]
    if count > dst.count:
        raise KernelError(f"load_image_to_local: {shape[0]} x {shape[1]} pixels of {shape[2]} "
                          f"channels need {count} elements, dst holds {dst.count}", loc)
    path = f"GM->{dst.mem.space}"
    cost = core.costs.path(core.kind, path)
    if cost is None:
        raise KernelError(f"load_image_to_local: there is no {path} path on {core.soc.name}",
                          loc)
    first, last, uv_end = _source_span(config, window)
    src0_bytes = rec.src0._replace(dtype=np.dtype(np.uint8))
    reads = [(rec.src0.mem.key, rec.src0.offset + first, rec.src0.offset + last)]
    if rec.src1 is not None:
        reads.append((rec.src1.mem.key, rec.src1.offset, rec.src1.offset + uv_end))
    write = dst.access(0, count)
    if core.launch.values:
        plane0 = np.zeros(last, np.uint8)
        plane0[first:] = view(core, src0_bytes, first, last - first, loc)
        plane1 = None
        if rec.src1 is not None:
            plane1 = view(core, rec.src1._replace(dtype=np.dtype(np.uint8)), 0, uv_end, loc)
        values = preprocess(config, window, plane0, plane1, dst.dtype, loc)
        view(core, dst, 0, count, loc)[:] = values.reshape(-1)
    else:
        check_accesses(core, [(src0_bytes, reads[0]), (dst, write)], loc)
    nbytes = count * dst.dtype.itemsize
    core.count_bytes(cost.path, nbytes)
    regions = (dst, rec.src0, rec.src1)
    start = core.begin(cost.pipe, max(gates_ready(regions), rec.after))
    busy, latency = core.costs.transfer(core, cost, nbytes, shape[0], None, start)
    instr = core.place(cost.pipe, rec.op, start, busy, latency, loc, tuple(reads), (write,),
                       rec)
    gates_done(regions, instr.done)
    return instr


EXECUTORS = {ImageLoad: execute_image_load}
