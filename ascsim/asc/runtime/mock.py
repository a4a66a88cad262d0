"""pyasc's mock kernel arguments (``asc.runtime.jit.MockTensor`` / ``MockValue``).

pyasc's unit tests launch kernels with arguments that carry only a data type: a pointer with no
host data behind it, or a scalar with no value. On the simulator a kernel really runs, so each
mock becomes a concrete argument of that type: a zero-filled device allocation of
:data:`MOCK_TENSOR_BYTES` for a tensor, a zero for a value. Nothing is copied back from them.
"""

from __future__ import annotations

import numpy as np

from ascsim.asc import dtypes

#: Size of the device allocation behind a MockTensor: room for the 256 KiB of UB, or a
#: 256x256 fp32 matrix, which is more than the unit tests' kernels touch.
MOCK_TENSOR_BYTES = 256 * 1024


class MockTensor:
    """A tensor argument known only by its element type (``MockTensor(asc.float16)``)."""

    def __init__(self, dtype):
        self.dtype = dtypes.as_dtype(dtype)

    def host_value(self) -> np.ndarray:
        """The zero-filled host array that stands for this tensor in a launch."""
        return np.zeros(MOCK_TENSOR_BYTES // self.dtype.sizeof(), dtype=self.dtype.np_dtype)

    def __repr__(self) -> str:
        return f"MockTensor({self.dtype!r})"


class MockValue:
    """A scalar argument known only by its type (``MockValue(asc.int32)``); it is zero."""

    def __init__(self, dtype):
        self.dtype = dtypes.as_dtype(dtype)

    def host_value(self):
        return self.dtype.np_dtype.type(0)

    def __repr__(self) -> str:
        return f"MockValue({self.dtype!r})"


def host_value(value):
    """A launch argument with mocks replaced by concrete values; others unchanged."""
    if isinstance(value, (MockTensor, MockValue)):
        return value.host_value()
    return value
