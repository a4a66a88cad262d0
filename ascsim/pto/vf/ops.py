"""The ``vf.*`` operations: PyPTO Pro's call forms mapped to register-op records.

Each call is one :class:`~ascsim.isa.RegisterOp` (its semantics are the machine's,
:mod:`ascsim.sim.exec_vf`): this module reads the arguments as PyPTO Pro's parser does
(positional overloads told apart by their types, enums where enums are expected, defaults),
works out the result's element type, and names the registers. ``_dst`` is the assignment's
target handle (:mod:`ascsim.pto.vf.function`); a call without one (an argument of another call)
writes a temporary register.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from ascsim.isa import KernelError, RegisterOp
from ascsim.isa.operands import Region
from ascsim.pto.dtypes import DataType
from ascsim.pto.errors import FinalRejectionError
from ascsim.pto.vf.enums import (
    BinType,
    CastLayout,
    DataCopyMode,
    DuplicatePos,
    HistType,
    IndexOrder,
    LoadDist,
    MaskPattern,
    MaskWidth,
    MemBarMode,
    MergeMode,
    PackPart,
    SqueezeMode,
    StoreDist,
    VFRoundMode,
)
from ascsim.pto.vf.function import scope_of
from ascsim.pto.vf.values import AddrReg, Declared, Mask, Reg, UbPointer, UnalignReg, pointer
from ascsim.sim.scheduler import current_core
from ascsim.sim.source import user_location
from ascsim.sim.vf_registers import REGISTER_BYTES, lanes, register_file

FP32 = np.dtype(np.float32)


def _np(dtype, op: str, loc) -> np.dtype:
    if isinstance(dtype, DataType):
        return np.dtype(dtype.np_dtype)
    if isinstance(dtype, np.dtype):
        return dtype
    raise FinalRejectionError(f"vf.{op}: dtype must be a pl.DT_* type, got {dtype!r}", loc)


def _enum(value, cls, default, op: str, what: str, loc):
    if value is None:
        return default
    if not isinstance(value, cls):
        raise FinalRejectionError(f"vf.{op}: {what} must be a pl.{cls.__name__}, got "
                                  f"{value!r}", loc)
    return value


def _merging(mode, op: str, loc) -> bool:
    return _enum(mode, MergeMode, MergeMode.ZEROING, op, "mode", loc) is MergeMode.MERGING


def _number(dst, core) -> int:
    if isinstance(dst, (Reg, Declared)):
        return dst.number
    return scope_of(core).temp()


def _reg(value, op: str, loc, role: str = "source") -> Reg:
    if isinstance(value, Reg) and not isinstance(value, Mask):
        return value
    raise KernelError(f"vf.{op}: the {role} must be a vector register, got "
                      f"{type(value).__name__}", loc)


def _mask(value, op: str, loc) -> int | None:
    if value is None:
        return None
    if isinstance(value, Mask):
        return value.number
    raise KernelError(f"vf.{op}: the mask must be a mask register, got "
                      f"{type(value).__name__}", loc)


def _dtype_of(*regs) -> np.dtype:
    for r in regs:
        if isinstance(r, Reg) and r.dtype is not None:
            return r.dtype
    return FP32


def _emit(core, op, dsts, srcs, loc, *, mask=None, dtype=None, scalars=(), attrs=None,
          region=None, merging=False, src_dtypes=None):
    core.execute(RegisterOp(op, dsts, srcs, loc, mask, dtype, scalars, attrs or {}, region,
                            merging, src_dtypes))


def _result(cls, number, dtype, dst, name_default=""):
    name = dst.name if isinstance(dst, (Reg, Declared)) else name_default
    return cls(number, dtype, name)


# ------------------------------------------------------------------ generic forms
def _binary_op(record_op: str, name: str):
    def op(src0, src1, mask, mode=None, _dst=None):
        loc = user_location()
        core = current_core()
        a, b = _reg(src0, name, loc), _reg(src1, name, loc)
        dtype = _dtype_of(a, b)
        number = _number(_dst, core)
        merging = _merging(mode, name, loc)
        srcs = (a.number, b.number)
        _emit(core, record_op, (number,), srcs, loc, mask=_mask(mask, name, loc), dtype=dtype,
              merging=merging, src_dtypes=(dtype, dtype))
        return _result(Reg, number, dtype, _dst)
    op.__name__ = name
    return op


def _unary_op(record_op: str, name: str):
    def op(src, mask, mode=None, precision=None, _dst=None):
        loc = user_location()
        core = current_core()
        a = _reg(src, name, loc)
        dtype = _dtype_of(a)
        number = _number(_dst, core)
        _emit(core, record_op, (number,), (a.number,), loc, mask=_mask(mask, name, loc),
              dtype=dtype, merging=_merging(mode, name, loc), src_dtypes=(dtype,))
        return _result(Reg, number, dtype, _dst)
    op.__name__ = name
    return op


def _scalar_op(record_op: str, name: str, negate: bool = False):
    def op(src, scalar, mask, mode=None, _dst=None):
        loc = user_location()
        core = current_core()
        a = _reg(src, name, loc)
        dtype = _dtype_of(a)
        number = _number(_dst, core)
        value = -scalar if negate else scalar
        _emit(core, record_op, (number,), (a.number,), loc, mask=_mask(mask, name, loc),
              dtype=dtype, scalars=(value,), merging=_merging(mode, name, loc),
              src_dtypes=(dtype,))
        return _result(Reg, number, dtype, _dst)
    op.__name__ = name
    return op


def _dst_reading_op(record_op: str, name: str, with_scalar: bool):
    """``dst = f(src..., dst)``: the destination is a source too."""
    def op(src0, src1, mask, mode=None, _dst=None):
        loc = user_location()
        core = current_core()
        a = _reg(src0, name, loc)
        dtype = _dtype_of(a)
        if not isinstance(_dst, (Reg, Declared)):
            raise KernelError(f"vf.{name} reads its destination: assign its result to the "
                              "register it updates (dst = vf.{name}(...))", loc)
        number = _dst.number
        if with_scalar:
            srcs, scalars = (a.number, number), (src1,)
        else:
            srcs, scalars = (a.number, _reg(src1, name, loc).number, number), ()
        _emit(core, record_op, (number,), srcs, loc, mask=_mask(mask, name, loc), dtype=dtype,
              scalars=scalars, merging=True, src_dtypes=(dtype,) * len(srcs))
        return _result(Reg, number, dtype, _dst)
    op.__name__ = name
    return op


def _bitwise_op(record_op: str, name: str):
    """Registers: the element-wise op; masks: the predicate logic."""
    vector = _binary_op(record_op, name)

    def op(src0, src1, mask, mode=None, _dst=None):
        if isinstance(src0, Mask):
            loc = user_location()
            core = current_core()
            number = _number(_dst, core)
            _emit(core, f"mask_{record_op}", (number,), (src0.number, src1.number,
                                                          _mask(mask, name, loc)), loc)
            return _result(Mask, number, src0.dtype, _dst)
        return vector(src0, src1, mask, mode, _dst=_dst)
    op.__name__ = name
    return op


# ------------------------------------------------------------------ masks
def _pattern_lanes(pattern: MaskPattern, n: int) -> np.ndarray:
    idx = np.arange(n)
    value = pattern.value
    if value == "all":
        return np.ones(n, bool)
    if value == "allf":
        return np.zeros(n, bool)
    if value == "h":
        return idx < n // 2
    if value == "q":
        return idx < n // 4
    if value == "m3":
        return idx % 3 == 0
    if value == "m4":
        return idx % 4 == 0
    return idx < value


#: (pattern or first-lanes count, lanes) -> the active lanes, one read-only array each: every
#: mask of one pattern hands the machine the same object, whose bits it then makes once.
_ACTIVE: dict = {}


def _active(key, n: int) -> np.ndarray:
    hit = _ACTIVE.get((key, n))
    if hit is None:
        hit = _pattern_lanes(key, n) if isinstance(key, MaskPattern) else np.arange(n) < key
        hit.setflags(write=False)
        _ACTIVE[(key, n)] = hit
    return hit


def create_mask(pattern=None, dtype=None, _dst=None):
    loc = user_location()
    core = current_core()
    pattern = _enum(pattern, MaskPattern, MaskPattern.ALL, "create_mask", "pattern", loc)
    dt = FP32 if dtype is None else _np(dtype, "create_mask", loc)
    number = _number(_dst, core)
    _emit(core, "create_mask", (number,), (), loc, dtype=dt,
          attrs={"active": _active(pattern, lanes(dt))})
    return _result(Mask, number, dt, _dst)


def update_mask(scalar, dtype=None, _dst=None):
    loc = user_location()
    core = current_core()
    dt = FP32 if dtype is None else _np(dtype, "update_mask", loc)
    number = _number(_dst, core)
    n = lanes(dt)
    _emit(core, "create_mask", (number,), (), loc, dtype=dt,
          attrs={"active": _active(min(max(int(scalar), 0), n), n)})
    return _result(Mask, number, dt, _dst)


def _compare_op(name: str):
    def op(a, b, mask, cmp_dtype=None, _dst=None):
        loc = user_location()
        core = current_core()
        a = _reg(a, name, loc)
        dtype = _dtype_of(a) if cmp_dtype is None else _np(cmp_dtype, name, loc)
        number = _number(_dst, core)
        if isinstance(b, Reg):
            srcs, scalars, dts = (a.number, b.number, _mask(mask, name, loc)), (), \
                (dtype, dtype, None)
        else:
            srcs, scalars, dts = (a.number, _mask(mask, name, loc)), (b,), (dtype, None)
        _emit(core, name, (number,), srcs, loc, dtype=dtype, scalars=scalars, src_dtypes=dts)
        return _result(Mask, number, dtype, _dst)
    op.__name__ = name
    return op


def not_(src, mask, mode=None, _dst=None):
    loc = user_location()
    core = current_core()
    number = _number(_dst, core)
    if isinstance(src, Mask):
        _emit(core, "mask_not", (number,), (src.number, _mask(mask, "not_", loc)), loc)
        return _result(Mask, number, src.dtype, _dst)
    a = _reg(src, "not_", loc)
    _emit(core, "not", (number,), (a.number,), loc, mask=_mask(mask, "not_", loc),
          dtype=_dtype_of(a), merging=_merging(mode, "not_", loc))
    return _result(Reg, number, _dtype_of(a), _dst)


def select(src_true, src_false, mask, mode=None, _dst=None):
    loc = user_location()
    core = current_core()
    number = _number(_dst, core)
    m = _mask(mask, "select", loc)
    if isinstance(src_true, Mask):
        _emit(core, "select", (number,), (src_true.number, src_false.number, m), loc)
        return _result(Mask, number, src_true.dtype, _dst)
    a, b = _reg(src_true, "select", loc), _reg(src_false, "select", loc)
    dtype = _dtype_of(a, b)
    _emit(core, "select", (number,), (a.number, b.number, m), loc, dtype=dtype,
          src_dtypes=(dtype, dtype, None))
    return _result(Reg, number, dtype, _dst)


def move(src, mask=None, mode=None, _dst=None):
    loc = user_location()
    core = current_core()
    number = _number(_dst, core)
    if isinstance(src, Mask):
        srcs = (src.number,) if mask is None else (src.number, _mask(mask, "move", loc))
        _emit(core, "mask_move", (number,), srcs, loc)
        return _result(Mask, number, src.dtype, _dst)
    a = _reg(src, "move", loc)
    dtype = _dtype_of(a)
    # Masked-off lanes keep the destination's value (MERGING, the only mode of vmov).
    _emit(core, "move", (number,), (a.number,), loc, mask=_mask(mask, "move", loc),
          dtype=dtype, merging=True, src_dtypes=(dtype,))
    return _result(Reg, number, dtype, _dst)


def get_mask_spr(width=MaskWidth.B32, _dst=None):
    loc = user_location()
    core = current_core()
    width = _enum(width, MaskWidth, MaskWidth.B32, "get_mask_spr", "width", loc)
    number = _number(_dst, core)
    _emit(core, "mask_spr", (number,), (), loc, attrs={"width": width.value})
    dtype = FP32 if width is MaskWidth.B32 else np.dtype(np.float16)
    return _result(Mask, number, dtype, _dst)


def mask_gen_with_reg_tensor(src, offset=None, _dst=None):
    loc = user_location()
    core = current_core()
    a = _reg(src, "mask_gen_with_reg_tensor", loc)
    number = _number(_dst, core)
    dtype = _dtype_of(a)
    _emit(core, "mask_from_register", (number,), (a.number,), loc, dtype=dtype,
          attrs={"offset": int(offset or 0)}, src_dtypes=(dtype,))
    return _result(Mask, number, dtype, _dst)


def clear_spr():
    loc = user_location()
    core = current_core()
    _emit(core, "clear_spr", (), (), loc)


def mem_bar(mode=None):
    loc = user_location()
    core = current_core()
    # Orders the VF's UB accesses; they run in program order on the V pipe here already.
    mode = _enum(mode, MemBarMode, MemBarMode.VST_VLD, "mem_bar", "mode", loc)
    _emit(core, "mem_bar", (), (), loc, attrs={"mode": mode.name})


# ------------------------------------------------------------------ memory
def _offset(value, ptr: UbPointer, loc) -> int:
    if value is None:
        return 0
    if isinstance(value, AddrReg):
        return value.offset
    if isinstance(value, (list, tuple)):
        row, col = value
        return int(row) * ptr.tile.shape[1] + int(col)
    if isinstance(value, Reg):
        raise KernelError("a register is not an offset here", loc)
    return int(value)


def _region(ptr: UbPointer, extra: int, dtype: np.dtype, advancing: bool = False) -> Region:
    """The register's bytes at ``extra`` elements from the pointer (its cursor for an access
    that advances it, see :class:`UbPointer`)."""
    tile = ptr.tile
    base = ptr.cursor if advancing else ptr.offset
    byte = tile.addr + (base + extra) * tile.np_dtype.itemsize
    return Region(tile.mem, byte, REGISTER_BYTES // dtype.itemsize, dtype,
                  tile.addr + tile.size)


def create_addr_reg(index0, stride0, index1=None, stride1=None, index2=None, stride2=None,
                    index3=None, stride3=None, dtype=None, _dst=None):
    pairs = ((index0, stride0), (index1, stride1), (index2, stride2), (index3, stride3))
    offset = sum(int(i) * int(s) for i, s in pairs if i is not None and s is not None)
    return AddrReg(offset, getattr(_dst, "name", ""))


def load_align(src, offset=None, dtype=None, dist=None, data_copy_mode=None,
               block_stride=None, post_update=False, repeat_stride=None, _dst=None):
    loc = user_location()
    core = current_core()
    ptr = pointer(src, "load_align", loc)
    dt = ptr.np_dtype if dtype is None else _np(dtype, "load_align", loc)
    if isinstance(_dst, Mask) or (isinstance(_dst, Declared) and _dst.kind == "mask"):
        dist = _enum(dist, LoadDist, LoadDist.NORM, "load_align", "dist", loc)
        step = _offset(offset, ptr, loc)
        # An integer offset is plds's offset operand (PyPTO Pro's code generator passes it,
        # backend_cce_vf_ops.cpp EmitVFLoadAlign), unlike a mask store's, where only a
        # post-update or an address register moves the address.
        at = 0 if post_update else step
        number = _dst.number
        _emit(core, "load", (number,), (), loc, dtype=dt,
              region=_region(ptr, at, dt, post_update),
              attrs={"kind": "mask", "dist": dist.value[0]})
        if post_update:
            ptr.cursor += step
        return _result(Mask, number, dt, _dst)
    copy_mode = _enum(data_copy_mode, DataCopyMode, DataCopyMode.NORM, "load_align",
                      "data_copy_mode", loc)
    if copy_mode is DataCopyMode.DATA_BLOCK_COPY:
        number = _number(_dst, core)
        srcs = () if offset is None else (_mask(offset, "load_align", loc),)
        _emit(core, "load", (number,), srcs, loc, dtype=dt,
              region=_region(ptr, 0, dt, post_update),
              attrs={"kind": "block", "block_stride": int(block_stride or 0)})
        if post_update:
            ptr.cursor += int(repeat_stride or 0) * 32 // ptr.np_dtype.itemsize
        return _result(Reg, number, dt, _dst)
    dist = _enum(dist, LoadDist, LoadDist.NORM, "load_align", "dist", loc)
    kind, grain = dist.value
    step = _offset(offset, ptr, loc)
    at = 0 if post_update else step
    region = _region(ptr, at, dt, post_update)
    if kind == "dintlv":
        dsts = _dst if isinstance(_dst, tuple) else (None, None)
        numbers = tuple(_number(d, core) for d in dsts)
        _emit(core, "load", numbers, (), loc, dtype=dt, region=region,
              attrs={"kind": "vector", "dist": kind, "grain": grain})
        if post_update:
            ptr.cursor += step
        return tuple(_result(Reg, n, dt, d) for n, d in zip(numbers, dsts))
    number = _number(_dst, core)
    _emit(core, "load", (number,), (), loc, dtype=dt, region=region,
          attrs={"kind": "vector", "dist": kind, "grain": grain})
    if post_update:
        ptr.cursor += step
    return _result(Reg, number, dt, _dst)


def store_align(dst, src, *args, dist=None, data_copy_mode=None, block_stride=None,
                repeat_stride=None, post_update=False):
    loc = user_location()
    core = current_core()
    ptr = pointer(dst, "store_align", loc)
    if isinstance(src, Mask):
        offset = args[0] if args else None
        dist = _enum(dist, StoreDist, StoreDist.NORM, "store_align", "dist", loc)
        step = _offset(offset, ptr, loc)
        at = 0 if post_update or not isinstance(offset, AddrReg) else step
        _emit(core, "store", (), (src.number,), loc,
              region=_region(ptr, at, np.dtype(np.uint8), post_update),
              attrs={"kind": "mask", "dist": dist.value[0]})
        if post_update:
            ptr.cursor += step
        return ptr
    dist = _enum(dist, StoreDist, StoreDist.NORM, "store_align", "dist", loc)
    kind, _ = dist.value
    a = _reg(src, "store_align", loc)
    dtype = _dtype_of(a)
    copy_mode = _enum(data_copy_mode, DataCopyMode, DataCopyMode.NORM, "store_align",
                      "data_copy_mode", loc)
    if kind == "intlv":
        other, mask, *rest = args
        b = _reg(other, "store_align", loc)
        offset = rest[0] if rest else None
        srcs = (a.number, b.number, _mask(mask, "store_align", loc))
        dts = (dtype, dtype, None)
    else:
        mask = args[0] if args else None
        offset = args[1] if len(args) > 1 else None
        srcs = (a.number,) if mask is None else (a.number, _mask(mask, "store_align", loc))
        dts = (dtype,) if mask is None else (dtype, None)
    if copy_mode is DataCopyMode.DATA_BLOCK_COPY:
        _emit(core, "store", (), srcs, loc, dtype=dtype,
              region=_region(ptr, 0, dtype, post_update),
              attrs={"kind": "block", "block_stride": int(block_stride or 0)},
              src_dtypes=dts)
        if post_update:
            ptr.cursor += int(repeat_stride or 0) * 32 // ptr.np_dtype.itemsize
        return ptr
    step = _offset(offset, ptr, loc)
    at = 0 if post_update else step
    _emit(core, "store", (), srcs, loc, dtype=dtype, region=_region(ptr, at, dtype, post_update),
          attrs={"kind": "vector", "dist": kind}, src_dtypes=dts)
    if post_update:
        stored = lanes(dtype) * (2 if kind == "intlv" else 1)
        ptr.cursor += step if offset is not None else stored * dtype.itemsize // \
            ptr.np_dtype.itemsize
    return ptr


def load(src_ptr, stride=None, post_update=False, repeat_stride=None, count=None, _dst=None):
    loc = user_location()
    core = current_core()
    ptr = pointer(src_ptr, "load", loc)
    dt = ptr.np_dtype
    number = _number(_dst, core)
    advancing = post_update or stride is not None
    _emit(core, "load", (number,), (), loc, dtype=dt, region=_region(ptr, 0, dt, advancing),
          attrs={"kind": "vector", "dist": "norm", "grain": None, "align": 1})
    if advancing:
        ptr.cursor += int(stride if stride is not None else lanes(dt))
    return _result(Reg, number, dt, _dst)


def store(dst_ptr, src, count=None, post_update=False, repeat_stride=None):
    loc = user_location()
    core = current_core()
    ptr = pointer(dst_ptr, "store", loc)
    a = _reg(src, "store", loc)
    dtype = _dtype_of(a)
    n = lanes(dtype) if count is None else int(count)
    if not 0 <= n <= lanes(dtype):
        raise KernelError(f"vf.store: count {n} exceeds the {lanes(dtype)} elements of a "
                          "register", loc)
    _emit(core, "store", (), (a.number,), loc, dtype=dtype,
          region=_region(ptr, 0, dtype, post_update),
          attrs={"kind": "unaligned", "count": n}, src_dtypes=(dtype,))
    if post_update:
        ptr.cursor += n * dtype.itemsize // ptr.np_dtype.itemsize
    return ptr


def load_unalign_init(_dst=None):
    return UnalignReg(getattr(_dst, "name", ""))


def unalign_reg_for_store(_dst=None):
    return UnalignReg(getattr(_dst, "name", ""))


def load_unalign_pre(ureg, src_ptr):
    """Primes the unaligned stream (vldas): its effect is part of the next load here."""
    pointer(src_ptr, "load_unalign_pre", user_location())


def load_unalign(ureg, src_ptr, stride=None, _dst=None):
    loc = user_location()
    core = current_core()
    ptr = pointer(src_ptr, "load_unalign", loc)
    dt = ptr.np_dtype
    number = _number(_dst, core)
    _emit(core, "load", (number,), (), loc, dtype=dt,
          region=_region(ptr, 0, dt, stride is not None),
          attrs={"kind": "vector", "dist": "norm", "grain": None, "align": 1})
    if stride is not None:
        ptr.cursor += int(stride)
    return _result(Reg, number, dt, _dst)


def gather(src, indices, mask=None, data_copy_mode=None, _dst=None):
    loc = user_location()
    core = current_core()
    idx = _reg(indices, "gather", loc, "index")
    number = _number(_dst, core)
    if isinstance(src, Reg):
        dtype = _dtype_of(src)
        _emit(core, "gather_register", (number,), (src.number, idx.number), loc, dtype=dtype)
        return _result(Reg, number, dtype, _dst)
    ptr = pointer(src, "gather", loc)
    dtype = ptr.np_dtype
    mode = _enum(data_copy_mode, DataCopyMode, DataCopyMode.NORM, "gather", "data_copy_mode",
                 loc)
    unit = 1 if mode is DataCopyMode.DATA_BLOCK_COPY else dtype.itemsize
    _emit(core, "load", (number,), (idx.number, _mask(mask, "gather", loc)), loc, dtype=dtype,
          region=_region(ptr, 0, dtype), attrs={"kind": "gather", "unit": unit},
          src_dtypes=(_dtype_of(idx), None))
    return _result(Reg, number, dtype, _dst)


def scatter(base_ptr, src, index, mask):
    loc = user_location()
    core = current_core()
    ptr = pointer(base_ptr, "scatter", loc)
    a, idx = _reg(src, "scatter", loc), _reg(index, "scatter", loc, "index")
    dtype = _dtype_of(a)
    _emit(core, "store", (), (a.number, idx.number, _mask(mask, "scatter", loc)), loc,
          dtype=dtype, region=_region(ptr, 0, dtype), attrs={"kind": "scatter"},
          src_dtypes=(dtype, _dtype_of(idx), None))


def store_unalign(dst_ptr, src, align_reg, stride=None, post_update=False):
    """An unaligned store (vstur/vstus): ``stride`` elements of ``src`` or, without it, the
    elements the last ``squeeze(gather_mode=STORE_REG)`` kept (the AR register's count), at
    ``dst_ptr``; ``post_update`` advances the pointer past them. The hardware holds the
    stream's unaligned tail in ``align_reg`` until ``store_unalign_post`` writes it: the
    bytes land in UB by then either way, so they are written here at once."""
    loc = user_location()
    core = current_core()
    ptr = pointer(dst_ptr, "store_unalign", loc)
    if not isinstance(align_reg, (UnalignReg, Declared)):
        raise KernelError("vf.store_unalign: the third argument must be the register of "
                          "vf.unalign_reg_for_store()", loc)
    a = _reg(src, "store_unalign", loc)
    dtype = _dtype_of(a)
    count = None if stride is None else int(stride)
    if count is not None and not 0 <= count <= lanes(dtype):
        raise KernelError(f"vf.store_unalign: {count} elements exceed a register's "
                          f"{lanes(dtype)}", loc)
    _emit(core, "store", (), (a.number,), loc, dtype=dtype,
          region=_region(ptr, 0, dtype, post_update),
          attrs={"kind": "unaligned", "count": count}, src_dtypes=(dtype,))
    if post_update:
        if count is None:  # the pointer register advances by the AR register's bytes
            count = register_file(core).ar // dtype.itemsize
        ptr.cursor += count * dtype.itemsize // ptr.np_dtype.itemsize
    return ptr


def store_unalign_post(dst_ptr, align_reg, stride=None, post_update=False):
    """Ends an unaligned store stream (vstar/vstas): its tail is already in UB here (see
    :func:`store_unalign`); what remains is the instruction's slot on the V pipe."""
    loc = user_location()
    core = current_core()
    pointer(dst_ptr, "store_unalign_post", loc)
    _emit(core, "mem_bar", (), (), loc, attrs={"mode": "store_unalign_post"})


# ------------------------------------------------------------------ fills, moves, indices
def full(scalar_or_src, mask=None, dtype=None, mode=None, pos=None, _dst=None):
    loc = user_location()
    core = current_core()
    number = _number(_dst, core)
    merging = _merging(mode, "full", loc)
    m = _mask(mask, "full", loc)
    if isinstance(scalar_or_src, Reg):
        a = scalar_or_src
        dt = _dtype_of(a)
        highest = _enum(pos, DuplicatePos, DuplicatePos.LOWEST, "full", "pos", loc) is \
            DuplicatePos.HIGHEST
        _emit(core, "full", (number,), (a.number,), loc, mask=m, dtype=dt, merging=merging,
              attrs={"highest": highest}, src_dtypes=(dt,))
        return _result(Reg, number, dt, _dst)
    dt = FP32 if dtype is None else _np(dtype, "full", loc)
    _emit(core, "full", (number,), (), loc, mask=m, dtype=dt, merging=merging,
          scalars=(scalar_or_src,))
    return _result(Reg, number, dt, _dst)


def arange(start, dtype=None, index_order=None, _dst=None):
    loc = user_location()
    core = current_core()
    dt = FP32 if dtype is None else _np(dtype, "arange", loc)
    order = _enum(index_order, IndexOrder, IndexOrder.INCREASE_ORDER, "arange", "index_order",
                  loc)
    number = _number(_dst, core)
    _emit(core, "arange", (number,), (), loc, dtype=dt, scalars=(start,),
          attrs={"decrease": order is IndexOrder.DECREASE_ORDER})
    return _result(Reg, number, dt, _dst)


def bit_cast(src, *, dtype):
    loc = user_location()
    a = _reg(src, "bit_cast", loc)
    return Reg(a.number, _np(dtype, "bit_cast", loc), a.name)


def squeeze(src, mask, gather_mode=None, dtype=None, _dst=None):
    loc = user_location()
    core = current_core()
    a = _reg(src, "squeeze", loc)
    dt = _dtype_of(a) if dtype is None else _np(dtype, "squeeze", loc)
    store = _enum(gather_mode, SqueezeMode, SqueezeMode.NO_STORE_REG, "squeeze",
                  "gather_mode", loc) is SqueezeMode.STORE_REG
    number = _number(_dst, core)
    _emit(core, "squeeze", (number,), (a.number, _mask(mask, "squeeze", loc)), loc, dtype=dt,
          attrs={"store_count": store}, src_dtypes=(dt, None))
    return _result(Reg, number, dt, _dst)


def unsqueeze(mask, dtype=None, _dst=None):
    loc = user_location()
    core = current_core()
    dt = np.dtype(np.uint32) if dtype is None else _np(dtype, "unsqueeze", loc)
    number = _number(_dst, core)
    _emit(core, "unsqueeze", (number,), (_mask(mask, "unsqueeze", loc),), loc, dtype=dt)
    return _result(Reg, number, dt, _dst)


# ------------------------------------------------------------------ conversions
_ROUND_DEFAULT = VFRoundMode.CAST_RINT


def astype(src, mask, dtype=None, layout=None, round_mode=None, saturate=None, mode=None,
           _dst=None):
    loc = user_location()
    core = current_core()
    a = _reg(src, "astype", loc)
    if dtype is None:
        raise KernelError("vf.astype: dtype= is required", loc)
    dt = _np(dtype, "astype", loc)
    rounding = _enum(round_mode, VFRoundMode, _ROUND_DEFAULT, "astype", "round_mode", loc)
    part = _enum(layout, CastLayout, CastLayout.ZERO, "astype", "layout", loc)
    number = _number(_dst, core)
    src_dt = _dtype_of(a)
    srcs = (a.number,) if mask is None else (a.number, _mask(mask, "astype", loc))
    _emit(core, "astype", (number,), srcs, loc, dtype=dt,
          attrs={"round": rounding.value, "layout": part.value},
          src_dtypes=(src_dt, None)[:len(srcs)])
    return _result(Reg, number, dt, _dst)


def truncate(src, mask, mode=None, _dst=None):
    return _unary_op("truncate", "truncate")(src, mask, mode, _dst=_dst)


def exp_sub(src, max_val, mask, layout=None, _dst=None):
    loc = user_location()
    core = current_core()
    a, b = _reg(src, "exp_sub", loc), _reg(max_val, "exp_sub", loc)
    part = _enum(layout, CastLayout, CastLayout.ZERO, "exp_sub", "layout", loc)
    number = _number(_dst, core)
    src_dt = _dtype_of(a, b)
    _emit(core, "exp_sub", (number,), (a.number, b.number), loc, mask=_mask(mask, "exp_sub",
                                                                            loc),
          dtype=FP32, attrs={"layout": part.value}, src_dtypes=(src_dt, src_dt))
    return _result(Reg, number, FP32, _dst)


def muls_cast(src, scalar, mask, dtype=None, layout=None, _dst=None):
    loc = user_location()
    core = current_core()
    a = _reg(src, "muls_cast", loc)
    dt = np.dtype(np.float16) if dtype is None else _np(dtype, "muls_cast", loc)
    part = _enum(layout, CastLayout, CastLayout.ZERO, "muls_cast", "layout", loc)
    number = _number(_dst, core)
    _emit(core, "muls_cast", (number,), (a.number,), loc, dtype=dt, scalars=(scalar,),
          attrs={"layout": part.value}, src_dtypes=(_dtype_of(a),))
    return _result(Reg, number, dt, _dst)


def _pack_op(record_op: str, name: str, narrowing: bool):
    def op(src, dtype=None, part=None, _dst=None):
        loc = user_location()
        core = current_core()
        upper = _enum(part, PackPart, PackPart.LOWER, name, "part", loc) is PackPart.UPPER
        number = _number(_dst, core)
        if isinstance(src, Mask):
            _emit(core, record_op, (number,), (src.number,), loc, attrs={"upper": upper})
            return _result(Mask, number, src.dtype, _dst)
        a = _reg(src, name, loc)
        src_dt = _dtype_of(a)
        if dtype is not None:
            dt = _np(dtype, name, loc)
        else:
            size = src_dt.itemsize // 2 if narrowing else src_dt.itemsize * 2
            dt = np.dtype({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size])
        _emit(core, record_op, (number,), (a.number,), loc, dtype=dt, attrs={"upper": upper},
              src_dtypes=(src_dt,))
        return _result(Reg, number, dt, _dst)
    op.__name__ = name
    return op


def _pair_op(record_op: str, name: str):
    def op(src0, src1, dtype=None, _dst=None):
        loc = user_location()
        core = current_core()
        dsts = _dst if isinstance(_dst, tuple) else (None, None)
        numbers = tuple(_number(d, core) for d in dsts)
        if isinstance(src0, Mask):
            width = _np(dtype, name, loc).itemsize if dtype is not None else \
                _dtype_of(src0).itemsize
            _emit(core, f"mask_{record_op}", numbers, (src0.number, src1.number), loc,
                  attrs={"width": width})
            return tuple(_result(Mask, n, src0.dtype, d) for n, d in zip(numbers, dsts))
        a, b = _reg(src0, name, loc), _reg(src1, name, loc)
        dt = _dtype_of(a, b)
        _emit(core, record_op, numbers, (a.number, b.number), loc, dtype=dt,
              src_dtypes=(dt, dt))
        return tuple(_result(Reg, n, dt, d) for n, d in zip(numbers, dsts))
    op.__name__ = name
    return op


# ------------------------------------------------------------------ reductions and others
def _reduce_op(record_op: str, name: str):
    def op(src, mask, datablock=False, merge_mode=None, _dst=None):
        loc = user_location()
        core = current_core()
        a = _reg(src, name, loc)
        dt = _dtype_of(a)
        number = _number(_dst, core)
        _emit(core, record_op, (number,), (a.number, _mask(mask, name, loc)), loc, dtype=dt,
              attrs={"datablock": bool(datablock)}, src_dtypes=(dt, None))
        return _result(Reg, number, dt, _dst)
    op.__name__ = name
    return op


def pair_reduce_sum(src, mask, mode=None, _dst=None):
    loc = user_location()
    core = current_core()
    a = _reg(src, "pair_reduce_sum", loc)
    dt = _dtype_of(a)
    number = _number(_dst, core)
    _emit(core, "pair_reduce_sum", (number,), (a.number, _mask(mask, "pair_reduce_sum", loc)),
          loc, dtype=dt, src_dtypes=(dt, None))
    return _result(Reg, number, dt, _dst)


def _shift_op(record_op: str, name: str):
    def op(src, shift, mask, mode=None, dtype=None, _dst=None):
        loc = user_location()
        core = current_core()
        a = _reg(src, name, loc)
        dt = _dtype_of(a) if dtype is None else _np(dtype, name, loc)
        number = _number(_dst, core)
        if isinstance(shift, Reg):
            srcs, scalars, dts = (a.number, shift.number), (), (dt, dt)
        else:
            srcs, scalars, dts = (a.number,), (int(shift),), (dt,)
        _emit(core, record_op, (number,), srcs, loc, mask=_mask(mask, name, loc), dtype=dt,
              scalars=scalars, merging=_merging(mode, name, loc), src_dtypes=dts)
        return _result(Reg, number, dt, _dst)
    op.__name__ = name
    return op


def mull(src0, src1, mask, mode=None, _dst=None):
    loc = user_location()
    core = current_core()
    a, b = _reg(src0, "mull", loc), _reg(src1, "mull", loc)
    dt = _dtype_of(a, b)
    dsts = _dst if isinstance(_dst, tuple) else (None, None)
    numbers = tuple(_number(d, core) for d in dsts)
    _emit(core, "mull", numbers, (a.number, b.number), loc, mask=_mask(mask, "mull", loc),
          dtype=dt, src_dtypes=(dt, dt))
    return tuple(_result(Reg, n, dt, d) for n, d in zip(numbers, dsts))


def _carry_op(record_op: str, name: str):
    def op(src0, src1, carry_in, mask, mode=None, _dst=None):
        loc = user_location()
        core = current_core()
        a, b = _reg(src0, name, loc), _reg(src1, name, loc)
        dt = _dtype_of(a, b)
        dsts = _dst if isinstance(_dst, tuple) else (None, None)
        numbers = tuple(_number(d, core) for d in dsts)
        _emit(core, record_op, numbers, (a.number, b.number, _mask(carry_in, name, loc)), loc,
              mask=_mask(mask, name, loc), dtype=dt, src_dtypes=(dt, dt, None))
        return (_result(Mask, numbers[0], dt, dsts[0]), _result(Reg, numbers[1], dt, dsts[1]))
    op.__name__ = name
    return op


def histograms(src, mask, bin_type=None, hist_type=None, _dst=None):
    loc = user_location()
    core = current_core()
    a = _reg(src, "histograms", loc)
    if not isinstance(_dst, (Reg, Declared)):
        raise KernelError("vf.histograms accumulates into its destination: assign its "
                          "result to that register", loc)
    bin_no = _enum(bin_type, BinType, BinType.BIN0, "histograms", "bin_type", loc).value
    cumulative = _enum(hist_type, HistType, HistType.ACCUMULATE, "histograms", "hist_type",
                       loc) is HistType.ACCUMULATE
    u16 = np.dtype(np.uint16)
    _emit(core, "histograms", (_dst.number,), (a.number, _mask(mask, "histograms", loc),
                                               _dst.number), loc, dtype=u16,
          attrs={"bin": bin_no, "cumulative": cumulative},
          src_dtypes=(np.dtype(np.uint8), None, u16))
    return _result(Reg, _dst.number, u16, _dst)


class Vf:
    """The ``vf`` namespace of vector-function bodies (PyPTO Pro's ``pl.Vf``)."""

    create_mask = staticmethod(create_mask)
    update_mask = staticmethod(update_mask)
    full = staticmethod(full)
    load_align = staticmethod(load_align)
    store_align = staticmethod(store_align)
    load = staticmethod(load)
    store = staticmethod(store)
    load_unalign_init = staticmethod(load_unalign_init)
    load_unalign_pre = staticmethod(load_unalign_pre)
    load_unalign = staticmethod(load_unalign)
    unalign_reg_for_store = staticmethod(unalign_reg_for_store)
    store_unalign = staticmethod(store_unalign)
    store_unalign_post = staticmethod(store_unalign_post)
    gather = staticmethod(gather)
    scatter = staticmethod(scatter)
    create_addr_reg = staticmethod(create_addr_reg)
    mem_bar = staticmethod(mem_bar)
    clear_spr = staticmethod(clear_spr)
    move = staticmethod(move)
    select = staticmethod(select)
    not_ = staticmethod(not_)
    get_mask_spr = staticmethod(get_mask_spr)
    mask_gen_with_reg_tensor = staticmethod(mask_gen_with_reg_tensor)
    arange = staticmethod(arange)
    bit_cast = staticmethod(bit_cast)
    squeeze = staticmethod(squeeze)
    unsqueeze = staticmethod(unsqueeze)
    astype = staticmethod(astype)
    truncate = staticmethod(truncate)
    exp_sub = staticmethod(exp_sub)
    muls_cast = staticmethod(muls_cast)
    pair_reduce_sum = staticmethod(pair_reduce_sum)
    mull = staticmethod(mull)
    histograms = staticmethod(histograms)


for _name, _op in {
    "add": _binary_op("add", "add"), "sub": _binary_op("sub", "sub"),
    "mul": _binary_op("mul", "mul"), "div": _binary_op("div", "div"),
    "max": _binary_op("max", "max"), "min": _binary_op("min", "min"),
    "abs_sub": _binary_op("abs_sub", "abs_sub"), "prelu": _binary_op("prelu", "prelu"),
    "and_": _bitwise_op("and", "and_"), "or_": _bitwise_op("or", "or_"),
    "xor": _bitwise_op("xor", "xor"),
    "abs": _unary_op("abs", "abs"), "neg": _unary_op("neg", "neg"),
    "relu": _unary_op("relu", "relu"), "sqrt": _unary_op("sqrt", "sqrt"),
    "exp": _unary_op("exp", "exp"), "ln": _unary_op("ln", "ln"), "log": _unary_op("ln", "log"),
    "log2": _unary_op("log2", "log2"), "log10": _unary_op("log10", "log10"),
    "adds": _scalar_op("adds", "adds"), "subs": _scalar_op("adds", "subs", negate=True),
    "muls": _scalar_op("muls", "muls"), "maxs": _scalar_op("maxs", "maxs"),
    "mins": _scalar_op("mins", "mins"), "leaky_relu": _scalar_op("leaky_relu", "leaky_relu"),
    "axpy": _dst_reading_op("axpy", "axpy", with_scalar=True),
    "mul_add_dst": _dst_reading_op("mul_add_dst", "mul_add_dst", with_scalar=False),
    "mul_dst_add": _dst_reading_op("mul_dst_add", "mul_dst_add", with_scalar=False),
    "shift_left": _shift_op("shl", "shift_left"), "shift_right": _shift_op("shr", "shift_right"),
    "reduce_sum": _reduce_op("reduce_sum", "reduce_sum"),
    "reduce_max": _reduce_op("reduce_max", "reduce_max"),
    "reduce_min": _reduce_op("reduce_min", "reduce_min"),
    "pack": _pack_op("pack", "pack", narrowing=True),
    "unpack": _pack_op("unpack", "unpack", narrowing=False),
    "interleave": _pair_op("interleave", "interleave"),
    "de_interleave": _pair_op("de_interleave", "de_interleave"),
    "addc": _carry_op("addc", "addc"), "subc": _carry_op("subc", "subc"),
    **{name: _compare_op(name) for name in ("eq", "ne", "lt", "le", "gt", "ge")},
}.items():
    setattr(Vf, _name, staticmethod(_op))

#: The namespace object bodies see as ``vf``.
VF = Vf()

_ = Enum  # the enums' base, for isinstance checks of callers

__all__ = ["VF", "Vf"]
