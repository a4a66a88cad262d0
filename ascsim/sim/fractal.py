"""Fractal layouts of the cube buffers and conversions to and from row-major (ND) matrices.

A fractal is a small row-major tile: 16 rows of C0 elements, C0 = 32 B / sizeof(dtype) (16 for
fp16/bf16, 8 for fp32, 32 for int8), i.e. 512 B, in L1/L0A/L0B; 16x16 fp32/int32 elements (1 KB)
in L0C. A matrix of H x W elements is cut into H1 x W1 fractals (padded up to whole fractals) and
the layouts differ only in how the fractals, and the elements inside them, are ordered:

* NZ ("big N, small Z", L1 and L0C; L0A on 3510): fractal columns one after the other, each a
  column of fractals top to bottom; rows inside a fractal are row-major.  Array [W1][H1][H0][W0],
  which is the same as [W1][H1*H0][W0]: one C0-wide column strip of the matrix after the other.
* ZZ ("big Z, small Z", L0A on 2201): fractals row by row, row-major inside. [H1][W1][H0][W0].
* ZN ("big Z, small N", L0B): fractals row by row, each stored column-major, i.e. transposed.
  For B[K][N] the fractal is K0 = C0 rows by N0 = 16 columns stored as [n0][k0], so the array
  is [K1][N1][N0][K0] and C0 lies along the matrix's rows.

All conversions are one numpy pad + reshape + transpose; nothing loops over fractals.
"""

from __future__ import annotations

import numpy as np

FRACTAL_ROWS = 16
FRACTAL_BYTES = 512
L0C_C0 = 16  # L0C fractals are 16 x 16 whatever the accumulator type


def c0_of(dtype) -> int:
    """Elements per 32-byte fractal row for ``dtype`` (16 for fp16, 8 for fp32, 32 for int8)."""
    size = np.dtype(dtype).itemsize
    if 32 % size:
        raise ValueError(f"no fractal layout for {np.dtype(dtype)} ({size}-byte elements)")
    return 32 // size


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _pad(mat: np.ndarray, rows: int, cols: int, fill=0) -> np.ndarray:
    h, w = mat.shape
    if (h, w) == (rows, cols):
        return mat
    out = np.full((rows, cols), fill, dtype=mat.dtype)
    out[:h, :w] = mat
    return out


def _blocks(mat: np.ndarray, h0: int, w0: int, fill) -> tuple[np.ndarray, int, int]:
    """``mat`` padded and viewed as [H1][H0][W1][W0]."""
    h, w = mat.shape
    h1, w1 = _ceil(h, h0), _ceil(w, w0)
    padded = _pad(np.asarray(mat), h1 * h0, w1 * w0, fill)
    return padded.reshape(h1, h0, w1, w0), h1, w1


# ------------------------------------------------------------------------------ ND -> fractal
def nd_to_nz(mat: np.ndarray, c0: int | None = None, fill=0) -> np.ndarray:
    """Row-major H x W -> NZ array [W1][H1*16][C0] (flatten it for the memory image)."""
    c0 = c0 or c0_of(mat.dtype)
    b, h1, w1 = _blocks(mat, FRACTAL_ROWS, c0, fill)
    return b.transpose(2, 0, 1, 3).reshape(w1, h1 * FRACTAL_ROWS, c0)


def nd_to_zz(mat: np.ndarray, c0: int | None = None, fill=0) -> np.ndarray:
    """Row-major H x W -> ZZ array [H1][W1][16][C0]."""
    c0 = c0 or c0_of(mat.dtype)
    b, _, _ = _blocks(mat, FRACTAL_ROWS, c0, fill)
    return b.transpose(0, 2, 1, 3)


def nd_to_zn(mat: np.ndarray, c0: int | None = None, fill=0) -> np.ndarray:
    """Row-major K x N -> ZN array [K1][N1][16 (n)][C0 (k)]: C0 along the rows (K)."""
    c0 = c0 or c0_of(mat.dtype)
    b, _, _ = _blocks(mat, c0, FRACTAL_ROWS, fill)  # [K1][K0][N1][N0]
    return b.transpose(0, 2, 3, 1)


# ------------------------------------------------------------------------------ fractal -> ND
def nz_to_nd(flat: np.ndarray, rows: int, cols: int, c0: int, padded_rows: int | None = None
             ) -> np.ndarray:
    """NZ memory image (``padded_rows`` rows per C0 strip) -> the top-left rows x cols matrix."""
    h = padded_rows if padded_rows is not None else _ceil(rows, FRACTAL_ROWS) * FRACTAL_ROWS
    w1 = _ceil(cols, c0)
    strips = np.asarray(flat)[: w1 * h * c0].reshape(w1, h, c0)
    return strips.transpose(1, 0, 2).reshape(h, w1 * c0)[:rows, :cols]


def zz_to_nd(flat: np.ndarray, rows: int, cols: int, c0: int) -> np.ndarray:
    """ZZ memory image -> rows x cols."""
    h1, w1 = _ceil(rows, FRACTAL_ROWS), _ceil(cols, c0)
    b = np.asarray(flat)[: h1 * w1 * FRACTAL_ROWS * c0].reshape(h1, w1, FRACTAL_ROWS, c0)
    return b.transpose(0, 2, 1, 3).reshape(h1 * FRACTAL_ROWS, w1 * c0)[:rows, :cols]


def zn_to_nd(flat: np.ndarray, rows: int, cols: int, c0: int) -> np.ndarray:
    """ZN memory image -> rows (K, C0 per fractal) x cols (N, 16 per fractal)."""
    k1, n1 = _ceil(rows, c0), _ceil(cols, FRACTAL_ROWS)
    b = np.asarray(flat)[: k1 * n1 * FRACTAL_ROWS * c0].reshape(k1, n1, FRACTAL_ROWS, c0)
    return b.transpose(0, 3, 1, 2).reshape(k1 * c0, n1 * FRACTAL_ROWS)[:rows, :cols]


def fractal_elems(dtype) -> int:
    """Elements in one 512-byte L1/L0A/L0B fractal."""
    return FRACTAL_BYTES // np.dtype(dtype).itemsize
