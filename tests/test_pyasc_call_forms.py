"""Call forms of pyasc's API that its unit tests use: keyword names, defaults and positional
orders (results checked against numpy where the call computes something)."""

from __future__ import annotations

import numpy as np

import ascsim.asc as asc
from ascsim.session import SESSION

N = 64
SEEN = []


@asc.jit
def bind_copy(x: asc.GlobalAddress, y: asc.GlobalAddress):
    """x -> y through a TQueBind made with pyasc's defaults (VECIN to VECIN)."""
    pipe = asc.TPipe()
    que = asc.TQueBind(src=asc.TPosition.VECIN)
    pipe.init_buffer(que=que, num=1, len=N * 4)
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x, N)
    y_gm.set_global_buffer(y, N)
    local = que.alloc_tensor(asc.float32)
    asc.data_copy(local, x_gm, N)
    que.enque(local)
    local = que.deque(asc.float32)
    asc.data_copy(y_gm, local, N)
    que.free_tensor(local)
    SEEN.append(asc.get_arch_version(core_version=0))
    SEEN.append(asc.DataCopyEnhancedParams(asc.BlockMode.BLOCK_MODE_NORMAL,
                                           asc.DeqScale.DEQ_NONE, 0, 0, False,
                                           asc.pad_t.PAD_NONE, 0))


def test_tquebind_defaults_arch_version_and_enhanced_params():
    SEEN.clear()
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    bind_copy[1](x, y)
    np.testing.assert_array_equal(y, x)
    version, enhanced = SEEN
    assert version == SESSION.soc.arch_version
    assert (enhanced.pad_mode, enhanced.pad_value, enhanced.is_relu) == (
        asc.pad_t.PAD_NONE, 0, False)
