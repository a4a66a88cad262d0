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


def transfer_cycles(core, path: str, nbytes: int, bursts: int = 1, gm=None) -> tuple[float, float]:
    """(busy, latency) cycles of moving ``nbytes`` along ``path`` in ``bursts`` bursts.

    ``gm`` = ``(buffer_id, starts, ends)``: the GM byte ranges the transfer touches (offsets
    within the buffer), for the L2 model. Without it a GM read is costed as a miss.
    """
    soc = core.soc
    timing = soc.timing
    pipe = PATH_PIPE[path]
    src, dst = path.split("->")
    startup = getattr(timing, STARTUP_FIELD[pipe], 0) if pipe in STARTUP_FIELD else 0
    bw = soc.core_bw("aic" if core.kind == "AIC" else "aiv")
    if src != "GM" and dst != "GM":
        return nbytes / bw.for_path(path) + startup + (bursts - 1) * timing.burst_gap_cycles, 0.0
    rate = bw.for_path(path, l2_hit=True)
    if gm is not None:
        buffer_id, starts, ends = gm
        starts, ends = np.asarray(starts), np.asarray(ends)
        if starts.size and int(starts.flat[0]) % LINE_BYTES:
            rate *= timing.gm_misaligned_bw_factor
    busy = nbytes / rate + startup + (bursts - 1) * timing.burst_gap_cycles
    cache = l2_of(core.launch)
    t = max(core.pipe_free[pipe], core.scalar)
    if src == "GM":
        if gm is None or not starts.size:
            cache.unknown_read(nbytes)
            return busy, float(timing.gm_read_latency_cycles)
        latency, _ = cache.read(buffer_id, starts, ends, t, timing.l2_hit_latency_cycles,
                                timing.gm_read_latency_cycles)
        return busy, latency
    if gm is not None and starts.size:
        cache.write(buffer_id, starts, ends, t + busy)
    return busy, float(timing.gm_write_latency_cycles)
