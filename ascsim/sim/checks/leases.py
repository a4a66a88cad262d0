"""Use after free: an operand whose buffer was given back (and perhaps taken again) since its
tensor was handed out.

A gated buffer (a queue slot) counts the times a producer takes it (``Gate.generation``); a
tensor handed out by the front-end carries the generation it was taken at (``Region.lease``).
An instruction touching the buffer through an operand of an earlier generation, or after the
buffer was given back, sees (or overwrites) whatever the buffer's next owner put there: a
``use-after-free`` finding naming the use, the free, and the allocation that took the buffer
again. Scratch buffers (a TBuf's views) have a gate that is never handed over; its generation
counts the times the buffer was placed, and a view made before the latest placement is
reported with the line that placed it again.
"""

from __future__ import annotations

from ascsim.isa.operands import Region

#: Record fields (:mod:`ascsim.isa.instr`) that hold operands -- a Region or a tuple of them --
#: and whether the instruction writes them.
OPERAND_FIELDS = {"dst": True, "src": False, "srcs": False, "a": False, "b": False,
                  "bias": False, "mask": False, "offsets": False, "work": True, "extra": False,
                  "scratch": True}


_GATE, _LEASE = Region._fields.index("gate"), Region._fields.index("lease")


def _operand_fields(record_type) -> tuple[tuple[int, bool], ...]:
    """(field index, written?) of the operand fields of a record type."""
    return tuple((i, OPERAND_FIELDS[name]) for i, name in enumerate(record_type._fields)
                 if name in OPERAND_FIELDS)


class LeaseCheck:
    """Tracks each gate's allocations and frees; reports operands of a past allocation."""

    def __init__(self, launch, describe_space):
        self.launch = launch
        self.describe_space = describe_space
        # gate -> [(taken at, given back at or None)], one entry per generation (1, 2, ...).
        self.history: dict = {}
        self.fields: dict = {}  # record type -> _operand_fields

    def on_acquire(self, gate, loc) -> None:
        """A producer takes the buffer (``acquire_write``): a new generation."""
        entries = self.history.get(gate)
        if entries is None:
            self.history[gate] = [[loc, None]]
        else:
            entries.append([loc, None])

    def on_release(self, gate, loc) -> None:
        """The consumer gives the buffer back (``release_read``)."""
        entries = self.history.get(gate)
        if entries:
            entries[-1][1] = loc

    def operands(self, kind) -> tuple[tuple[int, bool], ...]:
        """(field index, written?) of the operand fields of record type ``kind``."""
        fields = self.fields.get(kind)
        if fields is None:
            fields = self.fields[kind] = _operand_fields(kind) if hasattr(kind, "_fields") \
                else ()
        return fields

    def on_instr(self, core, instr) -> None:
        record = instr.record
        fields = self.fields.get(type(record)) or self.operands(type(record))
        for index, written in fields:
            value = record[index]
            if type(value) is Region:
                gate = value.gate  # (the common case, a current tensor, checked inline)
                if gate is not None and (value.lease != gate.generation or gate.state == "free"):
                    self._check(core, instr, value, written)
            elif type(value) is tuple:
                for item in value:
                    if type(item) is Region and item.gate is not None:
                        self._check(core, instr, item, written)

    def all_current(self, record, fields=None) -> bool:
        """Whether every gated operand of ``record`` is of its buffer's current allocation and
        not given back: what :meth:`on_instr` lets pass without a closer look. ``fields``:
        the indices of the record type's operand fields (:meth:`operands`), when the caller
        has them at hand. (A mirrored core's every instruction comes here: the Region fields
        are read by index.)"""
        if fields is None:
            fields = tuple(index for index, _ in self.operands(type(record)))
        for index in fields:
            value = record[index]
            if type(value) is Region:
                gate = value[_GATE]
                if gate is not None:
                    lease = value[_LEASE]
                    if lease is not None and (lease != gate.generation or gate.state == "free"):
                        return False
            elif type(value) is tuple:
                for item in value:
                    if type(item) is Region:
                        gate = item[_GATE]
                        if gate is not None:
                            lease = item[_LEASE]
                            if lease is not None and \
                                    (lease != gate.generation or gate.state == "free"):
                                return False
        return True

    def _check(self, core, instr, region: Region, written: bool) -> None:
        gate = region.gate
        if gate is None or region.lease is None:
            return
        if region.lease == gate.generation and gate.state != "free":
            return
        entries = self.history.get(gate)
        if not entries:
            if region.lease < gate.generation and gate.taken_at:
                self._superseded(core, instr, region, written)
            return
        if not 0 < region.lease <= len(entries):
            return
        _, freed = entries[region.lease - 1]
        lo = region.offset
        what = (f"{instr.op} on {instr.pipe} {'writes' if written else 'reads'} "
                f"{self.describe_space(gate.key)} bytes [{lo}, {lo + region.nbytes}) through a "
                f"{gate.label} that was given back")
        if region.lease < len(entries):
            again = entries[region.lease][0]
            message = (f"{what}, and the buffer has been taken again since: this "
                       f"{'overwrites' if written else 'sees'} the new tile's bytes")
            locations = tuple(loc for loc in (instr.loc, freed, again) if loc)
        else:
            message = (f"{what}: its next allocation may change these bytes at any time")
            locations = tuple(loc for loc in (instr.loc, freed) if loc)
        self._report(core, gate, region, message, locations)

    def _superseded(self, core, instr, region: Region, written: bool) -> None:
        """A view of a buffer that is never handed over (scratch space), made before the
        buffer was placed again (``taken_at``)."""
        gate = region.gate
        lo = region.offset
        self._report(core, gate, region, (
            f"{instr.op} on {instr.pipe} {'writes' if written else 'reads'} "
            f"{self.describe_space(gate.key)} bytes [{lo}, {lo + region.nbytes}) through a "
            f"{gate.label} made before the buffer was placed again (now bytes [{gate.lo}, "
            f"{gate.hi})): the old view's bytes may belong to another owner"),
            (instr.loc, gate.taken_at), "view-superseded")

    def _report(self, core, gate, region: Region, message: str, locations,
                hint: str = "use-after-free") -> None:
        lo = region.offset
        self.launch.findings.report(
            "use-after-free", message, locations, hint=self.launch.hint(hint),
            core=core.core_id, buffer=self.describe_space(gate.key), start=lo,
            stop=lo + region.nbytes)
