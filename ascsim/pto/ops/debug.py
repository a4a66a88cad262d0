"""Debug operations: ``printf``, ``pto_assert``, ``dump_data``, ``trap``.

``printf`` writes to the process's standard output (the device log of a real run), one line per
call and core, in PyPTO Pro's subset of C conversions. ``pto_assert`` prints PyPTO Pro's
failure line and is a finding (the device goes on); ``trap`` stops the kernel. ``dump_data``
prints a GM tensor or a Vec / Acc tile (or a window of one): the machine reads the elements
(an :class:`~ascsim.isa.Inspect` record, so the read is timed and checked); an Acc tile goes
through a GM ``workspace`` first, as on the device, by the fixpipe.
"""

from __future__ import annotations

import linecache
import re

import numpy as np

from ascsim.isa import FixPipe, Inspect, PipeBarrier, ScalarOps
from ascsim.pto.enums import MemorySpace
from ascsim.pto.errors import ParserSyntaxError
from ascsim.pto.ops.common import KernelError, current_core, user_location
from ascsim.pto.tensor import GmTensor
from ascsim.pto.tile import Tile

#: The conversions PyPTO Pro's printf accepts: %[flags][width][.precision](d|i|u|x|f|p).
CONVERSION = re.compile(r"%([-+ #0]*)(\d*)(?:\.(\d+))?([a-zA-Z%])")
ALLOWED = frozenset("diuxfp")


def format_device(fmt: str, args: tuple, loc) -> str:
    """``fmt`` % ``args`` with PyPTO Pro's conversions (others are refused)."""
    pieces = []
    pos = 0
    values = list(args)
    for match in CONVERSION.finditer(fmt):
        flags, width, precision, conv = match.groups()
        if conv not in ALLOWED:
            raise ParserSyntaxError(f"printf: unsupported conversion %{conv} (PyPTO Pro "
                                    "accepts %d %i %u %x %f %p)", loc)
        if not values:
            raise ParserSyntaxError("printf: more conversions than arguments", loc)
        value = values.pop(0)
        spec = f"%{flags}{width}{'.' + precision if precision else ''}"
        if conv in "diu":
            text = (spec + "d") % int(value)
        elif conv == "x":
            text = (spec + "x") % int(value)
        elif conv == "f":
            text = (spec + "f") % float(value)
        else:
            text = (spec + "s") % hex(id(value))
        pieces.append(fmt[pos:match.start()])
        pieces.append(text)
        pos = match.end()
    if values:
        raise ParserSyntaxError("printf: more arguments than conversions", loc)
    pieces.append(fmt[pos:])
    return "".join(pieces)


def printf(fmt, *args, loc=False) -> None:
    """``pl.printf(fmt, *args, loc=False)``."""
    where = user_location()
    if not isinstance(fmt, str):
        raise ParserSyntaxError("printf: the format must be a string literal", where)
    text = format_device(fmt, args, where)
    core = current_core()
    core.execute(ScalarOps(1 + len(args), where))
    if loc:
        text = f"[{where[0]}:{where[1]}] {text}"
    core.launch.say(text)


def pto_assert(cond, fmt=None, *args, loc=False) -> None:
    """``pl.pto_assert(cond, fmt=None, *args)``: on failure, PyPTO Pro's line and a finding."""
    where = user_location()
    if not isinstance(cond, bool) and type(cond).__name__ != "bool_":
        raise TypeError(f"pto_assert: the condition must be a bool scalar, got "
                        f"{type(cond).__name__}")
    core = current_core()
    core.execute(ScalarOps(1, where))
    if cond:
        return
    source = linecache.getline(where[0], where[1]).strip()
    match = re.search(r"pto_assert\((.*?)(?:,|\)\s*$)", source)
    text = f"Assertion failed: {match.group(1) if match else source}"
    if fmt is not None:
        text += " " + format_device(fmt, args, where)
    core.launch.say(text + "\n")
    core.launch.findings.report("assert", text, where, core=core.core_id)


def trap() -> None:
    """``pl.trap()``: the kernel stops here."""
    raise KernelError("pl.trap(): the kernel aborted", user_location())


# ------------------------------------------------------------------ dump_data
#: Elements printed per line of a dump.
DUMP_LINE = 16


def _window(data, offsets, shapes, loc) -> tuple[list[int], list[int]]:
    """The dumped window's start and extent per dimension (the whole data by default)."""
    full = list(data.shape)
    if (offsets is None) != (shapes is None):
        raise ValueError(f"dump_data: give offsets and shapes together or neither "
                         f"({loc[0]}:{loc[1]})")
    if offsets is None:
        return [0] * len(full), full
    offsets, shapes = [int(o) for o in offsets], [int(s) for s in shapes]
    if len(offsets) != len(full) or len(shapes) != len(full):
        raise ValueError(f"dump_data: offsets and shapes need {len(full)} values each (the "
                         f"data's dimensions), got {len(offsets)} and {len(shapes)} "
                         f"({loc[0]}:{loc[1]})")
    for axis, (o, n, d) in enumerate(zip(offsets, shapes, full)):
        if n <= 0 or o < 0 or o + n > d:
            raise KernelError(f"dump_data: window [{o}, {o + n}) of dimension {axis} is "
                              f"outside the data's {d}", loc)
    return offsets, shapes


def _tensor_index(tensor: GmTensor, start, extent) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(s, s + n) for s, n in zip(start, extent)], indexing="ij")
    index = np.zeros(tuple(extent), dtype=np.int64)
    for grid, stride in zip(grids, tensor.strides):
        index += grid * stride
    return index


def _print_pipe(core) -> str:
    return "V" if core.kind == "AIV" else "S"


def _acc_through_workspace(core, tile: Tile, workspace, loc):
    """The whole Acc tile written to ``workspace`` (row-major) by the fixpipe, then visible to
    the printing pipe; returns the workspace as the tile's stand-in."""
    if not isinstance(workspace, GmTensor):
        raise ValueError(f"dump_data: an Acc tile is printed through a GM workspace= tensor "
                         f"({loc[0]}:{loc[1]})")
    if workspace.dtype != tile.dtype:
        raise ValueError(f"dump_data: the workspace's type {workspace.dtype!r} differs from the "
                         f"Acc tile's {tile.dtype!r} ({loc[0]}:{loc[1]})")
    rows, cols = tile.shape
    if int(np.prod(workspace.shape)) < rows * cols:
        raise ValueError(f"dump_data: the workspace holds {int(np.prod(workspace.shape))} "
                         f"elements, the Acc tile {rows}x{cols} needs {rows * cols} "
                         f"({loc[0]}:{loc[1]})")
    start = int(tile.offsets(1, 1)[0, 0])
    core.execute(FixPipe(workspace.region(), rows, cols, loc, src=tile.region().at(start),
                         src_stride=tile.frame.rows, dst_stride=cols, layout="ND",
                         op="dump_data"))
    core.execute(PipeBarrier("ALL", loc))
    return GmTensor(workspace.buffer, workspace.offset, (rows, cols), (cols, 1), tile.dtype,
                    name=workspace.name)


def _format(values: np.ndarray) -> list[str]:
    rows = values.reshape(-1, values.shape[-1]) if values.ndim else values.reshape(1, 1)
    if values.dtype.kind == "f":
        cell = "{:10.4f}".format
        rows = rows.astype(np.float32)
    else:
        cell = "{:8d}".format
    lines = []
    for row in rows:
        for at in range(0, len(row), DUMP_LINE):
            lines.append("".join(cell(v.item()) for v in row[at:at + DUMP_LINE]))
    return lines


def dump_data(data, offsets=None, shapes=None, *, workspace=None, loc=False, flag=None) -> None:
    """``pl.dump_data(data, offsets=None, shapes=None, *, workspace=None, loc=False,
    flag=None)``: print a GM tensor, a Vec tile or (through ``workspace``) an Acc tile, whole or
    a window of it."""
    where = user_location()
    core = current_core()
    if isinstance(data, GmTensor):
        if workspace is not None:
            raise ValueError(f"dump_data: workspace= is for Acc tiles, not tensors "
                             f"({where[0]}:{where[1]})")
        start, extent = _window(data, offsets, shapes, where)
        source, index, kind = data.region(), _tensor_index(data, start, extent), "GM tensor"
    elif isinstance(data, Tile):
        if len(data.shape) != 2:
            raise ValueError("dump_data: only 2-D tiles can be printed")
        start, extent = _window(data, offsets, shapes, where)
        if data.space == MemorySpace.Acc:
            if workspace is None:
                raise ValueError(f"dump_data: an Acc tile needs workspace= (a GM tensor of its "
                                 f"type) ({where[0]}:{where[1]})")
            staged = _acc_through_workspace(core, data, workspace, where)
            source, index = staged.region(), _tensor_index(staged, start, extent)
        elif data.space == MemorySpace.Vec:
            if workspace is not None:
                raise ValueError(f"dump_data: workspace= is for Acc tiles only "
                                 f"({where[0]}:{where[1]})")
            source = data.region()
            index = data.offsets(extent[0], extent[1], start[0], start[1])
        else:
            raise ValueError(f"dump_data: a {data.space.name} tile cannot be printed (Vec "
                             f"tiles directly, Acc tiles through a workspace) "
                             f"({where[0]}:{where[1]})")
        kind = f"{data.space.name} tile ({data.layout.name})"
    else:
        raise TypeError(f"dump_data: expected a tensor or a tile, got {type(data).__name__}")
    values = core.execute(Inspect(source, index, _print_pipe(core), where, "dump_data"))
    head = (f"dump_data [{core.kind} {core.core_id}] {kind} {data.dtype.name} "
            f"shape {list(data.shape)} window offsets {start} shape {extent}")
    lines = [] if flag is None else [f"[flag] {flag}"]
    if loc:
        lines.append(f"[{where[0]}:{where[1]}]")
    lines.append(head)
    lines.extend(["  (values not computed: timing-only run)"] if values is None
                 else _format(values))
    core.launch.say("\n".join(lines) + "\n")


OPS = {"printf": printf, "pto_assert": pto_assert, "dump_data": dump_data, "trap": trap}
