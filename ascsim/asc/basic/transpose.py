"""Transposes on the vector unit: ``transpose`` (16x16, or NCHW<->NHWC with TransposeParamsExt)
and ``trans_data_to_5hd`` (Ascend C's TransDataTo5HD, the VNCHWCONV instruction).

Each call is one :class:`~ascsim.isa.instr.VectorSequence` record: its function moves the
elements, its cost is the ``transpose`` class over the bytes moved.

TransDataTo5HD (16-bit elements): per repeat ``r``, source ``i`` (one of 16 addresses) gives
the 32-byte block at its address plus ``r * src_rep_stride`` blocks -- 16 elements, row ``i``
of a 16x16 matrix -- and destination ``k`` receives column ``k`` of that matrix as the block at
its address plus ``r * dst_rep_stride`` blocks. With one repeat the strides are not used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.asc.context import current_core, user_location
from ascsim.asc.enums import TPosition, TransposeType
from ascsim.asc.params import U8, U16, _check_ranges, coerce_fields
from ascsim.asc.tensor import LocalTensor, memory_for
from ascsim.isa import KernelError, VectorSequence

BLOCK = 32
LANES = 16  # sources and destinations of one TransDataTo5HD; 16-bit elements per block


@dataclass(frozen=True)
class TransposeParamsExt:
    """``asc.TransposeParamsExt(n_size, c_size, h_size, w_size, transpose_type)``."""

    n_size: int = 0
    c_size: int = 0
    h_size: int = 0
    w_size: int = 0
    transpose_type: TransposeType = TransposeType.TRANSPOSE_ND2ND_B16

    def __post_init__(self):
        coerce_fields(self)
        object.__setattr__(self, "transpose_type", TransposeType(self.transpose_type))
        _check_ranges(self, dict.fromkeys(("n_size", "c_size", "h_size", "w_size"), U16))


@dataclass(frozen=True)
class TransDataTo5HDParams:
    """``asc.TransDataTo5HDParams(dst_high_half, src_high_half, repeat_times, dst_rep_stride,
    src_rep_stride)``: strides in 32-byte blocks; the high-half flags select the byte half of
    8-bit data."""

    dst_high_half: bool = False
    src_high_half: bool = False
    repeat_times: int = 1
    dst_rep_stride: int = 0
    src_rep_stride: int = 0

    def __post_init__(self):
        coerce_fields(self)
        _check_ranges(self, {"repeat_times": U8, "dst_rep_stride": U16,
                             "src_rep_stride": U16})


def _run(name: str, dst, srcs, fn, nbytes: int, dtype, loc, scratch=()) -> None:
    current_core().execute(VectorSequence(
        name, dst, tuple(srcs), fn, ("transpose",), max(1, -(-nbytes // 256)),
        dtype.np_dtype.name, loc, (), tuple(scratch)))


def _require_16_bit(name: str, tensors, loc) -> None:
    for t in tensors:
        if t.dtype.sizeof() != 2:
            raise KernelError(f"{name}: this form works on 16-bit elements, got "
                              f"{t.dtype.name}", loc)


def _permute(shape, axes):
    return lambda x: x.reshape(shape).transpose(axes).reshape(-1)


#: Layout transposes of the enhanced form: type -> (source dimensions as named by the
#: params, the permutation that gives the destination).
EXT_LAYOUTS = {
    TransposeType.TRANSPOSE_NCHW2NHWC: (("n_size", "c_size", "h_size", "w_size"), (0, 2, 3, 1)),
    TransposeType.TRANSPOSE_NHWC2NCHW: (("n_size", "h_size", "w_size", "c_size"), (0, 3, 1, 2)),
}


def transpose(dst, src, shared_tmp_buffer=None, params: TransposeParamsExt | None = None) -> None:
    """``transpose(dst, src)``: a 16x16 matrix of 16-bit elements; ``transpose(dst, src,
    shared_tmp_buffer, params)``: the enhanced form (TRANSPOSE_ND2ND_B16, NCHW2NHWC,
    NHWC2NCHW)."""
    loc = user_location()
    if dst.dtype != src.dtype:
        raise KernelError(f"transpose: dst and src types differ ({dst.dtype.name}, "
                          f"{src.dtype.name})", loc)
    if (shared_tmp_buffer is None) != (params is None):
        raise KernelError("transpose: give both shared_tmp_buffer and params, or neither", loc)
    kind = TransposeType.TRANSPOSE_ND2ND_B16 if params is None else params.transpose_type
    scratch = () if shared_tmp_buffer is None else (shared_tmp_buffer.region(),)
    if kind == TransposeType.TRANSPOSE_ND2ND_B16:
        _require_16_bit("transpose", (dst,), loc)
        n = LANES * LANES
        fn = _permute((LANES, LANES), (1, 0))
    elif kind in EXT_LAYOUTS:
        dims, axes = EXT_LAYOUTS[kind]
        shape = tuple(getattr(params, d) for d in dims)
        n = int(np.prod(shape))
        if n == 0:
            raise KernelError(f"transpose: {kind.name} needs non-zero n, c, h and w sizes, got "
                              f"{shape}", loc)
        fn = _permute(shape, axes)
    else:
        raise KernelError(f"transpose: {kind.name} is not a transpose of this API (it takes "
                          "TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC, TRANSPOSE_NHWC2NCHW)", loc)
    _run("transpose", dst.region(n), (src.region(n),), fn, n * dst.dtype.sizeof(), dst.dtype,
         loc, scratch)


# ------------------------------------------------------------------------ TransDataTo5HD
def _span(repeats: int, stride: int) -> int:
    """Elements from a list entry's address to the end of its last repeat's block."""
    return ((repeats - 1) * stride + 1) * LANES if repeats > 1 else LANES


def _addressed(core, addresses, length: int, loc) -> list:
    """The UB tensors at the byte addresses of an address list, typed as pyasc infers them:
    by the tensor whose ``get_phy_addr`` gave the address."""
    known = core.launch.shared.get("phy_addr_types", {}).get(core.core_id, {})
    mem = memory_for(core, TPosition.VECCALC, loc)
    tensors = []
    for address in addresses:
        address = int(address)
        dtype = known.get(address)
        if dtype is None:
            raise KernelError(f"trans_data_to_5hd: UB address {address} did not come from a "
                              "tensor's get_phy_addr, so its element type is unknown", loc)
        tensors.append(LocalTensor.bound(mem, TPosition.VECCALC, address, length, dtype))
    return tensors


def _list_of(core, value, length: int, loc) -> list:
    if isinstance(value, LocalTensor):  # a LocalTensor of 16 uint64 addresses
        if value.dtype.name != "uint64":
            raise KernelError(f"trans_data_to_5hd: an address tensor holds uint64, got "
                              f"{value.dtype.name}", loc)
        return _addressed(core, [value.get_value(i) for i in range(LANES)], length, loc)
    value = list(value)
    if len(value) != LANES:
        raise KernelError(f"trans_data_to_5hd: a list has {LANES} entries, got {len(value)}",
                          loc)
    if all(isinstance(t, LocalTensor) for t in value):
        return [t._view_from(0) for t in value]
    return _addressed(core, value, length, loc)


def trans_data_to_5hd(dst_list, src_list, params: TransDataTo5HDParams) -> None:
    """``trans_data_to_5hd(dst_list, src_list, params)`` with lists of 16 tensors, of 16 UB
    addresses, or uint64 tensors holding 16 addresses each."""
    loc = user_location()
    core = current_core()
    repeats = params.repeat_times
    if repeats == 0:
        return
    src_rep, dst_rep = params.src_rep_stride, params.dst_rep_stride
    src_len, dst_len = _span(repeats, src_rep), _span(repeats, dst_rep)
    dsts = _list_of(core, dst_list, dst_len, loc)
    srcs = _list_of(core, src_list, src_len, loc)
    _require_16_bit("trans_data_to_5hd", (*dsts, *srcs), loc)
    dtype = dsts[0].dtype
    if any(t.dtype != dtype for t in (*dsts, *srcs)):
        raise KernelError("trans_data_to_5hd: every tensor of both lists must have one type",
                          loc)
    rows = np.arange(repeats)[:, None]
    lane = np.arange(LANES)[None, :]
    read = (rows * (src_rep if repeats > 1 else 0) * LANES + lane)  # (repeat, element)
    written = (rows * (dst_rep if repeats > 1 else 0) * LANES + lane).reshape(-1)

    def fn(*views):
        blocks = np.stack([v[read] for v in views], axis=1)  # (repeat, source i, element k)
        return tuple((written, blocks[:, :, k].reshape(-1)) for k in range(LANES))

    _run("trans_data_to_5hd", tuple(t.region(dst_len) for t in dsts),
         tuple(t.region(src_len) for t in srcs), fn, repeats * LANES * BLOCK, dtype, loc)


__all__ = ["TransDataTo5HDParams", "TransposeParamsExt", "trans_data_to_5hd", "transpose"]
