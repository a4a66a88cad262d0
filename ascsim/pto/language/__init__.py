"""``pypto_pro.language`` (imported as ``pl``): PyPTO Pro's kernel language on the simulator.

Served under ``ascsim run`` as ``pypto_pro.language``. Tile operations come from
:mod:`ascsim.pto.ops` (each wrapped for ``auto_mutex``); any backend op name PyPTO Pro's
parser accepts (``pl.row_max`` ...) resolves through :data:`HIDDEN`.
"""

from __future__ import annotations

import builtins
import types

from ascsim.pto import dtypes as _dtypes
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
from ascsim.pto.ops import cube, debug, movement, scalar, sync, vector
from ascsim.pto.ops import system as _system
from ascsim.pto.ops.sync import with_auto_mutex
from ascsim.pto.register_functions import Vf, simt, vector_function
from ascsim.pto.tensor import addptr, make_ptr, make_tensor, set_stride
from ascsim.pto.tile import TileGroup, TileType, make_tile, make_tile_group, set_validshape
from ascsim.pto.typing import DYNAMIC, STATIC, Ptr, Scalar, Tensor, Tile

# ------------------------------------------------------------------ data types and layouts
for _name, _type in _dtypes.TYPES.items():
    globals()[f"DT_{_name}"] = _type
ND, DN, NZ, ZN, NN, ZZ = (TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ, TensorLayout.ZN,
                          TensorLayout.NN, TensorLayout.ZZ)


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
class _Struct(types.SimpleNamespace):
    """``pl.struct(name, field=value, ...)``: named fields, assignable."""

    def __init__(self, __name="struct", **fields):
        super().__init__(**fields)
        object.__setattr__(self, "_struct_name", __name)


def struct(name="struct", **fields):
    return _Struct(name, **fields)


def struct_array(n, *args, **fields):
    return [_Struct("struct", **fields) for _ in builtins.range(int(n))]


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
for _module in (movement, vector, scalar, cube):
    TILE_OPS.update(_module.OPS)
TILE_OPS = {name: with_auto_mutex(name, fn) for name, fn in TILE_OPS.items()}
globals().update(TILE_OPS)
globals().update(debug.OPS)

#: Backend op names that are not in ``pl.__all__`` but that PyPTO Pro's parser accepts.
HIDDEN: dict = {}
HIDDEN.update({name: with_auto_mutex(name, fn) for name, fn in cube.HIDDEN.items()})

system = types.SimpleNamespace(
    sync_src=sync.sync_src, sync_dst=sync.sync_dst, mutex_lock=sync.mutex_lock,
    mutex_unlock=sync.mutex_unlock, set_cross_core=sync.set_cross_core,
    wait_cross_core=sync.wait_cross_core, sync_all=sync.sync_all,
    dcci=sync.issue_only("dcci"), set_mm_layout_transform=sync.set_mm_layout_transform,
    **sync.BARRIERS)
mutex = types.SimpleNamespace(mutex_lock=sync.mutex_lock, mutex_unlock=sync.mutex_unlock)


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
