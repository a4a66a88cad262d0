"""Operand addresses of vector and cube instructions that break the buffer's alignment rule.

UB and L1 operands start on 32-byte boundaries, L0A/L0B on 512-byte fractals, L0C and BT on
64 bytes (``SocSpec.alignment``, ascend-hw §2.2). ``data_copy`` and ``data_copy_pad`` check their
own operands (and block lengths) where they run; scalar accesses are element-granular by nature.
"""

from __future__ import annotations

SELF_CHECKED = frozenset({"data_copy", "data_copy_pad"})


class AlignmentCheck:
    def __init__(self, launch):
        self.launch = launch
        self.rules = launch.soc.alignment

    def on_instr(self, core, instr) -> None:
        if instr.pipe == "S" or instr.op in SELF_CHECKED:
            return
        rules = self.rules
        for accesses in (instr.reads, instr.writes):
            for space, lo, hi in accesses:
                if space[0] == "GM" or hi <= lo:
                    continue
                align = rules.get(space[1], 1)
                if lo % align:
                    self.launch.findings.report(
                        "alignment",
                        f"{instr.op} on {instr.pipe}: {space[1]} operand at byte {lo} is not "
                        f"{align}-byte aligned", instr.loc,
                        hint=f"start {space[1]} operands on a {align}-byte boundary (offset "
                        "views by whole blocks)", core=core.core_id, buffer=space[1], start=lo)
