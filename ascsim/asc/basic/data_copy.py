"""Data movement between GM and local buffers: ``data_copy`` and ``data_copy_pad``.

The path (GM->UB, UB->GM, UB->UB, GM->L1, ...) follows from where the two tensors live; the SoC
table says whether it exists and which pipe runs it. Copies move whole 32-byte blocks, as the
DMA engines do: a count-form copy whose byte length is not a multiple of 32 drops the tail, which
is a classic bug the checks report (use ``data_copy_pad`` for such lengths).
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic.atomic import store_atomic
from ascsim.asc.basic.core_config import core_registers
from ascsim.asc.context import current_core, user_location
from ascsim.asc.errors import CallFormError
from ascsim.asc.params import (
    DataCopyEnhancedParams,
    DataCopyExtParams,
    DataCopyPadExtParams,
    DataCopyPadParams,
    DataCopyParams,
)
from ascsim.asc.tensor import GlobalTensor
from ascsim.isa import BLOCK_BYTES, Bursts, Copy, KernelError

# Cube-side copy forms register themselves here: parameter type -> handler(dst, src, params).
EXTRA_FORMS: dict[type, object] = {}
#: The slice form ``data_copy(dst, src, dst_slices, src_slices, dim_value)`` (set by
#: :mod:`ascsim.asc.basic.copy_forms`).
SLICE_FORM = None


def _copy(op: str, dst, src, bursts: Bursts, loc, pad=None, whole_blocks=False):
    """Execute one copy of ``bursts`` from ``src`` to ``dst`` (atomically when the core's atomic
    store register is set and ``dst`` is GM)."""
    atomic = store_atomic(dst, loc) if isinstance(dst, GlobalTensor) else None
    try:
        regions = src.region(), dst.region()
    except AttributeError:
        raise CallFormError(_not_tensors(op, dst, src), loc) from None
    return current_core().execute(Copy(*regions, bursts, loc, op, pad, whole_blocks,
                                       atomic=atomic))


def _not_tensors(op: str, dst, src) -> str:
    """The message for a copy given something that is not a tensor (a bare GM address, a
    number, ...)."""
    wrong = ", ".join(f"{name} is a {type(value).__name__}" for name, value in
                      (("dst", dst), ("src", src)) if not hasattr(value, "region"))
    return (f"{op} copies between tensors: {wrong} (wrap a GM address in a GlobalTensor with "
            "set_global_buffer)")


def _check_block_aligned(op: str, nbytes: int, loc, what: str) -> None:
    if nbytes % BLOCK_BYTES:
        current_core().launch.findings.report(
            "alignment",
            f"{op} moves {nbytes} B ({what}), not a whole number of 32-byte blocks: the DMA "
            f"moves {nbytes // BLOCK_BYTES * BLOCK_BYTES} B and drops the tail",
            loc, hint="use data_copy_pad for lengths that are not multiples of 32 bytes",
            core=current_core().core_id, nbytes=nbytes)


def data_copy(dst, src, *args, **kwargs) -> None:
    """``data_copy(dst, src, count)``, ``data_copy(dst, src, repeat_params=DataCopyParams)``,
    or a cube-side form (``Nd2NzParams``, ...)."""
    if "slice_list1" in kwargs or (args and isinstance(args[0], (list, tuple))):
        SLICE_FORM(dst, src, *args, **kwargs)
        return
    loc = user_location()
    count = (args[0] if len(args) == 1 and not kwargs else
             kwargs.get("count") if len(kwargs) == 1 and not args else None)
    if type(count) is int and count >= 0:
        # ``data_copy(dst, src, n)`` or ``count=n`` of whole blocks, the form of every tile
        # loop: the general parsing below, short-cut.
        nbytes = count * src.dtype.sizeof()
        if not nbytes % BLOCK_BYTES:
            _copy("data_copy", dst, src, Bursts.contiguous(nbytes), loc)
            return
    kwargs = dict(kwargs)
    count = kwargs.pop("count", None)
    # pyasc names the parameter object repeat_params (DataCopyParams) or intri_params (the
    # cube-side forms: Nd2NzParams, ...); params is the older name.
    given = [kwargs.pop(name) for name in ("repeat_params", "intri_params", "params")
             if kwargs.get(name) is not None]
    for name in ("repeat_params", "intri_params", "params"):
        kwargs.pop(name, None)
    if len(given) > 1:
        raise CallFormError("data_copy: give one of repeat_params=, intri_params=, params=", loc)
    params = given[0] if given else None
    kwargs.pop("enhanced_params", None)
    for arg in args:
        if isinstance(arg, (DataCopyEnhancedParams,)):
            continue
        if isinstance(arg, int) and count is None and params is None:
            count = arg
        elif params is None:
            params = arg
    if kwargs:
        raise CallFormError(f"data_copy: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    handler = EXTRA_FORMS.get(type(params)) if params is not None else None
    if handler is not None:
        handler(dst, src, params, loc)
        return
    if count is not None:
        nbytes = int(count) * src.dtype.sizeof()
        if int(count) < 0:
            raise KernelError(f"data_copy: count {count} is negative", loc)
        _check_block_aligned("data_copy", nbytes, loc, f"count={count}")
        moved = nbytes // BLOCK_BYTES * BLOCK_BYTES
        _copy("data_copy", dst, src, Bursts.contiguous(moved), loc)
        return
    if not isinstance(params, DataCopyParams):
        raise KernelError("data_copy needs a count or repeat_params=DataCopyParams(...), got "
                          f"{type(params).__name__}", loc)
    # Plain ints: the parameters may be RuntimeInts, whose arithmetic is slow per burst.
    n = int(params.block_len) * BLOCK_BYTES
    s_pitch = n + int(params.src_stride) * BLOCK_BYTES
    d_pitch = n + int(params.dst_stride) * BLOCK_BYTES
    _copy("data_copy", dst, src, Bursts(0, 0, n, s_pitch, d_pitch, int(params.block_count)), loc)


def data_copy_pad(dst, src, params, pad_params=None, **kwargs) -> None:
    """Byte-granular copy: ``data_copy_pad(dst, src, DataCopyExtParams, DataCopyPadExtParams)``.

    GM->UB: ``block_len`` bytes per block, GM gaps in bytes, UB gaps in 32-byte blocks; each block
    lands 32-byte aligned in UB, optionally padded left/right with ``padding_value``.
    UB->GM: blocks read from 32-byte aligned UB positions, written with byte gaps in GM.
    """
    loc = user_location()
    params = kwargs.pop("data_copy_params", params)
    pad_params = kwargs.pop("pad_params", pad_params)
    if not isinstance(params, (DataCopyExtParams, DataCopyParams)):
        raise KernelError("data_copy_pad needs DataCopyExtParams (or DataCopyParams), got "
                          f"{type(params).__name__}", loc)
    n = int(params.block_len)
    padded = -(-n // BLOCK_BYTES) * BLOCK_BYTES
    size = (src if not isinstance(src, GlobalTensor) else dst).dtype.sizeof()
    left = right = 0
    pad_value = None
    if isinstance(pad_params, (DataCopyPadExtParams, DataCopyPadParams)):
        # is_pad: the params' value; else the value of set_pad_value, if one was set (without
        # either, the padding holds unspecified bytes and is not modelled as written).
        pad_value = (pad_params.padding_value if pad_params.is_pad
                     else core_registers()["pad_value"])
        if pad_value is not None:
            left, right = int(pad_params.left_padding), int(pad_params.right_padding)
    if isinstance(src, GlobalTensor):
        ub_block = -(-(n + (left + right) * size) // BLOCK_BYTES) * BLOCK_BYTES
        s_pitch = n + int(params.src_stride)
        d_pitch = ub_block + int(params.dst_stride) * BLOCK_BYTES
        bursts = Bursts(0, left * size, n, s_pitch, d_pitch, int(params.block_count))
    else:
        s_pitch = padded + int(params.src_stride) * BLOCK_BYTES
        d_pitch = n + int(params.dst_stride)
        bursts = Bursts(0, 0, n, s_pitch, d_pitch, int(params.block_count))
        d_pitch = None
    pad = None
    if d_pitch is not None and (left or right) and params.block_count:
        value = np.asarray(pad_value, dtype=dst.dtype.np_dtype)
        per = d_pitch // size
        # Pad elements of every row: ``left`` before the data, ``right`` after it.
        cols = np.concatenate([np.arange(left), left + n // size + np.arange(right)])
        pad = ((np.arange(params.block_count)[:, None] * per + cols[None, :]).reshape(-1), value)
    # Each row lands in whole 32-byte UB blocks whose padding the kernel may compute over.
    _copy("data_copy_pad", dst, src, bursts, loc, pad, whole_blocks=True)
