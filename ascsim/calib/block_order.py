"""Which C blocks each AI core computes, and in what order: the two block schedulers of the
CATLASS matmul kernels whose device times are published (device-times.md §D).

A tiled matmul cuts C into ``tile_m`` x ``tile_n`` blocks (the L1 tile's M and N); the cores take
them in rounds. The order decides which operand rows and columns are in L2 when a block starts,
and how evenly the last round is spread:

* **swizzle** (CATLASS ``GemmIdentityBlockSwizzle<offset, direction>``): task ``t`` goes to
  core ``t % cores``. Tasks walk the block grid in bands of ``offset`` block rows (direction 0)
  or block columns (direction 1); inside a band the short side is walked fastest, and every
  second band runs backwards, an S through the grid, so consecutive tasks share operands.
* **ASWT**, the adaptive sliding window (CATLASS ``BlockSchedulerAswt``, its design note
  ``05_aswt.md``): task ``t`` goes to core ``t % cores`` along windows of up to four block rows,
  N walked within a window, every second window backwards. When the last round would leave at
  least half of the cores idle, each of its blocks is split into up to ``cores // last`` pieces
  (M and N split counts chosen from the tail block's sizes), so that more cores share it.
* **L1 full load** (CATLASS ``GemmIdentityBlockSwizzleL1FullLoad``, the full-load-A quant
  matmul): the same S walk, but core ``c`` takes one contiguous run of it, so its blocks
  share A's block row.

The functions return, per core, its blocks in execution order as ``(m0, n0, rows, cols)`` in
elements; every element of C lies in exactly one block of one core.
"""

from __future__ import annotations

from typing import NamedTuple


class Block(NamedTuple):
    """One piece of C a core computes: rows ``[m0, m0 + rows)``, columns ``[n0, n0 + cols)``."""

    m0: int
    n0: int
    rows: int
    cols: int


#: Block rows per ASWT window (the scheduler's fixed window length).
ASWT_WINDOW = 4


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _grid(m: int, n: int, tile_m: int, tile_n: int) -> tuple[int, int]:
    if min(m, n, tile_m, tile_n) < 1:
        raise ValueError(f"block order: sizes must be positive (m {m}, n {n}, tile "
                         f"{tile_m} x {tile_n})")
    return _ceil_div(m, tile_m), _ceil_div(n, tile_n)


def _block(mi: int, ni: int, m: int, n: int, tile_m: int, tile_n: int) -> Block:
    m0, n0 = mi * tile_m, ni * tile_n
    return Block(m0, n0, min(tile_m, m - m0), min(tile_n, n - n0))


def swizzle_coord(task: int, m_tiles: int, n_tiles: int, offset: int,
                  direction: int) -> tuple[int, int]:
    """(block row, block column) of task ``task`` in the S-shaped band walk."""
    if direction not in (0, 1):
        raise ValueError(f"swizzle direction must be 0 (bands of rows) or 1 (of columns), "
                         f"got {direction}")
    if offset < 1:
        raise ValueError(f"swizzle offset must be at least 1, got {offset}")
    # Direction 1 is direction 0 on the transposed grid.
    rows, cols = (m_tiles, n_tiles) if direction == 0 else (n_tiles, m_tiles)
    band, inside = divmod(task % (rows * cols), offset * cols)
    bands = _ceil_div(rows, offset)
    height = offset if band < bands - 1 else rows - offset * (bands - 1)
    across, along = band * offset + inside % height, inside // height
    if band % 2:
        along = cols - 1 - along
    return (across, along) if direction == 0 else (along, across)


def swizzle_blocks(m: int, n: int, tile_m: int, tile_n: int, cores: int, offset: int = 3,
                   direction: int | None = None) -> list[list[Block]]:
    """Per core, its blocks under the swizzle scheduler (task ``t`` on core ``t % cores``).
    ``direction`` None: 0 when M > N, else 1 (the published sample's choice)."""
    m_tiles, n_tiles = _grid(m, n, tile_m, tile_n)
    if direction is None:
        direction = 0 if m > n else 1
    per_core: list[list[Block]] = [[] for _ in range(cores)]
    for task in range(m_tiles * n_tiles):
        mi, ni = swizzle_coord(task, m_tiles, n_tiles, offset, direction)
        per_core[task % cores].append(_block(mi, ni, m, n, tile_m, tile_n))
    return per_core


def _aswt_coord(tile: int, m_tiles: int, n_tiles: int) -> tuple[int, int]:
    """(block row, block column) of tile ``tile`` along the sliding windows."""
    window = min(ASWT_WINDOW, m_tiles)
    full_windows = m_tiles // window - 1  # the last window also takes the leftover rows
    row = tile // n_tiles // window
    if row < full_windows:
        mi = row * window + tile % window
        ni = tile // window % n_tiles
    else:
        row = full_windows
        last = m_tiles - full_windows * window
        rest = tile - full_windows * window * n_tiles
        mi = full_windows * window + rest % last
        ni = rest // last % n_tiles
    if row % 2:
        ni = n_tiles - 1 - ni
    return mi, ni


def _tail_split(m: int, n: int, tile_m: int, tile_n: int, cores: int,
                last: int) -> tuple[int, int]:
    """(M pieces, N pieces) each block of the last round is cut into, when that round has
    ``last`` blocks: up to ``cores // last`` pieces, fewer along a side the tail block is
    short in. (1, 1) when the round already keeps more than half of the cores busy."""
    if last > cores // 2:
        return 1, 1
    share = cores // last  # at least 2 here
    tail_m = m - (_ceil_div(m, tile_m) - 1) * tile_m
    tail_n = n - (_ceil_div(n, tile_n) - 1) * tile_n
    split_m, split_n = min(tail_m, share), min(tail_n, share)
    while split_m * split_n > share:
        if split_m >= split_n:
            split_m -= 1
        else:
            split_n -= 1
    size_m, size_n = _ceil_div(tail_m, split_m), _ceil_div(tail_n, split_n)
    return _ceil_div(tail_m, size_m), _ceil_div(tail_n, size_n)


def aswt_blocks(m: int, n: int, tile_m: int, tile_n: int, cores: int) -> list[list[Block]]:
    """Per core, its blocks under the adaptive sliding window scheduler."""
    m_tiles, n_tiles = _grid(m, n, tile_m, tile_n)
    tiles = m_tiles * n_tiles
    rounds = _ceil_div(tiles, cores)
    last = tiles - (rounds - 1) * cores  # blocks of the last round, on cores 0 .. last - 1
    split_m, split_n = _tail_split(m, n, tile_m, tile_n, cores, last)
    pieces = split_m * split_n
    per_core: list[list[Block]] = [[] for _ in range(cores)]
    for core in range(cores):
        for rnd in range(rounds - 1):
            mi, ni = _aswt_coord(core + rnd * cores, m_tiles, n_tiles)
            per_core[core].append(_block(mi, ni, m, n, tile_m, tile_n))
        if core >= last * pieces:
            continue  # no piece of the last round for this core
        whole = _block(*_aswt_coord(core // pieces + (rounds - 1) * cores, m_tiles, n_tiles),
                       m, n, tile_m, tile_n)
        if pieces == 1:
            per_core[core].append(whole)
            continue
        piece = core % pieces
        size_m, size_n = _ceil_div(whole.rows, split_m), _ceil_div(whole.cols, split_n)
        off_m, off_n = piece % split_m * size_m, piece // split_m * size_n
        if off_m >= whole.rows or off_n >= whole.cols:
            continue  # a short block has fewer pieces than the split allows
        per_core[core].append(Block(whole.m0 + off_m, whole.n0 + off_n,
                                    min(size_m, whole.rows - off_m),
                                    min(size_n, whole.cols - off_n)))
    return per_core


def l1_full_load_blocks(m: int, n: int, tile_m: int, tile_n: int, cores: int, offset: int = 1,
                        direction: int = 0) -> list[list[Block]]:
    """Per core, its blocks under CATLASS's ``GemmIdentityBlockSwizzleL1FullLoad``: the S walk of
    :func:`swizzle_coord` cut into one contiguous run per core (the first ``tasks % cores``
    cores take one block more), so that a core's consecutive blocks share their block row of
    A, which a full-load-A kernel keeps in L1."""
    m_tiles, n_tiles = _grid(m, n, tile_m, tile_n)
    tasks = m_tiles * n_tiles
    per_core_count, extra = divmod(tasks, cores)
    per_core: list[list[Block]] = [[] for _ in range(cores)]
    start = 0
    for core in range(cores):
        count = per_core_count + (1 if core < extra else 0)
        for walk in range(start, start + count):
            mi, ni = swizzle_coord(walk, m_tiles, n_tiles, offset, direction)
            per_core[core].append(_block(mi, ni, m, n, tile_m, tile_n))
        start += count
    return per_core


#: Scheduler name -> per-core blocks of (m, n, tile_m, tile_n, cores).
SCHEDULERS = {"swizzle": swizzle_blocks, "aswt": aswt_blocks}
