"""Element-wise addition of two vectors, written in Triton for Ascend.

Each program adds one block of ``BLOCK`` elements; the mask keeps the last block inside the
vectors. Run it on the simulated chip with ``ascsim run examples/triton/vector_add.py`` (or on
an NPU with triton-ascend, or anywhere with ``TRITON_INTERPRET=1`` and upstream Triton).
"""

from __future__ import annotations

import torch

try:
    import torch_npu  # noqa: F401 - the NPU device (under ascsim run: the simulator's stand-in)
    DEVICE = "npu"
except ImportError:
    DEVICE = "cpu"

import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    offsets = start + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    y = tl.load(y_ptr + offsets, mask=inside)
    tl.store(z_ptr + offsets, x + y, mask=inside)


def add(x: torch.Tensor, y: torch.Tensor, block: int = BLOCK) -> torch.Tensor:
    z = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, z, n, BLOCK=block)
    return z


def main() -> None:
    torch.manual_seed(0)
    x = torch.rand(100_000, device=DEVICE)
    y = torch.rand(100_000, device=DEVICE)
    z = add(x, y)
    torch.testing.assert_close(z, x + y)
    print("vector add: z = x + y matches torch")


if __name__ == "__main__":
    main()
