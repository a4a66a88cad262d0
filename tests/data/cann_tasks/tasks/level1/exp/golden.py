"""Reference of the test task ``exp``: base ** (scale * x + shift), base -1 meaning e."""

import torch


def exp(x: torch.Tensor, base: float = -1.0, scale: float = 1.0,
        shift: float = 0.0) -> torch.Tensor:
    z = x * scale + shift
    return torch.exp(z) if base == -1.0 else torch.pow(base, z)
