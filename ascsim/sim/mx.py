"""The MX (microscaling) product of the 950's ``mad_mx``: FP8 / FP4 operands whose every 32
consecutive elements along K share one E8M0 scale.

An E8M0 scale is a bare exponent byte: code ``e`` is ``2^(e - 127)`` for ``e`` in 0..254, and
``0xFF`` is NaN (OCP Microscaling Formats spec v1.0 §5.4; PyPTO Pro matmul_mx.md: "2^(e8m0-127)").
The product is ``dequant(A, SA) @ dequant(B, SB)``: ``A[m, k] * 2^(SA[m, k//32] - 127)`` times
``B[k, n] * 2^(SB[k//32, n] - 127)`` summed over K.

Where the scales live (PyPTO Pro MemorySpace.md): the instruction names only the L0A / L0B data
addresses; A's scales are read from the L0A MX buffer at byte ``L0A address >> 4``, B's from the
L0B MX buffer at ``L0B address >> 4``. A's scales are ``[M, K/32]`` in ZZ fractals of 16 x 2,
B's ``[K/32, N]`` in NN fractals of 2 x 16 (32 bytes each: TileType.md "fractal=32").

Numerics: every product of two FP8 / FP4 values is exact, and so is its scaling by a power of
two within float64's range; the sum is formed in float64 and rounded once to the fp32
accumulator. (Forming the scaled operands in fp32 would overflow where the scales are extreme
but their product is not, e.g. ``2^127 * 2^-127``; the device combines the two exponents.)
"""

from __future__ import annotations

import numpy as np

#: Elements of K that share one scale (OCP MX: block size 32).
GROUP = 32
#: K is consumed in steps of two scale groups (PyPTO Pro matmul_mx.md: K a multiple of 64).
K_MULTIPLE = 64
#: An E8M0 code's exponent bias, and its NaN code.
E8M0_BIAS = 127
E8M0_NAN = 0xFF


def e8m0_values(codes: np.ndarray) -> np.ndarray:
    """The float64 value of every E8M0 code (``2^(e - 127)``, NaN for ``0xFF``)."""
    e = np.asarray(codes).view(np.uint8)  # the codes' bytes, whatever type holds them
    out = np.ldexp(1.0, e.astype(np.int32) - E8M0_BIAS)
    return np.where(e == E8M0_NAN, np.nan, out)


def scale_a_offsets(rows: int, groups: int) -> np.ndarray:
    """Byte offsets (``rows x groups``) of A's scales in their ZZ frame of 16 x 2 fractals,
    ``rows`` a multiple of 16 and ``groups`` of 2."""
    r = np.arange(rows)[:, None]
    g = np.arange(groups)[None, :]
    return ((r // 16) * (groups // 2) + g // 2) * 32 + (r % 16) * 2 + g % 2


def scale_b_offsets(groups: int, cols: int) -> np.ndarray:
    """Byte offsets (``groups x cols``) of B's scales in their NN frame of 2 x 16 fractals."""
    g = np.arange(groups)[:, None]
    c = np.arange(cols)[None, :]
    return ((c // 16) * (groups // 2) + g // 2) * 32 + (c % 16) * 2 + g % 2


def product(a: np.ndarray, b: np.ndarray, scale_a: np.ndarray, scale_b: np.ndarray,
            initial: np.ndarray | None) -> np.ndarray:
    """``initial`` (or 0) + dequant(``a``) @ dequant(``b``) in fp32.

    ``a``: ``m x k`` element values, ``b``: ``k x n`` (any float types), ``scale_a``: E8M0
    codes ``m x k/32``, ``scale_b``: ``k/32 x n``."""
    k = a.shape[1]
    sa = np.repeat(e8m0_values(scale_a), GROUP, axis=1)[:, :k]
    sb = np.repeat(e8m0_values(scale_b), GROUP, axis=0)[:k, :]
    with np.errstate(invalid="ignore", over="ignore"):
        out = (a.astype(np.float64) * sa) @ (b.astype(np.float64) * sb)
        result = out.astype(np.float32)
        if initial is not None:
            result = initial.astype(np.float32) + result
    return result
