"""TPipe event ids: handed out in order per HardEvent, given back with pyasc's keywords."""

from __future__ import annotations

import numpy as np

import ascsim.asc as asc
from ascsim.session import SESSION


@asc.jit
def _event_ids(out: asc.GlobalAddress):
    pipe = asc.TPipe()
    ptr = asc.get_tpipe_ptr()
    first = ptr.alloc_event_id(event=asc.HardEvent.V_S)
    second = ptr.alloc_event_id(event=asc.HardEvent.V_S)
    other = ptr.alloc_event_id(event=asc.HardEvent.MTE2_V)
    ptr.release_event_id(id=first, event=asc.HardEvent.V_S)
    again = ptr.fetch_event_id(asc.HardEvent.V_S)
    pipe.release_event_id(second, asc.HardEvent.V_S)
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    for i, value in enumerate((first, second, other, again)):
        g.set_value(i, value)


def test_event_ids_are_handed_out_in_order_and_given_back_by_keyword():
    out = np.full(8, -1, dtype=np.int32)
    with SESSION.collect() as run:
        _event_ids[1](out)
    assert list(out[:4]) == [0, 1, 0, 0]  # the released id 0 is handed out again
    assert not run.reports[0].findings
