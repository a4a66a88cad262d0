"""``triton.language.extra.cann.extension``: triton-ascend's Ascend-specific operations, on the
vector-only path.

What a vector-only (AIV) kernel can do runs: the slices and ``get_element``
(:mod:`ascsim.triton.reorder`), ``sort``, ``flip``, ``cast`` with an overflow mode, the
compiler hints (``compile_hint``, ``multibuffer``, ``parallel`` -- they change no result here,
as they change none on the device), ``scope(core_mode="vector")``, ``debug_barrier``, and the
libdevice functions the module re-exports. ``sync_block_set`` / ``sync_block_wait`` run in a
kernel with ``tl.dot`` (a MIX launch, :mod:`ascsim.triton.mix`) and are refused in a vector-only
one. What else needs the cube side or a mix-mode kernel (``sync_block_all``,
``sub_vec_id`` / ``sub_vec_num``, ``scope(core_mode="cube")``, ``fixpipe``,
``copy`` between UB and L1), the GM gathers and scatters by indices held in UB
(``index_select_simd``, ``gather_out_to_ub``, ``scatter_ub_to_out``, ``index_put``), custom
ops and the MLIR affine bindings exist under their names and refuse at the kernel's line with
the reason.
"""

from __future__ import annotations

import builtins
import enum

import numpy as np

from ascsim.sim.source import user_location
from ascsim.triton import dtypes, libdevice, reorder, semantic
from ascsim.triton import language as _tl
from ascsim.triton import mix as _mix
from ascsim.triton.errors import CompilationError

int64 = dtypes.int64


def _refuse(what: str, why: str):
    loc = user_location()
    raise CompilationError(f"{loc[0]}:{loc[1]}: extension.{what} is not supported by ascsim: "
                           f"{why}")


def _refusing(name: str, why: str):
    def op(*args, **kwargs):
        _refuse(name, why)
    op.__name__ = name
    op.__doc__ = f"``extension.{name}``: refused ({why})"
    return op


MIX_MODE = ("it needs a kernel with tl.dot (mix mode: the cube core and its two vector "
            "cores), which this front-end runs as a vector-only kernel")
GM_INDEXED = ("a GM gather or scatter through indices held in UB is not modelled yet "
              "(index with tl.arange / program_id arithmetic, or tl.gather on loaded blocks)")

# ---------------------------------------------------------------------- enums
class CORE(enum.Enum):
    VECTOR = "vector"
    CUBE = "cube"
    CUBE_OR_VECTOR = "cube_or_vector"
    CUBE_AND_VECTOR = "cube_and_vector"


class PIPE(enum.Enum):
    PIPE_S = "S"
    PIPE_V = "V"
    PIPE_M = "M"
    PIPE_MTE1 = "MTE1"
    PIPE_MTE2 = "MTE2"
    PIPE_MTE3 = "MTE3"
    PIPE_ALL = "ALL"
    PIPE_FIX = "FIX"


class MODE(enum.Enum):
    SIMD = "simd"
    SIMT = "simt"
    MIX = "mix"


class IteratorType(enum.Enum):
    Parallel = "parallel"
    Broadcast = "broadcast"
    Transpose = "transpose"
    Reduction = "reduction"
    Interleave = "interleave"
    Deinterleave = "deinterleave"
    Inverse = "inverse"
    Pad = "pad"
    Concat = "concat"
    Gather = "gather"
    Cumulative = "cumulative"
    Opaque = "opaque"


class FixpipeDMAMode(enum.Enum):
    NZ2DN = "nz2dn"
    NZ2ND = "nz2nd"
    NZ2NZ = "nz2nz"


class FixpipeDualDstMode(enum.Enum):
    NO_DUAL = "no_dual"
    COLUMN_SPLIT = "column_split"
    ROW_SPLIT = "row_split"


class FixpipePreQuantMode(enum.Enum):
    NO_QUANT = "no_quant"
    F322BF16 = "f322bf16"
    F322F16 = "f322f16"
    S322I8 = "s322i8"


class FixpipePreReluMode(enum.Enum):
    LEAKY_RELU = "leaky_relu"
    NO_RELU = "no_relu"
    NORMAL_RELU = "normal_relu"
    P_RELU = "p_relu"


class SYNC_IN_VF(enum.Enum):  # noqa: N801 - triton-ascend's name
    VV_ALL = 1
    VST_VLD = 2
    VLD_VST = 3
    VST_VST = 4
    VS_ALL = 5
    VST_LD = 6
    VLD_ST = 7
    VST_ST = 8
    SV_ALL = 9
    ST_VLD = 10
    LD_VST = 11
    ST_VST = 12


class _AddressSpace:
    """``ascend_address_space.UB`` ...: the buffers of the AI core, by name."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"ascend_address_space.{self.name}"


class _AddressSpaces:
    def __init__(self):
        for name in ("GM", "UB", "L1", "L0A", "L0B", "L0C"):
            setattr(self, name, _AddressSpace(name))


ascend_address_space = _AddressSpaces()


def builtin(fn):
    """Marks a function as one of the language's own (nothing to do here)."""
    fn.__triton_builtin__ = True
    return fn


def is_builtin(fn) -> bool:
    return getattr(fn, "__triton_builtin__", False)


# ---------------------------------------------------------------------- vector operations
extract_slice = reorder.extract_slice
insert_slice = reorder.insert_slice
get_element = reorder.get_element
flip = reorder.flip


def sort(ptr, dim=-1, descending=False):
    """``extension.sort``: along the last dimension only."""
    return reorder.sort(ptr, dim, descending)


#: overflow mode -> what a narrowing conversion does with values out of the target's range
OVERFLOW_MODES = ("trunc", "saturate")


def cast(input, dtype, fp_downcast_rounding=None, overflow_mode=None):
    """``extension.cast``: a cast whose out-of-range values wrap (``"trunc"``, the default)
    or clamp to the target type's range (``"saturate"``: a max and a min before the
    conversion, as the vector unit's saturating conversion gives)."""
    loc = user_location()
    x = semantic.operand(input)
    dst = semantic.unwrap(dtype)
    mode = semantic.unwrap(overflow_mode)
    if mode is not None and mode not in OVERFLOW_MODES:
        raise ValueError(f"overflow_mode must be one of {OVERFLOW_MODES}, got {mode!r}")
    if mode == "saturate" and dst.is_int() and dst.kind != "bool" and x.dtype != dst:
        info = np.iinfo(dst.np_dtype)
        lo, hi = info.min, info.max
        if x.dtype.is_floating():
            x = _tl.clamp(x, float(lo), float(hi))
        elif x.dtype.bits > dst.bits or (x.dtype.kind != dst.kind):
            src_info = np.iinfo(x.dtype.np_dtype)
            lo, hi = builtins.max(lo, src_info.min), builtins.min(hi, src_info.max)
            x = _tl.clamp(x, x.dtype.np_dtype.type(lo).item(), x.dtype.np_dtype.type(hi).item())
    return semantic.cast(x, dst, fp_downcast_rounding, loc=loc)


# ---------------------------------------------------------------------- hints and loops
def compile_hint(ptr, hint_name, hint_val=None):
    """A hint to BiShengIR on a value (changes no result)."""
    return None


def multibuffer(src, size):
    """Ask the compiler for ``size`` buffers of ``src`` (the UB planner here already gives a
    loop's next block its own bytes while this one is in use)."""
    return None


class parallel(_tl.range):  # noqa: N801 - triton-ascend's name
    """``extension.parallel(start, end, step, bind_sub_block=False)``: a loop whose
    iterations are independent. ``bind_sub_block=True`` spreads them over the two vector
    cores of a mix-mode kernel; a vector-only kernel runs them in order on its core."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 bind_sub_block: bool = False):
        super().__init__(arg1, arg2, step, num_stages, loop_unroll_factor)
        self.bind_sub_block = bool(semantic.unwrap(bind_sub_block))


class scope:  # noqa: N801 - triton-ascend's name
    """``with extension.scope(core_mode="vector"):`` -- the code inside runs on the vector
    core, as every operation of a vector-only kernel does; ``"cube"`` needs mix mode."""

    def __init__(self, core_mode: str = "vector", **kwargs):
        self.core_mode = semantic.unwrap(core_mode)
        if self.core_mode not in ("vector", "cube"):
            raise ValueError(f"scope core_mode must be 'vector' or 'cube', got "
                             f"{self.core_mode!r}")
        if self.core_mode == "cube":
            _refuse("scope(core_mode='cube')", MIX_MODE)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def debug_barrier(sync_mode=None):
    """A barrier between the pipes of a vector function (VF): the order this front-end
    inserts already waits for every dependency."""
    return None


# ---------------------------------------------------------------------- mix mode and cube
def _in_mix_mode(name: str, mix_op):
    """An extension op that runs in a kernel with tl.dot (a MIX launch, :mod:`ascsim.triton.mix`)
    and is refused in a vector-only one."""
    def op(*args, **kwargs):
        from ascsim.triton import program

        if program.current().core.launch.kind != "MIX":
            _refuse(name, MIX_MODE)
        return mix_op(*args, loc=user_location(), **kwargs)
    op.__name__ = name
    op.__doc__ = f"``extension.{name}``: {mix_op.__doc__}"
    return op


sync_block_set = _in_mix_mode("sync_block_set", _mix.sync_block_set)
sync_block_wait = _in_mix_mode("sync_block_wait", _mix.sync_block_wait)
sync_block_all = _refusing("sync_block_all", MIX_MODE)
sub_vec_id = _refusing("sub_vec_id", MIX_MODE)
sub_vec_num = _refusing("sub_vec_num", MIX_MODE)
fixpipe = _refusing("fixpipe", "FixPipe moves the cube's results out of L0C; " + MIX_MODE)
copy = _refusing("copy", "copies between UB and L1 move data to the cube core; " + MIX_MODE)
copy_from_ub_to_l1 = _refusing("copy_from_ub_to_l1", MIX_MODE)

# ---------------------------------------------------------------------- GM by indices in UB
index_select_simd = _refusing("index_select_simd", GM_INDEXED)
gather_out_to_ub = _refusing("gather_out_to_ub", GM_INDEXED)
scatter_ub_to_out = _refusing("scatter_ub_to_out", GM_INDEXED)
index_put = _refusing("index_put", GM_INDEXED)

# ---------------------------------------------------------------------- custom ops, MLIR
_CUSTOM = "custom ops are BiShengIR operations with no definition ascsim could run"
custom = _refusing("custom", _CUSTOM)
custom_semantic = _refusing("custom_semantic", _CUSTOM)


def register_custom_op(op):
    """Registers a custom op class: any use of it is refused (see ``custom``)."""
    return op


class _Refused:
    def __init__(self, name: str, why: str):
        self._name, self._why = name, why

    def __call__(self, *args, **kwargs):
        _refuse(self._name, self._why)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        _refuse(f"{self._name}.{attr}", self._why)


_AFFINE = "MLIR affine maps describe BiShengIR's loop nests, which ascsim does not build"
affine_expr = AffineExpr = _Refused("affine_expr", _AFFINE)
affine_constant_expr = AffineConstantExpr = _Refused("affine_constant_expr", _AFFINE)
affine_dim_expr = AffineDimExpr = _Refused("affine_dim_expr", _AFFINE)
affine_symbol_expr = AffineSymbolExpr = _Refused("affine_symbol_expr", _AFFINE)
affine_binary_op_expr = AffineBinaryOpExpr = _Refused("affine_binary_op_expr", _AFFINE)
affine_map = AffineMap = _Refused("affine_map", _AFFINE)

# ---------------------------------------------------------------------- math
atan2 = libdevice.atan2
isfinited = libdevice.isfinited
finitef = libdevice.finitef

__all__ = [name for name in dir() if not name.startswith("_") and name not in (
    "annotations", "builtins", "enum", "np", "user_location", "dtypes", "libdevice",
    "reorder", "semantic", "CompilationError")]
