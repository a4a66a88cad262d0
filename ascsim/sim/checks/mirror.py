"""Cores that repeat the first core's event stream: their local checks are proven, not redone.

A kernel launched on many cores mostly runs the same program on each, on other GM bytes: the
same instructions on the same pipes, touching the same local addresses (in the core's own UB,
L1, ...), with the same queue operations on the same slots. The checks of a core's *local*
state (races on its local memories, written bytes, queue hand-overs, alignment, and the vector
clocks that order them) are a function of that stream alone, as long as nothing links the core
to another one (a cross-core flag, ``sync_all``, a Matmul hand-off): each core starts from
empty state and sees only its own memories. So a core whose stream is, event for event, the
stream of the first core (the *reference*) up to the core's own memory keys gets the same
verdicts: none, when the reference had no finding at all.

Such a core is *mirrored*: each of its events is compared with the reference's event at the
same position and, when they match, only what depends on other cores is done for real -- its GM
accesses go through the race check (with the clock the core's pipe has then: the reference's
clock at that position, renamed to this core's pipes; or are claimed, see below), and the
use-after-free check, which
reads each operand's own allocation, runs as usual. The event is kept. At the first event that
does not match (or a cross-core event anywhere, which would read or join the core's clocks),
the core's kept events are replayed through the local checks in order -- everything the full
path would have done, minus the GM part already done -- and the core continues on the full
path. A core that finishes mirrored needs nothing more: no later event reads its local state.

Preconditions, each checked, else the full path runs:

* the launch is not a MIX launch (AIC and AIV cores exchange data and flags), and no
  cross-core hook has fired;
* the reference reported no finding of any kind while its stream was recorded (findings are
  counted per core and line, so a repeated one would have to be counted again), and its
  recording ended when another core's first event arrived;
* the mirrored core had no event before it started mirroring;
* at each position: the same hook; for a gate, the corresponding slot (same memory, bytes,
  label, pipes), action and line; for an instruction, the same pipe, line, record type,
  atomic and padding flags, and the same local access records (in the core's own memories)
  at the same positions among its records; its GM records may differ. A scalar instruction
  with a GM record (whose auto-sync would join clocks) and a reference clock that names
  another core are never mirrored.

GM claims. A mirrored core's GM accesses are usually the reference's moved by one distance per
buffer (each core works on its own slice), and then they need no check when they are made. At
its first access to a GM buffer, the core *claims* the byte ranges the reference accessed there
(over its whole stream), moved by that distance, if no access is recorded and no other claim
lies there (:meth:`RaceCheck.untouched`). From then on, each of its accesses there that is the
reference's at the same position moved by the claim's distance is kept only as part of its
instruction (which the mirror keeps anyway). A core claims only while every GM access it made
was claimed: so within its claims its accesses are, position for position, the reference's
moved, on bytes nothing else touched, checked with the reference's clocks renamed -- they meet
only each other, as the reference's did, with the same verdicts: none. Any other access that
overlaps a claim (another core's, or one of the core's own that is not a moved reference
access) first makes the core stop claiming: each of its claims is *entered* (its accesses go
through the race check in order, exactly as they would have when they were made, since
nothing else touched those bytes meanwhile) and dropped, and the core's later GM accesses are
checked when they are made. A core leaving the mirror enters its claims too. At the end of a
launch no claim needs entering: nothing reads the race maps then.
"""

from __future__ import annotations

from ascsim.sim.checks.clocks import KEY_STRIDE, PIPE_INDEX, S

#: Whether launches mirror cores at all (the tests compare the findings with and without).
ENABLED = True

#: What the ``gate`` of a template entry that is not a gate operation is: nothing a mirrored
#: core's gate maps to, so ``KernelChecks.on_gate``'s inline match fails on it.
_NEVER = object()


class GateEntry:
    """The reference's gate operation at one position: its gate, action and line, and the
    bytes the gate had then."""

    __slots__ = ("gate", "action", "loc", "lo", "hi")

    def __init__(self, gate, action: str, loc):
        self.gate, self.action, self.loc, self.lo, self.hi = gate, action, loc, gate.lo, gate.hi


class ClockEntry:
    """The reference's flag, mutex or barrier step at one position (a hook of
    :data:`CLOCK_STEPS` and its arguments)."""

    __slots__ = ("hook", "args")
    gate = _NEVER

    def __init__(self, hook: str, args: tuple):
        self.hook, self.args = hook, args


class Unmatchable:
    """A reference event no core may mirror: a mirrored core falls back to the full path
    there."""

    __slots__ = ()
    gate = _NEVER


UNMATCHABLE = Unmatchable()


def _split(reads, writes, core_id: int):
    """(local reads, local writes, GM reads, GM writes) of an instruction, the local records
    as (memory name, lo, hi, ...) so that two cores' compare equal; None when a record names
    another core's local memory."""
    local_reads, local_writes, gm_reads, gm_writes = [], [], [], []
    for record in reads:
        space = record[0]
        if space[0] == "GM":
            gm_reads.append(record)
        elif space[0] == core_id:
            local_reads.append((space[1],) + record[1:])
        else:
            return None
    for record in writes:
        space = record[0]
        if space[0] == "GM":
            gm_writes.append(record)
        elif space[0] == core_id:
            local_writes.append((space[1],) + record[1:])
        else:
            return None
    return local_reads, local_writes, gm_reads, gm_writes


def _flag_checks(kind, record) -> tuple[tuple[int, bool], ...]:
    """(field index, truth) of the ``atomic`` and ``whole_blocks`` fields of ``record`` (of
    type ``kind``), the two flags of a record the local checks read (the race and
    written-bytes checks): a mirrored record of the same type must have the same truths."""
    names = getattr(kind, "_fields", ())
    return tuple((names.index(name), bool(record[names.index(name)]))
                 for name in ("atomic", "whole_blocks") if name in names)


def _record_specs(records) -> tuple[tuple, tuple]:
    """How one side (reads or writes) of a mirrored core's instruction is compared with the
    reference's ``records``: ((position, memory name, the record past its space) of each
    local record, the positions of the GM records)."""
    local, gm = [], []
    for k, record in enumerate(records):
        space = record[0]
        if space[0] == "GM":
            gm.append(k)
        else:
            local.append((k, space[1], record[1:]))
    return tuple(local), tuple(gm)


def _side_matches(records, expected, count: int, local, core_id: int) -> bool:
    """Whether one side (reads or writes) of a mirrored instruction matches its shape's:
    ``expected`` is the side as a whole when it has no GM record (one comparison), else None,
    and then the count and the local records are compared (the GM ones may differ)."""
    if expected is not None:
        return records == expected
    return len(records) == count and (not local or _local_match(records, local, core_id))


def _local_match(records, local: tuple, core_id: int) -> bool:
    """Whether the records of one side of a mirrored core's instruction at the positions of
    ``local`` (:func:`_record_specs`) are the reference's local records there, in core
    ``core_id``'s memories (so none names another core's local memory)."""
    for k, name, rest in local:
        record = records[k]
        space = record[0]
        if space[0] != core_id or space[1] != name or record[1:] != rest:
            return False
    return True


def _all_gm(gm: tuple, sides: tuple) -> bool:
    """Whether a mirrored core's records at the reference's GM positions (``InstrEntry.gm``)
    are GM records too (the local checks skip them)."""
    for side, k, _ in gm:
        if sides[side][k][0][0] != "GM":
            return False
    return True


def _gm_side(records, positions: tuple, n: int):
    """The GM records of one side of a matched instruction (at ``positions`` of its ``n``):
    the side itself when all of it is GM, as a copy's is."""
    if not positions:
        return ()
    if len(positions) == n:
        return records
    return [records[k] for k in positions]


class InstrShape:
    """What a mirrored core's instruction must share with the reference's at the same
    position, apart from its GM records: the pipe, line and record type, the truths of the
    flags the local checks read, and each local record (by position, memory name and bytes).
    A loop's iterations repeat a handful of shapes, so equal shapes are one object
    (:meth:`CoreMirrors.record_instr`), and each mirrored core renames a shape's local records
    to its own memories once (:meth:`expected`), not once per instruction."""

    __slots__ = ("pipe", "loc", "kind", "flags", "n_reads", "n_writes", "local_reads",
                 "gm_reads", "local_writes", "gm_writes", "operands")

    def __init__(self, instr, operands: tuple):
        record = instr.record
        self.pipe, self.loc, self.kind = instr.pipe, instr.loc, type(record)
        self.flags = _flag_checks(self.kind, record)
        self.n_reads, self.n_writes = len(instr.reads), len(instr.writes)
        self.local_reads, self.gm_reads = _record_specs(instr.reads)
        self.local_writes, self.gm_writes = _record_specs(instr.writes)
        self.operands = operands  # indices of the record type's operand fields

    def key(self) -> tuple:
        return (self.pipe, self.loc, self.kind, self.flags, self.n_reads, self.n_writes,
                self.local_reads, self.gm_reads, self.local_writes, self.gm_writes)

    def expected(self, core_id: int) -> tuple:
        """(reads, writes) of core ``core_id``'s instruction of this shape, for a side with no
        GM record (compared whole); None for a side with GM records (its local records
        compared one by one, :func:`_local_match`, its GM ones by :meth:`CoreMirrors.instr`)."""
        return tuple(None if gm else tuple(((core_id, name),) + rest for _, name, rest in local)
                     for local, gm in ((self.local_reads, self.gm_reads),
                                       (self.local_writes, self.gm_writes)))


class InstrEntry:
    """The reference's instruction at one position (:meth:`CoreMirrors.instr`): its
    :class:`InstrShape`; its GM records, as (side: 0 reads, 1 writes; position; record); and
    what the mirrored core's GM accesses are checked with (the reference's pipe clock after
    the instruction, its count and its pipe)."""

    __slots__ = ("shape", "gm", "vc", "count", "pipe_index")
    gate = _NEVER

    def __init__(self, shape: InstrShape, instr, vc: dict, count: int, pipe_index: int):
        self.shape = shape
        self.gm = tuple((side, k, records[k]) for side, (records, positions) in
                        enumerate(((instr.reads, shape.gm_reads),
                                   (instr.writes, shape.gm_writes))) for k in positions)
        self.vc, self.count, self.pipe_index = vc, count, pipe_index


class Claim:
    """A mirrored core's claim on GM bytes (see "GM claims" in the module docstring): the
    byte ranges the reference accessed on ``space``, moved by ``delta``, from the core's
    ``index``-th instruction (template position ``pos``) on. Its accesses there are not in
    the race map until :meth:`enter` (another access overlaps the claim, or the core leaves
    the mirror)."""

    __slots__ = ("space", "delta", "mirrored", "index", "pos", "mirrors", "held")

    def __init__(self, space, delta: int, mirrored, mirrors):
        self.space, self.delta = space, delta
        self.mirrored, self.mirrors = mirrored, mirrors
        self.index, self.pos = len(mirrored.instrs), mirrored.pos
        self.held = True

    def enter(self) -> None:
        """Another access overlaps the claim: the core stops claiming (:meth:`CoreMirrors.
        stop_claiming`)."""
        self.mirrors.stop_claiming(self.mirrored)


class ShiftedClock:
    """The clock of a mirrored core's pipe: the reference's clock at the same position, its
    pipe keys moved to this core's (the reference's clocks name no other core, so neither
    does this one). Only ``get`` is read, and only where a GM byte was accessed before.
    A mirrored core has one, pointed (``ref``) at the reference's clock of each of its
    instructions in turn: the race check reads it only while it checks that instruction."""

    __slots__ = ("ref", "shift", "lo", "hi")

    def __init__(self, ref: dict, shift: int, base: int):
        self.ref, self.shift, self.lo, self.hi = ref, shift, base, base + KEY_STRIDE

    def get(self, key: int, default: int = 0) -> int:
        if self.lo <= key < self.hi:
            return self.ref.get(key - self.shift, default)
        return default


#: At most this many byte ranges per GM space in a claim: beyond, the reference's ranges there
#: are taken as one hull.
MAX_CLAIM_RANGES = 16


def _gm_ranges(template: list) -> dict:
    """GM space -> the byte ranges the reference's instructions in ``template`` accessed
    there, overlapping or touching ones merged, in order (at most MAX_CLAIM_RANGES)."""
    spans: dict = {}
    for entry in template:
        if type(entry) is InstrEntry:
            for _, _, record in entry.gm:
                spans.setdefault(record[0], []).append((record[1], record[2]))
    out = {}
    for space, found in spans.items():
        found.sort()
        merged = [list(found[0])]
        for lo, hi in found[1:]:
            if lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        if len(merged) > MAX_CLAIM_RANGES:
            merged = [[merged[0][0], max(hi for _, hi in merged)]]
        out[space] = tuple((lo, hi) for lo, hi in merged)
    return out


class Mirrored:
    """One mirrored core: where it is in the reference stream, and what it did so far."""

    __slots__ = ("core", "core_id", "template", "base", "shift", "clock", "pos", "gates",
                 "instrs", "gate_count", "expected", "claims", "claiming")

    def __init__(self, core, template: list, ref_base: int):
        self.core = core
        self.core_id = core.core_id
        self.template = template
        self.base = core.core_id * KEY_STRIDE
        self.shift = self.base - ref_base  # reference pipe key -> this core's
        self.clock = ShiftedClock({}, self.shift, self.base)
        self.pos = 0  # events matched so far
        self.gates: dict = {}  # this core's gate -> the reference's (one to one)
        self.instrs: list = []  # its matched instructions (the rest is in the template)
        # len(launch.gates) at the core's first gate operation, which registered every gate
        # there was with the queue check (QueueCheck._register_new): the core mirrors only
        # while no gate is added, so its replay can register the same ones.
        self.gate_count: int | None = None
        self.expected: dict = {}  # InstrShape -> its expected records in this core
        self.claims: dict = {}  # GM space -> this core's Claim there
        # Whether the core may claim GM bytes: only while every GM access it made was claimed.
        self.claiming = True


class CoreMirrors:
    """The reference stream, and the cores mirroring it (see the module docstring)."""

    def __init__(self, checks, launch):
        self.checks = checks
        self.launch = launch
        self.enabled = ENABLED and launch.kind != "MIX"
        self.ref_id = None  # the reference core's id while its stream is recorded
        self.ref_base = 0
        self.template: list | None = None  # entries of the reference stream; None: recording
        self.recording: list = []
        self.ref_gated = False  # the reference had a gate operation (see record_instr)
        self.findings_at_start = 0
        self.mirrored: dict = {}  # core id -> Mirrored
        self.gates = launch.gates  # (the list of every gate of the launch, grown in place)
        self.leases = checks.leases
        self.shapes: dict = {}  # InstrShape.key() -> the one InstrShape of that key
        # GM space -> the byte ranges the reference accessed there, merged and sorted.
        self.ranges: dict = {}

    # ----------------------------------------------------------------- who goes where
    def admit(self, core) -> Mirrored | None:
        """Called at the first event of a core: the reference starts recording, or the core
        starts mirroring (returned), or it runs the full checks (None)."""
        cid = core.core_id
        if not self.enabled:
            return None
        if self.ref_id is None and self.template is None:
            self.ref_id = cid
            self.ref_base = cid * KEY_STRIDE
            self.findings_at_start = len(self.launch.findings)
            return None
        self.close()
        if not self.template:
            return None
        m = self.mirrored[cid] = Mirrored(core, self.template, self.ref_base)
        return m

    def close(self) -> None:
        """End the reference's recording (another core's first event arrived): the template
        is what it recorded, or nothing if a finding was reported meanwhile."""
        if self.template is None:
            clean = len(self.launch.findings) == self.findings_at_start
            self.template = self.recording if clean else []
            self.recording = []
            self.ref_id = None
            self.ranges = _gm_ranges(self.template)

    def disable(self) -> None:
        """A cross-core event: every mirrored core takes the full path from here on."""
        self.enabled = False
        self.close()
        for cid in list(self.mirrored):
            self.materialise(cid)
        self.template = []

    def release(self) -> None:
        """Drop the claims at the launch's end: a claim and its core refer to each other."""
        for m in self.mirrored.values():
            m.claims.clear()
        self.checks.races.claims.clear()
        self.mirrored.clear()

    # ----------------------------------------------------------------- the reference
    def record_gate(self, gate, action: str, loc) -> None:
        self.recording.append(GateEntry(gate, action, loc))
        self.ref_gated = True

    def record_instr(self, clocks, instr, pipe: int, count: int) -> None:
        """The reference's instruction, after it was checked (so ``clocks`` holds the clock
        its GM accesses were checked with: no race check joins into a non-scalar pipe)."""
        split = _split(instr.reads, instr.writes, clocks.core_id)
        vc = clocks.vc[pipe]
        lo, hi = self.ref_base, self.ref_base + KEY_STRIDE
        # (Before the first gate operation, which gates the queue check knows depends on
        # what other cores did: such an instruction is never mirrored.)
        mirrorable = split is not None and self.ref_gated and \
            all(lo <= key < hi for key in vc) and not (pipe == S and (split[2] or split[3]))
        if not mirrorable:
            self.recording.append(UNMATCHABLE)  # a mirrored core falls back here
            return
        shape = InstrShape(instr, tuple(index for index, _ in
                                        self.checks.leases.operands(type(instr.record))))
        shape = self.shapes.setdefault(shape.key(), shape)
        self.recording.append(InstrEntry(shape, instr, dict(vc), count, pipe))

    def record_clock(self, hook: str, args: tuple) -> None:
        self.recording.append(ClockEntry(hook, args))

    # ----------------------------------------------------------------- a mirrored core
    def gate(self, m: Mirrored, gate, action: str, loc) -> bool:
        """A mirrored core's gate operation: True when it matches the reference, False when
        the core must take the full path from here. (``KernelChecks.on_gate`` matches a slot
        it has seen before inline, the same way.)"""
        template = self.template
        pos = m.pos
        if pos >= len(template):
            return False
        entry = template[pos]
        if type(entry) is not GateEntry or entry.action != action or entry.loc != loc or \
                gate.lo != entry.lo or gate.hi != entry.hi:
            return False
        ref = entry.gate
        gates = len(self.launch.gates)
        if m.gate_count is None:
            m.gate_count = gates
        elif gates != m.gate_count:
            return False  # a gate was added: the full path registers it when it would
        mapped = m.gates.get(gate)
        if mapped is not ref:
            if mapped is not None or ref in m.gates.values() or \
                    gate.key != (m.core_id, ref.key[1]) or gate.label != ref.label or \
                    gate.producer != ref.producer or gate.consumer != ref.consumer:
                return False
            m.gates[gate] = ref  # (a first sight: a kernel has a handful of slots)
        m.pos = pos + 1
        return True

    def instr(self, m: Mirrored, core, instr) -> bool:
        """A mirrored core's instruction (one that accesses memory): True when it matches the
        reference and its GM accesses have been claimed or checked, False for the full path.
        (It runs for every instruction of every mirrored core, so its comparisons are written
        out here rather than called.) Each GM access must be the reference's at this position
        moved by the distance of the core's claim on its space (made at its first access
        there, :meth:`_claim`); else the core stops claiming and the instruction's GM accesses
        are checked now (:meth:`_check_gm`)."""
        try:
            entry = self.template[m.pos]
        except IndexError:
            return False
        if type(entry) is not InstrEntry:
            return False
        shape = entry.shape
        record = instr.record
        if shape.pipe != instr.pipe or shape.loc != instr.loc or \
                type(record) is not shape.kind or len(self.gates) != m.gate_count:
            return False
        for index, truth in shape.flags:
            if (not record[index]) is truth:  # (the flag's truth differs)
                return False
        expected = m.expected.get(shape)
        if expected is None:
            expected = m.expected[shape] = shape.expected(m.core_id)
        ex_reads, ex_writes = expected
        reads, writes = instr.reads, instr.writes
        if not _side_matches(reads, ex_reads, shape.n_reads, shape.local_reads,
                             m.core_id) or \
                not _side_matches(writes, ex_writes, shape.n_writes, shape.local_writes,
                                  m.core_id):
            return False
        if not self.leases.all_current(record, shape.operands):
            return False  # an operand of a past allocation: the full path says which
        if entry.gm:
            claims = m.claims
            sides = (reads, writes)
            for side, k, ref in entry.gm:
                access = sides[side][k]
                claim = claims.get(access[0]) or self._claim(m, access, ref)
                # (A claimed access is on the reference's GM space: a GM record.)
                if claim is None or access[1] - claim.delta != ref[1] or \
                        access[2] - claim.delta != ref[2] or access[0] != ref[0] or \
                        len(access) != len(ref) or len(access) > 3 and access[3:] != ref[3:]:
                    if not _all_gm(entry.gm, sides):
                        return False
                    self._check_gm(m, entry, instr)
                    break
        m.pos += 1
        m.instrs.append(instr)
        return True

    # ----------------------------------------------------------------- GM claims
    def _claim(self, m: Mirrored, record, ref) -> Claim | None:
        """Core ``m``'s first access to a GM space: a claim on the ranges the reference
        accessed there, moved to this access, if no byte of them was accessed or claimed (so
        the core's accesses there can meet only each other, as the reference's did); else
        None."""
        space = record[0]
        if not m.claiming or space != ref[0]:
            return None
        delta = record[1] - ref[1]
        ranges = self.ranges[space]
        races = self.checks.races
        if not all(races.untouched(space, lo + delta, hi + delta) for lo, hi in ranges):
            return None
        claim = m.claims[space] = Claim(space, delta, m, self)
        for lo, hi in ranges:
            races.add_claim(space, lo + delta, hi + delta, claim)
        return claim

    def _check_gm(self, m: Mirrored, entry: InstrEntry, instr) -> None:
        """A matched instruction whose GM accesses are not all claimed: the core stops
        claiming, and the instruction's GM accesses go to the race check."""
        self.stop_claiming(m)
        shape = entry.shape
        clock = m.clock
        clock.ref = entry.vc
        pipe = entry.pipe_index
        self.checks.races.check_records(
            instr, _gm_side(instr.reads, shape.gm_reads, shape.n_reads),
            _gm_side(instr.writes, shape.gm_writes, shape.n_writes), m.base + pipe,
            entry.count, clock, None, pipe)

    def stop_claiming(self, m: Mirrored) -> None:
        """Core ``m`` claims no more: each of its claims enters its accesses and is dropped,
        and its later GM accesses are checked when they are made. (A claim's proof needs
        every GM access of the core since the claim began to be a moved reference access.)"""
        m.claiming = False
        for claim in list(m.claims.values()):
            self._enter(claim)

    def _enter(self, claim: Claim) -> None:
        """Check a claim's accesses, in order, as they were checked when they were made (the
        claimed bytes saw no other access since), and drop the claim."""
        m, space = claim.mirrored, claim.space
        races = self.checks.races
        races.drop_claim(space, claim)
        claim.held = False
        del m.claims[space]
        entries = [entry for entry in self.template[claim.pos:m.pos] if type(entry) is InstrEntry]
        clock = m.clock
        for entry, instr in zip(entries, m.instrs[claim.index:]):
            sides = (instr.reads, instr.writes)
            mine = ([], [])
            for side, k, _ in entry.gm:
                record = sides[side][k]
                if record[0] == space:
                    mine[side].append(record)
            if mine[0] or mine[1]:
                clock.ref = entry.vc
                pipe = entry.pipe_index
                races.check_records(instr, mine[0], mine[1], m.base + pipe, entry.count, clock,
                                    None, pipe)

    def clock(self, m: Mirrored, hook: str, args: tuple) -> bool:
        """A mirrored core's flag, mutex or barrier step: True when it matches."""
        template = self.template
        pos = m.pos
        if pos >= len(template):
            return False
        entry = template[pos]
        if type(entry) is not ClockEntry or entry.hook != hook or entry.args != args:
            return False
        m.pos = pos + 1
        return True

    def materialise(self, cid: int) -> None:
        """Replay a mirrored core's matched events through the local checks, in order: its
        state is then what the full path would have left, and the core leaves the mirror."""
        m = self.mirrored.pop(cid, None)
        if m is None:
            return  # made real already (the mirror was stopped)
        checks = self.checks
        clocks = checks.clocks_of(cid)
        core = m.core
        mine = {ref: gate for gate, ref in m.gates.items()}
        instrs = iter(m.instrs)
        if m.gate_count is not None:
            checks.queues.register(m.gate_count)
        for entry in self.template[:m.pos]:
            kind = type(entry)
            if kind is GateEntry:
                gate, action = mine[entry.gate], entry.action
                checks.queues.on_gate_op(clocks, gate, action)
                if action == "acquire_write":
                    checks.uninit.take(gate.key, entry.lo, entry.hi)
                    checks.leases.on_acquire(gate, entry.loc)
                elif action == "release_read":
                    checks.leases.on_release(gate, entry.loc)
            elif kind is InstrEntry:
                instr = next(instrs)
                pipe = PIPE_INDEX[instr.pipe]
                count = clocks.tick(pipe)
                checks.queues.check_instr(clocks, instr.reads, instr.writes, pipe)
                checks.races.check_local(instr, clocks, pipe, count)
                checks.uninit.on_instr(core, instr)
            else:
                CLOCK_STEPS[entry.hook](clocks, *entry.args)
        if m.gate_count is not None:
            # Gates the core added after its last event, registered since by another core's
            # gate operation: nothing of this core touched them after they existed.
            checks.queues.forget_touches(cid, m.gate_count)
        self.stop_claiming(m)


#: Flag, mutex and barrier hooks -> their clock step, given the hook's arguments after the
#: core (and without the locations, which the clocks do not use).
CLOCK_STEPS = {
    "on_set_flag": lambda clocks, src, dst, event_id: clocks.set_flag(src, dst, event_id),
    "on_wait_flag": lambda clocks, src, dst, event_id: clocks.wait_flag(src, dst, event_id),
    "on_mutex": lambda clocks, action, pipe, mutex_id: clocks.mutex(action, pipe, mutex_id),
    "on_barrier": lambda clocks, pipe: clocks.barrier(pipe),
}
