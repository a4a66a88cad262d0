"""Operand addresses of vector instructions that break the UB alignment rule.

Vector operands start on 32-byte boundaries (``SocSpec.alignment``, ascend-hw §2.2). Copies,
fractal loads, Mmad and FixPipe check their operands where they execute
(:func:`ascsim.sim.views.check_alignment`: UB/L1 32 B, L0A/L0B 512 B, L0C/BT 64 B); scalar
accesses are element-granular by nature. So this observer looks at the vector pipe only, and the
same problem is never reported twice.
"""

from __future__ import annotations

from ascsim.isa.instr import RegisterOp


class AlignmentCheck:
    def __init__(self, launch):
        self.launch = launch
        self.rules = dict(launch.soc.alignment)  # a plain dict: looked up per operand

    def on_instr(self, core, instr) -> None:
        if instr.pipe != "V" or type(instr.record) is RegisterOp:
            return  # a VF load or store has its own rule (ascsim.sim.exec_vf.alignment)
        rules = self.rules
        for accesses in (instr.reads, instr.writes):
            for record in accesses:
                space, lo, hi = record[0], record[1], record[2]
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
