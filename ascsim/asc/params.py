"""Parameter structs of the basic API (pyasc-api §3.7), validated on construction.

Field ranges follow the hardware encodings (e.g. ``DataCopyParams`` fields are uint16, block
lengths and strides count 32-byte blocks). A value out of range is a ``param-range`` finding
inside a kernel (the field then holds what the hardware field would) and a ValueError naming the
line outside one.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, fields

from ascsim.asc.enums import DataFormat
from ascsim.sim.errors import KernelError
from ascsim.sim.scheduler import current_core, in_kernel
from ascsim.sim.source import user_location

U8 = (0, 255)
U16 = (0, 65535)
U32 = (0, 2**32 - 1)


def coerce_fields(obj) -> None:
    """Turn a frozen struct's runtime ints and numpy scalars into plain Python values, in place.

    Bools and named values (enums, data types) are kept as they are; anything else without an
    integer or scalar value (tuples, lists) is left alone too."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, bool) or hasattr(value, "name"):
            continue
        if hasattr(value, "__index__"):
            object.__setattr__(obj, f.name, int(value))
        elif hasattr(value, "item"):
            object.__setattr__(obj, f.name, value.item())


def _check_ranges(obj, limits: dict[str, tuple[int, int]]) -> None:
    for f in fields(obj):
        value = getattr(obj, f.name)
        lo_hi = limits.get(f.name)
        if lo_hi is None or isinstance(value, bool) or not isinstance(value, int):
            continue
        lo, hi = lo_hi
        if not lo <= value <= hi:
            _out_of_range(obj, f.name, value, lo, hi)


def _constructor_caller():
    """The user line that built the struct: the frame above the dataclass ``__init__`` (whose
    code lives in "<string>", which ``user_location`` would take for user code)."""
    frame, depth = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename != "<string>":
        frame, depth = frame.f_back, depth + 1
    return user_location(depth + 2) if frame is not None else user_location(2)


class ParamRangeError(KernelError, ValueError):
    """A parameter struct built outside a kernel with a field out of its hardware range."""


def _out_of_range(obj, name: str, value: int, lo: int, hi: int) -> None:
    """Inside a kernel: a ``param-range`` finding, and the field keeps what the hardware field
    would hold (C++ truncates to an unsigned field's width, e.g. 70000 -> 4464 in a uint16).
    Outside a kernel: a ValueError naming the line."""
    loc = _constructor_caller()
    message = f"{type(obj).__name__}.{name} = {value} is outside [{lo}, {hi}]"
    if not in_kernel():
        raise ParamRangeError(message, loc)
    storage_width = lo == 0 and hi & (hi + 1) == 0
    kept = value & hi if storage_width else min(max(value, lo), hi)
    core = current_core()
    core.launch.findings.report(
        "param-range", f"{message}; the hardware field holds {kept}", loc,
        hint=f"keep {name} within [{lo}, {hi}]: split the transfer into several calls",
        core=core.core_id, field=name, value=value)
    object.__setattr__(obj, name, kept)


@dataclass(frozen=True)
class DataCopyParams:
    """Strided copy: ``block_count`` blocks of ``block_len`` units, with gaps between blocks.

    For GM<->UB copies with ``data_copy`` the unit is a 32-byte block; for ``data_copy_pad`` the
    length is in bytes. ``src_stride``/``dst_stride`` are the gaps between the end of one block
    and the start of the next (not the pitch).
    """

    block_count: int = 1
    block_len: int = 0
    src_stride: int = 0
    dst_stride: int = 0

    def __post_init__(self):
        _check_ranges(self, dict.fromkeys(("block_count", "block_len", "src_stride",
                                           "dst_stride"), U16))


@dataclass(frozen=True)
class DataCopyExtParams:
    """``data_copy_pad`` parameters: ``block_len`` in bytes; GM strides in bytes, UB in blocks."""

    block_count: int = 1
    block_len: int = 0
    src_stride: int = 0
    dst_stride: int = 0
    rsv: int = 0

    def __post_init__(self):
        _check_ranges(self, {"block_count": (0, 4095), "block_len": U32, "src_stride": U32,
                             "dst_stride": U32})


@dataclass(frozen=True)
class DataCopyPadExtParams:
    """Padding applied by ``data_copy_pad`` GM->UB: left/right pad elements and their value.

    ``dtype`` (keyword only; pyasc's template argument) is the type of ``padding_value``; the
    value is converted to the destination's type when the copy pads, so it is only recorded."""

    is_pad: bool = False
    left_padding: int = 0
    right_padding: int = 0
    padding_value: float = 0
    dtype: object = field(default=None, kw_only=True)

    def __post_init__(self):
        _check_ranges(self, {"left_padding": (0, 32), "right_padding": (0, 32)})


@dataclass(frozen=True)
class DataCopyPadParams:
    """Older form of :class:`DataCopyPadExtParams`."""

    is_pad: bool = False
    left_padding: int = 0
    right_padding: int = 0
    padding_value: int = 0


@dataclass(frozen=True)
class DataCopyEnhancedParams:
    """Enhanced ``data_copy`` options (block mode, dequantisation, ReLU, padding), in pyasc's
    positional order."""

    block_mode: int = 0
    deq_scale: int = 0
    deq_value: int = 0
    sid_store_mode: int = 0
    is_relu: bool = False
    pad_mode: int = 0
    pad_value: int = 0


@dataclass(frozen=True)
class BinaryRepeatParams:
    """Mask/repeat form of two-input vector ops: strides in 32-byte blocks."""

    dst_blk_stride: int = 1
    src0_blk_stride: int = 1
    src1_blk_stride: int = 1
    dst_rep_stride: int = 8
    src0_rep_stride: int = 8
    src1_rep_stride: int = 8

    def __post_init__(self):
        _check_ranges(self, dict.fromkeys([f.name for f in fields(self)], U8))


@dataclass(frozen=True)
class UnaryRepeatParams:
    """Mask/repeat form of one-input (and tensor-scalar) vector ops."""

    dst_blk_stride: int = 1
    src_blk_stride: int = 1
    dst_rep_stride: int = 8
    src_rep_stride: int = 8

    def __post_init__(self):
        _check_ranges(self, dict.fromkeys([f.name for f in fields(self)], U8))


@dataclass(frozen=True)
class CopyRepeatParams:
    """``copy`` (UB->UB) strides: block strides and repeat sizes in 32-byte blocks."""

    dst_stride: int = 1
    src_stride: int = 1
    dst_repeat_size: int = 8
    src_repeat_size: int = 8

    def __post_init__(self):
        _check_ranges(self, dict.fromkeys([f.name for f in fields(self)], U16))


@dataclass(frozen=True)
class BrcbRepeatParams:
    dst_blk_stride: int = 1
    dst_rep_stride: int = 8


@dataclass(frozen=True)
class ShapeInfo:
    """``asc.ShapeInfo(shape=None, original_shape=None, data_format=DataFormat.ND)``: the
    logical shape of a tensor (``tensor.set_shape_info``), which library calls read when their
    tiling leaves the shape open. ``shape`` and ``original_shape`` take any sequence of ints
    (an ``asc.array`` too); ``original_shape`` defaults to ``shape``."""

    shape: tuple = ()
    original_shape: tuple | None = None
    data_format: object = None

    def __post_init__(self):
        shape = tuple(int(d) for d in (() if self.shape is None else self.shape))
        if any(d < 0 for d in shape):
            raise ValueError(f"ShapeInfo: negative dimension in {shape}")
        original = shape if self.original_shape is None else tuple(
            int(d) for d in self.original_shape)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "original_shape", original)
        object.__setattr__(self, "data_format", DataFormat(
            DataFormat.ND if self.data_format is None else self.data_format))

    @property
    def shape_dim(self) -> int:
        return len(self.shape)

    @property
    def original_shape_dim(self) -> int:
        return len(self.original_shape)


def get_shape_size(shape_info: ShapeInfo) -> int:
    """``asc.get_shape_size(shape_info)``: the product of the shape's dimensions (1 for a
    shape without dimensions, as Ascend C's GetShapeSize starts from 1)."""
    if not isinstance(shape_info, ShapeInfo):
        raise TypeError(f"get_shape_size expects a ShapeInfo, got {type(shape_info).__name__}")
    return math.prod(shape_info.shape)
