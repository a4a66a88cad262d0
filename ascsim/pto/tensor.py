"""GM tensors and pointers as a PyPTO Pro kernel sees them.

A kernel's ``pl.Tensor`` parameter is a :class:`GmTensor`: a GM allocation (the launch argument's
device copy), an element offset, a shape and element strides. ``pl.make_tensor`` builds another
view over a tensor or pointer; ``pl.set_stride`` rewrites a 2-D view's strides. ``tensor[i, j]``
reads or writes one element from the scalar unit.
"""

from __future__ import annotations

from ascsim.isa import KernelError, ScalarLoad, ScalarStore, region_of
from ascsim.pto.dtypes import DataType
from ascsim.pto.enums import TensorLayout
from ascsim.sim.scheduler import current_core
from ascsim.sim.source import user_location


def contiguous_strides(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= int(d)
    return tuple(reversed(strides))


class GmTensor:
    """``shape`` elements of ``dtype`` in GM allocation ``buffer`` from element ``offset``."""

    __slots__ = ("buffer", "offset", "shape", "strides", "dtype", "layout", "name", "pitches")

    def __init__(self, buffer, offset: int, shape, strides, dtype: DataType,
                 layout: TensorLayout = TensorLayout.ND, name: str = ""):
        self.buffer = buffer
        self.offset = int(offset)
        self.shape = tuple(int(d) for d in shape)
        self.strides = tuple(int(s) for s in strides)
        # set_stride's row and column strides: they space the rows and columns of a loaded or
        # stored window; offsets still count in ``strides`` (the tensor's own layout).
        self.pitches: tuple[int, int] | None = None
        self.dtype = dtype
        self.layout = layout
        self.name = name or getattr(buffer, "name", "")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def region(self):
        """The allocation from this view's first element on, as an operand."""
        size = self.dtype.np_dtype.itemsize
        count = max(self.buffer.nbytes // size - self.offset, 0)
        return region_of((self.buffer, self.offset * size, count, self.dtype.np_dtype, None, None,
                          None))

    def linear(self, index) -> int:
        """Element offset (from this view's first element) of a subscript."""
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) == 1 and self.ndim != 1:
            return int(index[0])  # a linear offset, as pl.getval takes
        if len(index) != self.ndim:
            raise KernelError(f"tensor subscript has {len(index)} indices, the tensor has "
                              f"{self.ndim} dimensions", user_location(2))
        return sum(int(i) * s for i, s in zip(index, self.strides))

    def __getitem__(self, index):
        loc = user_location()
        return current_core().execute(ScalarLoad(self.region().at(self.linear(index), 1), loc))

    def __setitem__(self, index, value) -> None:
        loc = user_location()
        current_core().execute(ScalarStore(self.region().at(self.linear(index), 1),
                                           self.dtype.np_dtype.type(value), loc))

    def __repr__(self) -> str:
        return f"GmTensor({self.name}+{self.offset}, {list(self.shape)}, {self.dtype!r})"


class GmPointer:
    """``pl.Ptr[dtype]``: an element address in a GM allocation."""

    __slots__ = ("buffer", "offset", "dtype")

    def __init__(self, buffer, offset: int, dtype: DataType):
        self.buffer = buffer
        self.offset = int(offset)
        self.dtype = dtype

    def __add__(self, n) -> GmPointer:
        if self.dtype.bits < 8:
            raise KernelError("pointer arithmetic is not supported on sub-byte element types",
                              user_location())
        return GmPointer(self.buffer, self.offset + int(n), self.dtype)

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"GmPointer({self.buffer.name}+{self.offset}, {self.dtype!r})"


def make_tensor(base, shape, stride=None, dtype=None) -> GmTensor:
    """``pl.make_tensor(ptr_or_tensor, shape, stride=None, dtype=None)``."""
    if not isinstance(base, (GmTensor, GmPointer)):
        raise KernelError(f"make_tensor expects a tensor or pointer, got {type(base).__name__}",
                          user_location())
    elem = dtype or base.dtype
    offset = base.offset
    if elem.nbytes != base.dtype.nbytes:  # a reinterpretation: keep the byte address
        offset = offset * base.dtype.nbytes // elem.nbytes
    shape = [int(d) for d in shape]
    strides = contiguous_strides(shape) if stride is None else [int(s) for s in stride]
    return GmTensor(base.buffer, offset, shape, strides, elem)


def make_ptr(base, dtype=None) -> GmPointer:
    """``pl.make_ptr(tensor, dtype=None)``."""
    elem = dtype or base.dtype
    offset = base.offset * base.dtype.nbytes // elem.nbytes
    return GmPointer(base.buffer, offset, elem)


def addptr(ptr: GmPointer, n) -> GmPointer:
    return ptr + n


def set_stride(tensor: GmTensor, strides) -> None:
    """``pl.set_stride(tensor, [row_stride, col_stride])``: later loads and stores space the
    window's rows and columns by them (the window's first element is still found with the
    tensor's own strides: ``load(tile, x, [i, 0])`` after ``set_stride(x, [s, 1])`` reads row
    ``i`` and row ``i + s / width``)."""
    if tensor.dtype.packed and len(strides) == 2:
        # A packed 4-bit tensor's loads read its packed layout (movement._load_packed); its
        # set_stride counts codes of that layout, at any rank, and changes nothing here.
        return
    if tensor.ndim != 2 or len(strides) != 2:
        raise KernelError("set_stride applies to a 2-D tensor and takes two strides",
                          user_location())
    tensor.pitches = (int(strides[0]), int(strides[1]))
