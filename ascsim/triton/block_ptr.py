"""``tl.make_block_ptr`` / ``tl.advance``: a block of a strided tensor, and loads and stores
through it with ``boundary_check`` and ``padding_option``.

A block pointer is index arithmetic: its element offsets (``offsets[d] + arange(block[d])``
times ``strides[d]``, summed over the dimensions) and its bounds mask (``0 <= index[d] <
shape[d]`` on the checked dimensions) are known values, so a load through it is the ordinary
copy of :mod:`ascsim.triton.memory` -- bursts along the contiguous dimension, the discrete path
otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.triton.errors import CompilationError
from ascsim.triton.semantic import unwrap
from ascsim.triton.tensor import known, tensor


def _ints(values, what: str) -> tuple[int, ...]:
    values = unwrap(values)
    if not isinstance(values, (list, tuple)):
        values = (values,)
    out = []
    for v in values:
        v = unwrap(v)
        if isinstance(v, tensor) and v.known is None:
            raise CompilationError(f"a block pointer's {what} must be index arithmetic, not "
                                   "loaded data")
        out.append(int(v))
    return tuple(out)


@dataclass(frozen=True)
class BlockPointer:
    """A ``block_shape`` window at ``offsets`` of the tensor ``base`` (``shape``, ``strides``
    in elements); ``order`` is the compiler's layout hint."""

    base: tensor
    shape: tuple
    strides: tuple
    offsets: tuple
    block_shape: tuple
    order: tuple

    def __post_init__(self):
        rank = len(self.block_shape)
        if not (len(self.shape) == len(self.strides) == len(self.offsets) == rank):
            raise ValueError(f"make_block_ptr: shape {self.shape}, strides {self.strides}, "
                             f"offsets {self.offsets} and block_shape {self.block_shape} must "
                             "have the same rank")
        if not isinstance(self.base, tensor) or self.base.gm is None:
            raise ValueError("make_block_ptr: base must be a pointer to a kernel tensor")

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def type(self):
        """The pointer type (``bptr.type.element_ty`` is the element type)."""
        return self.base.dtype

    def indices(self) -> list[np.ndarray]:
        """Each dimension's element index over the block, broadcast to the block."""
        rank = len(self.block_shape)
        out = []
        for d, (start, size) in enumerate(zip(self.offsets, self.block_shape)):
            shape = [1] * rank
            shape[d] = size
            out.append(np.arange(start, start + size, dtype=np.int64).reshape(shape))
        return out

    def pointers(self) -> tensor:
        index = self.indices()
        offsets = np.asarray(self.base.known, dtype=np.int64)
        for idx, stride in zip(index, self.strides):
            offsets = offsets + idx * stride
        offsets = np.broadcast_to(offsets, self.block_shape)
        return tensor(self.base.dtype, self.block_shape, known=offsets, gm=self.base.gm)

    def mask(self, boundary_check) -> tensor | None:
        dims = _ints(boundary_check, "boundary_check") if boundary_check else ()
        if not dims:
            return None
        index = self.indices()
        inside = np.ones(self.block_shape, dtype=bool)
        for d in dims:
            if not 0 <= d < len(self.block_shape):
                raise ValueError(f"boundary_check dimension {d} is outside the block's rank "
                                 f"{len(self.block_shape)}")
            inside &= (index[d] >= 0) & (index[d] < self.shape[d])
        return known(inside)


def make_block_ptr(base, shape, strides, offsets, block_shape, order) -> BlockPointer:
    return BlockPointer(unwrap(base), _ints(shape, "shape"), _ints(strides, "strides"),
                        _ints(offsets, "offsets"), _ints(block_shape, "block_shape"),
                        _ints(order, "order"))


def advance(base: BlockPointer, offsets) -> BlockPointer:
    step = _ints(offsets, "offsets")
    if len(step) != len(base.offsets):
        raise ValueError(f"advance: {len(step)} offsets for a block of rank "
                         f"{len(base.offsets)}")
    return BlockPointer(base.base, base.shape, base.strides,
                        tuple(o + s for o, s in zip(base.offsets, step)), base.block_shape,
                        base.order)


#: ``padding_option`` -> the value of the elements outside the bounds.
PADDING = {"": 0, None: 0, "zero": 0, "nan": float("nan")}


@dataclass(frozen=True)
class TensorDescriptor:
    """``tl.make_tensor_descriptor(base, shape, strides, block_shape)``: a tensor in GM read
    and written a ``block_shape`` block at a time at given element offsets. Each access is a
    block pointer at those offsets, so its copies are those of block pointers. triton-ascend
    does not mask the accesses by ``shape`` (its generalization test copies an ``[n, N]``
    tensor through descriptors of shape ``[1, N]``, one row per program, and expects every
    row): neither does this one, and an access past the tensor's end is a
    ``gm-out-of-bounds`` finding."""

    base: tensor
    shape: tuple
    strides: tuple
    block_shape: tuple

    @property
    def dtype(self):
        return self.base.dtype.element_ty

    def block(self, offsets) -> BlockPointer:
        offsets = _ints(offsets, "offsets")
        return BlockPointer(self.base, self.shape, self.strides, offsets, self.block_shape,
                            tuple(reversed(range(len(self.block_shape)))))

    def load(self, offsets):
        from ascsim.sim.source import user_location
        from ascsim.triton import memory

        ptr = self.block(offsets)
        return memory.load(ptr.pointers(), None, 0, user_location())

    def store(self, offsets, value):
        from ascsim.sim.source import user_location
        from ascsim.triton import memory, semantic

        ptr = self.block(offsets)
        memory.store(ptr.pointers(), semantic.operand(unwrap(value)), None, user_location())


def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    return TensorDescriptor(unwrap(base), _ints(shape, "shape"), _ints(strides, "strides"),
                            _ints(block_shape, "block_shape"))
