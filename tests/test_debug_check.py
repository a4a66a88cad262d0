"""check_local_memory_ia: armed UB ranges report the accesses of the armed kinds."""

from __future__ import annotations

import numpy as np

import ascsim.asc as asc


@asc.jit
def _watched(x: asc.GlobalAddress, kinds: asc.ConstExpr[dict], disarm: asc.ConstExpr[bool]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=1024)
    ub = buf.get(asc.float32)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    start = ub.get_phy_addr() // 32
    # Watch the second 128 bytes of the buffer: blocks start+4 .. start+7.
    asc.check_local_memory_ia(asc.CheckLocalMemoryIAParam(
        1, start + 3, start + 7, kinds.get("sr", False), kinds.get("sw", False),
        kinds.get("vr", False), kinds.get("vw", False), kinds.get("mr", False),
        kinds.get("mw", False), True))
    if disarm:
        asc.check_local_memory_ia(asc.CheckLocalMemoryIAParam(enable_bit=1, is_enable=False))
    asc.data_copy(ub, gx, 32)        # MTE write of bytes 0..127: outside
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.duplicate(ub[32:], 1.0, 32)  # vector write of bytes 128..255: inside
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    ub.get_value(40)                 # scalar read inside


def _ia(report):
    return [f for f in report.findings if f.category == "local-memory-ia"]


def test_vector_write_into_the_watched_range_is_reported():
    found = _ia(_watched[1](np.zeros(64, np.float32), {"vw": True}, False))
    assert len(found) == 1 and "duplicate" in found[0].message


def test_only_the_armed_kinds_are_reported():
    found = _ia(_watched[1](np.zeros(64, np.float32), {"sr": True, "mw": True}, False))
    assert len(found) == 1 and "scalar read" in found[0].message


def test_a_disarmed_register_reports_nothing():
    assert not _ia(_watched[1](np.zeros(64, np.float32), {"vw": True, "sr": True}, True))
