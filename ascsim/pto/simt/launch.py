"""``pl.simt.launch(fn, threads=..., args=(...))``: a thread grid on the calling AIV.

The launch runs on pipe V (as PyPTO Pro schedules it): with ``auto_mutex`` it locks the buffer
ids of the tiles among ``args`` on V around the launch; it is one
:class:`~ascsim.isa.SimtLaunch` record, the threads' element accesses, and one
:class:`~ascsim.isa.SimtIssue` record for their arithmetic.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa import Mutex, SimtIssue, SimtLaunch
from ascsim.pto.errors import ParserSyntaxError, ParserTypeError
from ascsim.pto.ops import system
from ascsim.pto.ops.common import current_core, user_location
from ascsim.pto.ops.sync import AUTO_MUTEX
from ascsim.pto.simt import threads
from ascsim.pto.simt.function import SimtFunction
from ascsim.pto.tile import Tile

#: How often each launch ran per thread (by function name), for the report's notes and tests.
PER_THREAD: dict = {}


def _dims(value, loc) -> tuple[int, int, int]:
    dims = list(value) if isinstance(value, (tuple, list)) else [value]
    if not 1 <= len(dims) <= 3:
        raise ParserSyntaxError("pl.simt.launch() threads tuple must contain one to three "
                                "dimensions", loc)
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
            raise ParserSyntaxError(f"pl.simt.launch(): thread dimensions must be positive "
                                    f"ints, got {d!r}", loc)
        out.append(int(d))
    return (*out, *[1] * (3 - len(out)))


def _tokens(args) -> list[int]:
    seen: list[int] = []
    for arg in args:
        if type(arg) is Tile and arg.mutex:
            seen.extend(t for t in arg.mutex if t not in seen)
    return seen


def launch(fn=None, *extra, threads=None, args=None):  # noqa: A002 - PyPTO Pro's names
    """``pl.simt.launch(callee, threads=N | (x, y) | (x, y, z), args=(...))``."""
    loc = user_location()
    if extra or threads is None or args is None:
        raise ParserSyntaxError("pl.simt.launch() takes one SIMT function and exactly the "
                                "'threads' and 'args' keyword arguments", loc)
    if not isinstance(fn, SimtFunction) or not fn.launchable:
        name = getattr(fn, "__name__", repr(fn))
        raise ParserTypeError(f"'{name}' is not a launchable @pl.simt.function", loc)
    if threads_running():
        raise ParserSyntaxError("Nested pl.simt.launch() is not supported", loc)
    core = current_core()
    if core.kind != "AIV":
        raise ParserSyntaxError("pl.simt.launch() must appear inside 'with "
                                "pl.section_vector():'", loc)
    if not isinstance(args, tuple):
        args = tuple(args) if isinstance(args, list) else (args,)
    dims = _dims(threads, loc)
    total = dims[0] * dims[1] * dims[2]
    if total > fn.max_threads:
        raise ParserSyntaxError(f"pl.simt.launch(): {total} threads exceed the max_threads="
                                f"{fn.max_threads} of '{fn.name}'", loc)
    values = fn.bind(args)
    body = fn.compiled()
    why = fn.per_thread_reason()
    tokens = _tokens(args) if core.launch.shared.get(AUTO_MUTEX) else []
    execute = core.execute
    for token in tokens:
        execute(Mutex("lock", "V", token, loc))
    execute(SimtLaunch(total, dims, loc))
    ops = _run_threads(core, body, values, dims, total, why is not None)
    execute(SimtIssue(ops, total, loc))
    for token in tokens:
        execute(Mutex("unlock", "V", token, loc))
    if why is not None:
        PER_THREAD[fn.name] = why


def threads_running() -> bool:
    return bool(threads.RUNS)


def _context(core, dims):
    # The launching AIV's place in the kernel's grid, as pl.get_block_idx() numbers it.
    block = system.get_block_idx()
    blocks = system.get_block_num() * system.get_subblock_num()
    return (threads.Dim3(*dims), threads.Dim3(block, 0, 0), threads.Dim3(blocks, 1, 1),
            core.timing.simt_warp_size)


def _run_threads(core, body, values, dims, total: int, per_thread: bool) -> int:
    """Run the body for every thread (all at once, or one by one); the warp instructions of
    arithmetic per thread, on average."""
    block_dim, block_idx, grid_dim, warp = _context(core, dims)
    lanes = np.arange(total, dtype=np.int64)
    x, rest = lanes % dims[0], lanes // dims[0]
    y, z = rest % dims[1], rest // dims[1]
    if not per_thread:
        state = threads.SimtRun(core, lanes, threads.Dim3(x, y, z), lanes, block_dim,
                                block_idx, grid_dim, warp, False, [])
        _run(state, body, values)
        return state.ops
    ops = 0
    for t in range(total):
        state = threads.SimtRun(core, lanes[t:t + 1], threads.Dim3(int(x[t]), int(y[t]),
                                                                   int(z[t])),
                                t, block_dim, block_idx, grid_dim, warp, True, [])
        _run(state, body, values)
        ops += state.ops
    return -(-ops // total)


def _run(state, body, values) -> None:
    threads.RUNS.append(state)
    try:
        body(*values)
    finally:
        threads.RUNS.pop()
