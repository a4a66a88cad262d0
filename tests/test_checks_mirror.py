"""Cores that repeat the first core's events mirror its local verdicts (ascsim.sim.checks.mirror).

A bug on one core only, past the first, must be reported exactly as with every core checked in
full: same category, lines, core, message and count. The clean twin reports nothing, computes
the right numbers, and its later cores really were mirrored.
"""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest
from source_marks import SourceMarks, checks_on_not_strict, f32  # noqa: F401 - a fixture

import ascsim.asc as asc
from ascsim.sim.checks import mirror

HERE = os.path.abspath(__file__)
_MARKS = SourceMarks(HERE)
mark, lines_of = _MARKS.mark, _MARKS.lines_of

N = 64  # fp32 elements per tile: 256 B
F32 = asc.float32
TILES = 3

# per_core_launches: they count the cores each launch mirrors.
pytestmark = pytest.mark.usefixtures("checks_on_not_strict", "per_core_launches")


@asc.jit
def doubled(x: asc.GlobalAddress, y: asc.GlobalAddress, tiles: asc.ConstExpr[int],
            bad: asc.ConstExpr[int], bug: asc.ConstExpr[str]):
    """y = 2x, each block on its own ``tiles`` tiles through double-buffered queues; block
    ``bad`` gets ``bug`` on its last tile."""
    block = asc.get_block_idx()
    per = tiles * N
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x + block * per, per)
    gy.set_global_buffer(y + block * per, 2 * per)
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 2)
    qout = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=qin, num=2, len=4 * N)
    pipe.init_buffer(que=qout, num=2, len=4 * N)
    for i in range(tiles):
        faulty = block == bad and i == tiles - 1
        t = qin.alloc_tensor(F32)  # mark: alloc
        asc.data_copy(t, gx[i * N:], N // 2 if faulty and bug == "stale" else N)
        qin.enque(t)
        a = qin.deque(F32)
        o = qout.alloc_tensor(F32)
        if faulty and bug == "uaf":
            qin.free_tensor(a)  # mark: early-free
        asc.muls(o, a, 2.0, N)  # mark: compute
        if not (faulty and bug == "uaf"):
            qin.free_tensor(a)
        if faulty and bug == "race":
            asc.data_copy(gy[i * N:], o, N)  # mark: unsynced-copy
            qout.enque(o)
            qout.free_tensor(qout.deque(F32))
            continue
        qout.enque(o)
        b = qout.deque(F32)
        at = (i + tiles) * N if faulty and bug == "neighbour" else i * N
        if faulty and bug == "back":  # into the bytes the block before wrote (and claimed)
            back = asc.GlobalTensor()
            back.set_global_buffer(y + (block - 1) * per, per)
            asc.data_copy(back[i * N:], b, N)  # mark: copy-back
        else:
            asc.data_copy(gy[at:], b, N)  # mark: copy-out
        qout.free_tensor(b)


@asc.jit
def doubled_one_slot(x: asc.GlobalAddress, y: asc.GlobalAddress, tiles: asc.ConstExpr[int],
                     bad: asc.ConstExpr[int], bug: asc.ConstExpr[str]):
    """``doubled`` with one input slot; block ``bad`` computes its last tile through the
    previous tile's tensor: the same bytes and queue steps, only the allocation differs."""
    block = asc.get_block_idx()
    per = tiles * N
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x + block * per, per)
    gy.set_global_buffer(y + block * per, per)
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 1)
    qout = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=qin, num=1, len=4 * N)
    pipe.init_buffer(que=qout, num=1, len=4 * N)
    previous = None
    for i in range(tiles):
        t = qin.alloc_tensor(F32)  # mark: one-alloc
        asc.data_copy(t, gx[i * N:], N)
        qin.enque(t)
        a = qin.deque(F32)
        o = qout.alloc_tensor(F32)
        source = previous if block == bad and i == tiles - 1 and bug == "old-handle" else a
        asc.muls(o, source, 2.0, N)  # mark: one-compute
        qin.free_tensor(a)  # mark: one-free
        previous = a
        qout.enque(o)
        b = qout.deque(F32)
        asc.data_copy(gy[i * N:], b, N)
        qout.free_tensor(b)


KERNELS = {"old-handle": doubled_one_slot}


def run(blocks: int, bad: int, bug: str, mirrored: bool, monkeypatch, claims=None):
    """(report, y, how many cores mirrored the first one) of ``doubled`` on ``blocks``;
    ``claims``, a list, receives every GM claim made (see mirror's "GM claims")."""
    monkeypatch.setattr(mirror, "ENABLED", mirrored)
    admitted = []
    admit = mirror.CoreMirrors.admit

    def counting(self, core):
        m = admit(self, core)
        if m is not None:
            admitted.append(core.core_id)
        return m

    monkeypatch.setattr(mirror.CoreMirrors, "admit", counting)
    if claims is not None:
        claim = mirror.CoreMirrors._claim

        def keeping(self, m, record, ref):
            made = claim(self, m, record, ref)
            if made is not None:
                claims.append(made)
            return made

        monkeypatch.setattr(mirror.CoreMirrors, "_claim", keeping)
    x = f32(blocks * TILES * N, 1.0)
    y = np.zeros(blocks * TILES * N + TILES * N, np.float32)
    report = KERNELS.get(bug, doubled)[blocks](x, y, TILES, bad, bug)
    return report, x, y, len(admitted)


def summary(report) -> list:
    return [(f.category, f.locations, f.core, f.count, f.message) for f in report.findings]


@pytest.mark.parametrize("blocks", [4, 60])  # 60 blocks: two waves on the 48 vector cores
def test_clean_kernel_mirrors_later_cores_and_computes_right(blocks, monkeypatch):
    report, x, y, mirrored = run(blocks, -1, "", True, monkeypatch)
    assert report.findings == []
    assert mirrored == blocks - 1  # every core after the first
    np.testing.assert_array_equal(y[:x.size], 2 * x)


@pytest.mark.parametrize("blocks", [4, 60])
def test_later_cores_claim_their_gm_slices_and_nothing_enters_them(blocks, monkeypatch):
    claims = []
    report, x, y, _ = run(blocks, -1, "", True, monkeypatch, claims)
    assert report.findings == []
    # Each later core claims its slice of x and of y, and no access overlapped a claim.
    assert sorted((c.mirrored.core_id, c.space[1]) for c in claims) == \
        sorted((core, buf) for core in range(1, blocks) for buf in (0, 1))
    assert all(c.held for c in claims)
    np.testing.assert_array_equal(y[:x.size], 2 * x)


def test_a_write_into_a_claim_enters_it_first(monkeypatch):
    """Block 3 writes into block 2's output slice: block 2's claim there enters its writes
    before block 3's write is checked, so the race is found as without mirroring."""
    claims = []
    full, *_ = run(4, 3, "back", False, monkeypatch)
    fast, *_ = run(4, 3, "back", True, monkeypatch, claims)
    assert summary(fast) == summary(full) and fast.findings
    entered = [c for c in claims if not c.held]
    assert {(c.mirrored.core_id, c.space[1]) for c in entered} >= {(2, 1), (3, 0), (3, 1)}


def test_a_launch_with_claims_leaves_no_cycles_behind(monkeypatch):
    """A claim and its core refer to each other: the checks' release drops them, so a
    launch's records are freed by reference counting, as without mirroring."""
    run(4, -1, "", False, monkeypatch)
    gc.collect()
    gc.disable()
    try:
        run(6, -1, "", False, monkeypatch)
        full = gc.collect()
        claims = []
        run(6, -1, "", True, monkeypatch, claims)
        del claims[:]
        fast = gc.collect()
    finally:
        gc.enable()
    assert fast <= full


@pytest.mark.parametrize(("bug", "category", "marks"), [
    ("uaf", "use-after-free", ["compute", "early-free"]),
    ("stale", "stale-read", ["compute", "alloc"]),
    ("race", "race", ["compute", "unsynced-copy"]),
    ("neighbour", "cross-core-race", ["copy-out", "copy-out"]),
    ("back", "cross-core-race", ["copy-out", "copy-back"]),
    ("old-handle", "use-after-free", ["one-compute", "one-free", "one-alloc"]),
])
@pytest.mark.parametrize(("blocks", "bad"), [(4, 2), (60, 55)])
def test_a_bug_on_a_later_core_is_reported_as_without_mirroring(bug, category, marks, blocks,
                                                                bad, monkeypatch):
    full, *_ = run(blocks, bad, bug, False, monkeypatch)
    fast, _, _, mirrored = run(blocks, bad, bug, True, monkeypatch)
    assert mirrored == blocks - 1
    assert summary(fast) == summary(full)
    found = [f for f in fast.findings if f.category == category]
    assert found, [f.format() for f in fast.findings]
    assert lines_of(found[0]) == [mark(name) for name in marks]
    assert found[0].core in {bad, bad + 1}  # (the neighbour's race is found by the later one)


@pytest.mark.parametrize("bug", ["", "stale", "race"])
def test_stopping_the_mirror_midway_replays_every_mirrored_core(bug, monkeypatch):
    """What a cross-core event does (every mirrored core's local state is made real, and all
    go on in full), forced in the middle of the last core's stream."""
    blocks, bad = 6, 5
    full, *_ = run(blocks, bad, bug, False, monkeypatch)
    replayed = []
    instr = mirror.CoreMirrors.instr
    materialise = mirror.CoreMirrors.materialise

    def stop_midway(self, m, core, ins):
        if core.core_id == bad and m.pos >= 10:
            self.checks._stop_mirroring()
            return False
        return instr(self, m, core, ins)

    def counting(self, cid):
        replayed.append(cid)
        materialise(self, cid)

    monkeypatch.setattr(mirror.CoreMirrors, "instr", stop_midway)
    monkeypatch.setattr(mirror.CoreMirrors, "materialise", counting)
    fast, x, y, mirrored = run(blocks, bad, bug, True, monkeypatch)
    assert mirrored == blocks - 1, mirrored
    assert sorted(set(replayed)) == list(range(1, blocks))
    assert summary(fast) == summary(full)
    if not bug:
        np.testing.assert_array_equal(y[:x.size], 2 * x)


def _epoch(epoch):
    return None if epoch is None else (epoch[0], epoch[1], epoch[2].op, epoch[2].loc) + \
        tuple(epoch[3:])


def _state(checks) -> dict:
    """Every check's state, with instruction records named by (op, line): comparable across
    two launches."""
    maps = {}
    for space, amap in checks.races.maps.items():
        maps[space] = (list(amap.starts), [
            (_epoch(s[0]), tuple(_epoch(r) for r in s[1])) if type(s) is tuple else repr(s)
            for s in amap.states])
    gate_name = {gate: i for i, gate in enumerate(checks.launch.gates)}
    return {
        "clocks": {cid: ([dict(vc) for vc in c.vc], c.s_version, list(c.seen))
                   for cid, c in checks.clocks.items()},
        "maps": maps,
        "masks": {space: bytes(mask) for space, mask in checks.uninit.masks.items()},
        "versions": dict(checks.uninit.version),
        "syncs": {gate_name[g]: (dict(s.clock), s.version, list(s.seen), sorted(s.touched))
                  for g, s in checks.queues.syncs.items()},
        "history": {gate_name[g]: [list(e) for e in h] for g, h in checks.leases.history.items()},
    }


@pytest.mark.parametrize("bug", ["", "stale"])
def test_replayed_state_equals_the_full_checks_state(bug, monkeypatch):
    """Every mirrored core made real at the end of the launch leaves the checks in the very
    state the full checks reach: clocks, race maps, written bytes, queue edges, allocations."""
    from ascsim.sim.checks import KernelChecks

    states = []
    end = KernelChecks.on_launch_end

    def snapshot(self, launch):
        self._stop_mirroring()
        states.append(_state(self))
        end(self, launch)

    monkeypatch.setattr(KernelChecks, "on_launch_end", snapshot)
    full, *_ = run(5, 3, bug, False, monkeypatch)
    fast, _, _, mirrored = run(5, 3, bug, True, monkeypatch)
    assert mirrored == 4
    assert summary(fast) == summary(full)
    assert states[0].keys() == states[1].keys()
    for part in states[0]:
        assert states[1][part] == states[0][part], part
