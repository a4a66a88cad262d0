"""A struct argument as kernels see it: each core's own copy once it writes, runtime ints, the
C field type's wrap-around read back, and the host's struct left as it was."""

from __future__ import annotations

import numpy as np

import ascsim.asc as asc
from ascsim.asc.adv.norm import RmsNormTiling
from ascsim.asc.launcher import KernelStruct
from ascsim.asc.values import RuntimeInt


@asc.jit
def _struct_kernel(out: asc.GlobalAddress, tiling: RmsNormTiling):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    core = asc.get_block_idx()
    before = tiling.b_length
    if core == 0:
        tiling.b_length = before + 5  # only core 0's view changes
    g.set_value(core * 3, before)
    g.set_value(core * 3 + 1, tiling.b_length)
    g.set_value(core * 3 + 2, tiling.s_length)


def test_each_core_sees_its_own_writes_only_and_the_host_struct_is_unchanged():
    host = RmsNormTiling(b_length=7, s_length=3)
    out = np.zeros(9, np.int32)
    _struct_kernel[3](out, host)
    assert out.tolist() == [7, 12, 3, 7, 7, 3, 7, 7, 3]
    assert host.b_length == 7


def test_views_share_values_until_written_and_read_back_the_wrapped_field():
    host = RmsNormTiling(b_length=7)
    shared: dict = {}
    a, b = KernelStruct(host, shared), KernelStruct(host, shared)
    assert isinstance(a.b_length, RuntimeInt) and a.b_length == 7 and b.b_length == 7
    a.b_length = 2**32 + 9  # uint32 field: wraps to 9
    assert a.b_length == 9 and b.b_length == 7 and host.b_length == 7
    assert a.fields()["b_length"] == 9 and b.fields()["b_length"] == 7
