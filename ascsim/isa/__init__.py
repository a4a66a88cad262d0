"""The instruction set between the front-ends and the machine.

Front-ends (``ascsim.asc`` for pyasc, ...) map their languages' calls onto these records; the
machine (``ascsim.sim``) executes them with ``Core.execute(record)``. Records and operands are
front-end neutral and depend on the SoC tables (:mod:`ascsim.hw`) only.
"""

from ascsim.isa.errors import CheckError, DeadlockError, KernelError
from ascsim.isa.instr import *
from ascsim.isa.instr import __all__ as _instr_all
from ascsim.isa.operands import *
from ascsim.isa.operands import __all__ as _operand_all
from ascsim.isa.simt import *
from ascsim.isa.simt import __all__ as _simt_all

__all__ = ["CheckError", "DeadlockError", "KernelError", *_instr_all, *_operand_all, *_simt_all]
