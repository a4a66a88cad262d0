"""What a vector function's names hold: register handles, UB pointers, address registers.

A handle is the compiler's view of a register: its number in the core's VF register file
(:mod:`ascsim.sim.vf_registers`, where the values live), the element type the kernel's code
gives it, and the name it has in the kernel (for findings). Handles are immutable; an
assignment ``reg = vf.op(...)`` binds the name to a new handle of the same register.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa import KernelError
from ascsim.pto.layout import window_offsets
from ascsim.pto.tile import Tile


class Reg:
    """A vector register (``vf.reg_tensor``): 256 bytes read as ``dtype`` (numpy)."""

    __slots__ = ("number", "dtype", "name")
    kind = "vector"

    def __init__(self, number: int, dtype, name: str):
        self.number = number
        self.dtype = dtype  # None: declared, never written
        self.name = name

    def __repr__(self) -> str:
        return f"<vf register {self.name} {getattr(self.dtype, 'name', '?')}>"


class Mask(Reg):
    """A mask register (``vf.mask_reg``): 256 predicate bits, made for elements of
    ``dtype`` (its granularity)."""

    __slots__ = ()
    kind = "mask"

    def __repr__(self) -> str:
        return f"<vf mask {self.name}>"


class AddrReg:
    """An address register (``vf.create_addr_reg``): an element offset for loads and stores."""

    __slots__ = ("offset", "name")
    kind = "address"

    def __init__(self, offset: int, name: str = ""):
        self.offset = int(offset)
        self.name = name


class UnalignReg:
    """An unaligned-access register (``vf.load_unalign_init``, ``vf.unalign_reg_for_store``):
    the state of an unaligned load or store stream."""

    __slots__ = ("name",)
    kind = "unaligned"

    def __init__(self, name: str = ""):
        self.name = name


class Declared:
    """A name the function assigns a register to, before its first assignment ran: which kind
    of register the compiler gave it and its number."""

    __slots__ = ("number", "kind", "name")
    dtype = None

    def __init__(self, number: int, kind: str, name: str):
        self.number = number
        self.kind = kind
        self.name = name

    def handle(self):
        """The unwritten register as an operand (reading it is a finding of the machine)."""
        cls = Mask if self.kind == "mask" else Reg
        return cls(self.number, None, self.name)


class UbPointer:
    """A tile argument inside a vector function: a UB base pointer, ``tile + n`` offsets it by
    ``n`` elements. ``offset`` counts elements from the tile's allocation; without one, the
    pointer starts at the tile's first element, which for a sub-tile view (``tile[:, 64:]``)
    lies inside its parent's frame.

    Accesses that advance the pointer (post-update loads and stores, strided streams) read
    and move ``cursor``, a second pointer that starts at ``offset``; the others always use
    ``offset``. PyPTO Pro's code generator keeps the two apart the same way
    (``CCECodegen::GetOrCreateVFTilePtr``: a post-update cursor and a plain base pointer to one
    tile are independent variables), so a plain load after a post-update store stream still
    reads from the tile's start (the lightning indexer's squeeze-then-broadcast)."""

    __slots__ = ("tile", "offset", "cursor")

    def __init__(self, tile: Tile, offset: int | None = None):
        self.tile = tile
        self.offset = first_element(tile) if offset is None else int(offset)
        self.cursor = self.offset

    @property
    def np_dtype(self) -> np.dtype:
        return self.tile.np_dtype

    def __add__(self, n) -> UbPointer:
        return UbPointer(self.tile, self.offset + int(n))

    __radd__ = __add__

    def __sub__(self, n) -> UbPointer:
        return UbPointer(self.tile, self.offset - int(n))

    def copy(self) -> UbPointer:
        ptr = UbPointer(self.tile, self.offset)
        ptr.cursor = self.cursor
        return ptr

    def __repr__(self) -> str:
        return f"<UB pointer {self.tile!r} + {self.offset}>"


def first_element(tile: Tile) -> int:
    """The element offset of ``tile``'s first element from its allocation's start (0 but for
    a sub-tile view)."""
    if tile.origin == (0, 0):
        return 0
    return int(window_offsets(tile.frame, *tile.origin, 1, 1)[0, 0])


def pointer(value, op: str, loc) -> UbPointer:
    if isinstance(value, UbPointer):
        return value
    if isinstance(value, Tile):
        return UbPointer(value)
    raise KernelError(f"vf.{op}: expected a UB tile, got {type(value).__name__}", loc)


__all__ = ["AddrReg", "Declared", "Mask", "Reg", "UbPointer", "UnalignReg", "pointer"]
