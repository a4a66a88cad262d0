"""Kernel binaries in ``asc.lib.runtime``: building, registering and launching them by hand.

With a device, a script registers a compiled kernel binary (``register_device_binary_kernel``),
registers its entry function by name (``register_function``) and launches it with an argument
block of 64-bit words (``launch_kernel``): device addresses from ``malloc`` for the tensors, the
scalars packed in between. On the simulator the "binary" is a kernel image that
:func:`build_kernel` makes from an ``@asc.jit`` kernel and the types of its arguments (what
pyasc's compile step fixes too: each tensor's element type, each scalar's type, the constexpr
values, the kernel type). Launching it runs the kernel's Python on the simulated chip with the
device allocations as its GM tensors, exactly as a ``kernel[n](...)`` launch does (checks,
findings, timing, the ``Launcher.run`` hook), and the results stay in device memory until the
script copies them out.

The argument block is laid out as pyasc's launcher lays it out: a scalar takes 4 bytes (8 if it
is wider than 4 bytes) at the next free byte, a pointer takes 8 bytes at the next multiple of 8,
and the words are little-endian.
"""

from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ascsim.asc import dtypes
from ascsim.asc.jit import JITFunction
from ascsim.asc.jit_options import OPTION_NAMES, compile_options
from ascsim.asc.launcher import run_launch
from ascsim.asc.lib.runtime.device_memory import RuntimeMemory, address_of
from ascsim.asc.lib.runtime.support import (
    CORE_TYPE_OF_KIND,
    MAGIC_OF_CORE_TYPE,
    CoreType,
    MagicElf,
)
from ascsim.asc.runtime.mock import MockTensor, MockValue
from ascsim.asc.struct import Struct
from ascsim.sim.host import is_memory

if TYPE_CHECKING:
    from ascsim.asc.runtime.compiler import CompiledKernel

#: The first bytes of a simulator kernel image; the rest is the image's number (little-endian).
IMAGE_MAGIC = b"ASCSIM-KERNEL\0"
ELF_MAGIC = b"\x7fELF"


class KernelLaunchError(RuntimeError):
    """A kernel binary, function handle or argument block the runtime would reject."""


@dataclass(frozen=True)
class Parameter:
    """One runtime parameter of a kernel image: a GM tensor or a scalar, and its type."""

    name: str
    is_pointer: bool
    dtype: dtypes.DataType

    def slot(self, offset: int) -> tuple[int, int]:
        """(start, size) of this parameter in the argument block, the previous ending at
        ``offset``."""
        if self.is_pointer:
            return -(-offset // 8) * 8, 8
        size = self.dtype.sizeof()
        return offset, (4 if size <= 4 else 8)


@dataclass(frozen=True)
class KernelImage:
    """What a registered binary stands for: the kernel, its parameters and fixed values."""

    kernel: JITFunction
    parameters: tuple[Parameter, ...]
    constexprs: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.kernel.fn.__name__

    @property
    def kind(self) -> str:
        return self.kernel.kernel_kind(self.options)

    @property
    def core_type(self) -> CoreType:
        return CORE_TYPE_OF_KIND[self.kind]

    def args_bytes(self) -> int:
        offset = 0
        for parameter in self.parameters:
            start, size = parameter.slot(offset)
            offset = start + size
        return offset


def _parameter(name: str, annotation, example) -> Parameter:
    """A runtime parameter described by ``example``: MockTensor/MockValue, an asc data type,
    a host tensor or array (its element type), or a Python/numpy scalar."""
    if isinstance(example, Struct):
        raise KernelLaunchError(
            f"parameter {name!r}: struct parameters cannot go through launch_kernel; launch "
            "the @asc.jit kernel with kernel[core_num](...) instead")
    if isinstance(example, MockTensor):
        return Parameter(name, True, example.dtype)
    if isinstance(example, MockValue):
        return Parameter(name, False, example.dtype)
    if isinstance(example, dtypes.DataType):
        pointer = "GlobalAddress" in str(annotation)
        return Parameter(name, pointer, example)
    if is_memory(example):
        if isinstance(example, (bytes, bytearray)):
            return Parameter(name, True, dtypes.uint8)
        return Parameter(name, True, dtypes.as_dtype(example.dtype))
    if isinstance(example, bool):
        return Parameter(name, False, dtypes.as_dtype(np.bool_))
    if isinstance(example, int):
        return Parameter(name, False, dtypes.int32)
    if isinstance(example, float):
        return Parameter(name, False, dtypes.float32)
    if isinstance(example, np.generic):
        return Parameter(name, False, dtypes.as_dtype(example.dtype))
    raise KernelLaunchError(f"parameter {name!r}: cannot tell the type of a runtime argument "
                            f"from {type(example).__name__} (give asc.runtime.jit.MockTensor"
                            "(dtype), MockValue(dtype), an array or a scalar)")


class KernelRegistry:
    """The images built in this process, the registered binaries and their functions."""

    def __init__(self) -> None:
        self._images: dict[int, KernelImage] = {}
        self._binaries: dict[int, KernelImage] = {}  # kernel handle -> image
        self._functions: dict[int, tuple[int, KernelImage]] = {}  # function -> (kernel, image)
        self._numbers = itertools.count(1)

    # -- building ---------------------------------------------------------------------------
    def build(self, kernel, *args, **kwargs) -> CompiledKernel:
        """The image of ``kernel`` for the given argument types, as pyasc's compiled kernel."""
        if not isinstance(kernel, JITFunction):
            raise TypeError(f"build_kernel expects an @asc.jit kernel, got "
                            f"{type(kernel).__name__}")
        options = dict(kernel.options)
        for name in [n for n in kwargs if n in OPTION_NAMES]:
            options[name] = kwargs.pop(name)
        compile_options(options)
        try:
            bound = kernel.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"build_kernel({kernel.fn.__name__}): {exc}") from None
        bound.apply_defaults()
        constexprs, parameters = {}, []
        for name, value in bound.arguments.items():
            if name in kernel.constexpr:
                constexprs[name] = value
            else:
                annotation = kernel.signature.parameters[name].annotation
                parameters.append(_parameter(name, annotation, value))
        from ascsim.asc.runtime.compiler import CompiledKernel  # imports this package

        image = KernelImage(kernel, tuple(parameters), constexprs, options)
        number = next(self._numbers)
        self._images[number] = image
        binary = IMAGE_MAGIC + number.to_bytes(8, "little")
        return CompiledKernel(binary=binary, core_type=image.core_type,
                              kernel_args=tuple(p.name for p in parameters))

    # -- registration -----------------------------------------------------------------------
    def register_binary(self, binary: bytes, magic: int) -> ctypes.c_void_p:
        if not isinstance(binary, (bytes, bytearray)):
            raise TypeError(f"register_device_binary_kernel: the binary must be bytes, got "
                            f"{type(binary).__name__}")
        if len(binary) == 0:
            raise KernelLaunchError("register_device_binary_kernel: the kernel binary is empty")
        if binary.startswith(ELF_MAGIC):
            raise KernelLaunchError(
                "register_device_binary_kernel: this is an Ascend device ELF; the simulator runs "
                "a kernel's Python, not device code. Register the binary of "
                "asc.lib.runtime.build_kernel(kernel, ...) instead")
        number = (int.from_bytes(binary[len(IMAGE_MAGIC):], "little")
                  if binary.startswith(IMAGE_MAGIC) else None)
        image = self._images.get(number)
        if image is None:
            raise KernelLaunchError(
                "register_device_binary_kernel: not a kernel image built in this process by "
                "asc.lib.runtime.build_kernel(kernel, ...)")
        try:
            magic = MagicElf(int(getattr(magic, "value", magic)))
        except ValueError:
            raise KernelLaunchError(
                f"register_device_binary_kernel: {magic!r} is not a device binary magic "
                f"(magic_elf_value(core_type) gives one of {[hex(m) for m in MagicElf]})"
            ) from None
        expected = MAGIC_OF_CORE_TYPE[image.core_type]
        if magic != expected:
            raise KernelLaunchError(
                f"register_device_binary_kernel: kernel {image.name!r} is a {image.kind} kernel "
                f"({image.core_type.name}); its binary registers with {expected.name} "
                f"({expected.value:#x}), not {magic.name}")
        handle = 0x7E00_0000 + 0x100 * next(self._numbers)
        self._binaries[handle] = image
        return ctypes.c_void_p(handle)

    def unregister_binary(self, kernel_handle) -> None:
        handle = address_of(kernel_handle)
        if self._binaries.pop(handle, None) is None:
            raise KernelLaunchError(f"unregister_device_binary_kernel: {handle:#x} is not a "
                                    "registered kernel binary")
        for function in [f for f, (k, _) in self._functions.items() if k == handle]:
            del self._functions[function]

    def register_function(self, kernel_handle, fn_name: str, mode: int = 0) -> ctypes.c_void_p:
        handle = address_of(kernel_handle)
        image = self._binaries.get(handle)
        if image is None:
            raise KernelLaunchError(f"register_function: {handle:#x} is not a registered "
                                    "kernel binary")
        if fn_name != image.name:
            raise KernelLaunchError(f"register_function: the binary holds the function "
                                    f"{image.name!r}, not {fn_name!r}")
        function = handle + 1 + len([k for k, _ in self._functions.values() if k == handle])
        self._functions[function] = (handle, image)
        return ctypes.c_void_p(function)

    def unregister_all(self) -> None:
        self._binaries.clear()
        self._functions.clear()

    # -- launching --------------------------------------------------------------------------
    def launch(self, memory: RuntimeMemory, fn_handle, block_num: int, args,
               num_args: int | None = None):
        """Run the function's kernel on ``block_num`` cores with the argument block ``args``
        (64-bit words); returns the launch's report."""
        entry = self._functions.get(address_of(fn_handle))
        if entry is None:
            raise KernelLaunchError(f"launch_kernel: {address_of(fn_handle):#x} is not a "
                                    "function handle from register_function")
        image = entry[1]
        if isinstance(block_num, bool) or not isinstance(block_num, (int, np.integer)) \
                or block_num <= 0:
            raise KernelLaunchError(f"launch_kernel: block_num must be an int > 0, got "
                                    f"{block_num!r}")
        words = list(args)
        if num_args is not None:
            if not 0 <= num_args <= len(words):
                raise KernelLaunchError(f"launch_kernel: num_args={num_args} but {len(words)} "
                                        "argument words were given")
            words = words[:num_args]
        block = b"".join(int(address_of(w)).to_bytes(8, "little", signed=int(address_of(w)) < 0)
                         for w in words)
        if len(block) < image.args_bytes():
            raise KernelLaunchError(
                f"launch_kernel: kernel {image.name!r} takes {image.args_bytes()} bytes of "
                f"arguments ({', '.join(self._layout(image))}), got {len(block)} "
                f"({len(words)} words)")
        arguments = dict(image.constexprs)
        pointers = []
        offset = 0
        for parameter in image.parameters:
            start, size = parameter.slot(offset)
            offset = start + size
            if parameter.is_pointer:
                address = int.from_bytes(block[start:start + 8], "little")
                pointers.append((parameter, address))
            else:
                raw = block[start:start + parameter.dtype.sizeof()]
                arguments[parameter.name] = _scalar(parameter.dtype, raw)
        arguments.update(_tensors(memory, image.name, pointers))
        ordered = {name: arguments[name] for name in image.kernel.signature.parameters}
        return run_launch(image.name, image.kernel.compiled(True), ordered,
                          image.kernel.constexpr, int(block_num), image.kind)

    @staticmethod
    def _layout(image: KernelImage) -> list[str]:
        out, offset = [], 0
        for parameter in image.parameters:
            start, size = parameter.slot(offset)
            offset = start + size
            kind = "pointer" if parameter.is_pointer else parameter.dtype.name
            out.append(f"{parameter.name}: {kind} at byte {start}")
        return out


def _scalar(dtype: dtypes.DataType, raw: bytes):
    """A scalar argument's value; int32 and fp32 become the Python int/float a direct launch
    passes, other types stay numpy scalars of their type."""
    value = np.frombuffer(raw, dtype=dtype.np_dtype)[0]
    if dtype == dtypes.int32:
        return int(value)
    if dtype == dtypes.float32:
        return float(value)
    return value


def _tensors(memory: RuntimeMemory, kernel: str, pointers: list) -> dict:
    """Each pointer argument as a typed view of its allocation: from its address to the next
    pointer argument into the same allocation, or to the allocation's end (two arguments at one
    address would be one GM buffer seen twice, which a launch does not model)."""
    located = []
    for parameter, address in pointers:
        allocation, offset = memory.locate(address, f"launch_kernel({kernel}) argument "
                                                    f"{parameter.name!r}")
        located.append((parameter, allocation, offset))
    views = {}
    for parameter, allocation, offset in located:
        others = [o for p, a, o in located if a is allocation and p is not parameter]
        if offset in others:
            raise KernelLaunchError(f"launch_kernel({kernel}): argument {parameter.name!r} "
                                    f"has the same device address as another argument; pass "
                                    "distinct allocations (or offsets)")
        end = min([o for o in others if o > offset], default=allocation.size)
        itemsize = parameter.dtype.sizeof()
        span = allocation.data[offset:offset + (end - offset) // itemsize * itemsize]
        views[parameter.name] = span.view(parameter.dtype.np_dtype)
    return views
