"""Tiles: typed 2-D windows of a core's local memory at an address the kernel chooses.

A :class:`TileType` describes a tile (shape, type, memory space, layout, valid shape, pad,
compact mode) and allocates nothing; :func:`make_tile` places one at a byte address and
:func:`make_tile_group` places a ring of them. A :class:`Tile` carries the state PyPTO Pro keeps
with a tile at run time: its *valid shape*, which ``set_validshape`` changes and which persists
until changed again, and (for tiles of a group) the buffer-id tokens ``auto_mutex`` locks.

Tiles that a MIX kernel declares outside its sections exist on every core: a Vec tile on the
AIC names bytes of its AIVs' UB (where an L0C->UB move lands) and a Mat tile on an AIV names
bytes of its AIC's L1 (where an UB->L1 insert lands).
"""

from __future__ import annotations

import numpy as np

from ascsim.isa import KernelError, region_of
from ascsim.pto.dtypes import DataType
from ascsim.pto.enums import (
    SPACE_ALIGNMENT,
    SPACE_MEMORY,
    CompactMode,
    MemorySpace,
    TensorLayout,
    TilePad,
)
from ascsim.pto.errors import FinalRejectionError, ParserSyntaxError
from ascsim.pto.layout import FRACTAL_BYTES, Frame, make_frame, window_offsets
from ascsim.sim.scheduler import current_core
from ascsim.sim.source import user_location

#: Layout a tile of each space gets when its TileType names none (Ascend 950).
DEFAULT_LAYOUT = {MemorySpace.Vec: TensorLayout.ND, MemorySpace.Mat: TensorLayout.NZ,
                  MemorySpace.Left: TensorLayout.NZ, MemorySpace.Right: TensorLayout.ZN,
                  MemorySpace.Acc: TensorLayout.NZ, MemorySpace.Bias: TensorLayout.ND,
                  MemorySpace.Scaling: TensorLayout.ND, MemorySpace.ScaleLeft: TensorLayout.ZZ,
                  MemorySpace.ScaleRight: TensorLayout.NN, MemorySpace.DDR: TensorLayout.ND}

#: The MX scale tiles' layouts (A's scales ZZ, B's NN) and their fractal: 16 x 2 E8M0 scales.
SCALE_LAYOUTS = (TensorLayout.ZZ, TensorLayout.NN)
SCALE_FRACTAL_BYTES = 32

#: Layouts the cube's own buffers refuse on the 950.
REFUSED_LAYOUTS = {MemorySpace.Left: (TensorLayout.ZZ, TensorLayout.NN),
                   MemorySpace.Right: (TensorLayout.ZZ, TensorLayout.NN),
                   MemorySpace.Acc: (TensorLayout.ZZ, TensorLayout.NN)}


def _static_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ParserSyntaxError(f"{what} must be a compile-time integer, got {value!r}")
    return int(value)


class TileType:
    """``pl.TileType(shape, dtype, target_memory=Vec, valid_shape=None, layout=None,
    fractal=None, pad=None, compact=None)``: the description of a 2-D tile."""

    __slots__ = ("shape", "dtype", "space", "valid_shape", "layout", "fractal", "pad",
                 "compact")

    def __init__(self, shape, dtype: DataType, target_memory=MemorySpace.Vec,
                 valid_shape=None, layout=None, fractal=None, pad=None, compact=None):
        if not isinstance(dtype, DataType):
            raise ValueError(f"TileType dtype must be a pl.DT_* data type, got {dtype!r}")
        shape = [_static_int(d, "a TileType dimension") for d in shape]
        space = MemorySpace(target_memory)
        if len(shape) != 2 or min(shape) <= 0:
            what = ("a per-channel scale tile must be 2D, [1, N]" if space == MemorySpace.Scaling
                    else "a tile must be 2D with positive dimensions")
            raise ValueError(f"{what}, got shape {shape}")
        layout = DEFAULT_LAYOUT[space] if layout is None else TensorLayout(layout)
        if layout in REFUSED_LAYOUTS.get(space, ()):
            raise ValueError(f"layout {layout.name} is not allowed for a {space.name} tile "
                             "on the 950")
        if valid_shape is not None:
            valid_shape = [int(v) for v in valid_shape]
            if len(valid_shape) != 2:
                raise ValueError(f"valid_shape has two dimensions, got {valid_shape}")
            for v, d in zip(valid_shape, shape):
                if v != -1 and not 1 <= v <= d:
                    raise ValueError(f"valid_shape {valid_shape} exceeds the shape {shape}")
        self.shape = shape
        self.dtype = dtype
        self.space = space
        self.valid_shape = valid_shape
        self.layout = layout
        self.fractal = fractal
        self.pad = TilePad(pad) if pad is not None else TilePad.null
        self.compact = CompactMode(compact) if compact else CompactMode.Null

    def frame(self) -> Frame:
        extra = 1 if self.compact == CompactMode.RowPlusOne else 0
        return make_frame(self.layout, self.shape[0], self.shape[1], self.dtype.element_bytes,
                          accumulator=self.space == MemorySpace.Acc, extra_rows=extra,
                          fractal_bytes=self.fractal_bytes(),
                          exact_rows=self.space == MemorySpace.Vec)

    def fractal_bytes(self) -> int:
        """Bytes of one fractal: 32 for an MX scale tile (E8M0 in ZZ / NN, where
        ``fractal`` defaults to 32, PyPTO Pro TileType.md), else 512."""
        if (self.dtype.name == "FP8E8M0" and self.layout in SCALE_LAYOUTS
                and self.fractal in (None, SCALE_FRACTAL_BYTES)):
            return SCALE_FRACTAL_BYTES
        return FRACTAL_BYTES

    def nbytes(self) -> int:
        return self.frame().elements * self.dtype.nbytes

    def __repr__(self) -> str:
        return (f"pl.TileType({self.shape}, {self.dtype!r}, {self.space.name}, "
                f"{self.layout.name})")


class Tile:
    """A placed tile: ``ttype`` at byte ``addr`` of ``mem``, seen through a window of its
    frame starting at element ``origin`` (a sub-tile view shares its parent's frame)."""

    __slots__ = ("ttype", "mem", "addr", "size", "frame", "origin", "shape", "valid", "mutex",
                 "label", "_plain")

    def __init__(self, ttype: TileType, mem, addr: int, size: int, frame: Frame,
                 origin=(0, 0), shape=None, valid=None, mutex=(), label=""):
        self.ttype = ttype
        self.mem = mem
        self.addr = addr
        self.size = size
        self.frame = frame
        self.origin = origin
        self.shape = list(shape or ttype.shape)
        if valid is None:
            vs = ttype.valid_shape or [-1, -1]
            valid = [d if v == -1 else v for v, d in zip(vs, self.shape)]
        self.valid = valid
        self.mutex = mutex  # buffer-id tokens auto_mutex takes for this tile
        self.label = label
        self._plain = (frame.layout == TensorLayout.ND and origin == (0, 0)
                       and self.shape[1] == frame.cols)
        self.fit_compact_frame()

    def fit_compact_frame(self) -> None:
        """``compact=1`` (normal) on a fractal L0/Acc tile: its fractals are laid out for the
        current valid window (rows and columns rounded up to whole fractals), not for the
        physical shape, so a dynamic tail is stored as densely as a tile of that size would be.

        An L1 (Mat) tile keeps its physical layout: the AIVs insert into it through their own
        descriptor, which does not carry the valid shape the cube side sets before moving it
        to L0 (PyPTO Pro's FA tail kernels do exactly this, and are right on the device only
        if the insert and the move agree on where each fractal lives)."""
        frame = self.frame
        if (self.ttype.compact != CompactMode.Normal or self.origin != (0, 0)
                or self.ttype.space == MemorySpace.Mat
                or frame.layout in (TensorLayout.ND, TensorLayout.DN)):
            return
        rows, cols = self.valid
        self.frame = make_frame(frame.layout, max(rows, 1), max(cols, 1),
                                self.ttype.dtype.element_bytes,
                                accumulator=self.ttype.space == MemorySpace.Acc,
                                fractal_bytes=self.ttype.fractal_bytes())

    # -- description
    @property
    def dtype(self) -> DataType:
        return self.ttype.dtype

    @property
    def space(self) -> MemorySpace:
        return self.ttype.space

    @property
    def layout(self) -> TensorLayout:
        return self.frame.layout

    @property
    def np_dtype(self) -> np.dtype:
        return self.ttype.dtype.np_dtype

    @property
    def valid_shape(self) -> tuple[int, int]:
        """``tile.valid_shape[i]``: the current valid rows and columns."""
        return self.valid[0], self.valid[1]

    # -- as instruction operands
    def region(self, count: int | None = None):
        """The tile's frame as an operand (element offsets count from its address); with
        ``count``: that many elements from the tile's first element."""
        if count is None:
            return region_of((self.mem, self.addr, self.size // self.np_dtype.itemsize,
                              self.np_dtype, self.addr + self.size, None, None))
        first = self.addr + int(window_offsets(self.frame, *self.origin, 1, 1)[0, 0]) \
            * self.np_dtype.itemsize
        return region_of((self.mem, first, count, self.np_dtype, self.addr + self.size, None,
                          None))

    def contiguous(self, rows: int, cols: int) -> bool:
        """Whether the window ``rows x cols`` from the tile's first element is one run."""
        return self._plain and (cols == self.shape[1] or rows <= 1)

    def offsets(self, rows: int, cols: int, r0: int = 0, c0: int = 0) -> np.ndarray:
        """Element offsets of the window ``rows x cols`` at ``(r0, c0)`` of this tile."""
        return window_offsets(self.frame, self.origin[0] + r0, self.origin[1] + c0, rows, cols)

    # -- sub-tile views and element access
    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, slice) for k in key):
            return self.subview(key[0], key[1])
        from ascsim.pto.ops.scalar import tile_getval

        return tile_getval(self, key)

    def __setitem__(self, key, value):
        from ascsim.pto.ops.scalar import tile_setval

        tile_setval(self, key, value)

    def subview(self, rows: slice, cols: slice) -> Tile:
        """``tile[r0:r1, c0:c1]``: the same bytes, valid shape clamped by the parent's."""
        loc = user_location()
        bounds = []
        for axis, s in enumerate((rows, cols)):
            if s.step not in (None, 1):
                raise KernelError("a sub-tile view takes unit steps", loc)
            lo = 0 if s.start is None else int(s.start)
            hi = self.shape[axis] if s.stop is None else int(s.stop)
            if not 0 <= lo < hi <= self.shape[axis]:
                raise KernelError(f"sub-tile [{lo}:{hi}] is outside the tile's {self.shape[axis]}"
                                  f" {'rows' if axis == 0 else 'columns'}", loc)
            bounds.append((lo, hi))
        (r0, r1), (c0, c1) = bounds
        valid = [max(0, min(r1, self.valid[0]) - r0), max(0, min(c1, self.valid[1]) - c0)]
        return Tile(self.ttype, self.mem, self.addr, self.size, self.frame,
                    (self.origin[0] + r0, self.origin[1] + c0), [r1 - r0, c1 - c0], valid,
                    self.mutex, self.label)

    def __repr__(self) -> str:
        return (f"Tile({self.label or self.ttype!r} @ {self.mem.name}+{self.addr}, valid "
                f"{self.valid})")


# ----------------------------------------------------------------------- placing tiles
def memory_of(core, space: MemorySpace, loc):
    """The local memory behind ``space`` as ``core`` addresses it (see the module docstring)."""
    name = SPACE_MEMORY.get(space)
    if name is None:
        raise KernelError(f"a {space.name} tile cannot be placed in a core's memory", loc)
    mem = core.mem.get(name)
    if mem is not None:
        return mem
    launch = core.launch
    if core.kind == "AIC" and name == "UB" and launch.kind == "MIX":
        return launch.partner(core, "AIV", 0).mem["UB"]
    if core.kind == "AIV" and launch.kind == "MIX":
        aic = launch.partner(core, "AIC")
        if aic is not None and name in aic.mem:
            return aic.mem[name]
    raise KernelError(f"{space.name} tiles ({name}) do not exist on an {core.kind} core of an "
                      f"{launch.kind} kernel", loc)


def place_tile(ttype: TileType, addr, size, mutex=(), label: str = "", loc=None) -> Tile:
    """One tile of ``ttype`` at byte ``addr`` (``size`` bytes reserved, default its frame)."""
    loc = loc or user_location(2)
    if not isinstance(ttype, TileType):
        raise FinalRejectionError(f"make_tile expects a pl.TileType, got {type(ttype).__name__}")
    addr = _static_int(addr, "make_tile addr")
    align = SPACE_ALIGNMENT.get(ttype.space)
    if align and addr % align:
        raise ValueError(f"make_tile: a {ttype.space.name} tile address must be "
                         f"{align}-byte aligned, got {addr:#x}")
    frame = ttype.frame()
    need = frame.elements * ttype.dtype.nbytes
    size = need if size is None else int(size)
    if size <= 0:
        raise ValueError(f"make_tile: size must be positive, got {size}")
    core = current_core()
    mem = memory_of(core, ttype.space, loc)
    launch = core.launch
    launch.placements.place(core, mem, addr, addr + max(size, need), launch, "fixed",
                            f"tile {label or ttype!r}", loc)
    return Tile(ttype, mem, addr, max(size, need), frame, mutex=mutex, label=label)


def make_tile(*args, addr=None, size=None):
    """``pl.make_tile(tile_type, *, addr, size=None)``."""
    if len(args) != 1:
        raise FinalRejectionError("make_tile takes exactly one positional argument (a "
                                  f"pl.TileType), got {len(args)}")
    if addr is None:
        raise FinalRejectionError("make_tile requires a compile-time addr= keyword")
    return place_tile(args[0], addr, size, loc=user_location())


class TileGroup:
    """A ring of ``depth`` tiles (``pl.make_tile_group``); the cursor starts at the last slot,
    so the first ``next()`` gives slot 0."""

    __slots__ = ("tiles", "depth", "cursor", "fwd_ids", "bwd_ids")

    def __init__(self, tiles: list[Tile], fwd_ids=(), bwd_ids=()):
        self.tiles = tiles
        self.depth = len(tiles)
        self.cursor = self.depth - 1
        # The cross-core flag ids of the automatic pipeline's hand-over (ascsim.pto.pipeline).
        self.fwd_ids = fwd_ids
        self.bwd_ids = bwd_ids

    def next(self) -> Tile:
        self.cursor = (self.cursor + 1) % self.depth
        return self.tiles[self.cursor]

    def current(self) -> Tile:
        return self.tiles[self.cursor]

    def previous(self) -> Tile:
        return self.tiles[(self.cursor - 1) % self.depth]

    def __getitem__(self, index) -> Tile:
        i = int(index)
        if not 0 <= i < self.depth:
            raise KernelError(f"tile group index {i} is outside [0, {self.depth})",
                              user_location())
        return self.tiles[i]

    def __len__(self) -> int:
        return self.depth

    def __repr__(self) -> str:
        return f"TileGroup({self.depth} x {self.tiles[0].ttype!r})"


def _mutex_lists(mutex_ids, depth) -> list[tuple[int, ...]]:
    if not mutex_ids:
        if depth is None:
            raise ParserSyntaxError("make_tile_group without mutex_ids needs depth=")
        return [()] * int(depth)
    out = []
    for entry in mutex_ids:
        ids = tuple(entry) if isinstance(entry, (list, tuple)) else (entry,)
        if not ids:
            raise ParserSyntaxError("make_tile_group: a mutex_ids entry is empty")
        if len(set(ids)) != len(ids):
            raise ParserSyntaxError(f"make_tile_group: duplicate mutex id in {list(ids)}")
        for i in ids:
            if not isinstance(i, (int, np.integer)) or not 0 <= int(i) <= 31:
                raise ParserSyntaxError(f"make_tile_group: mutex id {i!r} is outside [0, 31]")
        out.append(tuple(int(i) for i in ids))
    if len({len(ids) for ids in out}) > 1:
        raise ParserSyntaxError("make_tile_group: every tile needs the same number of mutex ids")
    if depth is not None and int(depth) != len(out):
        raise ParserSyntaxError(f"make_tile_group: depth={depth} but {len(out)} mutex_ids")
    return out


def _flag_ids(ids, what: str) -> tuple[int, ...]:
    if ids is None:
        return ()
    out = tuple(ids) if isinstance(ids, (list, tuple)) else (ids,)
    for i in out:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= int(i) <= 15:
            raise ParserSyntaxError(f"make_tile_group: {what} entry {i!r} is not a cross-core "
                                    "event id in [0, 15]")
    return tuple(int(i) for i in out)


def make_tile_group(*args, type=None, addrs=None, mutex_ids=None, depth=None,  # noqa: A002
                    fwd_ids=None, bwd_ids=None, **ignored):
    """``pl.make_tile_group(*, type, addrs, mutex_ids=None, depth=None, fwd_ids=None,
    bwd_ids=None)`` (the flag ids are the automatic pipeline's)."""
    loc = user_location()
    if args:
        raise ParserSyntaxError("make_tile_group takes keyword arguments only "
                                "(type=, addrs=, mutex_ids=, depth=)")
    if type is None or addrs is None:
        raise ParserSyntaxError("make_tile_group needs type= and addrs=")
    mutex = _mutex_lists(mutex_ids, depth)
    n = len(mutex)
    slot = type.nbytes()
    if isinstance(addrs, (list, tuple)):
        if len(addrs) != n:
            raise ParserSyntaxError(f"make_tile_group: {len(addrs)} addrs for {n} tiles")
        bases = [int(a) for a in addrs]
    else:
        bases = [int(addrs) + i * slot for i in range(n)]
    return TileGroup([place_tile(type, a, None, mutex[i], f"group tile {i}", loc)
                      for i, a in enumerate(bases)], _flag_ids(fwd_ids, "fwd_ids"),
                     _flag_ids(bwd_ids, "bwd_ids"))


def set_validshape(target, shape) -> None:
    """``pl.set_validshape(tile_or_group, [rows, cols])``: persists until set again."""
    if len(shape) != 2:
        raise ParserSyntaxError(f"set_validshape takes two values, got {len(shape)}")
    tiles = target.tiles if isinstance(target, TileGroup) else [target]
    rows, cols = int(shape[0]), int(shape[1])
    # 0 is allowed: the second AIV's share of a split Acc -> Vec move may be empty. A value
    # above the tile's shape is allowed too: PyPTO Pro refuses only compile-time constants
    # above it (block_ops._validate_validshape_bounds); a runtime valid shape is a register
    # the device takes as it is -- the destination of a DualModeSplitM move carries the
    # whole M that the two AIVs share (lightning_indexer's mm1 tiles). An op that then
    # touches elements past the tile is the machine's overflow finding.
    if rows < 0 or cols < 0:
        raise KernelError(f"set_validshape [{rows}, {cols}]: a valid shape cannot be "
                          "negative", user_location())
    for tile in tiles:
        tile.valid = [rows, cols]
        tile.fit_compact_frame()
