"""Reference of the test task ``rms_norm``, written out (not torch's own rms_norm)."""

import torch


def rms_norm(x: torch.Tensor, gamma: torch.Tensor, epsilon: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + epsilon) * gamma
