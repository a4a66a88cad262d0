"""cann-bench operators implemented by ascsim's examples: ``rms_norm`` (examples/rmsnorm.py)
and ``gelu`` (examples/gelu.py, its tanh approximation), in the layout of a submission.

The wrappers launch the examples' own kernels on the caller's tensors. Where an example's
host function pads its input on the host (a copy the submission rules forbid), the wrapper
instead picks a block count that divides the work exactly, and refuses — with a ValueError
saying why — a case it cannot split that way or that the kernel does not cover.
"""

from cann_bench.example_ops import gelu, rms_norm

__all__ = ["gelu", "rms_norm"]
