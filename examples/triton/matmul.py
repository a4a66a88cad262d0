"""C = leaky_relu(A @ B), written in Triton for Ascend, with its block sizes autotuned.

Each program computes one ``BLOCK_M x BLOCK_N`` block of C: it walks K in steps of
``BLOCK_K``, multiplying on the cube (``tl.dot``: a mix kernel, one AIC and its AIVs per
program), then applies the activation on the vector unit and stores fp16. ``triton.autotune``
picks the block sizes by simulated device time. Run it with ``ascsim run
examples/triton/matmul.py``.
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

ALPHA = 0.01
CONFIGS = [
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 128}),
]


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, alpha,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    blocks_n = tl.cdiv(N, BLOCK_N)
    pid = tl.program_id(0)
    rows = (pid // blocks_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % blocks_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    depth = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k * BLOCK_K + depth
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :],
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :],
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    c = tl.where(acc >= 0, acc, acc * alpha)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], c.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


tuned_matmul = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(matmul_kernel)


def matmul(a: torch.Tensor, b: torch.Tensor, kernel=tuned_matmul, **meta) -> torch.Tensor:
    (m, k), (_, n) = a.shape, b.shape
    c = torch.empty((m, n), dtype=torch.float16, device=a.device)

    def grid(opts):
        return (triton.cdiv(m, opts["BLOCK_M"]) * triton.cdiv(n, opts["BLOCK_N"]),)

    kernel[grid](a, b, c, m, n, k, ALPHA, **meta)
    return c


def reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.leaky_relu(a.float() @ b.float(), ALPHA).half()


def tune_entry(BLOCK_M: int = 64, BLOCK_N: int = 64, BLOCK_K: int = 64):  # noqa: N803
    """One trial of ``ascsim tune`` (examples/triton/matmul_space.yaml): the kernel with these
    block sizes, checked against torch; returns the launch's report."""
    from ascsim.session import SESSION

    torch.manual_seed(0)
    a = torch.randn(512, 256, dtype=torch.float16, device=DEVICE)
    b = torch.randn(256, 384, dtype=torch.float16, device=DEVICE)
    with SESSION.collect() as run:
        c = matmul(a, b, matmul_kernel, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    torch.testing.assert_close(c.float(), reference(a, b).float(), rtol=1e-2, atol=1e-2)
    return run.reports[-1]


def main() -> None:
    torch.manual_seed(0)
    a = torch.randn(192, 160, dtype=torch.float16, device=DEVICE)
    b = torch.randn(160, 200, dtype=torch.float16, device=DEVICE)
    c = matmul(a, b)
    torch.testing.assert_close(c.float(), reference(a, b).float(), rtol=1e-2, atol=1e-2)
    print(f"matmul: leaky_relu(A @ B) matches torch (autotuned: {tuned_matmul.best_config})")


if __name__ == "__main__":
    main()
