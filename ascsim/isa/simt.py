"""Instruction records of the 950's SIMT unit: the threads of a ``simt.launch`` on an AIV.

A launch is a run of these records on the ``V`` pipe (PyPTO Pro puts ``simt.launch`` on PIPE_V):
one :class:`SimtLaunch`, then the launch's memory accesses (:class:`SimtAccess`, one per
statement that reads or writes a tile or tensor element, for all the threads that execute it),
then one :class:`SimtIssue` for its arithmetic. The scalar unit issues the launch once; the
records after it are the SIMT unit's own and cost the scalar unit nothing.

Costs use the SoC table's ``simt_warp_size`` (threads per warp), ``simt_warp_schedulers``
(warp instructions per cycle) and ``simt_access_bytes`` (the access granularity).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ascsim.isa.operands import Region

Location = tuple[str, int]


class SimtLaunch(NamedTuple):
    """The start of a SIMT launch of ``threads`` threads (``dims`` = x, y, z).

    Semantics: none on memory. Cost: issued by the scalar unit like any pipe instruction
    (``scalar_cycles_per_call``); it occupies ``V`` for one cycle per warp scheduler round of
    the launch's warps (``ceil(warps / simt_warp_schedulers)``: the warps being set up).
    """

    threads: int
    dims: tuple
    loc: Location
    op: str = "simt_launch"


class SimtAccess(NamedTuple):
    """Threads ``lanes`` (their linear ids in the launch) each read or write one element of
    ``region``: lane ``lanes[i]`` the element ``index[i]`` (elements from the region's start).

    Semantics: a load (``values is None``) returns the elements, one per lane (zeros in a
    timing-only run); a store writes ``values[i]`` (converted to the region's dtype) to element
    ``index[i]``; where two lanes store to one element the higher lane's value stays. Indices
    past the region's allocation are reported as for any other access.

    Cost on ``V``: one issue slot per ``simt_access_bytes`` segment each warp touches
    (coalescing: the lanes of a warp that fall in one segment share it), over
    ``simt_warp_schedulers`` schedulers; a GM access adds the GM read (load) or write (store)
    latency.
    """

    region: Region
    index: np.ndarray
    lanes: np.ndarray
    values: Any
    loc: Location
    op: str = "simt_access"


class SimtIssue(NamedTuple):
    """``ops`` warp instructions of arithmetic, compares and branches, each executed by
    ``threads`` threads (the launch's), e.g. the whole arithmetic of a launch.

    Semantics: none on memory (the values live in the threads' registers). Cost on ``V``:
    ``ops * ceil(threads / simt_warp_size) / simt_warp_schedulers`` cycles.
    """

    ops: int
    threads: int
    loc: Location
    op: str = "simt_issue"


__all__ = ["SimtAccess", "SimtIssue", "SimtLaunch"]
