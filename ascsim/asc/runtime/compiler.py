"""``asc.runtime.compiler``: pyasc's compile step, as far as it has meaning on the simulator.

pyasc lowers a kernel to Ascend C and compiles it with bisheng for the core's architecture;
ascsim runs the kernel's Python on the simulated chip instead, so nothing is compiled. The
option and target descriptions exist with pyasc's fields (``CompileOptions`` is the one
``asc.jit`` takes), ``CompilationTarget.get`` names the architectures a kernel type is built
for, and ``Compiler`` checks its options and then refuses, saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ascsim.asc.api_coverage import NotOnSimulator
from ascsim.asc.jit_options import CompileOptions
from ascsim.asc.lib.runtime.support import CoreType
from ascsim.asc.runtime.config import KernelType


class CompilePlatform(Enum):
    """The SoC families pyasc compiles for."""

    Ascend910B = "Ascend910B"
    Ascend910_93 = "Ascend910_93"


#: Architecture of the AI Core of each compile platform (both are DaVinci C220).
ARCH = {CompilePlatform.Ascend910B: "c220", CompilePlatform.Ascend910_93: "c220"}
#: Kernel types built for both the vector and the cube core, and those built for AIV only.
_MIX_KINDS = (KernelType.MIX_AIC_1_1, KernelType.MIX_AIC_1_2)
_VECTOR_KINDS = (KernelType.MIX_AIV_1_0, KernelType.MIX_AIV_HARD_SYNC, KernelType.AIV_ONLY)


@dataclass(frozen=True)
class CompilationTarget:
    """The architectures (``dav-<arch>-vec`` / ``-cube``) a kernel is built for and the
    options per part; ascsim passes no compiler options, so those lists stay empty."""

    common_arch: str | None = None
    vec_arch: str | None = None
    cube_arch: str | None = None
    common_options: list = field(default_factory=list)
    vec_options: list = field(default_factory=list)
    cube_options: list = field(default_factory=list)

    @staticmethod
    def get(kernel_type, platform) -> CompilationTarget:
        """The target of ``kernel_type`` on ``platform``: both cores for a MIX kernel with
        cube and vector parts, the vector core for AIV kinds, else the cube core."""
        platform = CompilePlatform(getattr(platform, "value", platform))
        arch = ARCH[platform]
        kernel_type = KernelType(kernel_type)
        if kernel_type in _MIX_KINDS:
            return CompilationTarget(vec_arch=f"dav-{arch}-vec", cube_arch=f"dav-{arch}-cube")
        if kernel_type in _VECTOR_KINDS:
            return CompilationTarget(common_arch=f"dav-{arch}-vec")
        return CompilationTarget(common_arch=f"dav-{arch}-cube")


@dataclass(frozen=True)
class CompiledKernel:
    """A compiled kernel as pyasc describes it; on the simulator ``binary`` stays None."""

    binary: bytes | None = None
    core_type: CoreType = CoreType.VectorCore
    enable_debug: bool = False
    kernel_args: tuple | None = None


_COMPILER_REASON = ("ascsim runs the kernel's Python on the simulated chip; there is no Ascend C "
                    "source or bisheng build to drive (launch the @asc.jit function instead)")


class Compiler:
    """pyasc's compiler driver: checks its options as pyasc does, then refuses (there is
    nothing to compile on the simulator)."""

    __ascsim_refuses__ = _COMPILER_REASON

    def __init__(self, options: CompileOptions | None = None):
        options = CompileOptions() if options is None else options
        problems = options.problems()
        if problems:
            raise RuntimeError(f"Please check input compile option: {'; '.join(problems)}")
        raise NotOnSimulator("asc.runtime.compiler.Compiler is not meaningful on a simulator: "
                             f"{_COMPILER_REASON}")


__all__ = ["CompilationTarget", "CompileOptions", "CompilePlatform", "CompiledKernel",
           "Compiler"]
