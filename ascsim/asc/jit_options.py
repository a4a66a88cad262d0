"""The option sets of ``@asc.jit`` (pyasc's CodegenOptions, CompileOptions, LaunchOptions)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class CodegenOptions:
    capture_exceptions: bool = True
    ir_multithreading: bool = True


@dataclass(frozen=True)
class CompileOptions:
    debug: bool = False
    strip_loc: bool = False
    verify_sync: bool = False
    print_ir_before_all: bool = False
    run_passes: bool = True
    kernel_type: Any = None
    opt_level: int = 3
    auto_sync: bool = True
    auto_sync_log: str = ""
    bisheng_options: tuple | None = None
    always_compile: bool = False
    matmul_cube_only: bool = False
    insert_sync: bool | None = None
    #: Fuse runs of consecutive element-wise vector calls into vector functions (950 only).
    vf_fusion: bool = False

    def problems(self) -> list[str]:
        """What is wrong with these options (empty when they are valid): checked when a
        kernel is launched with them and by ``asc.runtime.compiler.Compiler``, not when they
        are made (pyasc builds invalid options and lets its compiler refuse them)."""
        out = []
        if self.opt_level not in (1, 2, 3):
            out.append(f"opt_level must be 1, 2 or 3, got {self.opt_level}")
        kernel_type = self.kernel_type
        if kernel_type is not None and not 0 <= int(getattr(kernel_type, "value",
                                                            kernel_type)) <= 7:
            out.append(f"kernel_type must be a KernelType (0..7), got {kernel_type!r}")
        return out


@dataclass(frozen=True)
class LaunchOptions:
    core_num: int = 0
    stream: Any = None

    def __post_init__(self):
        if int(self.core_num) <= 0:
            raise ValueError(f"core_num must be positive to launch a kernel, got {self.core_num}")


OPTION_NAMES = frozenset(
    f.name for cls in (CodegenOptions, CompileOptions, LaunchOptions) for f in fields(cls))


def check_option_names(names) -> None:
    unknown = sorted(set(names) - OPTION_NAMES)
    if unknown:
        raise RuntimeError(f"The following option names are unknown: {', '.join(unknown)}")


def compile_options(options: dict) -> CompileOptions:
    """The CompileOptions of a launch's options; ValueError if they are invalid."""
    known = {f.name for f in fields(CompileOptions)}
    result = CompileOptions(**{k: v for k, v in options.items() if k in known})
    problems = result.problems()
    if problems:
        raise ValueError("; ".join(problems))
    return result
