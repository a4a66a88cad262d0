"""The kernel checks' own CPU time, apart from the simulation: one launch's check events replayed.

`check_overhead.py` times whole simulations with the checks on and off; on a shared host the
difference of two noisy times is noisier still, and it cannot say which check costs what. This
script runs SwiGLU (examples/swiglu.py) once with the checks off and an observer that records
every event the checks would have seen (gate operations, instructions, flags, barriers, cross-core
hand-offs), with the state of the gates each event reads (their generation and hand-over state
then). It then feeds the recorded events to fresh checks (:class:`ascsim.sim.checks.KernelChecks`)
several times and prints the median CPU time of a replay, of the replay loop alone, and of a
replay with each sub-check switched off in turn (its share is the difference).

Switching off the queue check removes happens-before edges, so the race check then finds (and
reports) conflicts: that row says what the edges save the race check, not the queue check's own
cost. The findings of each replay are printed next to it.

    .venv/bin/python benchmarks/check_replay.py                     # SwiGLU (2, 1024, 1024)
    .venv/bin/python benchmarks/check_replay.py --shape 2,512,512 --repeats 9
    .venv/bin/python benchmarks/check_replay.py --quick             # smoke test
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from ascsim.demo import load_example
from ascsim.isa.operands import Region
from ascsim.session import SESSION
from ascsim.sim.checks import KernelChecks, mirror
from ascsim.sim.findings import FindingLog
from ascsim.sim.launch import fewer_collections

#: Sub-check attribute of KernelChecks -> its per-event methods (switched off together).
SUB_CHECKS = {
    "races": ("check_instr", "check_records", "on_instr"),
    "uninit": ("on_instr", "on_acquire"),
    "leases": ("on_instr", "on_acquire", "on_release"),
    "alignment": ("on_instr",),
    "queues": ("check_instr", "on_gate_op"),
}
#: Observer hooks the recorder takes down as they come (the per-event ones snapshot gates).
PLAIN_HOOKS = ("on_set_flag", "on_wait_flag", "on_mutex", "on_barrier", "on_cross_core_set",
               "on_cross_core_release", "on_cross_core_wait", "on_cross_core_edge")


def operand_gates(record) -> list:
    """The gates of a record's operands (a Region field or a tuple of them)."""
    out = []
    for value in record if isinstance(record, tuple) else ():
        if type(value) is Region and value.gate is not None:
            out.append(value.gate)
        elif type(value) is tuple:
            out.extend(item.gate for item in value
                       if type(item) is Region and item.gate is not None)
    return out


class Recorder:
    """A launch observer that keeps the check events of the launch, in order."""

    def __init__(self, launch):
        self.launch = launch
        self.events: list = []
        for hook in PLAIN_HOOKS:
            setattr(self, hook, self._plain(hook))

    def _plain(self, hook: str):
        def record(*args) -> None:
            self.events.append((hook, args, ()))
        return record

    def on_gate(self, core, gate, action, loc) -> None:
        self.events.append(("on_gate", (core, gate, action, loc),
                            ((gate, gate.generation, gate.state),)))

    def on_instr(self, core, instr) -> None:
        gates = operand_gates(instr.record)
        self.events.append(("on_instr", (core, instr),
                            tuple((g, g.generation, g.state) for g in gates)))

    def on_wave_start(self, launch, cores) -> None:
        self.events.append(("on_wave_start", (launch, cores), ()))

    def on_launch_end(self, launch) -> None:
        """(Replayed separately: it reports what is held at the end, once.)"""


def record_launch(shape: tuple[int, ...]) -> Recorder:
    """Simulate SwiGLU of ``shape`` with the checks off, recording its check events."""
    swiglu = load_example("swiglu")
    gate = torch.rand(*shape, dtype=torch.float32) * 4 - 2
    up = torch.rand(*shape, dtype=torch.float32) * 4 - 2
    recorders: list[Recorder] = []

    def factory(launch):
        recorders.append(Recorder(launch))
        return recorders[-1]

    saved_checks, saved_factories = SESSION.checks, list(SESSION.observer_factories)
    SESSION.checks = False
    SESSION.observer_factories.append(factory)
    try:
        swiglu.swiglu(gate, up)
    finally:
        SESSION.checks = saved_checks
        SESSION.observer_factories[:] = saved_factories
    if len(recorders) != 1:
        raise RuntimeError(f"expected one launch, recorded {len(recorders)}")
    return recorders[0]


def replay(recorder: Recorder, off: tuple[str, ...] = (), checks: bool = True,
           mirrored: bool = True) -> tuple:
    """(CPU seconds, findings) of feeding the recorded events to fresh checks, with the
    sub-checks named in ``off`` switched off; ``checks=False`` runs the loop alone;
    ``mirrored=False`` checks every core in full (no core mirrors the first one's verdicts,
    see ascsim.sim.checks.mirror)."""
    launch = recorder.launch
    final = [(g, g.generation, g.state) for g in launch.gates]
    saved_findings = launch.findings
    launch.findings = FindingLog(strict=False)  # the replay's findings, apart
    saved_mirror, mirror.ENABLED = mirror.ENABLED, mirrored
    try:
        kc = KernelChecks(launch)
    finally:
        mirror.ENABLED = saved_mirror
    for name in off:
        sub = getattr(kc, name)
        for method in SUB_CHECKS[name]:
            if hasattr(sub, method):
                setattr(sub, method, _nothing)
    hooks = {name: getattr(kc, name) for name in ("on_gate", "on_instr", "on_wave_start",
                                                   *PLAIN_HOOKS)}
    # As in a launch: no cyclic collection meanwhile.
    with fewer_collections():
        start = time.process_time()
        for name, args, gates in recorder.events:
            for gate, generation, state in gates:
                gate.generation, gate.state = generation, state
            if checks:
                hooks[name](*args)
        if checks:
            kc.on_launch_end(launch)
        seconds = time.process_time() - start
    found = len(launch.findings)
    kc.release()
    for gate, generation, state in final:
        gate.generation, gate.state = generation, state
    launch.findings = saved_findings
    return seconds, found


def _nothing(*args, **kwargs) -> None:
    return None


def median_replay(recorder: Recorder, repeats: int, **kwargs) -> tuple[float, int]:
    """(median CPU seconds, findings) of ``repeats`` replays after one warm-up."""
    replay(recorder, **kwargs)
    runs = [replay(recorder, **kwargs) for _ in range(repeats)]
    return statistics.median(s for s, _ in runs), runs[-1][1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shape, one repeat")
    parser.add_argument("--shape", default=None, help="SwiGLU shape, e.g. 2,1024,1024")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    shape = tuple(int(x) for x in args.shape.split(",")) if args.shape else \
        ((2, 64, 64) if args.quick else (2, 1024, 1024))
    repeats = 1 if args.quick else max(1, args.repeats)
    recorder = record_launch(shape)
    kinds: dict[str, int] = {}
    for name, _, _ in recorder.events:
        kinds[name] = kinds.get(name, 0) + 1
    print(f"check events of swiglu fp32 {shape}: {kinds.get('on_instr', 0)} instructions, "
          f"{kinds.get('on_gate', 0)} gate operations, "
          f"{sum(kinds.values()) - kinds.get('on_instr', 0) - kinds.get('on_gate', 0)} other")
    loop, _ = median_replay(recorder, repeats, checks=False)
    total, found = median_replay(recorder, repeats)
    instrs = max(1, kinds.get("on_instr", 0))
    print(f"replay of every check: {total * 1e3:.1f} ms CPU (median of {repeats}; the event "
          f"loop alone {loop * 1e3:.1f} ms), {(total - loop) / instrs * 1e6:.2f} us per "
          f"instruction, {found} findings")
    print(f"{'switched off':<14}{'replay ms':>10}{'share ms':>10}{'findings':>10}")
    for name in SUB_CHECKS:
        seconds, found = median_replay(recorder, repeats, off=(name,))
        print(f"{name:<14}{seconds * 1e3:>10.1f}{(total - seconds) * 1e3:>10.1f}{found:>10}")
    full, found = median_replay(recorder, repeats, mirrored=False)
    print(f"without mirroring (every core checked in full): {full * 1e3:.1f} ms CPU, "
          f"{found} findings; mirrored / full {total / full:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
