"""What every tile operation needs: the executing core, the kernel's line, operand checks."""

from __future__ import annotations

from ascsim.isa import KernelError
from ascsim.pto.enums import MemorySpace
from ascsim.pto.tile import Tile
from ascsim.sim.scheduler import current_core
from ascsim.sim.source import user_location

__all__ = ["KernelError", "current_core", "expect_space", "expect_tile", "user_location"]


def expect_tile(value, op: str, role: str, loc) -> Tile:
    if not isinstance(value, Tile):
        raise KernelError(f"{op}: {role} must be a tile, got {type(value).__name__}", loc)
    return value


def expect_space(tile: Tile, spaces: tuple[MemorySpace, ...], op: str, role: str, loc) -> None:
    if tile.space not in spaces:
        names = "/".join(s.name for s in spaces)
        raise ValueError(f"{op}: {role} must be a {names} tile, got a {tile.space.name} tile "
                         f"({loc[0]}:{loc[1]})")
