"""torch_npu operators that kernels' host code calls to prepare kernel arguments, computed on
the CPU by the NPU stand-in (:mod:`ascsim.npu`).

``npu_trans_quant_param(scale, offset=None, round_mode=0)`` packs fp32 quantisation scales (and
optional offsets) into the 64-bit words a FixPipe's quantisation reads, as CANN's
TransQuantParam operator documents them: the scale's fp32 bits with the low 13 cleared (the
19-bit sign/exponent/10-bit-mantissa value the hardware uses; ``round_mode=1`` rounds to it,
to nearest even, instead of truncating) in bits 0-31, bit 46 set, and an offset rounded to an
integer in [-256, 255] as 9 bits at bits 37-45.
"""

from __future__ import annotations

import numpy as np
import torch

from ascsim.sim.numerics import to_hf32

SCALE_KEEP = 0xFFFFE000  # the 19 high bits of an fp32 scale
SCALE_FLAG = 1 << 46
OFFSET_SHIFT = 37
OFFSET_BITS = 0x1FF
OFFSET_RANGE = (-256, 255)
ROUND_MODES = (0, 1)  # 0: truncate the scale to 19 bits, 1: round it to nearest even


def _as_row(name: str, value) -> np.ndarray:
    array = np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value)
    if array.dtype != np.float32:
        raise TypeError(f"npu_trans_quant_param: {name} must be float32, got {array.dtype}")
    if array.ndim not in (1, 2) or (array.ndim == 2 and array.shape[0] != 1):
        raise ValueError(f"npu_trans_quant_param: {name} must have shape (t,) or (1, n), got "
                         f"{tuple(array.shape)}")
    if not np.isfinite(array).all():
        raise ValueError(f"npu_trans_quant_param: {name} holds NaN or infinity")
    return array


def npu_trans_quant_param(scale, offset=None, round_mode: int = 0) -> torch.Tensor:
    """The int64 quantisation words for ``scale`` (and ``offset``): see the module docstring.
    A 1-D ``scale`` gives a 1-D result as long as the longer of ``scale`` and ``offset`` (one
    of them may have length 1); a ``(1, n)`` scale gives ``(1, n)``."""
    if int(round_mode) not in ROUND_MODES:
        raise ValueError(f"npu_trans_quant_param: round_mode {round_mode} is not one of "
                         f"{ROUND_MODES}")
    scales = _as_row("scale", scale)
    if int(round_mode) == 1:
        scales = to_hf32(scales, "even")
    words = (scales.view(np.uint32).astype(np.uint64) & np.uint64(SCALE_KEEP)) | np.uint64(
        SCALE_FLAG)
    if offset is not None:
        offsets = _as_row("offset", offset)
        if scales.ndim == 2 and offsets.shape != scales.shape:
            raise ValueError(f"npu_trans_quant_param: a (1, n) scale needs an offset of the same "
                             f"shape, got {tuple(offsets.shape)}")
        if scales.ndim == 1 and offsets.ndim != 1:
            raise ValueError("npu_trans_quant_param: a 1-D scale needs a 1-D offset")
        if 1 not in (scales.shape[-1], offsets.shape[-1]) and offsets.shape != scales.shape:
            raise ValueError(f"npu_trans_quant_param: scale {tuple(scales.shape)} and offset "
                             f"{tuple(offsets.shape)} do not match (lengths must agree or one "
                             "be 1)")
        codes = np.clip(np.rint(offsets), *OFFSET_RANGE).astype(np.int64)
        codes = (codes.astype(np.uint64) & np.uint64(OFFSET_BITS)) << np.uint64(OFFSET_SHIFT)
        words, codes = np.broadcast_arrays(words, codes)
        words = words | codes
    return torch.from_numpy(np.ascontiguousarray(words).view(np.int64))


#: The operators above, by their torch_npu name.
TORCH_NPU_OPS = {"npu_trans_quant_param": npu_trans_quant_param}
