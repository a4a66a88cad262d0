"""Host memory arguments of a launch: torch CPU tensors, numpy arrays and byte strings in GM.

Every front-end's launcher passes its memory arguments the same way: the bytes are placed in
device memory before the launch and copied back after it, inputs included (pyasc's launcher does
the same). What an argument's elements *are* (the front-end's data type) is the launcher's
business; this module moves bytes only.
"""

from __future__ import annotations

import numpy as np

from ascsim.sim import provenance
from ascsim.sim.memory import DeviceMemory, GmBuffer


def is_torch_tensor(value) -> bool:
    """Whether ``value`` is a torch tensor (tested without importing torch)."""
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")


def is_memory(value) -> bool:
    """Whether ``value`` is passed to a kernel as memory (a GM buffer) rather than as a scalar."""
    return is_torch_tensor(value) or isinstance(value, (np.ndarray, bytes, bytearray))


def describe(value) -> str:
    """A memory argument as ``dtype[d0,d1,...]`` (``uint8[n]`` for byte strings): what a
    launch's report lists of its GM arguments (:attr:`KernelReport.arguments`)."""
    if is_torch_tensor(value):
        dtype = str(value.dtype).replace("torch.", "")
    elif isinstance(value, np.ndarray):
        dtype = str(value.dtype)
    else:
        return f"uint8[{len(value)}]"
    return f"{dtype}[{','.join(str(int(d)) for d in value.shape)}]"


def torch_bytes(tensor) -> tuple[np.ndarray, bool]:
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
    own = (flat.data_ptr() == tensor.data_ptr() and tensor.dtype != torch.bool
           and not tensor.requires_grad)
    # No copy here: GM takes the bytes at its first use (GmBuffer.data), during this launch.
    return flat.view(torch.uint8).numpy(), own


def numpy_bytes(array: np.ndarray) -> tuple[np.ndarray, bool]:
    """The array's bytes for GM, and whether they are a writable view of its own memory."""
    contiguous = np.ascontiguousarray(array)
    raw = contiguous.reshape(-1).view(np.uint8)
    return raw, contiguous is array and array.flags.writeable and raw.size > 0


class HostArgument:
    """One memory argument: its device copy (``buffer``) and how to copy results back."""

    def __init__(self, name: str, value, memory: DeviceMemory):
        """``value``: a torch CPU tensor, a numpy array, ``bytes`` or ``bytearray``; ``name``
        names the GM buffer in findings."""
        self.value = value
        address = None
        if is_torch_tensor(value):
            raw, own = torch_bytes(value)
            address = value.data_ptr()
        elif isinstance(value, np.ndarray):
            raw, own = numpy_bytes(value)
            address = value.__array_interface__["data"][0]
        elif isinstance(value, (bytes, bytearray)):
            raw, own = np.frombuffer(bytes(value), dtype=np.uint8), False
        else:
            raise TypeError(f"argument {name!r} of type {type(value).__name__} is not host "
                            "memory (a torch CPU tensor, a numpy array, bytes or bytearray)")
        self.buffer: GmBuffer = memory.from_array(raw, name)
        if address is not None and raw.size:
            memory.host_keys[self.buffer.id] = (int(address), int(raw.size))
        # The host's own bytes when ``raw`` is a view of them: the copy back is then one plain
        # byte copy. (torch's copy_ splits a copy over its thread pool, which on a busy host
        # waits for descheduled threads: milliseconds for a few hundred kilobytes.)
        self._host_bytes = raw if own else None

    def copy_back(self) -> None:
        """Write the device bytes back into the host object (read-only arrays and ``bytes``
        stay as they were; a buffer the kernel never touched is not copied). The host value
        is remembered with the buffer's writers (:mod:`ascsim.sim.provenance`)."""
        provenance.remember(self.value, self.buffer.writers)
        if not self.buffer.touched:  # never read or written on the device: nothing to copy
            return
        raw = self.buffer.data[: self.buffer.nbytes]
        if self._host_bytes is not None:
            np.copyto(self._host_bytes, raw)
            return
        value = self.value
        if is_torch_tensor(value):
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
