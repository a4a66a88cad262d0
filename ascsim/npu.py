"""The NPU stand-in: ``torch_npu`` and ``torch.npu`` inside ``ascsim run``, served by the simulator.

Scripts and test suites written for an Ascend device import ``torch_npu``, put tensors on
``"npu"`` / ``"npu:N"`` and call ``torch.npu.synchronize()``. Under ``ascsim run`` (and only there:
nothing is installed in site-packages) this module makes those calls work without an NPU:

- ``import torch_npu`` gives a small module whose ``npu`` attribute is ``torch.npu``;
- ``torch.npu`` answers device queries about the simulated chip (``get_device_name()`` is the
  simulated SoC's name, e.g. ``Ascend910B1``) and its synchronisation calls return at once
  (launches are synchronous in the simulator);
- ``device="npu[:N]"`` on tensor factories, ``tensor.npu()`` and ``tensor.to("npu")`` give CPU
  tensors, which the simulator reads and writes. A tensor moved "to the NPU" is a copy, as on the
  device, so a kernel writing it leaves the host original alone; moving it again returns it.

Every front-end (pyasc's ``asc``, PyPTO Pro) uses this one stand-in; the runner installs it once
per process with :func:`install`. Calls that select a real NPU print :func:`notice` once.
"""

from __future__ import annotations

import functools
import sys
import types
from dataclasses import dataclass

from ascsim import npu_profiler
from ascsim.session import SESSION

#: torch functions that take a ``device=`` keyword and create a tensor.
FACTORIES = (
    "arange", "as_tensor", "empty", "empty_like", "empty_strided", "eye", "full", "full_like",
    "linspace", "logspace", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like",
    "randn", "randn_like", "randperm", "scalar_tensor", "tensor", "zeros", "zeros_like",
)
#: Tensor methods that take a ``device=`` keyword and create a tensor.
NEW_TENSOR_METHODS = ("new_empty", "new_full", "new_ones", "new_tensor", "new_zeros")
#: Marks a CPU tensor that stands for a tensor on the NPU (set by the moves to the NPU).
ON_NPU = "_ascsim_on_npu"
DEVICE_TYPE = "npu"

_installed = False
_noticed = False


def is_npu_device(device) -> bool:
    """``"npu"``, ``"npu:3"`` (any case): a device the stand-in maps to the CPU."""
    if isinstance(device, str):
        return device.strip().lower().split(":")[0] == DEVICE_TYPE
    return getattr(device, "type", None) == DEVICE_TYPE


def device_index(device) -> int:
    """The index of ``"npu:N"`` / ``N`` (0 for ``"npu"``); a clear error for anything else."""
    if isinstance(device, int) and not isinstance(device, bool):
        index = device
    elif is_npu_device(device):
        _, _, rest = str(device).strip().partition(":")
        try:
            index = int(rest) if rest else 0
        except ValueError:
            raise ValueError(f"invalid NPU device {device!r}: expected 'npu' or 'npu:N'") from None
    else:
        raise ValueError(f"invalid NPU device {device!r}: expected an index, 'npu' or 'npu:N'")
    if index < 0:
        raise ValueError(f"invalid NPU device {device!r}: the index must be >= 0")
    return index


def simulated_device_name() -> str:
    """The name ``torch.npu.get_device_name()`` gives: the SoC the run simulates."""
    return SESSION.soc.name


def notice(reason: str) -> None:
    """Say once per process, on stderr, that an NPU request runs on the simulated chip."""
    global _noticed
    if _noticed:
        return
    _noticed = True
    print(f"ascsim: {reason}: running on the simulated {SESSION.requested_soc} "
          "(no NPU is used)", file=sys.stderr)


def _on_cpu(device):
    return "cpu" if is_npu_device(device) else device


def _mark(tensor):
    setattr(tensor, ON_NPU, True)
    return tensor


def _factory(original):
    """``torch.zeros(..., device="npu:0")`` → a CPU tensor marked as on the NPU."""

    @functools.wraps(original)
    def create(*args, **kwargs):
        device = kwargs.get("device")
        if device is None or not is_npu_device(device):
            return original(*args, **kwargs)
        kwargs["device"] = "cpu"
        return _mark(original(*args, **kwargs))

    return create


def _to(original):
    """``t.to("npu")`` / ``t.to(device="npu:0", dtype=...)``: a copy unless already moved."""

    @functools.wraps(original)
    def to(self, *args, **kwargs):
        if args and isinstance(args[0], str) and is_npu_device(args[0]):
            args = ("cpu", *args[1:])
        elif is_npu_device(kwargs.get("device")):
            kwargs["device"] = "cpu"
        else:
            return original(self, *args, **kwargs)
        if getattr(self, ON_NPU, False):
            return original(self, *args, **kwargs)
        if len(args) < 4:  # ``copy`` is the fourth positional parameter of to(device, ...)
            kwargs["copy"] = True
        return _mark(original(self, *args, **kwargs))

    return to


def _npu(self, device=None, non_blocking: bool = False, memory_format=None):
    """``tensor.npu()``: the tensor itself when already moved, otherwise a copy."""
    if device is not None:
        device_index(device)
    if getattr(self, ON_NPU, False):
        return self
    import torch

    fmt = torch.preserve_format if memory_format is None else memory_format
    return _mark(self.clone(memory_format=fmt))


def _cpu(original):
    """``tensor.cpu()`` of a moved tensor is a copy, as a device-to-host copy is."""

    @functools.wraps(original)
    def cpu(self, *args, **kwargs):
        if getattr(self, ON_NPU, False):
            return original(self, *args, **kwargs).clone()
        return original(self, *args, **kwargs)

    return cpu


@dataclass(frozen=True)
class DeviceProperties:
    """What ``torch.npu.get_device_properties()`` answers about the simulated chip."""

    name: str
    total_memory: int
    multi_processor_count: int


class Stream:
    """``torch.npu.Stream``: work on a stream is finished when the launch returns."""

    def __init__(self, device=None, priority: int = 0):
        self.device_index = 0 if device is None else device_index(device)
        self.priority = priority

    @property
    def npu_stream(self) -> int:
        """torch_npu's raw stream handle (what Triton launchers take): a stand-in number."""
        return self.device_index

    def synchronize(self) -> None:
        """Launches are synchronous in the simulator."""

    def query(self) -> bool:
        return True

    def wait_stream(self, stream) -> None:
        """Nothing to wait for: every launch has finished."""


class _DeviceState:
    """The device index the script selected (all indices stand for the one simulated chip)."""

    current = 0


def _set_device(device) -> None:
    _DeviceState.current = device_index(device)


def _get_device_name(device=None) -> str:
    if device is not None:
        device_index(device)
    return simulated_device_name()


def _get_device_properties(device=None) -> DeviceProperties:
    if device is not None:
        device_index(device)
    soc = SESSION.soc
    return DeviceProperties(name=soc.name, total_memory=soc.hbm_bytes,
                            multi_processor_count=soc.aic_count)


#: ``torch.npu.get_soc_version()``'s code of each SoC family the stand-in knows: hicann/pypto's
#: conftest.py (883e7dfb) reads 260 as the Ascend 950. The codes of the other families are not
#: in our references, so they are not answered.
SOC_VERSION_CODES = {"Ascend950": 260}


def _get_soc_version() -> int:
    soc = SESSION.soc
    code = SOC_VERSION_CODES.get(soc.family)
    if code is None:
        raise RuntimeError(f"torch.npu.get_soc_version: the code of {soc.name} is not known to "
                           f"ascsim's NPU stand-in (it knows {sorted(SOC_VERSION_CODES)})")
    return code


def _manual_seed(seed: int) -> None:
    import torch

    torch.manual_seed(seed)  # "NPU" tensors are CPU tensors: their generator is the CPU one


def _nothing(*args, **kwargs) -> None:
    """No device state to change in the simulator."""


def _zero(*args, **kwargs) -> int:
    return 0


#: ``torch.npu`` as the stand-in provides it: name → implementation.
TORCH_NPU_FUNCTIONS = {
    "is_available": lambda: True,
    "is_initialized": lambda: True,
    "init": _nothing,
    "device_count": lambda: 1,
    "current_device": lambda: _DeviceState.current,
    "set_device": _set_device,
    "get_device_name": _get_device_name,
    "get_device_properties": _get_device_properties,
    "get_soc_version": _get_soc_version,
    "synchronize": _nothing,
    "current_stream": lambda device=None: Stream(device),
    "default_stream": lambda device=None: Stream(device),
    "manual_seed": _manual_seed,
    "manual_seed_all": _manual_seed,
    "empty_cache": _nothing,
    "memory_allocated": _zero,
    "max_memory_allocated": _zero,
    "memory_reserved": _zero,
    "max_memory_reserved": _zero,
    "reset_peak_memory_stats": _nothing,
}


#: torch_npu's storage format codes the stand-in knows: the plain (row-major) ones and the
#: fractal NZ format (``npu_format_cast(t, 29)``).
FORMAT_NCHW, FORMAT_NHWC, FORMAT_ND, FORMAT_FRACTAL_NZ = 0, 1, 2, 29
PLAIN_FORMATS = (FORMAT_NCHW, FORMAT_NHWC, FORMAT_ND)
#: Marks an "NPU" tensor with the storage format ``npu_format_cast`` gave it.
NPU_FORMAT = "_ascsim_npu_format"


def get_npu_format(tensor) -> int:
    """``torch_npu.get_npu_format(t)``: the storage format (ND unless cast)."""
    return getattr(tensor, NPU_FORMAT, FORMAT_ND)


def npu_format_cast(tensor, acl_format: int):
    """``torch_npu.npu_format_cast(t, fmt)``: a copy of ``t`` stored in format ``fmt``. The
    host sees the logical (row-major) values either way; a kernel sees an NZ tensor's bytes in
    the fractal order (see :func:`nz_storage`)."""
    fmt = int(acl_format)
    if fmt not in (*PLAIN_FORMATS, FORMAT_FRACTAL_NZ):
        raise ValueError(f"npu_format_cast: storage format {fmt} is not simulated (ND=2, "
                         f"NCHW=0, NHWC=1 and FRACTAL_NZ=29 are)")
    if fmt == FORMAT_FRACTAL_NZ and tensor.dim() < 2:
        raise ValueError("npu_format_cast: the FRACTAL_NZ format needs at least 2 dimensions")
    out = _mark(tensor.clone())
    setattr(out, NPU_FORMAT, fmt)
    return out


def nz_shape(shape, itemsize: int) -> tuple[int, int, int, int, int, int]:
    """(batch, column blocks, padded rows, fractal columns c0, rows, cols) of the NZ storage of
    a tensor of ``shape``: the last two axes as 16-row x 32-byte fractals, column block major."""
    rows, cols = int(shape[-2]), int(shape[-1])
    c0 = max(1, 32 // itemsize)
    batch = 1
    for d in shape[:-2]:
        batch *= int(d)
    return batch, -(-cols // c0), -(-rows // 16) * 16, c0, rows, cols


def nz_storage(values):
    """The bytes a device holds for an NZ-format tensor of logical ``values`` (a numpy array):
    per batch, column block ``j`` of ``c0`` columns, row ``r`` at ``(j * padded_rows + r) *
    c0``; padding is zero."""
    import numpy as np

    batch, blocks, prows, c0, rows, cols = nz_shape(values.shape, values.itemsize)
    padded = np.zeros((batch, prows, blocks * c0), dtype=values.dtype)
    padded[:, :rows, :cols] = values.reshape(batch, rows, cols)
    return np.ascontiguousarray(
        padded.reshape(batch, prows, blocks, c0).transpose(0, 2, 1, 3)).reshape(-1)


def nz_logical(storage, shape):
    """The logical values of NZ-format ``storage`` (the inverse of :func:`nz_storage`)."""
    batch, blocks, prows, c0, rows, cols = nz_shape(shape, storage.itemsize)
    fractal = storage[:batch * blocks * prows * c0].reshape(batch, blocks, prows, c0)
    plain = fractal.transpose(0, 2, 1, 3).reshape(batch, prows, blocks * c0)
    return plain[:, :rows, :cols].reshape(tuple(shape))


def _missing(module_name: str):
    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"{module_name}.{name} is not provided by ascsim's NPU stand-in (it provides "
            f"{', '.join(sorted(TORCH_NPU_FUNCTIONS))}); the run simulates "
            f"{simulated_device_name()} on the CPU")

    return __getattr__


def _build_modules():
    npu = types.ModuleType("torch.npu", "torch.npu stand-in: the simulated Ascend chip.")
    for name, fn in TORCH_NPU_FUNCTIONS.items():
        setattr(npu, name, fn)
    npu.Stream = Stream
    npu.DeviceProperties = DeviceProperties
    # torch_npu.npu.utils holds the same device functions (scripts call utils.set_device).
    utils = types.ModuleType("torch.npu.utils", "torch.npu.utils stand-in")
    for name, fn in TORCH_NPU_FUNCTIONS.items():
        setattr(utils, name, fn)
    utils.__getattr__ = _missing("torch.npu.utils")
    npu.utils = utils
    # torch_npu.npu.matmul.allow_hf32: whether torch's own fp32 matmuls on the NPU may round
    # to HF32. torch runs on the CPU here, in fp32, so the setting is kept and changes nothing.
    npu.matmul = types.SimpleNamespace(allow_hf32=False)
    npu.__getattr__ = _missing("torch.npu")
    torch_npu = types.ModuleType("torch_npu", "torch_npu stand-in: NPU tensors are CPU tensors "
                                 "that the simulator reads and writes.")
    torch_npu.npu = npu
    torch_npu.npu_format_cast = npu_format_cast
    from ascsim.npu_ops import TORCH_NPU_OPS  # imports torch, as installing does anyway

    for name, fn in TORCH_NPU_OPS.items():
        setattr(torch_npu, name, fn)
    torch_npu.get_npu_format = get_npu_format
    torch_npu.profiler = npu_profiler.build_module()
    torch_npu.__version__ = "ascsim-stand-in"
    torch_npu.__getattr__ = _missing("torch_npu")
    return npu, torch_npu


def install() -> None:
    """Install the stand-in in this process (idempotent). Imports torch."""
    global _installed
    if _installed:
        return
    import torch

    npu, torch_npu = _build_modules()
    torch.npu = npu
    sys.modules["torch.npu"] = npu
    sys.modules["torch_npu"] = torch_npu
    sys.modules["torch_npu.profiler"] = torch_npu.profiler
    for name in FACTORIES:
        setattr(torch, name, _factory(getattr(torch, name)))
    for name in NEW_TENSOR_METHODS:
        setattr(torch.Tensor, name, _factory(getattr(torch.Tensor, name)))
    torch.Tensor.to = _to(torch.Tensor.to)
    torch.Tensor.cpu = _cpu(torch.Tensor.cpu)
    torch.Tensor.npu = _npu
    _installed = True


def installed() -> bool:
    return _installed
