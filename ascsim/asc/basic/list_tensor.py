"""``asc.ListTensorDesc`` and ``asc.TensorDesc``: a list of GM tensors described in GM.

The list is one GM buffer of uint64 words, laid out as Ascend C's ListTensorDesc reads it:

* word 0: the byte offset from the buffer's start to the data-pointer array;
* from word 1, one description per tensor: a header word (low 32 bits: the number of
  dimensions ``dim``, the same for every tensor; high 32 bits: the tensor's index, or in the
  first header the tensor count if it is not 0) followed by ``dim`` shape words. A list with
  ``dim == 0`` holds pointers only: its one description is two words, the second 0xffffffff,
  and the data-pointer array starts at byte 24;
* the data-pointer array: one device address per tensor.

Every word is read with a scalar GM load (priced as one). Ascend C checks the layout with
asserts that only debug builds keep; here a layout or index those asserts would reject is a
``list-tensor`` finding (``--strict`` stops there) and the kernel goes on with what the device
would compute from the same words. A pointer outside every allocation becomes an address into
no allocation: any access through it is a ``gm-out-of-bounds`` finding.

``TensorDesc.set_shape_addr`` names the scalar memory that ``get_desc`` fills with the shape.
That memory is the kernel's stack on the device, which the model does not address: the shape
is kept with the descriptor and the address is recorded.
"""

from __future__ import annotations

import math

from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import DataType, as_dtype, float32, uint64
from ascsim.asc.tensor import GlobalTensor
from ascsim.asc.values import GlobalAddress
from ascsim.isa import KernelError, Region, ScalarLoad
from ascsim.sim.memory import GmBuffer

WORD = 8
"""Bytes of one word of the list (a uint64)."""
UNCHECKED = 0xFFFF_FFFF
"""``length``/``shape_size`` value that skips the check against them."""
POINTERS_ONLY_OFFSET = 24
"""Data-pointer array offset of a ``dim == 0`` list: word 0 and a two-word description."""


def _report(message: str, hint: str = "") -> None:
    core = current_core()
    core.launch.findings.report("list-tensor", message, user_location(), hint=hint,
                                core=core.core_id)


def _word(buffer, byte_offset: int) -> int:
    """The uint64 at ``byte_offset`` of ``buffer``, read by the scalar unit."""
    value = current_core().execute(ScalarLoad(
        Region(buffer, byte_offset, 1, uint64.np_dtype), user_location()))
    return int(value)


def pointer_to(address: int, dtype: DataType) -> GlobalAddress:
    """A typed pointer to a device ``address``: into the allocation that holds it, or into an
    empty stand-in allocation there (every access through it is out of bounds)."""
    loc = user_location()
    size = dtype.sizeof()
    for buf in current_core().launch.memory.buffers:
        if buf.address <= address < buf.address + buf.capacity:
            delta = address - buf.address
            if delta % size:
                raise KernelError(f"pointer 0x{address:x} is not aligned to {dtype.name} "
                                  f"({size} B) inside {buf.name}", loc)
            return GlobalAddress(buf, delta // size, dtype)
    if address % size:
        raise KernelError(f"pointer 0x{address:x} is not aligned to {dtype.name} ({size} B)",
                          loc)
    nowhere = GmBuffer(-1 - address, f"unmapped@0x{address:x}", 0, address)
    return GlobalAddress(nowhere, 0, dtype)


class TensorDesc:
    """One tensor of a list: dimensions, index, shape and data pointer (``asc.TensorDesc``)."""

    def __init__(self, dtype: DataType = float32):
        self.dtype = as_dtype(dtype)
        self.dim = 0
        self.index = 0
        self.shape_addr: int | None = None
        self.shape: list[int] = []
        self.address = 0  # device address of the data; 0 is the null pointer

    def set_shape_addr(self, shape_ptr) -> None:
        """Where :meth:`ListTensorDesc.get_desc` stores the shape (see the module docstring)."""
        self.shape_addr = int(shape_ptr)

    def get_dim(self) -> int:
        return self.dim

    def get_index(self) -> int:
        return self.index

    def get_shape(self, offset) -> int:
        """Extent ``offset`` of the shape; past ``dim`` a finding, and 0."""
        offset = int(offset)
        if not 0 <= offset < self.dim:
            _report(f"TensorDesc.get_shape({offset}) with dim {self.dim}: Ascend C asserts "
                    "offset < dim, and the shape memory holds no such entry",
                    hint="fill the descriptor with ListTensorDesc.get_desc first")
            return 0
        return self.shape[offset]

    def get_data_ptr(self) -> GlobalAddress:
        return pointer_to(self.address, self.dtype)

    def get_data_obj(self) -> GlobalTensor:
        """A GlobalTensor over the data. Ascend C passes ``sizeof(T) * prod(shape)`` as its
        size, so this does too."""
        tensor = GlobalTensor()
        tensor.set_global_buffer(self.get_data_ptr(),
                                 self.dtype.sizeof() * math.prod(self.shape[:self.dim]))
        return tensor


class ListTensorDesc:
    """A list of GM tensors described in GM (``asc.ListTensorDesc``); see the module docstring."""

    def __init__(self, data: GlobalAddress | None = None, length=UNCHECKED,
                 shape_size=UNCHECKED):
        self.buffer = None
        self.base = 0  # byte offset of the list in its buffer
        self.pointers = 0  # byte offset of the data-pointer array in the buffer
        self.dim = 0
        self.desc_words = 0
        self.count = 0
        if data is not None:
            self.init(data, length, shape_size)

    def init(self, data: GlobalAddress, length=UNCHECKED, shape_size=UNCHECKED) -> None:
        """Decode the list at ``data``; ``length`` (bytes) and ``shape_size`` (tensor count),
        unless 0xffffffff, are checked against it."""
        loc = user_location()
        if not isinstance(data, GlobalAddress):
            raise KernelError("ListTensorDesc expects a GlobalAddress (a pointer kernel "
                              f"argument), got {type(data).__name__}", loc)
        base = data.offset * data.dtype.sizeof()
        if (data.buffer.address + base) % WORD:
            raise KernelError("ListTensorDesc data must be 8-byte aligned (a list of uint64 "
                              "words)", loc)
        self.buffer, self.base = data.buffer, base
        offset = _word(self.buffer, base)
        header = _word(self.buffer, base + WORD)
        self.pointers = base + offset
        self.dim = header & 0xFFFF_FFFF
        first_count = header >> 32
        self.desc_words = 2 if self.dim == 0 else 1 + self.dim
        last_header = offset // WORD - self.desc_words  # word index, from the list's start
        if first_count:
            self.count = first_count
        elif last_header >= 0:
            self.count = (_word(self.buffer, base + last_header * WORD) >> 32) + 1
        else:
            self.count = 0
        self._check(offset, int(length), int(shape_size))

    def _check(self, offset: int, length: int, shape_size: int) -> None:
        """What Ascend C asserts about the layout: one finding naming every violation."""
        problems = []
        if self.dim:
            if self.count != (offset - WORD) // (self.desc_words * WORD):
                problems.append(f"{self.count} tensor(s) of dim {self.dim} put the data pointers "
                                f"at byte {WORD + self.count * self.desc_words * WORD}, word 0 "
                                f"says {offset}")
        elif not (offset == POINTERS_ONLY_OFFSET
                  and _word(self.buffer, self.base + 2 * WORD) == UNCHECKED):
            problems.append("a pointers-only list (dim 0) has its pointers at byte 24 after a "
                            f"0xffffffff word; word 0 says {offset}")
        if length != UNCHECKED and shape_size != UNCHECKED and (
                self.count != shape_size or length != offset + self.count * WORD):
            problems.append(f"length {length} and shape_size {shape_size} do not match the "
                            f"list ({self.count} tensor(s), {offset + self.count * WORD} bytes)")
        if problems:
            _report("ListTensorDesc: the list's layout is inconsistent: " + "; ".join(problems),
                    hint="word 0 is the byte offset of the data pointers; each description is "
                         "a header word (dim | index << 32) and dim shape words")

    def _require_init(self) -> None:
        if self.buffer is None:
            raise KernelError("ListTensorDesc used before init() (construct it with data= or "
                              "call init)", user_location())

    def _check_index(self, index: int, what: str) -> None:
        if not 0 <= index < self.count:
            _report(f"ListTensorDesc.{what}(index={index}) with {self.count} tensors: Ascend C "
                    "asserts index < count; the device reads whatever words lie there")

    def get_desc(self, desc: TensorDesc, index=0) -> None:
        """Fill ``desc`` with tensor ``index``: dim, index, data pointer and shape."""
        self._require_init()
        index = int(index)
        self._check_index(index, "get_desc")
        if self.dim == 0:
            _report("ListTensorDesc.get_desc on a pointers-only list (dim 0): Ascend C asserts "
                    "dim != 0", hint="use get_data_ptr for a list without shapes")
        desc.dim = self.dim
        desc.address = _word(self.buffer, self.pointers + index * WORD)
        desc.index = index
        first = self.base + WORD + index * self.desc_words * WORD + WORD
        desc.shape = [_word(self.buffer, first + i * WORD) for i in range(self.dim)]

    def get_data_ptr(self, index=0, dtype: DataType = float32) -> GlobalAddress:
        """The data pointer of tensor ``index``, typed ``dtype``."""
        self._require_init()
        index = int(index)
        self._check_index(index, "get_data_ptr")
        return pointer_to(_word(self.buffer, self.pointers + index * WORD), as_dtype(dtype))

    def get_size(self) -> int:
        """The number of tensors in the list."""
        self._require_init()
        return self.count


__all__ = ["ListTensorDesc", "TensorDesc"]
