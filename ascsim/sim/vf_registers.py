"""The register file of a core's register-level vector functions (the 950's RegBase VF).

A vector register holds 256 bytes, read as the element type an instruction names (256 b8, 128
b16, 64 b32 or 32 b64 lanes); a mask register holds 256 predicate bits, of which an element of
``k`` bytes uses the first of its ``k`` bits (PyPTO Pro's vf.create_mask page: b8 one bit, b16
two, b32 four, b64 eight per element). The registers a function declares are allocated when
it starts (:class:`~ascsim.isa.RegisterFunction`) with undefined contents: reading one that
was never written is an ``uninitialized-register`` finding and reads the 0xFF fill (NaN for
floats); a mask never set reads as all lanes off.
"""

from __future__ import annotations

import numpy as np

REGISTER_BYTES = 256
MASK_BITS = 256
#: What an unwritten vector register holds (the fill of fresh local memory, NaN as a float).
FILL_BYTE = 0xFF


class RegisterFile:
    """The VF registers of one core while a vector function runs: register number -> value
    (a vector register's 256 bytes as a typed array, a mask register's 256 bits as a bool
    array), their kinds and the names the kernel gave them, and the special registers the
    functions use (``ar``: the count the last squeeze stored)."""

    __slots__ = ("values", "kinds", "names", "ar", "depth", "float_errors", "prices")

    def __init__(self):
        self.values: dict[int, np.ndarray] = {}
        self.kinds: dict[int, str] = {}
        self.names: dict[int, str] = {}
        self.ar = 0
        self.depth = 0  # nested vector-function calls running
        self.float_errors: dict = {}  # numpy's error settings before the outermost call
        # (op, access kind, dtype) -> (V-pipe cycles, latency): an instruction's price depends
        # on nothing else, and looking it up in the SoC's tables is most of a record's cost.
        self.prices: dict = {}

    def declare(self, number: int, kind: str, name: str) -> None:
        self.values.pop(number, None)
        self.kinds[number] = kind
        self.names[number] = name

    def release(self, numbers) -> None:
        for number in numbers:
            self.values.pop(number, None)
            self.kinds.pop(number, None)
            self.names.pop(number, None)


def register_file(core) -> RegisterFile:
    """The core's VF register file (made on first use)."""
    regs = getattr(core, "vf_registers", None)
    if regs is None:
        regs = core.vf_registers = RegisterFile()
    return regs


def lanes(dtype: np.dtype) -> int:
    """Elements of ``dtype`` in one vector register."""
    return REGISTER_BYTES // dtype.itemsize


def active_lanes(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Which elements of ``dtype`` a mask's bits enable (the first bit of each element's)."""
    return bits[::dtype.itemsize]


#: The mask of every lane, shared (read-only): a predicate that is this object needs no
#: lane-by-lane selection, which most VF instructions of a kernel are given.
ALL_LANES = np.ones(MASK_BITS, dtype=bool)
ALL_LANES.setflags(write=False)


def lane_bits(active: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The 256 mask bits that enable exactly the elements ``active`` of ``dtype``."""
    if active.size * dtype.itemsize == MASK_BITS and active.all():
        return ALL_LANES
    bits = np.zeros(MASK_BITS, dtype=bool)
    size = dtype.itemsize
    bits[:active.size * size] = np.repeat(active, size)
    return bits


def unwritten_vector(dtype: np.dtype) -> np.ndarray:
    return np.full(REGISTER_BYTES, FILL_BYTE, dtype=np.uint8).view(dtype)


__all__ = ["ALL_LANES", "FILL_BYTE", "MASK_BITS", "REGISTER_BYTES", "RegisterFile", "active_lanes",
           "lane_bits", "lanes", "register_file", "unwritten_vector"]
