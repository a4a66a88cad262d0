"""Cost of one data-movement instruction (MTE1, MTE2, MTE3 or FixPipe), in core cycles.

``busy = startup(pipe) + nbytes / rate + (bursts - 1) * burst_gap`` occupies the pipe; the
result is ready ``latency`` cycles after that.

* ``rate`` is the path's per-core engine rate from the SoC table (ini ``*_rate``). A path that
  reads or writes GM is further capped by the core's L2 port (ini ``l2_read_rate`` /
  ``l2_write_rate`` [S7]): all MTE traffic to GM goes through L2 [S1], so a core streams at its
  L2 port rate whether the lines hit or are being filled from HBM. What HBM limits is the chip as
  a whole: the launch's HBM traffic (read misses, writes L2 cannot keep) at the chip's HBM
  bandwidth bounds the launch time (see :mod:`ascsim.sim.l2` and ``Launch._report``). That is
  how the GM bandwidth is shared by the cores running at once: each core at its port rate, all
  of them together no faster than HBM.
* A GM transfer whose first byte is not 512-byte aligned reaches only
  ``gm_misaligned_bw_factor`` of the rate [S17].
* ``latency`` for a GM read is the L2 hit latency when every line is already in L2 and the HBM
  read latency when some line is read for the first time (:meth:`L2Cache.read`); for a GM
  write it is the write-completion latency. Paths between local buffers have no latency beyond
  their startup.
"""

from __future__ import annotations

import numpy as np

from ascsim.hw.spec import PATH_PIPE
from ascsim.sim.l2 import LINE_BYTES, l2_of

#: The TimingParams field with each pipe's fixed start-up cycles per transfer instruction.
STARTUP_FIELD = {"MTE1": "mte1_startup_cycles", "MTE2": "mte2_startup_cycles",
                 "MTE3": "mte3_startup_cycles", "FIX": "fixpipe_startup_cycles"}


class PathCost:
    """What the cost of a transfer on one path of one kind of core depends on, read from the SoC
    table once: the pipe, its start-up cycles, the per-core rate (capped by the L2 port when
    one side is GM) and the timing constants of GM transfers."""

    __slots__ = ("pipe", "startup", "rate", "burst_gap", "reads_gm", "touches_gm",
                 "misaligned_factor", "l2_hit_latency", "read_latency", "write_latency")

    def __init__(self, soc, core_kind: str, path: str):
        timing = soc.timing
        self.pipe = PATH_PIPE[path]
        src, dst = path.split("->")
        self.startup = getattr(timing, STARTUP_FIELD[self.pipe], 0) \
            if self.pipe in STARTUP_FIELD else 0
        self.reads_gm = src == "GM"
        self.touches_gm = src == "GM" or dst == "GM"
        bw = soc.core_bw("aic" if core_kind == "AIC" else "aiv")
        self.rate = bw.for_path(path, l2_hit=True) if self.touches_gm else bw.for_path(path)
        self.burst_gap = timing.burst_gap_cycles
        self.misaligned_factor = timing.gm_misaligned_bw_factor
        self.l2_hit_latency = timing.l2_hit_latency_cycles
        self.read_latency = timing.gm_read_latency_cycles
        self.write_latency = timing.gm_write_latency_cycles


# (id(soc), core kind, path) -> (soc, PathCost). Keyed by id because hashing a SocSpec walks
# all its fields; the stored soc guards against a reused id.
_PATH_COSTS: dict = {}


def path_cost(core, path: str) -> PathCost:
    """The :class:`PathCost` of ``path`` on ``core``'s kind of core (cached per SoC)."""
    soc = core.soc
    key = (id(soc), core.kind, path)
    entry = _PATH_COSTS.get(key)
    if entry is None or entry[0] is not soc:
        entry = _PATH_COSTS[key] = (soc, PathCost(soc, core.kind, path))
    return entry[1]


def transfer_cycles(core, path: str, nbytes: int, bursts: int = 1, gm=None) -> tuple[float, float]:
    """(busy, latency) cycles of moving ``nbytes`` along ``path`` in ``bursts`` bursts.

    ``gm``: the GM bytes the transfer touches (offsets within the buffer), for the L2 model:
    ``(buffer_id, starts, ends)`` with one range per burst, or ``(buffer_id, rows)`` with a
    :class:`~ascsim.sim.access.ByteRows` of at least one row. Without it a GM read is costed
    as a miss.
    """
    cost = path_cost(core, path)
    if not cost.touches_gm:
        return nbytes / cost.rate + cost.startup + (bursts - 1) * cost.burst_gap, 0.0
    first = _first_byte(gm)
    rate = cost.rate
    if first is not None and first % LINE_BYTES:
        rate *= cost.misaligned_factor
    busy = nbytes / rate + cost.startup + (bursts - 1) * cost.burst_gap
    cache = l2_of(core.launch)
    t = max(core.pipe_free[cost.pipe], core.scalar)
    if cost.reads_gm:
        if first is None:
            cache.unknown_read(nbytes)
            return busy, float(cost.read_latency)
        return busy, _l2_read(cache, gm, t, cost)
    if first is not None:
        _l2_write(cache, gm, t + busy)
    return busy, float(cost.write_latency)


def _first_byte(gm) -> int | None:
    """The first burst's first GM byte, or None when ``gm`` names no bytes."""
    if gm is None:
        return None
    if len(gm) == 2:
        return gm[1].first
    starts = np.asarray(gm[1])
    return int(starts.flat[0]) if starts.size else None


def _l2_read(cache, gm, t: float, cost: PathCost) -> float:
    if len(gm) == 2:
        return cache.read_rows(gm[0], gm[1], t, cost.l2_hit_latency, cost.read_latency)[0]
    return cache.read(gm[0], gm[1], gm[2], t, cost.l2_hit_latency, cost.read_latency)[0]


def _l2_write(cache, gm, t: float) -> None:
    if len(gm) == 2:
        cache.write_rows(gm[0], gm[1], t)
    else:
        cache.write(gm[0], gm[1], gm[2], t)
