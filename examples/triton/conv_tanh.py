"""y = tanh(conv2d(x, w, stride, padding) + b), written in Triton for Ascend.

The convolution is a matrix product over an implicit im2col: row ``p`` of A is output pixel
``p`` (image, row, column), column ``k`` one (channel, kernel row, kernel column) of its
receptive field -- the pointers of a ``tl.load`` address x directly, the mask drops the
padding -- and B is the filter seen as ``[C*KH*KW, CO]``. Each program multiplies a block of
pixels by a block of output channels on the cube (``tl.dot``), then adds the bias and applies
tanh on the vector unit and writes its block of the NCHW output. The same operator as the
library's ``ascsim.ops.fused_conv_tanh`` (pyasc kernels) and cann-bench's PyPTO Pro package.
Run it with ``ascsim run examples/triton/conv_tanh.py``.
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
from triton.language.extra.cann import libdevice


@triton.jit
def conv_tanh_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, H, W, CO, HO, WO, pixels,
                     KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr,
                     PAD: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    blocks_co = tl.cdiv(CO, BLOCK_CO)
    pid = tl.program_id(0)
    p = (pid // blocks_co) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = (pid % blocks_co) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    image, at = p // (HO * WO), p % (HO * WO)
    top, left = (at // WO) * STRIDE - PAD, (at % WO) * STRIDE - PAD
    depth = C * KH * KW
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for k0 in range(0, depth, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        ch, i, j = k // (KH * KW), (k // KW) % KH, k % KW
        row = top[:, None] + i[None, :]
        col = left[:, None] + j[None, :]
        inside = ((p[:, None] < pixels) & (k[None, :] < depth) & (row >= 0) & (row < H)
                  & (col >= 0) & (col < W))
        a = tl.load(x_ptr + ((image[:, None] * C + ch[None, :]) * H + row) * W + col,
                    mask=inside, other=0.0)
        f = tl.load(w_ptr + co[None, :] * depth + k[:, None],
                    mask=(k[:, None] < depth) & (co[None, :] < CO), other=0.0)
        acc = tl.dot(a, f, acc)
    bias = tl.load(b_ptr + co, mask=co < CO, other=0.0)
    out = libdevice.tanh(acc + bias[None, :])
    y = y_ptr + (image[:, None] * CO + co[None, :]) * (HO * WO) + at[:, None]
    tl.store(y, out.to(y_ptr.dtype.element_ty), mask=(p[:, None] < pixels) & (co[None, :] < CO))


def conv_tanh(x, w, b, stride: int = 1, padding: int = 1, block_p: int | None = None,
              block_co: int = 64, block_k: int = 64) -> torch.Tensor:
    """``block_p`` pixels a program (default: one image's, so that each program writes whole
    channel planes of y: its stores do not interleave with another program's)."""
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    ho, wo = (h + 2 * padding - kh) // stride + 1, (wd + 2 * padding - kw) // stride + 1
    block_p = block_p or ho * wo
    y = torch.empty((n, co, ho, wo), dtype=x.dtype, device=x.device)
    pixels = n * ho * wo
    grid = (triton.cdiv(pixels, block_p) * triton.cdiv(co, block_co),)
    conv_tanh_kernel[grid](x, w, b, y, c, h, wd, co, ho, wo, pixels, KH=kh, KW=kw,
                           STRIDE=stride, PAD=padding, BLOCK_P=block_p, BLOCK_CO=block_co,
                           BLOCK_K=block_k)
    return y


def reference(x, w, b, stride: int = 1, padding: int = 1) -> torch.Tensor:
    return torch.tanh(torch.nn.functional.conv2d(x.float(), w.float(), b.float(), stride,
                                                 padding)).to(x.dtype)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 16, 12, 12, dtype=torch.float16, device=DEVICE)
    w = torch.randn(32, 16, 3, 3, dtype=torch.float16, device=DEVICE) * 0.1
    b = torch.randn(32, dtype=torch.float16, device=DEVICE)
    y = conv_tanh(x, w, b)
    torch.testing.assert_close(y.float(), reference(x, w, b).float(), rtol=1e-2, atol=1e-2)
    print("conv tanh: tanh(conv2d(x, w) + b) matches torch")


if __name__ == "__main__":
    main()
