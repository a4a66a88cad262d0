"""The machine raises the instruction set's errors (:mod:`ascsim.isa.errors`); re-exported here
because the machine is where most of them surface."""

from ascsim.isa.errors import CheckError, DeadlockError, KernelError

__all__ = ["CheckError", "DeadlockError", "KernelError"]
