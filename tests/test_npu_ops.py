"""torch_npu.npu_trans_quant_param in the NPU stand-in: the documented bit layout of the
quantisation words, offsets, rounding and shapes, and the errors for bad input."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import torch

from ascsim import npu
from ascsim.npu_ops import npu_trans_quant_param


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def test_scale_bits_are_truncated_to_19_and_flagged():
    scale = torch.tensor([2.0, 1.0 / 3.0, -0.75], dtype=torch.float32)
    words = npu_trans_quant_param(scale)
    assert words.dtype == torch.int64 and words.shape == (3,)
    for word, value in zip(words.tolist(), scale.tolist()):
        assert word == (_bits(value) & 0xFFFFE000) | (1 << 46)
    # The low 32 bits read as fp32 are the scale with a 10-bit mantissa (what the FixPipe
    # multiplies by); 1/3 loses its low mantissa bits.
    low = (words.numpy() & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    assert low[0] == 2.0 and low[2] == -0.75 and low[1] != np.float32(1.0 / 3.0)
    assert abs(low[1] - 1.0 / 3.0) < 2.0 ** -11


def test_round_mode_1_rounds_to_nearest_even():
    just_below = np.float32(1.0) + np.float32(2.0 ** -10) * np.float32(0.75)  # rounds up
    words = npu_trans_quant_param(torch.tensor([just_below]), round_mode=1)
    truncated = npu_trans_quant_param(torch.tensor([just_below]))
    assert int(words) & 0xFFFFFFFF == _bits(1.0 + 2.0 ** -10)
    assert int(truncated) & 0xFFFFFFFF == _bits(1.0)


def test_offsets_are_rounded_clipped_and_packed_in_bits_37_to_45():
    scale = torch.tensor([1.0], dtype=torch.float32)
    offset = torch.tensor([3.4, -1.0, 300.0, -1000.0], dtype=torch.float32)
    words = npu_trans_quant_param(scale, offset)
    assert words.shape == (4,)  # the longer of the two
    codes = [(w >> 37) & 0x1FF for w in words.tolist()]
    assert codes == [3, 0x1FF, 255, 0x100]  # -1 and -256 as 9-bit two's complement
    assert all(w & 0xFFFFFFFF == _bits(1.0) and w >> 46 & 1 for w in words.tolist())


def test_a_row_scale_keeps_its_shape():
    scale = torch.full((1, 8), 0.5, dtype=torch.float32)
    assert npu_trans_quant_param(scale, torch.zeros(1, 8)).shape == (1, 8)


@pytest.mark.parametrize("scale, offset, message", [
    (torch.ones(4, dtype=torch.float16), None, "scale must be float32"),
    (torch.ones(2, 4), None, r"shape \(t,\) or \(1, n\)"),
    (torch.tensor([float("nan")]), None, "NaN or infinity"),
    (torch.ones(1, 4), torch.ones(4), "same shape"),
    (torch.ones(3), torch.ones(4), "do not match"),
])
def test_bad_input_is_named(scale, offset, message):
    with pytest.raises((TypeError, ValueError), match=message):
        npu_trans_quant_param(scale, offset)


def test_the_stand_in_provides_it():
    npu.install()
    import torch_npu

    assert torch_npu.npu_trans_quant_param is npu_trans_quant_param


def test_an_unknown_round_mode_is_named():
    with pytest.raises(ValueError, match="round_mode 2 is not one of"):
        npu_trans_quant_param(torch.ones(4), round_mode=2)
