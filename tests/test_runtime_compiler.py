"""asc.runtime.compiler: option and target descriptions, and the Compiler that refuses."""

from __future__ import annotations

import pytest

from ascsim.asc.api_coverage import NotOnSimulator
from ascsim.asc.jit_options import CompileOptions as JitCompileOptions
from ascsim.asc.runtime import compiler
from ascsim.asc.runtime.config import KernelType


@pytest.mark.parametrize("kind, expected", [
    (KernelType.MIX_AIC_1_2, (None, "dav-c220-vec", "dav-c220-cube")),
    (KernelType.AIV_ONLY, ("dav-c220-vec", None, None)),
    (KernelType.MIX_AIV_HARD_SYNC, ("dav-c220-vec", None, None)),
    (KernelType.AIC_ONLY, ("dav-c220-cube", None, None)),
])
def test_compilation_target_names_the_architectures(kind, expected):
    for platform in (compiler.CompilePlatform.Ascend910B, "Ascend910_93"):
        target = compiler.CompilationTarget.get(kind, platform)
        assert (target.common_arch, target.vec_arch, target.cube_arch) == expected


def test_compile_options_are_the_jit_options_and_compiler_refuses():
    assert compiler.CompileOptions is JitCompileOptions
    assert compiler.CompiledKernel().binary is None
    with pytest.raises(NotOnSimulator, match="no Ascend C source or bisheng build"):
        compiler.Compiler(compiler.CompileOptions())


def test_compiler_checks_its_options_before_refusing():
    # Invalid options can be made (as in pyasc); the compiler, or a launch, rejects them.
    bad = compiler.CompileOptions(opt_level=0)
    with pytest.raises(RuntimeError, match="Please check input compile option: opt_level must "
                       "be 1, 2 or 3, got 0"):
        compiler.Compiler(bad)
    with pytest.raises(RuntimeError, match="kernel_type must be a KernelType"):
        compiler.Compiler(compiler.CompileOptions(kernel_type=9))
