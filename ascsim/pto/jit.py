"""``@pl.jit``: PyPTO Pro kernels and their launch, ``kernel[stream, block_dim](...)``.

A launch binds and checks the arguments as PyPTO Pro does (tensor dtypes, ranks and fixed
dimensions; scalar kinds; the tiling key and datatype dictionaries), places the tensors in GM,
and runs the kernel's rewritten body (:mod:`ascsim.pto.parse`) on every core of the launch: the
AIV of each block for a vector-only kernel, the AIC for a cube-only one, one AIC and two AIVs per
block for a kernel with both sections (MIX). Errors PyPTO Pro reports when it compiles a kernel
surface here as its ``ParserSyntaxError``, at the same launch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from dataclasses import replace

import numpy as np

from ascsim import npu
from ascsim.pto import parse, pipeline, static_checks, tiling_data
from ascsim.pto.dtypes import TORCH_NAMES, DataType
from ascsim.pto.errors import ParserError, ParserSyntaxError
from ascsim.pto.hints import PTO_HINTS
from ascsim.pto.ops.sync import AUTO_MUTEX
from ascsim.pto.platform import require_pto_soc
from ascsim.pto.tensor import GmPointer, GmTensor, contiguous_strides
from ascsim.pto.typing import PtrSpec, TensorSpec
from ascsim.session import SESSION
from ascsim.sim.host import HostArgument, describe, is_torch_tensor
from ascsim.sim.launch import Launch, LaunchConfig, fewer_collections
from ascsim.sim.memory import DeviceMemory
from ascsim.sim.report import KernelReport
from ascsim.sim.scheduler import current_core, in_kernel

JIT_OPTIONS = ("target", "arch", "auto_mutex", "name", "pipeline", "tiling_key", "datatype",
               "compile_timeout")
ARCHES = (None, "auto", "a2", "a3", "a5")


def _section(kind: str) -> bool:
    return current_core().kind == ("AIC" if kind == "cube" else "AIV")


def _tick() -> None:
    current_core().loop_iteration()


def _scalar(annotation, value):
    """``x: <annotation> = value``: with a pl.DT_* annotation, ``value`` as a variable of that
    type holds it (integers wrap, FP32 rounds); other annotations leave it as it is."""
    if not isinstance(annotation, DataType) or isinstance(value, (GmTensor,)):
        return value
    if annotation.kind == "bool":
        return bool(value)
    if annotation.kind == "float":
        return float(np.asarray(value, dtype=np.float64).astype(annotation.np_dtype))
    if isinstance(value, float):
        value = int(value)  # C conversion: toward zero
    return int(np.asarray(int(value)).astype(annotation.np_dtype))


#: Text that marks a string annotation (``from __future__ import annotations``) as a PyPTO
#: parameter form, which must evaluate.
SPEC_MARKS = ("Tensor[", "Ptr[", "DT_")


def _annotation(fn, value):
    """A parameter's annotation as a value. A string (``from __future__ import annotations``)
    is evaluated in the function's globals and the variables it closes over."""
    if not isinstance(value, str):
        return value
    scope = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        with contextlib.suppress(ValueError):  # a cell not yet assigned
            scope[name] = cell.cell_contents
    try:
        return eval(value, scope)  # noqa: S307 - the user's own annotation
    except Exception as exc:  # noqa: BLE001 - reported below if it matters
        if any(mark in value for mark in SPEC_MARKS):
            code = fn.__code__
            raise TypeError(
                f"{code.co_filename}:{code.co_firstlineno}: @pl.jit {fn.__qualname__}: cannot "
                f"evaluate the annotation {value!r} ({type(exc).__name__}: {exc}). With "
                "`from __future__ import annotations` an annotation is text, evaluated later "
                "in the module's globals and the names the function body uses; a name of an "
                "enclosing function that only the annotation uses is gone by then: use it in "
                "the body, move it to module level, or drop the __future__ import") from None
        return None  # an annotation PyPTO Pro does not use


def _is_param_spec(value) -> bool:
    return isinstance(value, (TensorSpec, PtrSpec, DataType))


class Inliner:
    """``__pto_call__`` of one launch: a plain helper called by bare name runs rewritten
    (sections, loops), with the launch's bound names; anything else is called as it is."""

    _compiled: dict = {}  # helper function -> its rewritten factory (per bound-name set)

    def __init__(self, helpers: dict, bound: dict):
        self.helpers = helpers
        self.bound = bound
        self.instances: dict = {}

    def __call__(self, target):
        if not parse.is_inlinable(target):
            bind = getattr(target, "pto_bind", None)  # a vector function takes the names too
            return target if bind is None else bind(self.bound)
        inst = self.instances.get(target)
        if inst is None:
            names = (*self.helpers, *self.bound)
            factory = self._compiled.get((target, names))
            if factory is None:
                factory = self._compiled[(target, names)] = parse.rewrite(
                    target, names, is_kernel=False)
            inst = self.instances[target] = factory(**self.helpers, **self.bound)
        return inst


class PtoKernel:
    """A function decorated with ``@pl.jit``."""

    def __init__(self, fn, options: dict):
        unknown = sorted(set(options) - set(JIT_OPTIONS))
        if unknown:
            raise TypeError(f"jit() got unexpected keyword argument(s) {unknown}")
        arch = options.get("arch")
        if arch not in ARCHES:
            raise ValueError(f"Unsupported arch: {arch!r}, expected one of 'a2', 'a3', 'a5'")
        self.fn = fn
        self.name = options.get("name") or fn.__name__
        self.auto_mutex = bool(options.get("auto_mutex", True))
        self.tiling_key = options.get("tiling_key")
        self.datatype = dict(options.get("datatype") or {})
        self.pipeline = options.get("pipeline")
        self.signature = inspect.signature(fn)
        self.specs = {name: _annotation(fn, p.annotation)
                      for name, p in self.signature.parameters.items()}
        self.key_fields = _key_fields(self.tiling_key, self.signature, fn)
        self._factories: dict = {}
        self._kind: str | None = None
        self._checked = False  # static_checks passed (once, at the first launch)
        # PyPTO Pro's compile caches, under its names (its tests count the variants): one
        # kernel definition per static-shape signature, one compiled variant per (static
        # signature, datatypes, tiling key). Here a variant is the rewritten body.
        self._kernel_def_by_static_signature: dict = {}
        self._compiled_by_signature: dict = {}
        functools.update_wrapper(self, fn)

    # ------------------------------------------------------------------ launching
    def __getitem__(self, key) -> _Launch:
        items = key if isinstance(key, tuple) else (key,)
        if len(items) == 1:
            stream, block_dim, rest = None, items[0], ()
        else:
            stream, block_dim, *rest = items
        if isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer)) \
                or block_dim <= 0:
            raise ValueError(f"block_dim must be a positive int, got {block_dim!r}")
        tiling, dtypes = None, None
        for extra in rest:
            if not isinstance(extra, dict):
                raise ValueError(f"launch options must be dicts, got {type(extra).__name__}")
            if extra and all(isinstance(v, DataType) for v in extra.values()) and \
                    set(extra) <= set(self.datatype):
                dtypes = extra
            else:
                tiling = extra
        return _Launch(self, int(block_dim), stream, tiling, dtypes)

    def __call__(self, *args, **kwargs):
        if in_kernel():
            raise RuntimeError(f"kernel {self.name!r} cannot be called from a kernel")
        if self.tiling_key is not None or self.datatype:
            raise ValueError(f"kernel {self.name!r} has a tiling key or datatype map: launch "
                             "it as kernel[stream, block_dim, {...}](...)")
        return _Launch(self, 1, None, None, None)(*args, **kwargs)

    def kind(self) -> str:
        if self._kind is None:
            sections = parse.sections_used(self.fn)
            self._kind = ("MIX" if sections == {"cube", "vector"} or not sections else
                          "AIC_ONLY" if sections == {"cube"} else "AIV_ONLY")
        return self._kind

    def body(self, helpers: dict, bound: dict):
        """The rewritten kernel with this launch's helpers and bound names."""
        names = (*helpers, *bound)
        factory = self._factories.get(names)
        if factory is None:
            post = (pipeline.transformer(self.fn, self.pipeline)
                    if self.pipeline is not None else None)
            factory = self._factories[names] = parse.rewrite(self.fn, names, post=post)
        return factory(**helpers, **bound)

    def __repr__(self) -> str:
        return f"<pl.jit kernel {self.name}>"


def _key_fields(tiling_key, signature, fn) -> dict:
    """The tiling key's fields (name -> TilingKeyField), checked at decoration."""
    if tiling_key is None:
        return {}
    from ascsim.pto.runtime.tilingkey import TilingKeyField

    fields = {name: value for name, value in vars(tiling_key).items()
              if isinstance(value, TilingKeyField)}
    if not fields:
        raise ValueError(f"tiling_key {tiling_key.__name__} has no TilingKeyField attributes")
    if sum(f.bits for f in fields.values()) > 64:
        raise ValueError("a tiling key holds at most 64 bits")
    for name in fields:
        if name in signature.parameters or name in fn.__globals__:
            raise ValueError(f"tiling key field {name!r} collides with a kernel parameter or "
                             "a module-level name")
    return fields


def _is_valid(tiling_key):
    """The tiling key class's ``is_valid(key_tuple)`` filter, bound as PyPTO Pro binds it (to
    an instance made without ``__init__``, so plain, class and static methods all work), or
    None."""
    check = getattr(tiling_key, "is_valid", None)
    if check is None:
        return None
    if not callable(check):
        raise ValueError(f"tiling_key class '{tiling_key.__name__}' has a non-callable "
                         "'is_valid' member")
    raw = inspect.getattr_static(tiling_key, "is_valid")
    if isinstance(raw, (classmethod, staticmethod)):
        return check
    return raw.__get__(object.__new__(tiling_key), tiling_key)


class _Launch:
    def __init__(self, kernel: PtoKernel, block_dim: int, stream, tiling, dtypes):
        self.kernel = kernel
        self.block_dim = block_dim
        self.stream = stream
        self.tiling = tiling
        self.dtypes = dtypes
        # Checked here, as PyPTO Pro checks the launch key when the kernel is subscripted.
        self.bound = self._bound_names()

    def _bound_names(self) -> dict:
        kernel = self.kernel
        bound: dict = {}
        if kernel.key_fields:
            if self.tiling is None:
                raise ValueError(f"kernel {kernel.name!r} needs a tiling key dict at launch")
            if set(self.tiling) != set(kernel.key_fields):
                raise ValueError(f"tiling key {sorted(self.tiling)} must name exactly the "
                                 f"fields {sorted(kernel.key_fields)}")
            for name, field in kernel.key_fields.items():
                value = self.tiling[name]
                if value not in field.values:
                    raise ValueError(f"tiling key field {name}={value!r} is not one of "
                                     f"{list(field.values)}")
                bound[name] = value
            key_tuple = tuple(self.tiling[n] for n in kernel.key_fields)
            check = _is_valid(kernel.tiling_key)
            if check is not None and not check(key_tuple):
                raise ValueError(f"tiling key {self.tiling} is not a valid combination")
        if kernel.datatype:
            if not self.dtypes:
                raise ValueError(f"kernel {kernel.name!r} needs a datatype dict at launch")
            for param, var in kernel.datatype.items():
                value = self.dtypes.get(param)
                if not isinstance(value, DataType):
                    raise ValueError(f"datatype of parameter {param!r} missing at launch")
                if var in bound and bound[var] != value:
                    raise ValueError(f"parameters mapped to {var!r} have different datatypes")
                bound[var] = value
        return bound

    def __call__(self, *args, **kwargs) -> KernelReport:
        kernel = self.kernel
        soc = require_pto_soc()
        pipeline.check_supported(kernel.pipeline, kernel.kind(), kernel.name)
        if not kernel._checked:  # PyPTO Pro's parse-time refusals, before any binding
            static_checks.check_kernel(kernel.fn, kernel.name, kernel.specs)
            kernel._checked = True
        try:
            call = kernel.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"kernel {kernel.name}: {exc}") from None
        call.apply_defaults()
        _check_tiling_last(kernel.name, call.arguments)
        bound = self.bound
        memory = DeviceMemory()
        hosts: list[HostArgument] = []
        values = {name: _convert(name, value, kernel.specs.get(name), bound, memory, hosts,
                                 kernel.datatype)
                  for name, value in call.arguments.items()}
        session = SESSION
        options = session.launch_options()
        config = LaunchConfig(kernel=kernel.name, soc=soc, block_num=self.block_dim,
                              kind=kernel.kind(),
                              arguments=tuple((name, describe(value))
                                              for name, value in call.arguments.items()
                                              if is_torch_tensor(value)))
        launch = Launch(config, memory, replace(options, hints=PTO_HINTS))
        launch.shared[AUTO_MUTEX] = kernel.auto_mutex
        helpers = {parse.SECTION: _section, parse.TICK: _tick, parse.SCALAR: _scalar,
                   pipeline.NEW_RUNTIME: pipeline.new_runtime}
        inliner = Inliner(dict(helpers), bound)
        helpers[parse.CALL] = inliner.helpers[parse.CALL] = inliner
        body = kernel.body(helpers, bound)
        static = _static_signature(kernel.specs, call.arguments)
        kernel._kernel_def_by_static_signature.setdefault(static, kernel.fn)
        variant = (static, tuple(sorted((k, repr(v)) for k, v in bound.items())))
        kernel._compiled_by_signature.setdefault(variant, body)

        def per_core(core):
            body(**values)

        with fewer_collections():
            try:
                report = launch.run(per_core)
            except ParserError:
                session.record(launch.partial_report(), launch)
                raise
            except (ValueError, TypeError) as exc:
                session.record(launch.partial_report(), launch)
                raise ParserSyntaxError(f"Failed to parse kernel function '{kernel.name}': "
                                        f"{type(exc).__name__}: {exc}") from exc
            except BaseException:
                session.record(launch.partial_report(), launch)
                raise
            if launch.values:
                for host in hosts:
                    host.copy_back()
            session.record(report, launch)
            if not options.keep:
                memory.release()
                launch.release()
        return report


class NzHostArgument:
    """A tensor ``torch_npu.npu_format_cast`` stored as FRACTAL_NZ: the kernel sees its bytes
    in the fractal order the device keeps them in, the host its logical values."""

    def __init__(self, name: str, value, memory: DeviceMemory):
        self.value = value
        self.storage = npu.nz_storage(value.detach().numpy())
        self.host = HostArgument(name, self.storage, memory)
        self.buffer = self.host.buffer

    def copy_back(self) -> None:
        if not self.buffer.touched:
            return
        self.host.copy_back()
        import torch

        self.value.copy_(torch.from_numpy(npu.nz_logical(self.storage, tuple(self.value.shape))))


def _convert(name, value, spec, bound, memory, hosts, datatype_map):
    """A launch argument as the kernel sees it, checked against its annotation."""
    if isinstance(spec, TensorSpec) or isinstance(spec, PtrSpec):
        if value is None:
            return None
        if not is_torch_tensor(value):
            raise TypeError(f"argument {name!r} must be a torch.Tensor, got "
                            f"{type(value).__name__}")
        dtype = spec.dtype
        if datatype_map.get(name) is not None:
            dtype = bound[datatype_map[name]]
        if isinstance(dtype, str):
            dtype = bound.get(dtype, dtype)
        expected = TORCH_NAMES.get(getattr(dtype, "name", ""))
        actual = str(value.dtype).replace("torch.", "")
        if expected is not None and actual != expected and isinstance(spec, TensorSpec):
            # (a pl.Ptr is a raw address: PyPTO Pro checks no element type for it)
            raise TypeError(f"argument {name!r}: expected dtype torch.{expected} for "
                            f"{dtype!r}, got torch.{actual}")
        shape = tuple(value.shape)
        if isinstance(spec, TensorSpec):
            _check_dims(name, spec.dims, shape)
        host = (NzHostArgument(name, value, memory)
                if npu.get_npu_format(value) == npu.FORMAT_FRACTAL_NZ
                else HostArgument(name, value, memory))
        hosts.append(host)
        if isinstance(spec, PtrSpec):
            return GmPointer(host.buffer, 0, dtype)
        layout = spec.layout
        return GmTensor(host.buffer, 0, shape, contiguous_strides(shape), dtype, layout, name)
    if isinstance(spec, DataType):
        if spec.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (float, np.floating)):
                raise TypeError(f"argument {name!r} is {spec!r}: pass a float, got "
                                f"{type(value).__name__}")
            return float(np.float32(value)) if spec.name == "FP32" else float(value)
        if spec.kind == "bool":
            return bool(value)
        if isinstance(value, float):
            raise TypeError(f"argument {name!r} is {spec!r}: pass an int, got float")
        return int(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return tiling_data.device_copy(value)
    return value


def _check_tiling_last(kernel: str, arguments: dict) -> None:
    """A TilingData instance may only be the last argument (it is serialised after the
    others)."""
    values = list(arguments.values())
    for value in values[:-1]:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            raise TypeError(f"kernel {kernel}: a TilingData argument "
                            f"({type(value).__name__}) must be the last parameter")


def _static_signature(specs: dict, arguments: dict) -> tuple:
    """The launch's shape signature as PyPTO Pro keys its compile cache: every dimension that
    is not DYNAMIC (fixed, STATIC, or the STATIC tail an ``...`` stands for) of every tensor
    argument, with its rank."""
    from ascsim.pto.typing import DYNAMIC

    signature = []
    for name, spec in specs.items():
        value = arguments.get(name)
        if not isinstance(spec, TensorSpec) or value is None or not hasattr(value, "shape"):
            continue
        dims = spec.dims[:-1] if spec.dims and spec.dims[-1] is Ellipsis else spec.dims
        shape = tuple(value.shape)
        kept = tuple(None if i < len(dims) and dims[i] is DYNAMIC else d
                     for i, d in enumerate(shape))
        signature.append((name, kept))
    return tuple(signature)


def _check_dims(name: str, dims: tuple, shape: tuple) -> None:
    from ascsim.pto.typing import DYNAMIC, STATIC

    if dims and dims[-1] is Ellipsis:
        fixed = dims[:-1]
        if len(shape) < len(fixed):
            raise TypeError(f"argument {name!r}: rank {len(shape)} is below {len(fixed)}")
    else:
        fixed = dims
        if len(shape) != len(dims):
            raise TypeError(f"argument {name!r}: expected rank {len(dims)}, got {len(shape)}")
    for axis, (want, got) in enumerate(zip(fixed, shape)):
        if want is DYNAMIC or want is STATIC:
            continue
        if isinstance(want, int) and want != got:
            raise TypeError(f"argument {name!r}: dimension {axis} must be {want}, got {got}")


def jit(fn=None, /, **options):
    """``@pl.jit`` or ``@pl.jit(option=value, ...)``."""
    def decorate(f):
        specs = [_annotation(f, p.annotation) for p in inspect.signature(f).parameters.values()]
        if not any(_is_param_spec(s) for s in specs):
            return f  # not a tile kernel: PyPTO Pro passes it through
        return PtoKernel(f, options)

    if fn is not None:
        if options or not callable(fn):
            raise TypeError("use @pl.jit or @pl.jit(option=value, ...)")
        return decorate(fn)
    unknown = sorted(set(options) - set(JIT_OPTIONS))
    if unknown:
        raise TypeError(f"jit() got unexpected keyword argument(s) {unknown}")
    return decorate


__all__ = ["PtoKernel", "jit"]
