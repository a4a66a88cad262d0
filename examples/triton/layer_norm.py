"""Layer normalisation of each row (mean, variance, scale and shift), written in Triton for Ascend.

One program per row walks the row in blocks three times: to sum it, to sum its squared
deviations, and to normalise it; statistics accumulate in fp32 whatever the input type.
``ascsim run examples/triton/layer_norm.py``.
"""

from __future__ import annotations

import torch

try:
    import torch_npu  # noqa: F401
    DEVICE = "npu"
except ImportError:
    DEVICE = "cpu"

import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / n_cols
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        deviation = tl.where(cols < n_cols, x - mean, 0.0)
        squares += deviation * deviation
    inv_std = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < n_cols
        x = tl.load(x_row + cols, mask=inside, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=inside)
        b = tl.load(b_ptr + cols, mask=inside)
        tl.store(y_row + cols, (x - mean) * inv_std * w + b, mask=inside)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
               eps: float = 1e-5, block: int = 1024) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty_like(x)
    layer_norm_kernel[(rows,)](x, y, weight, bias, x.stride(0), cols, eps,
                               BLOCK=min(block, triton.next_power_of_2(cols)))
    return y


def main() -> None:
    torch.manual_seed(0)
    for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 1e-2)):
        x = (torch.randn(16, 1500) * 2 + 0.5).to(dtype).to(DEVICE)
        w = torch.rand(1500, dtype=dtype, device=DEVICE)
        b = torch.rand(1500, dtype=dtype, device=DEVICE)
        y = layer_norm(x, w, b)
        ref = torch.nn.functional.layer_norm(x.float(), (1500,), w.float(), b.float(), 1e-5)
        torch.testing.assert_close(y.float(), ref, atol=tol, rtol=tol)
    print("layer norm: matches torch.nn.functional.layer_norm (fp32, fp16)")


if __name__ == "__main__":
    main()
