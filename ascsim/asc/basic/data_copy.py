"""Data movement between GM and local buffers: ``data_copy`` and ``data_copy_pad``.

The path (GM->UB, UB->GM, UB->UB, GM->L1, ...) follows from where the two tensors live; the SoC
table says whether it exists and which pipe runs it. Copies move whole 32-byte blocks, as the
DMA engines do: a count-form copy whose byte length is not a multiple of 32 drops the tail, which
is a classic bug the checks report (use ``data_copy_pad`` for such lengths).
"""

from __future__ import annotations

import numpy as np

from ascsim.asc.basic._exec import BLOCK_BYTES, execute
from ascsim.asc.context import current_core, user_location
from ascsim.asc.params import (
    DataCopyEnhancedParams,
    DataCopyExtParams,
    DataCopyPadExtParams,
    DataCopyPadParams,
    DataCopyParams,
)
from ascsim.asc.tensor import GlobalTensor, LocalTensor, check_gm_range
from ascsim.hw.spec import PATH_PIPE
from ascsim.sim.access import ByteRows, strided
from ascsim.sim.errors import KernelError
from ascsim.sim.transfer import transfer_cycles as _transfer_cycles

# Cube-side copy forms register themselves here: parameter type -> handler(dst, src, params).
EXTRA_FORMS: dict[type, object] = {}


def _space(tensor) -> str:
    if isinstance(tensor, GlobalTensor):
        tensor._require_bound()
        return "GM"
    tensor._require_bound()
    return tensor.mem.name


# (id(soc), source space, destination space) -> (soc, path, pipe) of the paths that exist.
# Keyed by id because hashing a SocSpec walks all its fields; the stored soc guards the id.
_PATHS: dict = {}


def resolve_path(dst, src, loc) -> tuple[str, str]:
    """(path name, pipe) of a copy from ``src`` to ``dst``, or a clear error."""
    core = current_core()
    soc = core.soc
    key = (id(soc), _space(src), _space(dst))
    entry = _PATHS.get(key)
    if entry is None or entry[0] is not soc:
        path = f"{key[1]}->{key[2]}"
        if path not in PATH_PIPE or not soc.has_path(path):
            raise KernelError(f"there is no {path} data path on {soc.name}", loc)
        entry = _PATHS[key] = (soc, path, PATH_PIPE[path])
    _, path, pipe = entry
    me = core.core_id
    if path != "L0C->UB" and (_foreign(dst, me) or _foreign(src, me)):
        # An AIC names its AIVs' UB only as a FixPipe destination (ascend-hw §2.4).
        raise KernelError(f"{path}: the {core.kind} cannot reach another core's "
                          "local memory (an AIC writes its AIVs' UB only by FixPipe L0C->UB)",
                          loc)
    return path, pipe


def _foreign(tensor, core_id: int) -> bool:
    """Whether ``tensor`` lives in another core's local memory."""
    return isinstance(tensor, LocalTensor) and getattr(tensor.mem, "core_id", core_id) != core_id


def _bytes(tensor, lo: int, hi: int, loc) -> np.ndarray:
    """Raw bytes [lo, hi) relative to ``tensor``'s start (checked against its memory)."""
    if isinstance(tensor, GlobalTensor):
        base = tensor.byte_offset
        check_gm_range(tensor.buffer, base + lo, base + hi, loc)
        return tensor.buffer.data[base + lo: base + hi]
    size = tensor.dtype.sizeof()
    if hi % size or lo % size:
        return tensor.elements(lo // size, -(-hi // size) - lo // size, loc).view(np.uint8)[
            lo % size: lo % size + hi - lo]
    return tensor.elements(lo // size, (hi - lo) // size, loc).view(np.uint8)


def _access(tensor, lo: int, hi: int) -> tuple:
    if isinstance(tensor, GlobalTensor):
        base = tensor.byte_offset
        return (("GM", tensor.buffer.id), base + lo, base + hi)
    return (tensor.mem.key, tensor.addr + lo, tensor.addr + hi)


class Bursts:
    """The blocks one copy moves: ``count`` blocks of ``width`` bytes, block ``i`` read at byte
    ``src + i * src_pitch`` of the source and written at ``dst + i * dst_pitch`` of the
    destination (offsets from each tensor's start).

    Every copy form moves equal blocks at constant pitches, and its validated parameters
    (strides are gaps, never negative) keep blocks from overlapping on either side. So a copy
    of 256 rows is described, copied, recorded and costed in O(1) Python work, not as a list of
    256 tuples. A copy that moves nothing has ``count == width == 0``.
    """

    __slots__ = ("src", "dst", "width", "src_pitch", "dst_pitch", "count")

    def __init__(self, src: int, dst: int, width: int, src_pitch: int, dst_pitch: int,
                 count: int):
        if width <= 0 or count <= 0:
            width = count = 0
        elif count > 1 and min(src_pitch, dst_pitch) < width:
            raise ValueError(f"blocks of {width} B at pitches {src_pitch}/{dst_pitch} overlap")
        self.src, self.dst, self.width = src, dst, width
        self.src_pitch, self.dst_pitch, self.count = src_pitch, dst_pitch, count

    @property
    def nbytes(self) -> int:
        return self.width * self.count

    def side(self, index: int) -> tuple[int, int]:
        """(first block's offset, pitch) on the source (``index`` 0) or destination (1)."""
        return (self.src, self.src_pitch) if index == 0 else (self.dst, self.dst_pitch)

    def hull(self, index: int) -> tuple[int, int]:
        """The byte range [lo, hi) the blocks span on the source (0) or destination (1)."""
        first, pitch = self.side(index)
        return first, first + (self.count - 1) * pitch + self.width


def _copy_bursts(dst_bytes: np.ndarray, src_bytes: np.ndarray, bursts: Bursts) -> None:
    """Move the blocks between the raw byte spans of their hulls."""
    width = bursts.width
    if bursts.count == 1:
        dst_bytes[:width] = src_bytes[:width]
        return
    # One (blocks x width) strided view on each side; the hulls end at the last block, so the
    # views fit the spans exactly.
    shape = (bursts.count, width)
    np.ndarray(shape, np.uint8, dst_bytes, 0, (bursts.dst_pitch, 1))[...] = \
        np.ndarray(shape, np.uint8, src_bytes, 0, (bursts.src_pitch, 1))


def _block_accesses(tensor, bursts: Bursts, side: int, lo: int, hi: int) -> tuple:
    """Access records of a copy on one side: one covering range when the blocks are contiguous
    there, else one strided record, so that cores writing interleaved rows of one tensor (side
    by side column blocks of a matrix) are not mistaken for overlapping writers."""
    first, pitch = bursts.side(side)
    if bursts.count == 1 or pitch == bursts.width:
        return (_access(tensor, lo, hi),)
    space, start, _ = _access(tensor, first, first)
    return (strided(space, start, bursts.width, pitch, bursts.count),)


def transfer_cycles(path: str, nbytes: int, bursts: int = 1, core=None,
                    gm=None) -> tuple[float, float]:
    """(busy, latency) cycles of moving ``nbytes`` along ``path`` in ``bursts`` bursts on
    ``core`` (default: the calling core); ``gm`` = ``(buffer_id, starts, ends)`` (or
    ``(buffer_id, ByteRows)``) names the GM bytes touched, for the L2 model (see
    :mod:`ascsim.sim.transfer`)."""
    return _transfer_cycles(core or current_core(), path, nbytes, bursts, gm)


def gm_ranges(tensor, bursts: Bursts, index: int):
    """``(buffer_id, ByteRows)`` of the GM side of ``bursts`` (``index`` 0: the source,
    1: the destination), or None when ``tensor`` is not in GM or nothing moves."""
    if not isinstance(tensor, GlobalTensor) or not bursts.count:
        return None
    first, pitch = bursts.side(index)
    return tensor.buffer.id, ByteRows(tensor.byte_offset + first, bursts.width, pitch,
                                      bursts.count)


def _move(op: str, dst, src, path: str, pipe: str, bursts: Bursts, loc, fill=None) -> None:
    """Copy the blocks of ``bursts`` from ``src`` to ``dst`` and issue the instruction."""
    total = bursts.nbytes
    if total:
        s_lo, s_hi = bursts.hull(0)
        d_lo, d_hi = bursts.hull(1)
        src_bytes = _bytes(src, s_lo, s_hi, loc)
        dst_bytes = _bytes(dst, d_lo, d_hi, loc)
        _copy_bursts(dst_bytes, src_bytes, bursts)
        reads = _block_accesses(src, bursts, 0, s_lo, s_hi)
        writes = _block_accesses(dst, bursts, 1, d_lo, d_hi)
    else:
        reads = writes = ()
    if fill is not None:
        fill()
    core = current_core()
    core.count_bytes(path, total)
    gm = gm_ranges(src, bursts, 0) or gm_ranges(dst, bursts, 1)
    busy, latency = transfer_cycles(path, total, max(1, bursts.count), core, gm)
    local = tuple(t for t in (dst, src) if not isinstance(t, GlobalTensor))
    execute(pipe, op, busy, latency, loc, local, reads, writes, info=(path, total))


def _check_block_aligned(op: str, nbytes: int, loc, what: str) -> None:
    if nbytes % BLOCK_BYTES:
        current_core().launch.findings.report(
            "alignment",
            f"{op} moves {nbytes} B ({what}), not a whole number of 32-byte blocks: the DMA "
            f"moves {nbytes // BLOCK_BYTES * BLOCK_BYTES} B and drops the tail",
            loc, hint="use data_copy_pad for lengths that are not multiples of 32 bytes",
            core=current_core().core_id, nbytes=nbytes)


def _check_local_alignment(op: str, tensors, loc) -> None:
    soc = current_core().soc
    for t in tensors:
        if isinstance(t, GlobalTensor):
            continue
        align = soc.alignment.get(t.mem.name, BLOCK_BYTES)
        if t.addr % align:
            current_core().launch.findings.report(
                "alignment", f"{op}: {t.mem.name} address {t.addr} is not {align}-byte aligned",
                loc, hint=f"{t.mem.name} tensors must start on a {align}-byte boundary; "
                "offset views by whole blocks", core=current_core().core_id)


def data_copy(dst, src, *args, **kwargs) -> None:
    """``data_copy(dst, src, count)``, ``data_copy(dst, src, repeat_params=DataCopyParams)``,
    or a cube-side form (``Nd2NzParams``, ...)."""
    loc = user_location()
    kwargs = dict(kwargs)
    count = kwargs.pop("count", None)
    params = kwargs.pop("repeat_params", None) or kwargs.pop("params", None)
    kwargs.pop("enhanced_params", None)
    for arg in args:
        if isinstance(arg, (DataCopyEnhancedParams,)):
            continue
        if isinstance(arg, int) and count is None and params is None:
            count = arg
        elif params is None:
            params = arg
    if kwargs:
        raise KernelError(f"data_copy: unexpected keyword argument(s) {sorted(kwargs)}", loc)
    handler = EXTRA_FORMS.get(type(params)) if params is not None else None
    if handler is not None:
        handler(dst, src, params, loc)
        return
    path, pipe = resolve_path(dst, src, loc)
    _check_local_alignment("data_copy", (dst, src), loc)
    if count is not None:
        nbytes = int(count) * src.dtype.sizeof()
        if int(count) < 0:
            raise KernelError(f"data_copy: count {count} is negative", loc)
        _check_block_aligned("data_copy", nbytes, loc, f"count={count}")
        moved = nbytes // BLOCK_BYTES * BLOCK_BYTES
        _move("data_copy", dst, src, path, pipe, Bursts(0, 0, moved, moved, moved, 1), loc)
        return
    if not isinstance(params, DataCopyParams):
        raise KernelError("data_copy needs a count or repeat_params=DataCopyParams(...), got "
                          f"{type(params).__name__}", loc)
    # Plain ints: the parameters may be RuntimeInts, whose arithmetic is slow per burst.
    n = int(params.block_len) * BLOCK_BYTES
    s_pitch = n + int(params.src_stride) * BLOCK_BYTES
    d_pitch = n + int(params.dst_stride) * BLOCK_BYTES
    bursts = Bursts(0, 0, n, s_pitch, d_pitch, int(params.block_count))
    _move("data_copy", dst, src, path, pipe, bursts, loc)


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
    path, pipe = resolve_path(dst, src, loc)
    _check_local_alignment("data_copy_pad", (dst, src), loc)
    n = int(params.block_len)
    padded = -(-n // BLOCK_BYTES) * BLOCK_BYTES
    size = (src if not isinstance(src, GlobalTensor) else dst).dtype.sizeof()
    left = right = 0
    if isinstance(pad_params, (DataCopyPadExtParams, DataCopyPadParams)) and pad_params.is_pad:
        left, right = int(pad_params.left_padding), int(pad_params.right_padding)
    if path.startswith("GM->"):
        ub_block = -(-(n + (left + right) * size) // BLOCK_BYTES) * BLOCK_BYTES
        s_pitch = n + int(params.src_stride)
        d_pitch = ub_block + int(params.dst_stride) * BLOCK_BYTES
        bursts = Bursts(0, left * size, n, s_pitch, d_pitch, int(params.block_count))
    else:
        s_pitch = padded + int(params.src_stride) * BLOCK_BYTES
        d_pitch = n + int(params.dst_stride)
        bursts = Bursts(0, 0, n, s_pitch, d_pitch, int(params.block_count))
        d_pitch = None
    fill = None
    if d_pitch is not None and (left or right) and params.block_count:
        value = np.asarray(pad_params.padding_value, dtype=dst.dtype.np_dtype)
        per = d_pitch // size
        # Pad elements of every row: ``left`` before the data, ``right`` after it.
        cols = np.concatenate([np.arange(left), left + n // size + np.arange(right)])
        where = (np.arange(params.block_count)[:, None] * per + cols[None, :]).reshape(-1)

        def fill():
            # Only up to the last pad element: the last row's trailing gap is not touched.
            dst.elements(0, int(where.max()) + 1, loc)[where] = value
    _move("data_copy_pad", dst, src, path, pipe, bursts, loc, fill=fill)
