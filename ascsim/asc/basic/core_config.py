"""Configuration registers of the cube and the DMA that later instructions read at issue.

- ``set_hf32_mode(hf32_mode)`` / ``set_hf32_trans_mode(trans_mode)``: Mmad rounds fp32 inputs
  to HF32 (:func:`ascsim.sim.numerics.to_hf32`) while the mode is on; the trans mode picks the
  ties rule: False -- nearest, ties to even; True -- nearest, ties away from zero (the Matmul
  SetHF32 page's definition of trans mode 1; the ISASI page calls it NEAREST_ZERO).
- ``set_pad_value(padding_value, pos=TPosition.MAX)``: the value ``data_copy_pad`` GM -> UB
  writes into the left/right padding when its ``DataCopyPadExtParams.is_pad`` is False (with
  ``is_pad`` True the params' ``padding_value`` is used, as Ascend C's DataCopyPad page says).
- ``set_load_data_boundary(boundary)``: Load3D v2 reads a source byte at L1 address ``a >=
  boundary`` from ``a mod boundary`` (it wraps to the start of L1); 0 switches it off.
- ``set_load_data_repeat(LoadDataRepeatParam)``: Load3D v2 repeats its window
  ``repeat_time`` times, each ``repeat_stride`` further along M (``repeat_mode`` 0; units of
  16 rows) or K (mode 1; units of one 32-byte C0 group), the windows stacked into one matrix
  of the destination's fractal layout (Ascend C's LoadData 3D "Repeat Mode").
- ``set_fix_pipe_pre_quant_flag(config)``: the scalar quantisation word that
  ``data_copy(gm, l0c, DataCopyCO12DstParams)`` uses for the scalar quant modes (its low 32
  bits are the fp32 scale).

Each setter costs one scalar call; the state lives per core for the launch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import TPosition
from ascsim.asc.params import U8, U16, _check_ranges, coerce_fields
from ascsim.isa import KernelError

#: Registers and their value at the start of a launch.
DEFAULTS = {"hf32": False, "hf32_ties_away": False, "pad_value": None, "l1_boundary": 0,
            "load_repeat": (1, 0, 0), "pre_quant": None}
#: TPositions set_pad_value accepts (the GM -> UB destinations, MAX meaning either).
PAD_POSITIONS = (TPosition.VECIN, TPosition.VECOUT, TPosition.MAX)


def core_registers(core=None) -> dict:
    """The executing core's configuration registers (see :data:`DEFAULTS`)."""
    core = core or current_core()
    return core.launch.shared.setdefault(("core_config", core.core_id), dict(DEFAULTS))


def _set(name: str, value) -> None:
    core = current_core()
    core.call_overhead()
    core_registers(core)[name] = value


def hf32_rounding() -> str | None:
    """The HF32 ties rule Mmad applies now ("even" / "away"), or None when HF32 is off."""
    regs = core_registers()
    if not regs["hf32"]:
        return None
    return "away" if regs["hf32_ties_away"] else "even"


def set_hf32_mode(hf32_mode) -> None:
    """``set_hf32_mode(True)``: Mmad rounds fp32 inputs to HF32; False: plain fp32."""
    _set("hf32", bool(hf32_mode))


def set_hf32_trans_mode(trans_mode) -> None:
    """``set_hf32_trans_mode(False)``: ties to even; True: ties away from zero."""
    _set("hf32_ties_away", bool(trans_mode))


def set_pad_value(padding_value, pos=TPosition.MAX) -> None:
    """The padding value of ``data_copy_pad`` GM -> UB calls made with ``is_pad=False``."""
    if TPosition(int(pos)) not in PAD_POSITIONS:
        raise KernelError(f"set_pad_value: pos must be one of "
                          f"{', '.join(p.name for p in PAD_POSITIONS)}, got "
                          f"{TPosition(int(pos)).name}", user_location())
    value = padding_value.item() if hasattr(padding_value, "item") else padding_value
    _set("pad_value", value)


def set_load_data_boundary(boundary) -> None:
    """``set_load_data_boundary(bytes)``: Load3D source addresses wrap at this L1 byte."""
    boundary = int(boundary)
    if not 0 <= boundary < 2**32:
        raise KernelError(f"set_load_data_boundary: {boundary} is not a uint32",
                          user_location())
    _set("l1_boundary", boundary)


@dataclass(frozen=True)
class LoadDataRepeatParam:
    """``LoadDataRepeatParam(repeat_time=1, repeat_stride=0, repeat_mode=0)``: Load3D v2's
    repeat (see the module docstring)."""

    repeat_time: int = 1
    repeat_stride: int = 0
    repeat_mode: int = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"repeat_time": U8, "repeat_stride": U16, "repeat_mode": (0, 1)})


def set_load_data_repeat(param: LoadDataRepeatParam) -> None:
    """``set_load_data_repeat(LoadDataRepeatParam(...))``."""
    if not isinstance(param, LoadDataRepeatParam):
        raise KernelError(f"set_load_data_repeat takes a LoadDataRepeatParam, got "
                          f"{type(param).__name__}", user_location())
    _set("load_repeat", (param.repeat_time, param.repeat_stride, param.repeat_mode))


def set_fix_pipe_pre_quant_flag(config) -> None:
    """``set_fix_pipe_pre_quant_flag(config)``: the 64-bit scalar quantisation word."""
    config = int(config)
    if not 0 <= config < 2**64:
        raise KernelError(f"set_fix_pipe_pre_quant_flag: {config} is not a uint64",
                          user_location())
    _set("pre_quant", config)


__all__ = ["LoadDataRepeatParam", "set_fix_pipe_pre_quant_flag", "set_hf32_mode",
           "set_hf32_trans_mode", "set_load_data_boundary", "set_load_data_repeat",
           "set_pad_value"]
