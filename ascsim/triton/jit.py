"""``@triton.jit`` and the launch ``kernel[grid](*args, **kwargs)`` on the simulated chip.

A launch binds the arguments as Triton does (``tl.constexpr`` parameters keep their Python
values; tensors become pointers to their first element in GM; ints become int32, or int64 when
they do not fit; floats fp32), evaluates the grid (a tuple, or a function of the arguments by
name), and runs the programs as triton-ascend runs a vector-only kernel: program ``i`` is block
``i`` on the vector cores (AIV), in waves of as many as the chip has. The grid may not exceed
65535 programs (the device's ``coreDim`` is 16 bits: triton-ascend docs,
migration_guide/migrate_from_gpu.md) unless ``TRITON_ALL_BLOCKS_PARALLEL=1``, which folds the
programs onto the physical vector cores, each running its share one after another.

The kernel body runs as Python, once per program, its ``tl.*`` calls becoming instruction records
on the core that runs it (see :mod:`ascsim.triton.language`).
"""

from __future__ import annotations

import functools
import inspect
import os

import numpy as np

from ascsim.session import SESSION
from ascsim.sim.host import HostArgument, is_torch_tensor
from ascsim.sim.launch import Launch, LaunchConfig, fewer_collections
from ascsim.sim.memory import DeviceMemory
from ascsim.sim.report import KernelReport
from ascsim.sim.scheduler import in_kernel
from ascsim.triton import cube_loads, dtypes, liveness, mix
from ascsim.triton import program as _program
from ascsim.triton.program import GmArg
from ascsim.triton.semantic import constexpr, unwrap
from ascsim.triton.tensor import known, tensor

#: The device's block count is a 16-bit field (``coreDim=... can't be greater than UINT16_MAX``).
MAX_GRID = 65535
ALL_BLOCKS_PARALLEL = "TRITON_ALL_BLOCKS_PARALLEL"

#: Launch keywords that are the compiler's or the GPU's and change no result here.
LAUNCH_OPTIONS = frozenset({
    "num_warps", "num_stages", "num_ctas", "enable_fp_fusion", "maxnreg", "debug",
    "stream", "warmup", "grid", "multibuffer", "enable_auto_bind_sub_block",
    "inject_barrier_all", "enable_linearize", "limit_auto_multi_buffer_only_for_local_buffer",
    "set_workspace_multibuffer", "tile_mix_vector_loop", "tile_mix_cube_loop",
    "auto_blockify_size", "sync_solver", "unit_flag", "enable_hivm_auto_cv_balance",
    "enable_ubuf_saving", "enable_nd2nz_on_vector", "force_simt_only", "compile_mode",
    "mix_mode", "optimize_dynamic_offset", "enable_mixed_cv", "disable_auto_inject_block_sync",
    "enable_sync_block_lock", "enable_mask_fallback_conversion",
})


def all_blocks_parallel() -> bool:
    return os.environ.get(ALL_BLOCKS_PARALLEL, "0").strip() not in ("", "0")


class JITFunction:
    """A function decorated with ``@triton.jit``."""

    def __init__(self, fn, **options):
        self.fn = fn
        self.options = options
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.constexprs = {name for name, p in self.signature.parameters.items()
                           if _is_constexpr(fn, p.annotation)}
        self.__name__ = fn.__name__
        self._body = None
        self._mix = None
        functools.update_wrapper(self, fn)

    def is_mix(self) -> bool:
        """Whether the kernel calls ``tl.dot``: a mix kernel (:mod:`ascsim.triton.mix`)."""
        if self._mix is None:
            self._mix = cube_loads.uses_dot(self.fn)
        return self._mix

    def body(self):
        """The function a launch runs: the kernel with its loops' dead tiles dropped at the end
        of each iteration (:mod:`ascsim.triton.liveness`), made at the first launch."""
        if self._body is None:
            self._body = liveness.shorten_lifetimes(self.fn)
        return self._body

    def __getitem__(self, grid):
        return functools.partial(self.run, grid=grid)

    def __call__(self, *args, **kwargs):
        if in_kernel():  # a @triton.jit helper called from a kernel: inlined
            return self.fn(*args, **kwargs)
        raise RuntimeError(f"Cannot call @triton.jit'd outside of the scope of a kernel: "
                           f"launch {self.fn.__name__} as {self.fn.__name__}[grid](...)")

    def run(self, *args, grid, warmup: bool = False, **kwargs):
        launch_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k not in self.arg_names}
        unknown = sorted(set(launch_kwargs) - LAUNCH_OPTIONS)
        if unknown:
            raise TypeError(f"{self.fn.__name__}() got unexpected keyword argument(s) "
                            f"{unknown}")
        try:
            call = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.fn.__name__}: {exc}") from None
        call.apply_defaults()
        arguments = {name: unwrap(value) for name, value in call.arguments.items()}
        if warmup:
            return None
        return launch(self, arguments, grid)

    def __repr__(self) -> str:
        return f"JITFunction({self.fn.__module__}:{self.fn.__qualname__})"


def _is_constexpr(fn, annotation) -> bool:
    if annotation is constexpr or isinstance(annotation, constexpr):
        return True
    if isinstance(annotation, str):  # ``from __future__ import annotations``
        return annotation.split(".")[-1] == "constexpr"
    return False


def jit(fn=None, **options):
    """``@triton.jit`` or ``@triton.jit(do_not_specialize=..., debug=..., ...)``."""
    if fn is not None:
        return JITFunction(fn, **options)
    return lambda f: JITFunction(f, **options)


def _grid(grid, arguments) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(dict(arguments))
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"the grid has 1 to 3 dimensions, got {grid!r}")
    dims = tuple(int(unwrap(d)) for d in grid) + (1,) * (3 - len(grid))
    if min(dims) < 0:
        raise ValueError(f"grid dimensions must not be negative, got {dims}")
    return dims


def _gm_argument(name: str, value, memory: DeviceMemory, hosts: list) -> tensor:
    """A tensor argument as a pointer to its first element in GM. A strided view brings the
    bytes from its first to its last element (its strides address them)."""
    elem = dtypes.TORCH_NAMES.get(str(value.dtype).replace("torch.", ""))
    if elem is None:
        raise TypeError(f"argument {name!r}: tensors of {value.dtype} are not supported")
    span = value
    if not value.is_contiguous() and value.numel():
        import torch

        extent = 1 + sum((d - 1) * abs(s) for d, s in zip(value.shape, value.stride()))
        span = torch.as_strided(value, (extent,), (1,))
    host = HostArgument(name, span, memory)
    hosts.append(host)
    return tensor(dtypes.pointer_type(elem), (), known=np.asarray(0, dtype=np.int64),
                  gm=GmArg(host.buffer, elem, name))


def _argument(name: str, value, is_constexpr: bool, memory, hosts):
    if is_constexpr or value is None:
        return value
    if is_torch_tensor(value):
        return _gm_argument(name, value, memory, hosts)
    if isinstance(value, (bool, np.bool_)):
        return known(bool(value), dtypes.int1)
    if isinstance(value, (int, np.integer)):
        return known(int(value))
    if isinstance(value, (float, np.floating)):
        return known(float(value), dtypes.float32)
    return value  # strings, dtypes, functions: used as they are


def _programs(block: int, grid_total: int, folded: int):
    """The programs block ``block`` runs: its own, or its share of a folded grid."""
    if folded:
        return range(block, grid_total, folded)
    return (block,)


def launch(kernel: JITFunction, arguments: dict, grid) -> KernelReport | None:
    grid3 = _grid(grid, arguments)
    total = grid3[0] * grid3[1] * grid3[2]
    if total == 0:
        return None
    soc = SESSION.soc
    mixed = kernel.is_mix()
    folded = 0
    if all_blocks_parallel():  # onto the vector cores, or the AI Cores of a mix kernel
        folded = min(total, soc.aic_count if mixed else soc.aiv_count)
        block_num = folded
    elif total > MAX_GRID:
        raise RuntimeError(f"coreDim={total} can't be greater than UINT16_MAX (the grid of "
                           f"{kernel.fn.__name__} is {grid3}): make the blocks larger or set "
                           f"{ALL_BLOCKS_PARALLEL}=1")
    else:
        block_num = total
    memory = DeviceMemory()
    hosts: list[HostArgument] = []
    values = {name: _argument(name, value, name in kernel.constexprs, memory, hosts)
              for name, value in arguments.items()}
    gm_args = [v.gm for v in values.values() if isinstance(v, tensor) and v.gm is not None]
    options = SESSION.launch_options()
    config = LaunchConfig(kernel=kernel.fn.__name__, soc=soc, block_num=block_num,
                          kind="MIX" if mixed else "AIV_ONLY")
    run = Launch(config, memory, options)
    fn = kernel.body()

    def per_core(core):
        if mixed and (core.kind != "AIV" or core.sub_block_idx):
            # A mix block's program runs on its first AIV, which issues the cube's work to
            # the AIC (ascsim.triton.mix); the second AIV is not used (docs/triton.md).
            return
        prog = _program.start(core, grid3)
        try:
            for pid in _programs(core.group if mixed else core.block_idx, total, folded):
                prog.set_program(pid)
                fn(**values)
        finally:
            prog.close()
            if mixed:
                mix.close(core)
        if not options.keep:
            # Every record of this block has run (the executors compute values as they are
            # issued): its UB bytes go back to the pool now, not when the launch ends, so a
            # grid of thousands of blocks holds one block's UB per core at a time.
            core.release_memories()
            for observer in core.launch.observers:
                forget = getattr(observer, "forget_core", None)
                if forget is not None:
                    forget(core.core_id)

    def reset():
        for gm in gm_args:
            gm.access_by_core.clear()

    with fewer_collections():
        try:
            report = run.run(per_core, reset)
        except BaseException:
            SESSION.record(run.partial_report(), run)
            raise
        if run.values:
            for host in hosts:
                host.copy_back()
        SESSION.record(report, run)
        if not options.keep:
            memory.release()
            run.release()
    return report
