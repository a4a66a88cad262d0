"""cann-bench's submission rules for an operator package, checked per call (reference §4.4).

A package's host wrapper may allocate its outputs and workspaces, look at its inputs' metadata
and launch kernels; everything that touches the data must happen in a simulated kernel. Four
kinds of violation are told apart (:data:`VIOLATION_KINDS`):

- ``wrapper_compute``: torch computes (or reads tensor data on the host) in the wrapper,
  outside kernels. Seen by :class:`WrapperWatch`, a ``TorchFunctionMode`` open while the wrapper
  runs, which judges every torch call by the tables below;
- ``bad_output``: the result is not a contiguous torch tensor of the case's dtype and shape;
- ``no_kernel``: the call launched no simulated kernel (a CPU fallback);
- ``cached_result``: a second call with fresh inputs of the same shape returned the first
  call's result, its buffer, or a result wrong for the fresh inputs.

What the watch allows, and why (the contract forbids "torch compute APIs in the wrapper — even
transpose/contiguous/cast/pad preprocessing" and allows "allocating outputs/workspaces"):

- metadata queries (:data:`METADATA`): shape, dtype, strides, data pointers… read no element;
- allocations (:data:`ALLOCATIONS`): ``empty``/``zeros``/``ones``/``full`` and their ``_like``
  / ``new_`` forms, ``tensor``/``as_tensor``/``arange`` and in-place ``zero_``/``fill_``: they
  create data that depends on no input element (on a device a fill is a small kernel of its
  own; here it costs nothing);
- copy-free views (:data:`COPY_FREE_VIEWS`): ``view``, ``reshape``, ``flatten``, ``squeeze``,
  ``contiguous``, basic indexing… allowed only when the result shares the source's storage,
  checked after the call, so a ``reshape`` or ``contiguous`` that had to copy (a transpose
  materialised) is caught; layout changes (``t``, ``permute``, ``transpose``…) are refused even
  as views, as the contract names them;
- device moves (``to`` keeping the dtype, ``npu``): what a wrapper does to place tensors.

Everything else is a violation, including ``numpy()``, ``item()``, ``tolist()`` and ``cpu()``,
which hand the data to the host where torch cannot see what is computed with it.

Calls made by the simulator and its front-ends (binding kernel arguments, copying results back:
the device runtime's work) are not the wrapper's: a call with a frame of one of
:data:`SIMULATOR_DIRS` on its stack is let through. ``ascsim.ops`` is not among them, so a
package built on our operators' host code is held to the same rules.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode, resolve_name

import ascsim

VIOLATION_KINDS = {
    "wrapper_compute": "torch compute or host data access in the wrapper, outside kernels",
    "bad_output": "the result is not a contiguous tensor of the case's dtype and shape",
    "no_kernel": "no simulated kernel was launched (CPU fallback)",
    "cached_result": "results cached between calls",
}

#: Metadata reads (methods and property getters): they read no element of the data.
METADATA = frozenset({
    "Tensor.size", "Tensor.numel", "Tensor.dim", "Tensor.ndimension", "Tensor.stride",
    "Tensor.element_size", "Tensor.data_ptr", "Tensor.is_contiguous", "Tensor.storage_offset",
    "Tensor.untyped_storage", "Tensor.nelement", "Tensor.__len__", "Tensor.is_floating_point",
    "Tensor.is_complex", "Tensor.get_device", "Tensor.__repr__", "Tensor.__format__",
    "Tensor.__hash__", "Tensor.shape.__get__", "Tensor.dtype.__get__", "Tensor.device.__get__",
    "Tensor.ndim.__get__", "Tensor.layout.__get__", "Tensor.is_cuda.__get__",
    "Tensor.requires_grad.__get__", "Tensor.nbytes.__get__", "Tensor.itemsize.__get__",
    "Tensor.is_cpu.__get__", "Tensor.grad_fn.__get__",
})

#: Allocations: new data that depends on no input element.
ALLOCATIONS = frozenset({
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "tensor", "as_tensor", "arange", "Tensor.new_empty", "Tensor.new_zeros",
    "Tensor.new_ones", "Tensor.new_full", "Tensor.new_tensor", "Tensor.zero_", "Tensor.fill_",
})

#: Views that keep the element order: allowed when the result shares the source's storage.
COPY_FREE_VIEWS = frozenset({
    "Tensor.view", "Tensor.view_as", "Tensor.reshape", "Tensor.reshape_as", "Tensor.flatten",
    "Tensor.unflatten", "Tensor.squeeze", "Tensor.unsqueeze", "Tensor.contiguous",
    "Tensor.__getitem__", "Tensor.narrow", "Tensor.detach", "Tensor.data.__get__",
    "reshape", "flatten", "squeeze", "unsqueeze", "narrow", "detach",
})

#: Device moves: allowed when the dtype stays (a cast is compute).
DEVICE_MOVES = frozenset({"Tensor.to", "Tensor.npu"})

#: Where the simulator and its front-ends live (their torch calls are the runtime's, not the
#: wrapper's): pyasc's ``asc``, PyPTO Pro, the machine, SoC tables, ISA and tiling API.
SIMULATOR_DIRS = tuple(os.path.join(os.path.dirname(ascsim.__file__), d) + os.sep
                       for d in ("asc", "pto", "sim", "hw", "isa", "tiling"))
#: Frames skipped when naming the wrapper's line: torch itself, the NPU stand-in (it wraps the
#: tensor factories and moves) and this module.
_TRANSPARENT = (os.path.dirname(torch.__file__) + os.sep,
                os.path.join(os.path.dirname(ascsim.__file__), "npu.py"), __file__)


@dataclass(frozen=True)
class Violation:
    """One broken rule: its kind (a key of :data:`VIOLATION_KINDS`) and what happened."""

    kind: str
    detail: str

    def __post_init__(self) -> None:
        if self.kind not in VIOLATION_KINDS:
            raise ValueError(f"unknown violation kind {self.kind!r} (known: "
                             f"{sorted(VIOLATION_KINDS)})")

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "rule": VIOLATION_KINDS[self.kind], "detail": self.detail}


def _name(func) -> str:
    """``torch.Tensor.reshape`` → ``Tensor.reshape``; ``torch.tanh`` → ``tanh``."""
    name = resolve_name(func)
    if name is None:  # e.g. the original of a factory the NPU stand-in wraps
        owner, _, attr = getattr(func, "__qualname__", "").rpartition(".")
        name = f"Tensor.{attr}" if owner in ("Tensor", "TensorBase", "_TensorBase") else \
            getattr(func, "__name__", repr(func))
    return name[len("torch."):] if name.startswith("torch.") else name


def _storage_ptr(t) -> int | None:
    return t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) else None


def _shares_storage(result, source) -> bool:
    results = result if isinstance(result, tuple | list) else (result,)
    ptr = _storage_ptr(source)
    return ptr is not None and all(_storage_ptr(r) == ptr for r in results)


class WrapperWatch(TorchFunctionMode):
    """Watches the torch calls of a wrapper; :attr:`violations` lists the ones it broke.

    Each distinct (function, wrapper line) is reported once; the calls still run, so the
    wrapper finishes and the other rules can be checked on its result.
    """

    MAX_REPORTED = 20

    def __init__(self) -> None:
        super().__init__()
        self.violations: list[Violation] = []
        self._seen: set[tuple[str, str]] = set()
        self.allocated: list[torch.Tensor] = []  # what the wrapper allocated, in order

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        name = _name(func)
        if name in METADATA:
            return result
        if name in ALLOCATIONS:
            if isinstance(result, torch.Tensor) and _wrapper_site(sys._getframe(1)) is not None:
                self.allocated.append(result)
            return result
        source = args[0] if args else None
        why = self._judge(name, source, result)
        if why is not None:
            site = _wrapper_site(sys._getframe(1))
            if site is not None:  # None: the simulator's own call
                self._report(name, site, why)
        return result

    @staticmethod
    def _judge(name: str, source, result) -> str | None:
        """None when the call is allowed, else what is wrong with it."""
        if name in COPY_FREE_VIEWS:
            return None if _shares_storage(result, source) else "copied the data (not a view)"
        if name in DEVICE_MOVES:
            same = isinstance(source, torch.Tensor) and isinstance(result, torch.Tensor) \
                and result.dtype == source.dtype
            return None if same else "changed the dtype (a cast)"
        if name in ("Tensor.numpy", "Tensor.item", "Tensor.tolist", "Tensor.cpu",
                    "Tensor.__bool__", "Tensor.__float__", "Tensor.__int__", "Tensor.__index__"):
            return "read the data on the host"
        return "computes outside kernels"

    def _report(self, name: str, site: str, why: str) -> None:
        key = (name, site)
        if key in self._seen or len(self._seen) >= self.MAX_REPORTED:
            return
        self._seen.add(key)
        self.violations.append(Violation("wrapper_compute", f"torch.{name} {why} at {site}"))


def _wrapper_site(frame) -> str | None:
    """``file:line`` of the wrapper code that made the call, or None when a simulator frame is
    on the stack (the call is the simulator's)."""
    site = None
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(SIMULATOR_DIRS):
            return None
        if site is None and not path.startswith(_TRANSPARENT):
            site = f"{path}:{frame.f_lineno}"
        frame = frame.f_back
    return site or "<unknown>"


def workspace_bytes(allocated, out) -> int:
    """Bytes of the distinct storages the wrapper allocated, the result's own excepted."""
    outs = out if isinstance(out, list | tuple) else (out,)
    skip = {_storage_ptr(o) for o in outs if isinstance(o, torch.Tensor)}
    sizes: dict[int, int] = {}
    for t in allocated:
        ptr = _storage_ptr(t)
        if ptr not in skip:
            sizes[ptr] = t.untyped_storage().nbytes()
    return sum(sizes.values())


def output_violations(out, dtype: torch.dtype, shape: tuple[int, ...]) -> list[Violation]:
    """``bad_output`` violations of one result (empty when it is what the case needs)."""
    if not isinstance(out, torch.Tensor):
        return [Violation("bad_output", f"the result is a {type(out).__name__}, not a "
                          "torch.Tensor")]
    found = []
    if out.dtype != dtype:
        found.append(Violation("bad_output", f"dtype {out.dtype}, the case needs {dtype}"))
    if tuple(out.shape) != tuple(shape):
        found.append(Violation("bad_output", f"shape {list(out.shape)}, the case needs "
                               f"{list(shape)}"))
    if not out.is_contiguous():
        found.append(Violation("bad_output", f"not contiguous (strides {list(out.stride())})"))
    return found


def outputs_violations(out, expected: tuple[tuple[torch.dtype, tuple[int, ...]], ...]
                       ) -> list[Violation]:
    """``bad_output`` violations of a call's result against every output the case needs
    (one: a tensor; several: a tuple or list of tensors, in the proto's order)."""
    if len(expected) == 1:
        return output_violations(out, *expected[0])
    if not isinstance(out, list | tuple) or len(out) != len(expected):
        got = len(out) if isinstance(out, list | tuple) else type(out).__name__
        return [Violation("bad_output", f"the result must be {len(expected)} tensors, got "
                          f"{got}")]
    found = []
    for i, (o, (dtype, shape)) in enumerate(zip(out, expected)):
        found += [Violation(v.kind, f"output {i}: {v.detail}")
                  for v in output_violations(o, dtype, shape)]
    return found


def reuse_violations(first, second) -> list[Violation]:
    """``cached_result``: the second call (different inputs, same shape) returned the first
    call's buffer. Judged where both results are live objects (the worker)."""
    firsts = first if isinstance(first, list | tuple) else (first,)
    seconds = second if isinstance(second, list | tuple) else (second,)
    for a, b in zip(firsts, seconds):
        if (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.numel()
                and _storage_ptr(a) == _storage_ptr(b)):
            return [Violation("cached_result", "the second call returned the first call's "
                              "buffer")]
    return []


#: The second call, on different inputs, gave exactly the first call's (correct) values.
SAME_VALUES = Violation("cached_result", "the second call, on different inputs, returned the "
                        "same values as the first")
#: The second call's result fails precision for its own inputs (the first passed).
STALE_RESULT = Violation("cached_result", "the second call, on fresh inputs of the same shape, "
                         "gave a result that fails precision for them (state kept between "
                         "calls)")
