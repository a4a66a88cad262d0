"""DataCopy bandwidth kernels: read a GM matrix once, tile by tile (asc-devkit ``data_copy``).

The matrix ``[rows, cols]`` is cut into ``[tile_rows, tile_cols]`` tiles (the last tile of a row
may be narrower); the tiles are dealt to the cores in contiguous runs, row-major. Each tile is one
DataCopy of ``tile_rows`` bursts of ``tile_cols`` elements, cycling through ``buffers``
destination buffers (the copies only read; nothing consumes them):

- ``gm_to_ub``: AIV cores, GM -> UB. A row pitch that is a whole number of 32-byte blocks uses
  ``data_copy`` with ``DataCopyParams``; any other pitch needs ``data_copy_pad`` (byte strides).
- ``gm_to_l1``: AIC cores, GM -> L1 with the ND -> NZ conversion (``Nd2NzParams``).

Checks: on GM -> UB every core copies its last tile back out to GM, and the host compares it
with its source tile (one extra MTE3 copy per core, ~1 µs). The GM -> L1 probe has no output to
compare (L1 has no path back to GM on these SoCs); the ND -> NZ placement it uses is checked
through the products of the cube kernels in tests/test_cube.py.
"""

from __future__ import annotations

import torch

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.session import SESSION

BLOCK = 32  # bytes per DataCopy block


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@asc.jit
def tile_at(tile, tiles_per_row, tile_rows: asc.ConstExpr[int], tile_cols: asc.ConstExpr[int],
            cols: int):
    """(element offset, width) of tile ``tile`` in a row-major tiling."""
    row = tile // tiles_per_row
    col = tile % tiles_per_row * tile_cols
    width = min(tile_cols, cols - col)
    return row * tile_rows * cols + col, width


@asc.jit(kernel_type=KernelType.AIV_ONLY)
def gm_to_ub_kernel(src: asc.GlobalAddress, out: asc.GlobalAddress, cols: int,
                    tiles_per_row: int, tiles: int, per_core: int,
                    tile_rows: asc.ConstExpr[int], tile_cols: asc.ConstExpr[int],
                    padded: asc.ConstExpr[bool], buffers: asc.ConstExpr[int]):
    """Read tiles [b·per_core, (b+1)·per_core) into ``buffers`` UB buffers; the last one
    goes to ``out`` (block b's slot) so the host can check it."""
    src_gm, out_gm = asc.GlobalTensor(), asc.GlobalTensor()
    src_gm.set_global_buffer(src)
    out_gm.set_global_buffer(out)
    size = src.dtype.sizeof()
    tile_bytes = tile_rows * _ceil_div(tile_cols * size, BLOCK) * BLOCK
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, len=buffers * tile_bytes)
    ub = buf.get(src.dtype)
    slot_elems = tile_bytes // size
    first = asc.get_block_idx() * per_core
    last = min(first + per_core, tiles)
    for tile in asc.range(first, last):
        at, width = tile_at(tile, tiles_per_row, tile_rows, tile_cols, cols)
        dst = ub[(tile - first) % buffers * slot_elems:]
        if padded:
            asc.data_copy_pad(dst, src_gm[at:],
                              asc.DataCopyExtParams(tile_rows, width * size,
                                                    (cols - width) * size, 0, 0),
                              asc.DataCopyPadExtParams(False, 0, 0, 0))
        else:
            asc.data_copy(dst, src_gm[at:],
                          repeat_params=asc.DataCopyParams(tile_rows, width * size // BLOCK,
                                                           (cols - width) * size // BLOCK, 0))
    if last > first:
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(out_gm[asc.get_block_idx() * slot_elems:],
                      ub[(last - 1 - first) % buffers * slot_elems:], count=slot_elems)


@asc.jit(kernel_type=KernelType.AIC_ONLY)
def gm_to_l1_kernel(src: asc.GlobalAddress, cols: int, tiles_per_row: int, tiles: int,
                    per_core: int, tile_rows: asc.ConstExpr[int],
                    tile_cols: asc.ConstExpr[int], buffers: asc.ConstExpr[int]):
    """ND2NZ tiles [b·per_core, (b+1)·per_core) into ``buffers`` L1 buffers."""
    src_gm = asc.GlobalTensor()
    src_gm.set_global_buffer(src)
    rows16 = _ceil_div(tile_rows, 16) * 16
    slot = rows16 * _ceil_div(tile_cols, 16) * 16
    l1 = asc.LocalTensor(src.dtype, asc.TPosition.A1, 0, buffers * slot)
    first = asc.get_block_idx() * per_core
    last = min(first + per_core, tiles)
    for tile in asc.range(first, last):
        at, width = tile_at(tile, tiles_per_row, tile_rows, tile_cols, cols)
        asc.data_copy(l1[(tile - first) % buffers * slot:], src_gm[at:],
                      asc.Nd2NzParams(1, tile_rows, width, 0, cols, rows16, 1, 0))


def _plan(shape, tile, cores):
    rows, cols = shape
    tile_rows, tile_cols = tile
    if rows % tile_rows:
        raise ValueError(f"data copy: {rows} rows are not whole {tile_rows}-row tiles")
    tiles_per_row = _ceil_div(cols, tile_cols)
    tiles = rows // tile_rows * tiles_per_row
    per_core = _ceil_div(tiles, cores)
    return tiles_per_row, tiles, per_core, _ceil_div(tiles, per_core)


def run_datacopy(shape, tile, cores: int, path: str, buffers: int = 2):
    """Read an fp16 ``shape`` matrix once in ``tile`` tiles over ``cores`` cores."""
    rows, cols = shape
    tile_rows, tile_cols = tile
    tiles_per_row, tiles, per_core, used = _plan(shape, tile, cores)
    src = (torch.arange(rows * cols, dtype=torch.int32) % 2048).to(torch.float16)
    if path == "gm_to_l1":
        report = gm_to_l1_kernel[used](src, cols, tiles_per_row, tiles, per_core, tile_rows,
                                       tile_cols, buffers)
        return [report]
    if path != "gm_to_ub":
        raise ValueError(f"data copy path {path!r}: expected gm_to_ub or gm_to_l1")
    padded = (cols * 2) % BLOCK != 0 or (tile_cols * 2) % BLOCK != 0
    width_elems = _ceil_div(tile_cols * 2, BLOCK) * BLOCK // 2
    out = torch.zeros(used * tile_rows * width_elems, dtype=torch.float16)
    report = gm_to_ub_kernel[used](src, out, cols, tiles_per_row, tiles, per_core, tile_rows,
                                   tile_cols, padded, buffers)
    if SESSION.timing_only:  # no values computed: nothing to check
        return [report]
    matrix = src.reshape(rows, cols)
    for core in range(used):  # each core's last tile came through
        last = min((core + 1) * per_core, tiles) - 1
        r0 = last // tiles_per_row * tile_rows
        c0 = last % tiles_per_row * tile_cols
        width = min(tile_cols, cols - c0)
        got = out[core * tile_rows * width_elems:(core + 1) * tile_rows * width_elems]
        got = got.reshape(tile_rows, width_elems)[:, :width]
        if not torch.equal(got, matrix[r0:r0 + tile_rows, c0:c0 + width]):
            raise AssertionError(f"calibration data copy: core {core}'s last tile is wrong")
    return [report]
