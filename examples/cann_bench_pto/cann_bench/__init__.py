"""Example cann-bench submission in PyPTO Pro: the evaluator imports ``cann_bench`` and calls
the operators it finds in ``dir(cann_bench)``."""

from cann_bench.fused_conv_sigmoid import fused_conv_sigmoid
from cann_bench.fused_conv_tanh import fused_conv_tanh

__all__ = ["fused_conv_sigmoid", "fused_conv_tanh"]
