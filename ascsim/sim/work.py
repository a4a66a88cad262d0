"""The work an instruction did, for the profile: cube FLOPs and vector bytes.

An :class:`~ascsim.isa.instr.Mmad` did ``2 * m * n * k`` FLOPs of its input dtype; a vector
instruction processed the bytes it wrote (its ``writes`` access records). A core adds up both as
it places its instructions (:class:`CoreWork`), so that the report's profile reads two totals
per core instead of walking every instruction of the launch at its end.
"""

from __future__ import annotations

from ascsim.hw.spec import dtype_key
from ascsim.isa.instr import Mmad
from ascsim.sim.access import nbytes

#: The dtype an M-pipe instruction that is not an Mmad counts its (zero) FLOPs under.
DEFAULT_CUBE_DTYPE = "float16"


def instr_flops(instr) -> tuple[float, str]:
    """(FLOPs, input dtype) of a cube instruction (0 for anything but an Mmad)."""
    rec = instr.record
    if type(rec) is not Mmad:
        return 0.0, DEFAULT_CUBE_DTYPE
    return 2.0 * rec.m * rec.n * rec.k, dtype_key(rec.dtype)


def instr_vector_bytes(instr) -> int:
    """Bytes a vector instruction processed: the bytes it wrote."""
    return sum(nbytes(record) for record in instr.writes)


class CoreWork:
    """One core's running totals: FLOPs per input dtype of its M-pipe instructions (in the
    order the dtypes first occur) and bytes its V-pipe instructions wrote."""

    __slots__ = ("flops_by_dtype", "vector_bytes")

    def __init__(self):
        self.flops_by_dtype: dict[str, float] = {}
        self.vector_bytes = 0

    def add(self, instr) -> None:
        """Count a placed instruction (any pipe: only M and V carry work)."""
        pipe = instr.pipe
        if pipe == "M":
            flops, dtype = instr_flops(instr)
            by_dtype = self.flops_by_dtype
            by_dtype[dtype] = by_dtype.get(dtype, 0.0) + flops
        elif pipe == "V":
            for record in instr.writes:
                self.vector_bytes += nbytes(record)
