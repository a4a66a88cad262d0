"""``pypto_pro.language`` (imported as ``pl``): PyPTO Pro's kernel language on the simulator.

Served under ``ascsim run`` as ``pypto_pro.language``. Tile operations come from
:mod:`ascsim.pto.ops` (each wrapped for ``auto_mutex``); any backend op name PyPTO Pro's
parser accepts (``pl.row_max`` ...) resolves through :data:`HIDDEN`.
"""

from __future__ import annotations

import builtins
import types

from ascsim.pto import dtypes as _dtypes
from ascsim.pto import pipeline as _pipeline
from ascsim.pto.dtypes import DataType
from ascsim.pto.enums import (
    AccPhase,
    AccToVecMode,
    AtomicType,
    CacheLine,
    CmpMode,
    CompactMode,
    CrossCoreSyncMode,
    DcciDst,
    FillPadMode,
    MemorySpace,
    PipeType,
    QuantMode,
    ReluPreMode,
    RoundMode,
    STPhase,
    SyncAllMode,
    SyncCoreType,
    TensorLayout,
    TilePad,
)
from ascsim.pto.errors import UnsupportedFeatureError
from ascsim.pto.jit import jit
from ascsim.pto.ops import (
    compare,
    cube,
    debug,
    movement,
    rearrange,
    reduce,
    scalar,
    sort,
    sync,
    vector,
)
from ascsim.pto.ops import system as _system
from ascsim.pto.ops.sync import with_auto_mutex
from ascsim.pto.simt import simt
from ascsim.pto.tensor import addptr, make_ptr, make_tensor, set_stride
from ascsim.pto.tile import TileGroup, TileType, make_tile, make_tile_group, set_validshape
from ascsim.pto.typing import DYNAMIC, STATIC, Ptr, Scalar, Tensor, Tile
from ascsim.pto.vf import ENUMS as _VF_ENUMS
from ascsim.pto.vf import Vf, vector_function

# ------------------------------------------------------------------ data types and layouts
for _name, _type in _dtypes.TYPES.items():
    globals()[f"DT_{_name}"] = _type
ND, DN, NZ, ZN, NN, ZZ = (TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ, TensorLayout.ZN,
                          TensorLayout.NN, TensorLayout.ZZ)


globals().update(_VF_ENUMS)


# ------------------------------------------------------------------ control flow
def range(*args):  # noqa: A001 - PyPTO Pro's name
    """``pl.range(stop)`` / ``(start, stop[, step])``: the only loop iterator of a kernel."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"pl.range takes 1 to 3 arguments, got {len(args)}")
    ints = [int(a) for a in args]
    if len(ints) == 3 and ints[2] == 0:
        raise ValueError("pl.range step must not be zero")
    return builtins.range(*ints)


class _Section:
    def __init__(self, kind: str):
        self.kind = kind

    def __enter__(self):
        raise UnsupportedFeatureError(f"pl.section_{self.kind}() is only meaningful inside a "
                                      "@pl.jit kernel")

    def __exit__(self, *exc):
        return False


def section_cube() -> _Section:
    return _Section("cube")


def section_vector() -> _Section:
    return _Section("vector")


def constexpr(value):
    """``pl.constexpr(c)``: a compile-time condition (the value itself here)."""
    return value


def inline(fn):
    """``@pl.inline`` (deprecated in PyPTO Pro: plain helpers are inlined anyway)."""
    return fn


# ------------------------------------------------------------------ aggregates
def _by_value(value):
    """A struct field's own copy of ``value``: C structs hold arrays by value, so two structs
    built from one Python list do not share it."""
    if isinstance(value, (list, tuple)):
        return [_by_value(v) for v in value]
    return value


class _Struct(types.SimpleNamespace):
    """``pl.struct(name, field=value, ...)``: named fields, assignable; list fields are arrays
    the struct holds by value."""

    def __init__(self, struct_name="struct", /, **fields):
        super().__init__(**{k: _by_value(v) for k, v in fields.items()})
        object.__setattr__(self, "_struct_name", struct_name)


def struct(name="struct", /, **fields):
    """``pl.struct("Name", field=value, ...)``."""
    return _Struct(name, **fields)


def struct_array(n, name="struct", /, **fields):
    """``pl.struct_array(N, "Name", field=value, ...)``: ``N`` structs, each with its own copy
    of the initial values."""
    return [_Struct(name, **fields) for _ in builtins.range(int(n))]


def make_tuple(**fields):
    return types.SimpleNamespace(**fields)


# ------------------------------------------------------------------ operations
get_block_idx = _system.get_block_idx
get_block_num = _system.get_block_num
get_subblock_idx = _system.get_subblock_idx
get_subblock_num = _system.get_subblock_num
min = scalar.scalar_min  # noqa: A001
max = scalar.scalar_max  # noqa: A001
const = scalar.const

#: Every tile operation by its ``pl`` name, wrapped for auto_mutex.
TILE_OPS: dict = {}
_MODULES = (movement, vector, scalar, reduce, compare, rearrange, sort, cube, _system)
for _module in _MODULES:
    TILE_OPS.update(_module.OPS)
TILE_OPS = {name: with_auto_mutex(name, fn) for name, fn in TILE_OPS.items()}
globals().update(TILE_OPS)
globals().update({name: with_auto_mutex(name, fn) for name, fn in debug.OPS.items()})

#: Backend op names that are not in ``pl.__all__`` but that PyPTO Pro's parser accepts.
HIDDEN: dict = {name: with_auto_mutex(name, fn) for _module in _MODULES
                for name, fn in getattr(_module, "HIDDEN", {}).items()}

system = types.SimpleNamespace(
    sync_src=sync.sync_src, sync_dst=sync.sync_dst, mutex_lock=sync.mutex_lock,
    mutex_unlock=sync.mutex_unlock, set_cross_core=sync.set_cross_core,
    wait_cross_core=sync.wait_cross_core, sync_all=sync.sync_all,
    dcci=sync.issue_only("dcci"), set_mm_layout_transform=sync.set_mm_layout_transform,
    **sync.BARRIERS)
mutex = types.SimpleNamespace(mutex_lock=sync.mutex_lock, mutex_unlock=sync.mutex_unlock)
pipeline = types.SimpleNamespace(stage=_pipeline.stage, PipelineConfig=_pipeline.PipelineConfig)


def __getattr__(name: str):
    fn = HIDDEN.get(name)
    if fn is None:
        raise AttributeError(f"module 'pypto_pro.language' has no attribute {name!r}")
    return fn


__all__ = sorted(n for n in globals() if not n.startswith("_") and n not in (
    "annotations", "types", "builtins"))
_ = (AccPhase, AccToVecMode, AtomicType, CacheLine, CmpMode, CompactMode, CrossCoreSyncMode,
     DataType, DcciDst, FillPadMode, MemorySpace, PipeType, QuantMode, ReluPreMode, RoundMode,
     STPhase, SyncAllMode, SyncCoreType, TilePad, TileGroup, TileType, make_tile,
     make_tile_group, set_validshape, DYNAMIC, STATIC, Ptr, Scalar, Tensor, Tile, addptr,
     make_ptr, make_tensor, set_stride, jit, Vf, simt, vector_function)
