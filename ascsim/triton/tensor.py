"""``tl.tensor``: a value of a Triton kernel, and where it lives.

A Triton value is one of three things, as triton-ascend's compiler treats it:

* **known** -- index and address arithmetic: ``tl.program_id``, ``tl.arange``, kernel scalars,
  constants, the pointers and masks made from them. The compiler folds these into the copies'
  addresses, lengths and masks and into scalar registers; here they are numpy arrays the
  front-end keeps (``known``), computed with the device's integer widths.
* **a tile** -- data in UB, made by ``tl.load`` and the vector unit: ``alloc`` (its bytes, see
  :mod:`ascsim.triton.ub`) seen through ``index`` (element numbers of the allocation, one per
  element of ``shape``; None: the allocation's first elements in row-major order). Views
  (``x[:, None]``, ``tl.broadcast_to``, ``tl.reshape``) share the allocation.
  A comparison of tiles gives a *packed* mask tile: one bit per element, as the vector
  unit's compare writes it (``index`` then numbers bits).
* **a pointer** -- ``known`` element offsets into the GM tensor ``gm``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ascsim.triton import dtypes


class tensor:  # noqa: N801 - Triton's own name
    """A Triton value (see the module docstring)."""

    __slots__ = ("dtype", "shape", "known", "alloc", "index", "gm", "packed")

    def __init__(self, dtype, shape: tuple, *, known=None, alloc=None, index=None, gm=None,
                 packed=False):
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.known = known
        self.alloc = alloc
        self.index = index
        self.gm = gm
        self.packed = packed  # a mask tile of one bit per element (a vector compare's output)

    # ------------------------------------------------------------------ what it is
    @property
    def type(self):
        return self.dtype

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def is_tile(self) -> bool:
        return self.alloc is not None

    def lanes(self) -> np.ndarray:
        """Element numbers in the allocation, one per element (row-major over ``shape``)."""
        if self.index is not None:
            return self.index
        return _iota(self.numel).reshape(self.shape)

    def __repr__(self) -> str:
        where = "tile" if self.is_tile else "pointer" if self.gm is not None else "known"
        return f"tensor({where}, {self.dtype}, shape={list(self.shape)})"

    # ------------------------------------------------------------------ host conversions
    def _scalar_value(self, what: str):
        if self.known is None and self.numel == 1:
            from ascsim.triton import dtypes, vector

            # (a one-element mask: its flag as a byte first, then the scalar unit's read)
            value = semantic.cast(self, dtypes.int8) if self.packed else self
            return vector.scalar_read(value)
        if self.known is None:
            from ascsim.triton.errors import CompilationError

            raise CompilationError(
                f"{what} of a value in UB (computed by the kernel): the device would read it "
                "back to the scalar unit; branch on index arithmetic, or use tl.where")
        if self.known.size != 1:
            raise ValueError(f"{what} of a block of {self.known.size} values is ambiguous")
        return self.known.reshape(-1)[0].item()

    def __bool__(self) -> bool:
        if self.gm is not None and not self.shape:  # a tensor argument: a non-null pointer
            return True
        return bool(self._scalar_value("the truth value"))

    def __index__(self) -> int:
        return int(self._scalar_value("an integer"))

    def __int__(self) -> int:
        return int(self._scalar_value("an integer"))

    def __float__(self) -> float:
        return float(self._scalar_value("a float"))

    def __hash__(self):
        return id(self)

    # ------------------------------------------------------------------ conversions
    def to(self, dtype, fp_downcast_rounding=None, bitcast: bool = False):
        return semantic.cast(self, dtype, fp_downcast_rounding, bitcast)

    def __getitem__(self, key):
        return semantic.subscript(self, key)

    def reshape(self, *shape, can_reorder: bool = False):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        return semantic.reshape(self, shape)

    def broadcast_to(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        return semantic.broadcast_to(self, shape)

    def expand_dims(self, axis):
        return semantic.expand_dims(self, axis)

    def sum(self, axis=None, keep_dims=False):
        return semantic.reduce(self, "sum", axis, keep_dims)

    def max(self, axis=None, return_indices=False, return_indices_tie_break_left=True,
            keep_dims=False, propagate_nan=None):
        from ascsim.triton import language

        return language.max(self, axis, return_indices, return_indices_tie_break_left,
                            keep_dims, propagate_nan)

    def min(self, axis=None, return_indices=False, return_indices_tie_break_left=True,
            keep_dims=False, propagate_nan=None):
        from ascsim.triton import language

        return language.min(self, axis, return_indices, return_indices_tie_break_left,
                            keep_dims, propagate_nan)

    def trans(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = tuple(dims[0])
        return semantic.permute(self, dims or tuple(reversed(range(len(self.shape)))))

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
            dims = tuple(dims[0])
        return semantic.permute(self, dims)

    def cast(self, dtype, fp_downcast_rounding=None, bitcast=False):
        return semantic.cast(self, dtype, fp_downcast_rounding, bitcast)

    # ---- the member forms of tl functions (Triton's _tensor_member_fn)
    def logical_and(self, other):
        from ascsim.triton import logic

        return logic.logical_and(self, lambda: other)

    def logical_or(self, other):
        from ascsim.triton import logic

        return logic.logical_or(self, lambda: other)

    def cumsum(self, axis=0, reverse=False, dtype=None):
        from ascsim.triton import combine

        return combine.cumsum(self, axis, reverse, dtype)

    def cumprod(self, axis=0, reverse=False):
        from ascsim.triton import combine

        return combine.cumprod(self, axis, reverse)

    def reduce(self, axis, combine_fn, keep_dims=False):
        from ascsim.triton import combine

        return combine.reduce(self, axis, combine_fn, keep_dims)

    def associative_scan(self, axis, combine_fn, reverse=False):
        from ascsim.triton import combine

        return combine.scan(self, axis, combine_fn, reverse)

    def xor_sum(self, axis=None, keep_dims=False):
        from ascsim.triton import combine

        return combine.xor_sum(self, axis, keep_dims)

    def sort(self, dim=None, descending=False):
        from ascsim.triton import reorder

        return reorder.sort(self, dim, descending)

    def flip(self, dim=None):
        from ascsim.triton import reorder

        return reorder.flip(self, dim)

    def ravel(self, can_reorder=False):
        from ascsim.triton import reorder

        return reorder.ravel(self)

    def histogram(self, num_bins):
        from ascsim.triton import reorder

        return reorder.histogram(self, num_bins)

    def argmax(self, axis, tie_break_left=True, keep_dims=False):
        return semantic.arg_reduce(self, "max", axis, keep_dims)

    def argmin(self, axis, tie_break_left=True, keep_dims=False):
        return semantic.arg_reduce(self, "min", axis, keep_dims)

    def extract_slice(self, offsets, sizes, strides):
        from ascsim.triton import reorder

        return reorder.extract_slice(self, offsets, sizes, strides)

    def insert_slice(self, sub, offsets, sizes, strides):
        from ascsim.triton import reorder

        return reorder.insert_slice(self, sub, offsets, sizes, strides)

    def get_element(self, indices):
        from ascsim.triton import reorder

        return reorder.get_element(self, indices)

    @property
    def T(self):  # noqa: N802 - Triton's own name
        return semantic.permute(self, tuple(reversed(range(len(self.shape)))))

    # ------------------------------------------------------------------ operators
    def __add__(self, other):
        return semantic.binary("add", self, other)

    def __radd__(self, other):
        return semantic.binary("add", other, self)

    def __sub__(self, other):
        return semantic.binary("sub", self, other)

    def __rsub__(self, other):
        return semantic.binary("sub", other, self)

    def __mul__(self, other):
        return semantic.binary("mul", self, other)

    def __rmul__(self, other):
        return semantic.binary("mul", other, self)

    def __truediv__(self, other):
        return semantic.binary("truediv", self, other)

    def __rtruediv__(self, other):
        return semantic.binary("truediv", other, self)

    def __floordiv__(self, other):
        return semantic.binary("floordiv", self, other)

    def __rfloordiv__(self, other):
        return semantic.binary("floordiv", other, self)

    def __mod__(self, other):
        return semantic.binary("mod", self, other)

    def __rmod__(self, other):
        return semantic.binary("mod", other, self)

    def __and__(self, other):
        return semantic.binary("and", self, other)

    def __rand__(self, other):
        return semantic.binary("and", other, self)

    def __or__(self, other):
        return semantic.binary("or", self, other)

    def __ror__(self, other):
        return semantic.binary("or", other, self)

    def __xor__(self, other):
        return semantic.binary("xor", self, other)

    def __rxor__(self, other):
        return semantic.binary("xor", other, self)

    def __lshift__(self, other):
        return semantic.binary("shl", self, other)

    def __rshift__(self, other):
        return semantic.binary("shr", self, other)

    def __lt__(self, other):
        return semantic.compare("lt", self, other)

    def __le__(self, other):
        return semantic.compare("le", self, other)

    def __gt__(self, other):
        return semantic.compare("gt", self, other)

    def __ge__(self, other):
        return semantic.compare("ge", self, other)

    def __eq__(self, other):
        return semantic.compare("eq", self, other)

    def __ne__(self, other):
        return semantic.compare("ne", self, other)

    def __neg__(self):
        return semantic.unary("neg", self)

    def __pos__(self):
        return self

    def __invert__(self):
        return semantic.unary("not", self)

    def __abs__(self):
        return semantic.unary("abs", self)


@lru_cache(maxsize=64)
def _iota(n: int) -> np.ndarray:
    """``0 .. n-1`` (read-only, shared): the element numbers of a plain tile. One array per
    length, so the records of a launch's thousands of blocks do not each hold their own."""
    out = np.arange(n, dtype=np.int64)
    out.setflags(write=False)
    return out


def known(value, dtype=None) -> tensor:
    """A known value (a Python number or a numpy array) as a tensor of ``dtype``."""
    if dtype is None:
        dtype = (dtypes.from_numpy(value.dtype) if isinstance(value, np.ndarray)
                 else dtypes.of_python_scalar(value, None))
    array = np.asarray(value)
    if array.dtype != dtype.np_dtype:
        with np.errstate(all="ignore"):
            array = array.astype(dtype.np_dtype)
    return tensor(dtype, array.shape, known=array)


from ascsim.triton import semantic  # noqa: E402 - semantic uses tensor
