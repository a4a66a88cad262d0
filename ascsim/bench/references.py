"""Inputs and reference outputs for a bench case (torch here is the reference, not the operator).

- Inputs: uniform in each input's value range — float64 ``torch.rand`` scaled and shifted, then
  cast to the input dtype (the cann-bench generator) — from a seed fixed by (task, case), so every
  run and every variant sees the same data.
- Truth: the contract computed in float64 from the (already rounded) inputs.
- Golden: the truth rounded once to the output dtype. This is what the contract's golden.py gives
  on the device in the case dtype (the device accumulates half-precision GEMMs in fp32 and
  rounds once), and it equals the rule's ``golden_truncated``.
- Same-precision reference: golden.py taken literally with torch on the CPU in the case's
  working precision (the case dtype for the conv ops; fp32 for matmul_leaky_relu, whose contract
  is ``A.float() @ B.float() + bias``). Only the precision fallback needs it, and the CPU's
  fp16/bf16 convolution is ~80x slower than its fp32 one, so it is computed on first use.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ascsim.bench.opinfo import InterfaceError
from ascsim.bench.precision import PrecisionResult, check_precision
from ascsim.bench.tasks import Case, Task

TORCH_DTYPES = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}
DTYPE_NAMES = {v: k for k, v in TORCH_DTYPES.items()}


def case_seed(task_name: str, case_id: int, draw: int = 0) -> int:
    """A seed fixed by (task, case): stable across runs, processes and Python versions.
    ``draw`` > 0 gives further input sets of the case (a package is called on a second one to
    catch results cached between calls)."""
    key = f"{task_name}/{case_id}" if draw == 0 else f"{task_name}/{case_id}/{draw}"
    return zlib.crc32(key.encode())


def make_inputs(task: Task, case: Case, draw: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(case_seed(task.name, case.case_id, draw))
    out = []
    for shape, dtype, (lo, hi) in zip(case.input_shapes, case.dtypes, case.value_ranges):
        u = torch.rand(shape, dtype=torch.float64, generator=gen)
        out.append((u * (hi - lo) + lo).to(TORCH_DTYPES[dtype]))
    return tuple(out)


def _leaky_relu(y: torch.Tensor, alpha: float) -> torch.Tensor:
    return torch.where(y >= 0, y, y * alpha)


def _conv_act(task: Task, case: Case, inputs, dtype: torch.dtype) -> torch.Tensor:
    x, w, b = (t.to(dtype) for t in inputs)
    attrs = case.kwargs()
    pads = attrs["pads"]
    if pads[0] == pads[1] and pads[2] == pads[3]:
        padding = (pads[0], pads[2])
    else:  # golden.py: asymmetric pads are an explicit zero pad, then a padding-0 conv
        x = F.pad(x, (pads[2], pads[3], pads[0], pads[1]))
        padding = (0, 0)
    y = F.conv2d(x, w, b, stride=tuple(attrs["strides"]), padding=padding,
                 dilation=tuple(attrs.get("dilations", [1, 1])))
    return ACTIVATIONS[task.activation](y, attrs)


def _matmul_act(task: Task, case: Case, inputs, dtype: torch.dtype) -> torch.Tensor:
    a, b, bias = (t.to(dtype) for t in inputs)
    return ACTIVATIONS[task.activation](a @ b + bias, case.kwargs())


ACTIVATIONS: dict[str, Callable[[torch.Tensor, dict], torch.Tensor]] = {
    "tanh": lambda y, attrs: torch.tanh(y),
    "sigmoid": lambda y, attrs: torch.sigmoid(y),
    "leaky_relu": lambda y, attrs: _leaky_relu(y, attrs["alpha"]),
}
KIND_COMPUTE = {"conv2d_act": _conv_act, "matmul_act": _matmul_act}
# The precision in which golden.py computes, per kind: None = the case dtype.
KIND_WORKING_DTYPE = {"conv2d_act": None, "matmul_act": torch.float32}


@dataclass
class References:
    """Truth, golden and (lazily) the same-precision reference of one case."""

    task: Task
    case: Case
    inputs: tuple[torch.Tensor, ...]
    truth: torch.Tensor        # float64
    golden: torch.Tensor       # truth rounded to the output dtype
    _same_precision: torch.Tensor | None = field(default=None, repr=False)

    # --- what the runner and the package runner ask of any task's references -------------
    @property
    def expected(self) -> tuple[tuple[torch.dtype, tuple[int, ...]], ...]:
        """(dtype, shape) of every output the case needs (one for these tasks)."""
        return ((TORCH_DTYPES[self.case.output_dtype], self.case.output_shape),)

    def package_args(self) -> tuple[tuple, dict]:
        """How a package's operator is called: ``op(*inputs, **attrs)`` (fresh copies)."""
        return tuple(t.clone() for t in self.inputs), self.case.kwargs()

    def check_output(self, out: object) -> torch.Tensor:
        """The structural checks: a contiguous torch tensor of the right dtype and shape."""
        if not isinstance(out, torch.Tensor):
            raise InterfaceError(f"output is a {type(out).__name__}, not a torch.Tensor")
        want = TORCH_DTYPES[self.case.output_dtype]
        if out.dtype != want:
            raise InterfaceError(f"output dtype {out.dtype} but the case needs {want}")
        if tuple(out.shape) != self.case.output_shape:
            raise InterfaceError(f"output shape {list(out.shape)} but the case needs "
                                 f"{list(self.case.output_shape)}")
        if not out.is_contiguous():
            raise InterfaceError("output is not contiguous")
        return out

    def verdict(self, out: torch.Tensor) -> PrecisionResult:
        """The precision rule on the output."""
        return check_precision(out, self.golden, self.case.output_dtype, truth=self.truth,
                               reference=self.same_precision)

    def fresh(self, draw: int) -> References:
        """The references of a further input set of the case (``draw`` > 0)."""
        return make_references(self.task, self.case, make_inputs(self.task, self.case, draw))

    def same_precision(self) -> torch.Tensor:
        if self._same_precision is None:
            working = KIND_WORKING_DTYPE[self.task.kind] or TORCH_DTYPES[self.case.dtype]
            out = KIND_COMPUTE[self.task.kind](self.task, self.case, self.inputs, working)
            self._same_precision = out.to(TORCH_DTYPES[self.case.output_dtype])
        return self._same_precision


def make_references(task: Task, case: Case,
                    inputs: tuple[torch.Tensor, ...] | None = None) -> References:
    inputs = make_inputs(task, case) if inputs is None else inputs
    truth = KIND_COMPUTE[task.kind](task, case, inputs, torch.float64)
    golden = truth.to(TORCH_DTYPES[case.output_dtype])
    return References(task, case, inputs, truth, golden)
