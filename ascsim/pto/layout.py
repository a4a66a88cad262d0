"""Where each element of a 2-D tile lives: element offsets for the six tile layouts.

A tile of ``rows x cols`` elements is stored in a *frame*: ND row-major, DN column-major, or a
grid of fractals (ascend-hw §2.2). A fractal holds ``fr x fc`` elements in 512 bytes (16 rows of
32 bytes for NZ/ZZ, 32 bytes of rows x 16 columns for ZN/NN); an L0C fractal is 16 x 16 fp32.

=======  ====================  =================
layout   fractals ordered      inside a fractal
=======  ====================  =================
NZ       column by column      row-major
ZN       row by row            column-major
ZZ       row by row            row-major
NN       column by column      column-major
=======  ====================  =================

So ``[N, K]`` NZ and ``[K, N]`` ZN are the same bytes (a transpose costs no data movement).
The functions here return element offsets (from the tile's first element) for a window of the
tile; they are cached, since kernels ask for the same windows every iteration.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ascsim.pto.enums import TensorLayout

FRACTAL_BYTES = 512
FRACTAL_SIDE = 16
#: The L0C fractal: 16 x 16 accumulator elements whatever their width.
ACC_FRACTAL = (16, 16)


class Frame(NamedTuple):
    """How a tile's elements are stored: ``layout``, the stored (padded) shape, the fractal
    shape (``(1, 1)`` for ND/DN) and ``extra_rows`` (RowPlusOne: one padding row)."""

    layout: TensorLayout
    rows: int
    cols: int
    frac_rows: int
    frac_cols: int

    @property
    def elements(self) -> int:
        return self.rows * self.cols


def round_up(x: int, m: int) -> int:
    """``x`` rounded up to a multiple of ``m``."""
    return -(-x // m) * m


def fractal_shape(layout: TensorLayout, elem_bytes: float, accumulator: bool,
                  fractal_bytes: int = FRACTAL_BYTES) -> tuple[int, int]:
    """Rows x columns of one fractal of ``layout``: 16 rows (columns for ZN/NN) of
    ``fractal_bytes / 16`` bytes. ``fractal_bytes`` is 512 but for the MX scale tiles (E8M0 in
    ZZ / NN, 32 bytes: 16 x 2 scales, PyPTO Pro TileType.md "fractal=32")."""
    if layout in (TensorLayout.ND, TensorLayout.DN):
        return 1, 1
    if accumulator:
        return ACC_FRACTAL
    # (elem_bytes is 0.5 for the 4-bit floats: 64 of them to a 32-byte fractal row)
    c0 = max(1, int(fractal_bytes / FRACTAL_SIDE / elem_bytes))
    if layout in (TensorLayout.NZ, TensorLayout.ZZ):
        return FRACTAL_SIDE, c0
    return c0, FRACTAL_SIDE  # ZN, NN


def make_frame(layout: TensorLayout, rows: int, cols: int, elem_bytes: float,
               accumulator: bool = False, extra_rows: int = 0,
               fractal_bytes: int = FRACTAL_BYTES, exact_rows: bool = False) -> Frame:
    fr, fc = fractal_shape(layout, elem_bytes, accumulator, fractal_bytes)
    if exact_rows and layout == TensorLayout.NZ:
        # A UB NZ tile's column of fractals holds exactly its shape's rows: PyPTO Pro's
        # attention kernels declare [TKV // 2 + 1, TS_HALF] P tiles (one padding row, with or
        # without compact=2 RowPlusOne) and their VF stores address the columns TKV // 2 + 1
        # DataBlocks apart.
        return Frame(layout, rows, round_up(cols, fc), fr, fc)
    # RowPlusOne elsewhere: the shape counts the padding row; the data rows round to whole
    # fractals and the padding row follows them.
    stored = round_up(rows - extra_rows, fr) + extra_rows
    return Frame(layout, stored, round_up(cols, fc), fr, fc)


@lru_cache(maxsize=4096)
def window_offsets(frame: Frame, r0: int, c0: int, nrows: int, ncols: int) -> np.ndarray:
    """Element offsets (``nrows x ncols`` int64 array, read-only) of the window whose first
    element is ``(r0, c0)``."""
    r = np.arange(r0, r0 + nrows, dtype=np.int64)[:, None]
    c = np.arange(c0, c0 + ncols, dtype=np.int64)[None, :]
    out = OFFSETS[frame.layout](frame, r, c)
    out = np.ascontiguousarray(np.broadcast_to(out, (nrows, ncols)))
    out.setflags(write=False)
    return out


def _nd(f: Frame, r, c):
    return r * f.cols + c


def _dn(f: Frame, r, c):
    return c * f.rows + r


def _nz(f: Frame, r, c):
    return (c // f.frac_cols) * (f.rows * f.frac_cols) + r * f.frac_cols + c % f.frac_cols


def _zn(f: Frame, r, c):
    size = f.frac_rows * f.frac_cols
    return ((r // f.frac_rows) * (f.cols // f.frac_cols) + c // f.frac_cols) * size \
        + (c % f.frac_cols) * f.frac_rows + r % f.frac_rows


def _zz(f: Frame, r, c):
    size = f.frac_rows * f.frac_cols
    return ((r // f.frac_rows) * (f.cols // f.frac_cols) + c // f.frac_cols) * size \
        + (r % f.frac_rows) * f.frac_cols + c % f.frac_cols


def _nn(f: Frame, r, c):
    size = f.frac_rows * f.frac_cols
    return ((c // f.frac_cols) * (f.rows // f.frac_rows) + r // f.frac_rows) * size \
        + (c % f.frac_cols) * f.frac_rows + r % f.frac_rows


OFFSETS = {TensorLayout.ND: _nd, TensorLayout.DN: _dn, TensorLayout.NZ: _nz,
           TensorLayout.ZN: _zn, TensorLayout.ZZ: _zz, TensorLayout.NN: _nn}
