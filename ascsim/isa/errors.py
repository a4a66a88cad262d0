"""Errors of kernels: what the instruction set and the machine refuse, each naming the kernel
source line involved."""

from __future__ import annotations


class KernelError(Exception):
    """A kernel did something the hardware cannot do (e.g. a buffer beyond the SoC's capacity).

    The message starts with ``file:line:`` of the kernel statement responsible.
    """

    def __init__(self, message: str, where: tuple[str, int] | None = None):
        self.where = where
        prefix = f"{where[0]}:{where[1]}: " if where else ""
        super().__init__(prefix + message)


class DeadlockError(KernelError):
    """Every core that has not finished is waiting for something no running core will provide."""


class CheckError(KernelError):
    """Raised in strict mode at the first finding of the kernel checks."""
