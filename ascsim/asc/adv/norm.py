"""``asc.adv.rmsnorm`` and its tiling struct ``RmsNormTiling``.

rmsnorm normalises each of the b·s rows (``h_length`` elements apart, the first
``original_h_length`` of them real) by the root mean square of the row, then scales by gamma:
``dst = src / sqrt(mean(src²) + eps) · gamma``.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.adv.composite import sequence
from ascsim.asc.context import current_core, user_location
from ascsim.asc.errors import CallFormError
from ascsim.asc.struct import Struct
from ascsim.isa import Handoff, count_repeats
from ascsim.sim.errors import KernelError
from ascsim.sim.numerics import compute_dtype


class RmsNormTiling(Struct):
    """Row layout for ``rmsnorm`` (pyasc's ``asc.adv.RmsNormTiling``)."""

    _fields_ = (
        ("b_length", "uint32", 0),
        ("s_length", "uint32", 0),
        ("h_length", "uint32", 0),
        ("original_h_length", "uint32", 0),
        ("reciprocal_of_h_length", "float32", 0.0),
        ("main_bsh_length", "uint32", 0),
        ("main_bs_length", "uint32", 0),
        ("main_bs_length_align", "uint32", 0),
        ("loop_round", "uint32", 0),
        ("input_tail_pos", "uint32", 0),
        ("tail_bsh_length", "uint32", 0),
        ("tail_bs_length", "uint32", 0),
    )


def rmsnorm(dst, src, gamma, epsilon, tiling, temp_buffer=None, basic_block: bool = False,
            **kwargs) -> None:
    """``rmsnorm(dst, src, gamma, epsilon, tiling, temp_buffer=None, basic_block=False)``."""
    loc = user_location()
    temp_buffer = kwargs.pop("shared_tmp_buffer", temp_buffer)
    if kwargs:
        raise CallFormError(f"rmsnorm: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    rows = int(tiling.b_length) * int(tiling.s_length)
    h = int(tiling.h_length)
    real_h = int(tiling.original_h_length) or h
    if rows <= 0 or h <= 0:
        raise KernelError(f"rmsnorm: tiling has {rows} rows of {h} elements", loc)
    if real_h > h:
        raise KernelError(f"rmsnorm: original_h_length {real_h} exceeds h_length {h}", loc)
    n = rows * h
    recip = np.float32(tiling.reciprocal_of_h_length or 1.0 / real_h)
    eps = np.float32(epsilon)
    out = dst.region(n)

    # Only the real columns of each row are written; the padding columns keep their values.
    written = (np.arange(rows)[:, None] * h + np.arange(real_h)[None, :]).reshape(-1)

    def rms_norm(x, g):
        x = compute_dtype(x).reshape(rows, h)[:, :real_h]
        g = compute_dtype(g)
        mean_sq = (x * x).sum(axis=1, dtype=np.float32) * recip
        y = x / np.sqrt(mean_sq + eps)[:, None] * g[None, :]
        return y if real_h == h else (written, y)

    size = max(dst.dtype.sizeof(), src.dtype.sizeof())
    scratch = () if temp_buffer is None else (temp_buffer.region(),)
    instr = sequence("rmsnorm", out, (src.region(n), gamma.region(real_h)), rms_norm,
                     rmsnorm_steps(rows, h, size, basic_block), count_repeats(n, size),
                     src.dtype.np_name, loc, scratch=scratch)
    # The library hands per-row results between the vector and the scalar unit (V_S sync), so
    # the scalar unit cannot run ahead into the next chunk: the published 910B4 per-pipe times
    # add up (Vec + Scalar ~ total per chunk, calibration.md) instead of overlapping.
    core = current_core()
    core.execute(Handoff(core.core_id, "V", "S", instr.done, loc, link="none"))


def rmsnorm_steps(rows: int, h: int, elem_bytes: int, basic_block: bool) -> list:
    """The vector instructions rmsnorm issues for ``rows`` rows of ``h`` elements.

    Both paths square the input, sum each row, turn the sums into 1/sqrt(sum/H + eps) (three
    short steps over one value per row), scale every row by its factor and multiply by gamma.
    The basic-block path (rows a multiple of 8, H a multiple of 64) sums all rows at once with
    per-block partial sums (VCGADD) and a short whole-reduce of the partials, then broadcasts
    the factors to blocks (brcb) and scales the whole chunk in one instruction. The general
    path reduces row by row with an accumulating VCADD (``reduce_acc``, the read-modify-write
    mode pypto prices at 7x [S14]) and scales row by row, so a chunk of few long rows pays
    two dependent instructions per row.
    """
    per_row = count_repeats(rows, 4)
    row = count_repeats(h, elem_bytes)
    factors = [("muls", per_row), ("adds", per_row), ("sqrt", per_row)]
    if basic_block:
        partials = count_repeats(rows * h // 8, elem_bytes)
        return (["mul", "block_reduce", ("reduce", partials)] + factors
                + [("brcb", per_row), "mul", "mul"])
    return (["mul"] + [("reduce_acc", row)] * rows + factors + [("muls", row)] * rows
            + ["mul"])
