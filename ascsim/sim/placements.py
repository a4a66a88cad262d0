"""Who holds which bytes of each local memory: the placements a front-end makes.

A front-end registers every placement it makes in a core's local memory -- a buffer carved for
a queue or scratch space, a tensor placed at a fixed address, a tile of its own allocator --
with :meth:`Placements.place`, naming its owner (one allocator, e.g. one resource manager of a
core) and its kind. Two placements of different owners that share bytes are an
``placement-overlap`` finding at the later one: both owners write the bytes, and the same pipe
doing so orders the writes, so no race is reported while one silently clobbers the other.

Kinds the front-end declares as aliases of each other (:data:`ALIASES`) may overlap: tensors
placed at fixed addresses are views the developer lays out by hand, and two of them over the
same bytes (a staging tile read back through another type) are a documented idiom; carves of
two allocators (a kernel phase with its own resource manager) each start from the memory's
base, the later phase taking over the bytes of the earlier. An owner
that gives its bytes back (a reset resource manager) removes its placements
(:meth:`Placements.release`). A placement past the memory's capacity is a ``local-overflow``
at the placement, unless it is a whole-memory handle (from byte 0, at least the whole memory:
the idiom for addressing a buffer by offsets).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ascsim.sim.source import format_location

#: Pairs of placement kinds that may share bytes.
ALIASES = frozenset({("fixed", "fixed"), ("carve", "carve")})


class Placement(NamedTuple):
    """Bytes ``[lo, hi)`` of one memory held by ``owner`` (``label`` names it in findings)."""

    lo: int
    hi: int
    owner: Any
    kind: str
    label: str
    loc: tuple | None


class Placements:
    """Every placement of one launch, per memory (keyed by the memory's ``key``)."""

    def __init__(self, launch):
        self.launch = launch
        self.by_memory: dict = {}

    def place(self, core, mem, lo: int, hi: int, owner, kind: str, label: str, loc) -> None:
        """Register ``owner``'s placement of bytes ``[lo, hi)`` of ``mem``; report an overlap
        with another owner's bytes, or bytes that do not exist, at ``loc``."""
        if hi <= lo:
            return
        if hi > mem.capacity:
            if lo == 0 and kind == "fixed":
                return  # a whole-memory handle: it owns nothing of its own
            self.launch.findings.report(
                "local-overflow",
                f"{label} covers {mem.name} bytes [{lo}, {hi}), but {mem.name} holds "
                f"{mem.capacity} B on {self.launch.soc.name}", loc,
                hint=self.launch.hint("placement-outside"), core=core.core_id,
                buffer=mem.name, start=lo, stop=hi, size=mem.capacity)
        held = self.by_memory.setdefault(mem.key, [])
        for other in held:
            if other.lo < hi and lo < other.hi and other.owner != owner \
                    and (other.kind, kind) not in ALIASES:
                where = f" at {format_location(other.loc)}" if other.loc else ""
                self.launch.findings.report(
                    "placement-overlap",
                    f"{label} at {mem.name} bytes [{lo}, {hi}) overlaps bytes "
                    f"[{max(lo, other.lo)}, {min(hi, other.hi)}) of {other.label}{where}: both "
                    "write there, and nothing orders one owner's use after the other's",
                    tuple(x for x in (loc, other.loc) if x),
                    hint=self.launch.hint("placement-overlap"), core=core.core_id,
                    buffer=mem.name, start=lo, stop=hi, other_start=other.lo,
                    other_stop=other.hi)
                break
        held.append(Placement(lo, hi, owner, kind, label, loc))

    def release(self, owner) -> None:
        """``owner`` gives back every byte it holds."""
        for key, held in self.by_memory.items():
            self.by_memory[key] = [p for p in held if p.owner != owner]


__all__ = ["ALIASES", "Placement", "Placements"]
