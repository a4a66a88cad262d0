"""System control of the core: cache maintenance, layout and profiling switches, the HCCL
context registers, SoC state and accuracy check points.

The machine model has no scalar data cache and no instruction cache (a scalar GM access pays
its full latency, instructions are never fetched), so cache maintenance changes nothing there:
each call costs its issue on the scalar unit, as on the device, and the preload status always
reads 0 (nothing being fetched). ``set_mm_layout_transform`` only chooses the order in which
the Cube walks M and N, which the model's results do not depend on; it is recorded and timed.
"""

from __future__ import annotations

from ascsim.asc.basic.atomic import set_atomic_none
from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import CacheLine, DcciDst
from ascsim.asc.tensor import GlobalTensor
from ascsim.isa import KernelError, ScalarOps

#: HCCL context registers of a core (``set_hccl_context`` index range).
HCCL_CONTEXTS = 2


def _issue(count: int = 1) -> None:
    current_core().execute(ScalarOps(count, user_location()))


def _state(name: str, default):
    core = current_core()
    return core.launch.shared.setdefault(name, {}).setdefault(core.core_id, default)


def data_cache_clean_and_invalid(entire_type, dcci_dst=None, dst=None) -> None:
    """``data_cache_clean_and_invalid(entire_type, [dcci_dst,] dst)``: write back and drop
    data cache lines (the line of ``dst``, or the whole cache)."""
    if dst is None and isinstance(dcci_dst, GlobalTensor):
        dcci_dst, dst = DcciDst.CACHELINE_ALL, dcci_dst
    CacheLine(entire_type)
    DcciDst(DcciDst.CACHELINE_ALL if dcci_dst is None else dcci_dst)
    if dst is not None and not isinstance(dst, GlobalTensor):
        raise KernelError("data_cache_clean_and_invalid: dst must be a GlobalTensor",
                          user_location())
    _issue()


def data_cache_preload(src, cache_offset) -> None:
    """``data_cache_preload(src, cache_offset)``: prefetch a GM line into the data cache."""
    if not isinstance(src, GlobalTensor):
        raise KernelError("data_cache_preload: src must be a GlobalTensor", user_location())
    _issue()


def icache_preload(pre_fetch_len) -> None:
    """``icache_preload(pre_fetch_len)``: prefetch instructions."""
    if int(pre_fetch_len) < 0:
        raise KernelError(f"icache_preload: length {pre_fetch_len} is negative", user_location())
    _issue()


def get_icache_preload_status() -> int:
    """0: no instruction prefetch in flight (the model fetches none)."""
    _issue()
    return 0


def set_mm_layout_transform(mm_layout_mode) -> None:
    """Whether the Cube walks N before M; recorded, timed, results unchanged."""
    _state("mm_layout_transform", {})["n_first"] = bool(mm_layout_mode)
    _issue()


def metrics_prof_start() -> None:
    """Start of a profiled region (the device's PMU counters); the model profiles every launch
    whole, so this marks nothing beyond its issue."""
    _issue()


def metrics_prof_stop() -> None:
    _issue()


def set_hccl_context(index, context) -> None:
    """Store ``context`` (a GM address) in HCCL context register ``index``."""
    index = _hccl_index(index)
    _state("hccl_context", {})[index] = context
    _issue()


def get_hccl_context(index):
    """The GM address in HCCL context register ``index`` (None if never set)."""
    index = _hccl_index(index)
    _issue()
    return _state("hccl_context", {}).get(index)


def _hccl_index(index) -> int:
    index = int(index)
    if not 0 <= index < HCCL_CONTEXTS:
        raise KernelError(f"HCCL context index {index} is outside [0, {HCCL_CONTEXTS})",
                          user_location())
    return index


def init_soc_state() -> None:
    """Reset the core's global state registers (the atomic store mode among them)."""
    set_atomic_none()


def dump_acc_chk_point(tensor, index, count_off, dump_size) -> None:
    """Print ``dump_size`` elements of ``tensor`` from ``count_off``, tagged ``index`` (the
    device writes them to its dump buffer for accuracy checks)."""
    loc = user_location()
    start, n = int(count_off), int(dump_size)
    if start < 0 or n < 0:
        raise KernelError(f"dump_acc_chk_point: offset {start} and size {n} must not be "
                          "negative", loc)
    values = tensor.elements(start, n, loc)
    _issue()
    core = current_core()
    core.launch.say(f"[block {core.block_idx}] check point {int(index)} @{start}: {values}\n")


__all__ = ["data_cache_clean_and_invalid", "data_cache_preload", "dump_acc_chk_point",
           "get_hccl_context", "get_icache_preload_status", "icache_preload", "init_soc_state",
           "metrics_prof_start", "metrics_prof_stop", "set_hccl_context",
           "set_mm_layout_transform"]
