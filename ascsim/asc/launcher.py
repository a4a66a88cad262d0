"""Launching a kernel: converting host arguments, running the cores, copying results back.

Mirrors pyasc's launcher: every tensor argument (torch CPU tensor or numpy array) is copied into
device memory before the launch and copied back after it, inputs included; Python ints become
int32 runtime values and floats fp32; tiling structs are copied into each core.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

import numpy as np

from ascsim.asc import dtypes
from ascsim.asc.runtime.launcher import deliver
from ascsim.asc.struct import Struct
from ascsim.asc.values import GlobalAddress, RuntimeInt
from ascsim.context import current_soc
from ascsim.session import SESSION
from ascsim.sim.launch import Launch, LaunchConfig
from ascsim.sim.memory import DeviceMemory

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
#: Allocations between two young-generation garbage collections during a launch (Python's
#: default is 700). A launch allocates many small records that live until it ends
#: (instructions, access records, check summaries); with the default, the collector scans them
#: again and again, which took about a sixth of a SwiGLU (2, 1024, 1024) simulation.
LAUNCH_GC_THRESHOLD = 50_000


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Run the block with young collections every LAUNCH_GC_THRESHOLD allocations at least."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], LAUNCH_GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class ServerMode(BaseException):  # noqa: N818 - not an error: the core's user code ends here
    """Raised on a MIX kernel's AIC by ``register_matmul``: from then on the AIC runs the
    Matmul server (driven by its AIVs' calls), not the rest of the kernel body."""


class KernelStruct:
    """A struct as a kernel sees it: a private copy whose integer fields are runtime ints.

    Kernels read tiling fields on every step and rarely write them, so the copy is made at the
    first write (until then the host's struct, which nothing changes during the launch, is
    read), and each field's kernel value is made once and kept until the field is written.
    """

    __slots__ = ("_struct", "_private", "_values")

    def __init__(self, struct: Struct, values: dict | None = None):
        """``values``: a field cache shared by the views of one host struct (until they write)."""
        object.__setattr__(self, "_struct", struct)
        object.__setattr__(self, "_private", False)
        object.__setattr__(self, "_values", {} if values is None else values)

    def __getattr__(self, name):
        values = self._values
        if name in values:
            return values[name]
        value = getattr(self._struct, name)
        if isinstance(value, int):
            value = RuntimeInt(value)
        values[name] = value
        return value

    def __setattr__(self, name, value):
        if not self._private:
            object.__setattr__(self, "_struct", self._struct.copy())
            object.__setattr__(self, "_private", True)
            # Its own cache: the shared one holds the host's values and methods.
            object.__setattr__(self, "_values", {})
        setattr(self._struct, name, value)
        self._values.pop(name, None)  # read back: the field's C type may have wrapped it

    def __repr__(self):
        return f"kernel view of {self._struct!r}"


def _is_torch_tensor(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")


def _torch_bytes(tensor) -> tuple[np.ndarray, bool]:
    """The tensor's bytes for GM, and whether they are a writable view of the tensor's own
    memory that results may be copied straight back into (see :meth:`HostArgument.copy_back`).
    Not for bool tensors (their bytes are normalised to 0/1 on the way back) nor for tensors
    requiring grad (writing into them in place is an error the torch path reports)."""
    import torch

    if tensor.device.type != "cpu":
        raise TypeError(f"tensor on device {tensor.device}: the simulator takes CPU tensors "
                        "(device='cpu')")
    flat = tensor.detach().contiguous().reshape(-1)
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    if not flat.numel():
        return np.zeros(0, np.uint8), False
    # Same first byte: contiguous() made no copy (a copy would be a new allocation).
    own = flat.data_ptr() == tensor.data_ptr() and tensor.dtype != torch.bool \
        and not tensor.requires_grad
    # No copy here: GM takes the bytes at its first use (GmBuffer.data), during this launch.
    return flat.view(torch.uint8).numpy(), own


def _numpy_bytes(array: np.ndarray) -> tuple[np.ndarray, bool]:
    """The array's bytes for GM, and whether they are a writable view of its own memory."""
    contiguous = np.ascontiguousarray(array)
    raw = contiguous.reshape(-1).view(np.uint8)
    return raw, contiguous is array and array.flags.writeable and raw.size > 0


class HostArgument:
    """One memory argument: its device copy and how to copy results back to the host."""

    def __init__(self, name: str, value, memory: DeviceMemory):
        self.value = value
        if _is_torch_tensor(value):
            self.dtype = dtypes.from_torch(value.dtype)
            raw, own = _torch_bytes(value)
        elif isinstance(value, np.ndarray):
            self.dtype = dtypes.from_numpy(value.dtype)
            raw, own = _numpy_bytes(value)
        else:  # bytes / bytearray
            self.dtype = dtypes.uint8
            raw, own = np.frombuffer(bytes(value), dtype=np.uint8), False
        self.buffer = memory.from_array(raw, name)
        # The host's own bytes when ``raw`` is a view of them: the copy back is then one plain
        # byte copy. (torch's copy_ splits a copy over its thread pool, which on a busy host
        # waits for descheduled threads: milliseconds for a few hundred kilobytes.)
        self._host_bytes = raw if own else None

    def address(self) -> GlobalAddress:
        return GlobalAddress(self.buffer, 0, self.dtype)

    def copy_back(self) -> None:
        if not self.buffer.touched:  # never read or written on the device: nothing to copy
            return
        raw = self.buffer.data[: self.buffer.nbytes]
        if self._host_bytes is not None:
            np.copyto(self._host_bytes, raw)
            return
        value = self.value
        if _is_torch_tensor(value):
            import torch

            if value.numel() == 0:
                return
            target = value.dtype
            src = torch.from_numpy(raw)  # copy_ below copies
            if target == torch.bool:
                value.copy_(src.view(torch.uint8).reshape(value.shape).to(torch.bool))
            else:
                value.copy_(src.view(target).reshape(value.shape))
        elif isinstance(value, np.ndarray):
            if value.flags.writeable:
                value[...] = raw.view(value.dtype).reshape(value.shape)
        elif isinstance(value, bytearray):
            value[:] = raw.tobytes()


def convert_scalar(name: str, value):
    """Runtime scalar argument → the value the kernel sees (int32 / fp32 / numpy scalar)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not INT32_MIN <= value <= INT32_MAX:
            raise ValueError(f"argument {name!r} = {value} does not fit the kernel's int32")
        return RuntimeInt(value)
    if isinstance(value, float):
        return np.float32(value)
    if isinstance(value, np.generic):
        return value
    raise TypeError(
        f"argument {name!r} of type {type(value).__name__} cannot be passed to a kernel at run "
        "time (str, tuple, list and dict are only allowed as asc.ConstExpr parameters)")


def is_memory(value) -> bool:
    return _is_torch_tensor(value) or isinstance(value, (np.ndarray, bytes, bytearray))


def run_launch(name: str, body, args: dict, constexpr: set, block_num: int, kind: str,
               options) -> object:
    """Convert ``args``, run ``body(**converted)`` on every core, copy back; returns the report."""
    soc = current_soc()
    memory = DeviceMemory()
    host_args: list[HostArgument] = []
    converted: dict = {}
    structs: dict = {}
    for pname, value in args.items():
        if pname in constexpr:
            converted[pname] = value
        elif is_memory(value):
            host = HostArgument(pname, value, memory)
            host_args.append(host)
            converted[pname] = host.address()
        elif isinstance(value, Struct):
            structs[pname] = value
        else:
            converted[pname] = convert_scalar(pname, value)
    config = LaunchConfig(kernel=name, soc=soc, block_num=block_num, kind=kind,
                          strict=SESSION.strict)
    launch = Launch(config, memory)
    # A factory may return None (e.g. the kernel checks when SESSION.checks is off).
    launch.observers.extend(o for o in (f(launch) for f in SESSION.observer_factories)
                            if o is not None)

    # The cores' views of a struct share their field values until one of them writes.
    struct_values: dict = {pname: {} for pname in structs}

    def per_core(core):
        kw = dict(converted)
        for pname, struct in structs.items():
            kw[pname] = KernelStruct(struct, struct_values[pname])
        try:
            body(**kw)
        except ServerMode:
            pass  # the AIC turned into its AIVs' Matmul server: its own code ends here

    try:
        with _fewer_collections():
            report = launch.run(per_core)
    except BaseException:
        # The kernel failed (a fault, a deadlock, strict mode): keep what was found up to
        # there, so `ascsim check` can still list the findings next to the error.
        SESSION.reports.append(launch.partial_report())
        if SESSION.keep_launches:
            SESSION.launches.append(launch)
        raise
    deliver(name, block_num, host_args, args)  # pyasc's Launcher.run: results to the host
    SESSION.reports.append(report)
    if SESSION.keep_launches:
        SESSION.launches.append(launch)
    else:  # nothing reads this launch's GM any more: later launches may reuse the bytes
        memory.release()
    return report
