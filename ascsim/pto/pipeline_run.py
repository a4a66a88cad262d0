"""One core's run of an automatic pipeline (:mod:`ascsim.pto.pipeline` has the rules): its
stages' queued tasks, the beats that run them, and the cross-core flags around each task."""

from __future__ import annotations

from ascsim.pto.enums import PipeType
from ascsim.pto.ops import sync
from ascsim.pto.ops.common import current_core
from ascsim.pto.tile import TileGroup

#: Pipe name -> pl.PipeType (the flags are issued as the kernel's own set/wait would be).
PIPES = {name: PipeType[name] for name in ("MTE1", "MTE2", "MTE3", "V", "S", "FIX", "M")}
SIDE_OF_KIND = {"AIC": "cube", "AIV": "vector"}
#: The pipe of a set that follows no access of this core to the buffer (a pre-fired backward
#: flag, a task that skipped the buffer): a pipe of the core's own that can carry a set
#: (the checks refuse a cross-core set on the scalar unit).
IDLE_SET_PIPE = {"cube": PipeType.FIX, "vector": PipeType.V}


def _ids(group, field: str) -> tuple:
    return tuple(getattr(group, field, None) or ())


def _footprint(group: TileGroup) -> list:
    """(memory name, lo, hi) of each tile of the group."""
    return [(tile.mem.key[1], tile.addr, tile.addr + tile.size) for tile in group.tiles]


def _touches(record, footprint) -> bool:
    key, lo, hi = record[0], record[1], record[2]
    name = key[1] if isinstance(key, tuple) and len(key) > 1 else None
    return any(name == n and lo < b and a < hi for n, a, b in footprint)


class PipelineRun:
    """The pipeline of one core: ``stage()`` queues (or, sync_only, runs) a task, ``beat()``
    ends an iteration, ``start()`` / ``drain()`` open and close the pipeline."""

    def __init__(self, plan):
        self.plan = plan
        core = current_core()
        self.core = core
        self.side = SIDE_OF_KIND[core.kind]
        self.mine = [s for s in plan.stages if s.side == self.side]
        self.tasks: dict[int, list] = {s.index: [] for s in self.mine}
        self.beats = 0
        # (stage, handover name) -> the pipes its earlier tasks first touched the buffer on.
        self.first_pipes: dict = {}
        self.groups: dict = {}

    # -------------------------------------------------------------- the kernel's calls
    def start(self, *groups) -> None:
        """Before the pipeline: the consumer pre-fires every backward id once."""
        for handover, value in zip(self.plan.handovers, groups):
            try:
                group = value()
            except NameError:
                continue
            self.groups[handover.name] = group
            if not isinstance(group, TileGroup) or not _ids(group, "fwd_ids"):
                continue
            if self.plan.stages[handover.consumer].side == self.side:
                for event in _ids(group, "bwd_ids"):
                    sync.set_cross_core(pipe=IDLE_SET_PIPE[self.side], event_id=event)

    def stage(self, index: int, fn, *args, **kwargs) -> None:
        task = (fn, args, kwargs)
        if self.plan.sync_only:
            self._run(self.plan.stages[index], len(self.tasks[index]), task)
            task = None  # run: only its number is kept
        self.tasks[index].append(task)

    def beat(self) -> None:
        """The end of iteration ``beats``: each of this core's stages runs its due task."""
        if not self.plan.sync_only:
            for stage in self.mine:
                t = self.beats - stage.delay
                queue = self.tasks[stage.index]
                if 0 <= t < len(queue):
                    self._run(stage, t, queue[t])
                    queue[t] = None  # its arguments are no longer needed
        self.beats += 1

    def drain(self) -> None:
        """After the pipeline loop: the delayed stages' last tasks, then the producer takes
        back the pre-fired backward sets."""
        if not self.plan.sync_only:
            total = max((len(q) for q in self.tasks.values()), default=0)
            while any(0 <= self.beats - s.delay < total for s in self.mine):
                self.beat()
        for handover in self.plan.handovers:
            group = self.groups.get(handover.name)
            if not isinstance(group, TileGroup) or not _ids(group, "fwd_ids"):
                continue
            if self.plan.stages[handover.producer].side == self.side:
                for event in _ids(group, "bwd_ids"):
                    sync.wait_cross_core(pipe=PipeType.S, event_id=event)

    # -------------------------------------------------------------- one task
    def _buffers(self, stage, args, kwargs):
        """(handover, group, producing?) of the hand-over buffers this task takes."""
        out = []
        names = dict(zip(stage.args, args))
        names.update((n, kwargs.get(k)) for k, n in stage.keywords if n)
        for handover in self.plan.handovers:
            if stage.index not in (handover.producer, handover.consumer):
                continue
            group = names.get(handover.name)
            if isinstance(group, TileGroup) and _ids(group, "fwd_ids"):
                self.groups.setdefault(handover.name, group)
                out.append((handover, group, stage.index == handover.producer))
        return out

    def _run(self, stage, t: int, task) -> None:
        fn, args, kwargs = task
        buffers = self._buffers(stage, args, kwargs)
        for handover, group, producing in buffers:
            ids = _ids(group, "bwd_ids" if producing else "fwd_ids")
            if ids:
                pipes = self.first_pipes.get((stage.index, handover.name), set())
                pipe = next(iter(pipes)) if len(pipes) == 1 else "S"
                sync.wait_cross_core(pipe=PIPES[pipe], event_id=ids[t % len(ids)])
        instrs = self.core.instrs
        first = len(instrs)
        fn(*args, **kwargs)
        issued = instrs[first:]
        for handover, group, producing in buffers:
            footprint = _footprint(group)
            touching = [instr for instr in issued
                        if any(_touches(r, footprint) for r in (*instr.reads, *instr.writes))]
            if touching:
                self.first_pipes.setdefault((stage.index, handover.name), set()).add(
                    touching[0].pipe)
            ids = _ids(group, "fwd_ids" if producing else "bwd_ids")
            if ids:
                pipe = (PIPES[max(touching, key=lambda i: i.done).pipe] if touching
                        else IDLE_SET_PIPE[self.side])
                sync.set_cross_core(pipe=pipe, event_id=ids[t % len(ids)])
