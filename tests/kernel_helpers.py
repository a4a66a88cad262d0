"""Shared helpers of the vector/cast/data-copy tests.

``run_vector(body, out, *inputs)`` launches one generic one-core kernel: it copies every input
(and the initial ``out``, so elements an op must not touch can be checked) from GM into its own
UB buffer, calls ``body(dst, *srcs)`` there, and copies ``dst`` back. The kernel is compiled once;
the body and the sizes are compile-time arguments.

The numpy references here are written independently of ascsim: element addressing of the
mask/repeat form is spelled out with plain loops over repeats and positions, and float results
are compared in units in the last place via the sign-magnitude ordering of the bit patterns.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import ascsim.asc as asc

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = (np.dtype(np.float16), np.dtype(np.float32), BF16)
BLOCK = 32


def padded(arr: np.ndarray) -> np.ndarray:
    """``arr`` flattened and extended with zeros to a whole number of 32-byte blocks."""
    arr = np.ascontiguousarray(arr).reshape(-1)
    per = BLOCK // arr.dtype.itemsize
    n = max(per, -(-arr.size // per) * per)
    out = np.zeros(n, dtype=arr.dtype)
    out[: arr.size] = arr
    return out


@asc.jit
def _vector_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                   out: asc.GlobalAddress, sizes: asc.ConstExpr[tuple],
                   body: asc.ConstExpr[object], n_srcs: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf_a = asc.TBuf(asc.TPosition.VECCALC)
    buf_b = asc.TBuf(asc.TPosition.VECCALC)
    buf_c = asc.TBuf(asc.TPosition.VECCALC)
    buf_o = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf_a, num=sizes[0] * a.dtype.sizeof())
    pipe.init_buffer(buf=buf_b, num=sizes[1] * b.dtype.sizeof())
    pipe.init_buffer(buf=buf_c, num=sizes[2] * c.dtype.sizeof())
    pipe.init_buffer(buf=buf_o, num=sizes[3] * out.dtype.sizeof())
    la = buf_a.get(a.dtype)
    lb = buf_b.get(b.dtype)
    lc = buf_c.get(c.dtype)
    lo = buf_o.get(out.dtype)
    ga = asc.GlobalTensor()
    gb = asc.GlobalTensor()
    gc = asc.GlobalTensor()
    go = asc.GlobalTensor()
    ga.set_global_buffer(a)
    gb.set_global_buffer(b)
    gc.set_global_buffer(c)
    go.set_global_buffer(out)
    asc.data_copy(la, ga, sizes[0])
    asc.data_copy(lb, gb, sizes[1])
    asc.data_copy(lc, gc, sizes[2])
    asc.data_copy(lo, go, sizes[3])
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if n_srcs == 0:
        body(lo)
    elif n_srcs == 1:
        body(lo, la)
    elif n_srcs == 2:
        body(lo, la, lb)
    else:
        body(lo, la, lb, lc)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(go, lo, sizes[3])


def run_vector(body, out: np.ndarray, *inputs: np.ndarray):
    """Run ``body(dst, *srcs)`` on UB copies; returns (result array of out's size, report)."""
    srcs = [padded(x) for x in inputs]
    while len(srcs) < 3:
        srcs.append(np.zeros(BLOCK // 4, np.float32))
    dst = padded(out)
    sizes = tuple(x.size for x in (*srcs, dst))
    report = _vector_kernel[1](*srcs, dst, sizes, body, len(inputs))
    return dst[: out.size], report


# ------------------------------------------------------------------------ references
def repeat_positions(mask, per_repeat: int) -> list[int]:
    """Enabled positions of a repeat: first ``mask`` ones, or the set bits of [low, high]."""
    if isinstance(mask, (list, tuple)):
        return [p for p in range(per_repeat) if (int(mask[p // 64]) >> (p % 64)) & 1]
    return list(range(mask))


def strided_index(mask, repeat_times: int, per_repeat: int, itemsize: int, blk: int,
                  rep: int) -> list[list[int]]:
    """Per repeat, the element index of every enabled position (plain loops, on purpose)."""
    per_block = BLOCK // itemsize
    out = []
    for r in range(repeat_times):
        row = []
        for p in repeat_positions(mask, per_repeat):
            block = p // per_block
            row.append((r * rep + block * blk) * per_block + p % per_block)
        out.append(row)
    return out


def ordinal(x: np.ndarray) -> np.ndarray:
    """Float bit patterns mapped to integers that count ulps (monotonic in the value)."""
    width = x.dtype.itemsize * 8
    bits = x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]).astype(np.int64)
    sign = bits >> (width - 1)
    mag = bits & ((1 << (width - 1)) - 1)
    return np.where(sign == 1, -mag, mag)


def assert_ulps(actual: np.ndarray, expected: np.ndarray, ulps: int = 0) -> None:
    """Float results within ``ulps`` units in the last place (NaN must match NaN)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    a64 = actual.astype(np.float64)
    e64 = expected.astype(np.float64)
    nan_a, nan_e = np.isnan(a64), np.isnan(e64)
    assert (nan_a == nan_e).all(), f"NaN mismatch at {np.flatnonzero(nan_a != nan_e)[:8]}"
    ok = ~nan_a
    dist = np.abs(ordinal(actual[ok]) - ordinal(expected[ok]))
    bad = np.flatnonzero(dist > ulps)
    assert bad.size == 0, (
        f"{bad.size} element(s) differ by more than {ulps} ulp; first: "
        f"actual {a64[ok][bad[:5]]} expected {e64[ok][bad[:5]]} ({dist[bad[:5]]} ulp)")


def assert_same(actual: np.ndarray, expected: np.ndarray, ulps: int = 0) -> None:
    """Exact equality for ints, ulp distance for floats."""
    if actual.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, expected)
    else:
        assert_ulps(actual, expected, ulps)


def round_to(x64: np.ndarray, dtype) -> np.ndarray:
    """An exact (fp64) value rounded once, to nearest even, to ``dtype``."""
    return np.asarray(x64, dtype=np.float64).astype(dtype)


def random_floats(rng: np.random.Generator, n: int, dtype, lo=-4.0, hi=4.0) -> np.ndarray:
    return rng.uniform(lo, hi, n).astype(dtype)


def eps(dtype) -> float:
    """Unit roundoff spacing at 1.0 of a float type (2**-(mantissa bits))."""
    return float(np.finfo(dtype).eps) if dtype != BF16 else 2.0**-7


def assert_within(actual: np.ndarray, exact: np.ndarray, scale: np.ndarray, dtype) -> None:
    """``actual`` within one ``dtype`` epsilon of ``scale`` (the operands' magnitude) of the
    exact fp64 result: the bound of a multiply-add rounded once or twice."""
    err = np.abs(actual.astype(np.float64) - exact)
    bound = eps(dtype) * np.abs(scale) + np.abs(exact) * eps(dtype)
    bad = np.flatnonzero(err > bound)
    assert bad.size == 0, (f"{bad.size} element(s) off: actual {actual[bad[:5]]} "
                           f"exact {exact[bad[:5]]}")
