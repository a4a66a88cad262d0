"""The UB access check of :class:`~ascsim.isa.instr.WatchLocalMemory`: an observer that
reports every access of a watching core to a watched UB range with an armed kind."""

from __future__ import annotations

from ascsim.isa.instr import WatchLocalMemory
from ascsim.sim.observer import Observer

#: Pipe -> the access class the check distinguishes.
PIPE_CLASS = {"S": "scalar", "V": "vector", "MTE1": "mte", "MTE2": "mte", "MTE3": "mte",
              "FIX": "mte"}


def _touches(record, lo: int, hi: int) -> bool:
    """Whether an access record (plain or strided) has a byte in ``[lo, hi)``."""
    first, last = record[1], record[2]
    if last <= lo or first >= hi:
        return False
    if len(record) == 3:
        return True
    row, pitch = record[3], record[4]
    rows = (last - first - row) // pitch + 1
    # Rows that could reach the range: from the one holding lo - row + 1 on.
    start = max(0, (lo - first - row) // pitch)
    for r in range(start, rows):
        a = first + r * pitch
        if a >= hi:
            return False
        if a + row > lo:
            return True
    return False


class LocalMemoryWatch(Observer):
    """The armed watch registers per core: ``{core id: {register: (lo, hi, kinds, loc)}}``."""

    def __init__(self, launch):
        self.launch = launch
        self.armed: dict[int, dict[int, tuple]] = {}

    def on_instr(self, core, instr) -> None:
        registers = self.armed.get(core.core_id)
        if not registers:
            return
        kind = PIPE_CLASS.get(instr.pipe)
        if kind is None:
            return
        key = (core.core_id, "UB")
        for direction, records in (("read", instr.reads), ("write", instr.writes)):
            for register, (lo, hi, kinds, armed_at) in registers.items():
                if f"{kind}_{direction}" not in kinds:
                    continue
                if any(r[0] == key and _touches(r, lo, hi) for r in records):
                    self.launch.findings.report(
                        "local-memory-ia",
                        f"{instr.op} ({kind} {direction}) touches UB bytes [{lo}, {hi}) that "
                        f"check_local_memory_ia register {register} watches: the device raises "
                        "an exception here", (instr.loc, armed_at),
                        hint="the watched range was armed at the second line; disarm it "
                        "(is_enable=False) or keep this access out of it", core=core.core_id)


def execute_watch(core, rec: WatchLocalMemory) -> None:
    launch = core.launch
    watch = next((o for o in launch.observers if isinstance(o, LocalMemoryWatch)), None)
    if watch is None:
        watch = LocalMemoryWatch(launch)
        launch.observers.append(watch)
    registers = watch.armed.setdefault(core.core_id, {})
    if rec.enable:
        registers[rec.register] = (rec.lo, rec.hi, rec.kinds, rec.loc)
    else:
        registers.pop(rec.register, None)
    core.call_overhead()


EXECUTORS = {WatchLocalMemory: execute_watch}
